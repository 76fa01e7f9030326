// Package openai implements llm.Model on the OpenAI Chat Completions API,
// through the official Go SDK (github.com/openai/openai-go/v3), for OpenAI
// itself and for any OpenAI-compatible server: Ollama, vLLM, llama.cpp's
// llama-server, LM Studio, gateways. Point BaseURL at the server's /v1; local
// servers need no API key.
//
// The client reads nothing from the environment: the caller (the memdir
// command resolves OPENAI_API_KEY and OPENAI_BASE_URL) passes every setting in
// [Options].
//
// A request with a JSON schema is sent with response_format json_schema. A
// server that rejects it with HTTP 400 is asked again without it, the schema
// then being spelled out in the system prompt, and the client keeps doing so
// from then on; Options.NoResponseFormat starts that way. Either way the
// JSON is extracted from the reply text (code fences and prose around it are
// dropped) and returned as the text of the reply.
//
// Retries with exponential backoff on 408, 409, 429 and 5xx, and the
// Retry-After headers, are the SDK's; [Options] sets how many. Every failure
// the server reports comes back as a *llm.ModelError.
package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"time"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/openai/openai-go/v3/shared"

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/internal/jsonx"
	"github.com/memdir/memdir/internal/modelkit"
	"github.com/memdir/memdir/llm"
)

// Defaults used when Options leaves a field zero.
const (
	DefaultBaseURL    = "https://api.openai.com/v1"
	DefaultMaxTokens  = modelkit.DefaultMaxTokens
	DefaultTimeout    = modelkit.DefaultTimeout
	DefaultMaxRetries = modelkit.DefaultMaxRetries
)

// Names of the request field that caps the reply.
const (
	MaxCompletionTokens = "max_completion_tokens" // OpenAI's current field
	MaxTokens           = "max_tokens"            // what most compatible servers read
)

// Options configure a Client. Only Model is required.
type Options struct {
	// Model is the model name, such as gpt-4.1-mini or llama3.2.
	Model string
	// APIKey is sent as a bearer token when set.
	APIKey string
	// BaseURL is the API root including /v1 (DefaultBaseURL when empty),
	// such as http://localhost:11434/v1 for Ollama.
	BaseURL string
	// HTTPClient defaults to a plain *http.Client.
	HTTPClient *http.Client
	// Timeout limits one attempt, including reading a streamed reply
	// (DefaultTimeout when zero). The caller's context bounds the whole call.
	Timeout time.Duration
	// MaxRetries is how many times a failed attempt (429, 5xx, connection
	// error) is retried: 0 means DefaultMaxRetries, negative none.
	MaxRetries int
	// MaxTokens is used when a request does not set its own.
	MaxTokens int
	// MaxTokensField is MaxCompletionTokens or MaxTokens. Empty picks
	// max_completion_tokens for api.openai.com and max_tokens elsewhere,
	// since older compatible servers ignore the newer name.
	MaxTokensField string
	// Stream makes each call use the streaming API and assemble the reply.
	Stream bool
	// NoResponseFormat never sends response_format, for servers that reject
	// or mishandle it; the schema goes into the system prompt instead.
	NoResponseFormat bool
	// Logger receives a debug record per HTTP attempt; nil discards.
	Logger *slog.Logger
}

// Client is a llm.Model backed by Chat Completions. It is safe for
// concurrent use.
type Client struct {
	chat   sdk.ChatCompletionService
	opts   Options
	caller modelkit.Caller
	shape  modelkit.Shape // the fallback is the schema in the prompt
}

var _ llm.Model = (*Client)(nil)

// New returns a client for opts.Model.
func New(opts *Options) (*Client, error) {
	if opts == nil || opts.Model == "" {
		return nil, fmt.Errorf("openai: no model name given: %w", memdir.ErrInvalid)
	}
	o := *opts
	var u *url.URL
	var err error
	if o.BaseURL, u, err = parseBaseURL(o.BaseURL); err != nil {
		return nil, err
	}
	switch o.MaxTokensField {
	case "":
		o.MaxTokensField = MaxTokens
		if u.Hostname() == "api.openai.com" {
			o.MaxTokensField = MaxCompletionTokens
		}
	case MaxTokens, MaxCompletionTokens:
	default:
		return nil, fmt.Errorf("openai: MaxTokensField %q is neither %s nor %s: %w", o.MaxTokensField, MaxTokens, MaxCompletionTokens, memdir.ErrInvalid)
	}
	modelkit.FillDefaults(&o.Timeout, &o.MaxRetries, &o.MaxTokens, &o.HTTPClient, &o.Logger)
	cn := conn{model: o.Model, baseURL: o.BaseURL, apiKey: o.APIKey, httpClient: o.HTTPClient, maxRetries: o.MaxRetries, timeout: o.Timeout, logger: o.Logger}
	c := &Client{chat: sdk.NewChatCompletionService(cn.requestOptions()...), opts: o, caller: cn.caller()}
	if o.NoResponseFormat {
		c.shape.SetFallback()
	}
	return c, nil
}

// Generate sends req and returns the model's reply.
func (c *Client) Generate(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	return c.shape.Generate(ctx, &c.caller, c.opts.Logger, req, func(noFormat bool) (*llm.Response, error) {
		params, err := c.params(req, noFormat)
		if err != nil {
			return nil, err
		}
		return c.send(ctx, params)
	})
}

var schemaNameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`) })

func (c *Client) params(req *llm.Request, noFormat bool) (sdk.ChatCompletionNewParams, error) {
	p := sdk.ChatCompletionNewParams{Model: shared.ChatModel(c.opts.Model)}
	maxTokens := int64(c.opts.MaxTokens)
	if req.MaxTokens > 0 {
		maxTokens = int64(req.MaxTokens)
	}
	if c.opts.MaxTokensField == MaxCompletionTokens {
		p.MaxCompletionTokens = sdk.Int(maxTokens)
	} else {
		p.MaxTokens = sdk.Int(maxTokens)
	}

	system := req.System
	if len(req.Schema) > 0 {
		schema, err := modelkit.SchemaMap(req.Schema)
		if err != nil {
			return p, fmt.Errorf("openai: request schema: %w", err)
		}
		if noFormat {
			system = strings.TrimSpace(system + "\n\n" + modelkit.SchemaInstruction(req.Schema))
		} else {
			name := req.SchemaName
			if !schemaNameRE().MatchString(name) {
				name = "response"
			}
			p.ResponseFormat = sdk.ChatCompletionNewParamsResponseFormatUnion{OfJSONSchema: &shared.ResponseFormatJSONSchemaParam{
				JSONSchema: shared.ResponseFormatJSONSchemaJSONSchemaParam{Name: name, Schema: schema},
			}}
		}
	}
	if system != "" {
		p.Messages = append(p.Messages, sdk.ChatCompletionMessageParamUnion{OfSystem: &sdk.ChatCompletionSystemMessageParam{
			Content: sdk.ChatCompletionSystemMessageParamContentUnion{OfString: sdk.String(system)},
		}})
	}
	for i, m := range req.Messages {
		msgs, err := messageParams(m)
		if err != nil {
			return p, fmt.Errorf("openai: message %d: %w", i, err)
		}
		p.Messages = append(p.Messages, msgs...)
	}
	for _, t := range req.Tools {
		schema := t.InputSchema
		if len(schema) == 0 {
			schema = json.RawMessage(`{"type":"object"}`)
		}
		m, err := modelkit.SchemaMap(schema)
		if err != nil {
			return p, fmt.Errorf("openai: tool %q input schema: %w", t.Name, err)
		}
		fn := shared.FunctionDefinitionParam{Name: t.Name, Parameters: m}
		if t.Description != "" {
			fn.Description = sdk.String(t.Description)
		}
		p.Tools = append(p.Tools, sdk.ChatCompletionFunctionTool(fn))
	}
	return p, nil
}

// messageParams maps one neutral message to Chat Completions messages: an
// assistant turn keeps its text and tool calls together, while a user turn's
// tool results become "tool" messages, which must come right after the
// assistant message that made the calls, followed by any text.
func messageParams(m llm.Message) ([]sdk.ChatCompletionMessageParamUnion, error) {
	var texts []string
	var out []sdk.ChatCompletionMessageParamUnion
	var calls []sdk.ChatCompletionMessageToolCallUnionParam
	for _, b := range m.Content {
		switch {
		case b.Type == llm.BlockText:
			if b.Text != "" {
				texts = append(texts, b.Text)
			}
		case b.Type == llm.BlockToolUse && m.Role == llm.RoleAssistant:
			args := "{}"
			if len(b.Input) > 0 {
				if !json.Valid(b.Input) {
					return nil, fmt.Errorf("tool_use %q has invalid JSON input: %w", b.ToolUseID, memdir.ErrInvalid)
				}
				args = string(b.Input)
			}
			calls = append(calls, sdk.ChatCompletionMessageToolCallUnionParam{OfFunction: &sdk.ChatCompletionMessageFunctionToolCallParam{
				ID: b.ToolUseID, Function: sdk.ChatCompletionMessageFunctionToolCallFunctionParam{Name: b.ToolName, Arguments: args},
			}})
		case b.Type == llm.BlockToolResult && m.Role == llm.RoleUser:
			text := b.Text
			if b.IsError && !strings.HasPrefix(text, "Error") {
				// Chat Completions has no error flag on tool results; many
				// tools' error texts already say so themselves.
				text = "Error: " + text
			}
			out = append(out, sdk.ChatCompletionMessageParamUnion{OfTool: &sdk.ChatCompletionToolMessageParam{
				ToolCallID: b.ToolUseID, Content: sdk.ChatCompletionToolMessageParamContentUnion{OfString: sdk.String(text)},
			}})
		default:
			return nil, fmt.Errorf("block type %q in a %s message: %w", b.Type, m.Role, memdir.ErrInvalid)
		}
	}
	text := strings.Join(texts, "\n\n")
	switch m.Role {
	case llm.RoleUser:
		if text != "" || len(out) == 0 {
			out = append(out, sdk.ChatCompletionMessageParamUnion{OfUser: &sdk.ChatCompletionUserMessageParam{
				Content: sdk.ChatCompletionUserMessageParamContentUnion{OfString: sdk.String(text)},
			}})
		}
	case llm.RoleAssistant:
		a := &sdk.ChatCompletionAssistantMessageParam{ToolCalls: calls}
		if text != "" || len(calls) == 0 {
			a.Content = sdk.ChatCompletionAssistantMessageParamContentUnion{OfString: sdk.String(text)}
		}
		out = append(out, sdk.ChatCompletionMessageParamUnion{OfAssistant: a})
	default:
		return nil, fmt.Errorf("role %q: %w", m.Role, memdir.ErrInvalid)
	}
	return out, nil
}

// reply is what a plain or streamed completion comes down to.
type reply struct {
	model  string
	text   strings.Builder
	calls  []toolCall
	finish string
	usage  sdk.CompletionUsage
	chunks int // streamed chunks received
}

type toolCall struct{ id, name, args string }

// send makes one call (with the SDK's retries), plain or streaming.
func (c *Client) send(ctx context.Context, params sdk.ChatCompletionNewParams) (*llm.Response, error) {
	var raw *http.Response
	into := option.WithResponseInto(&raw)
	var r reply
	if !c.opts.Stream {
		cc, err := c.chat.New(ctx, params, into)
		if err != nil {
			return nil, c.caller.Failure(ctx, raw, err)
		}
		if len(cc.Choices) == 0 {
			return nil, c.caller.BadResponse("the reply has no choices", nil)
		}
		ch := cc.Choices[0]
		r.model, r.finish, r.usage = cc.Model, ch.FinishReason, cc.Usage
		r.text.WriteString(ch.Message.Content)
		for _, tc := range ch.Message.ToolCalls {
			r.calls = append(r.calls, toolCall{tc.ID, tc.Function.Name, tc.Function.Arguments})
		}
	} else {
		params.StreamOptions = sdk.ChatCompletionStreamOptionsParam{IncludeUsage: sdk.Bool(true)}
		stream := c.chat.NewStreaming(ctx, params, into)
		defer stream.Close()
		for stream.Next() {
			r.add(stream.Current())
		}
		if err := stream.Err(); err != nil {
			var se *ssestream.StreamError
			if errors.As(err, &se) && ctx.Err() == nil {
				// The server began the stream, then reported an error in it.
				status, said := streamError(se.Event.Data)
				return nil, c.caller.StatusError(status, said, err)
			}
			return nil, c.caller.Failure(ctx, raw, err)
		}
		if r.chunks == 0 {
			// A body that is no event stream reads as an empty one.
			return nil, c.caller.BadResponse(fmt.Sprintf("the streamed reply from %s has no chunks", c.opts.BaseURL), nil)
		}
	}
	return c.response(&r)
}

// streamError reads the error a server sent as a chunk of a stream it had
// begun, {"error": {"message", "type", "code"}}, into the HTTP status the
// same error would have had and the server's message. The code is a status
// at some servers (vLLM, llama.cpp) and a name at OpenAI; the status is 0
// when nothing says which error it is.
func streamError(data []byte) (status int, message string) {
	var v struct {
		Error struct {
			Type string          `json:"type"`
			Code json.RawMessage `json:"code"`
		} `json:"error"`
	}
	message = modelkit.ServerMessage(data)
	if json.Unmarshal(data, &v) != nil {
		return 0, message // {"error": "text"}, as Ollama words errors
	}
	var code int
	var name string
	switch {
	case json.Unmarshal(v.Error.Code, &code) == nil && code >= 400 && code < 600:
		return code, message
	case json.Unmarshal(v.Error.Code, &name) == nil:
		return modelkit.ErrorTypeStatus(name, v.Error.Type), message
	default:
		return modelkit.ErrorTypeStatus(v.Error.Type), message
	}
}

// add folds one streamed chunk into the reply. Tool calls arrive as an id
// and name, then argument pieces, keyed by index.
func (r *reply) add(chunk sdk.ChatCompletionChunk) {
	r.chunks++
	if chunk.Model != "" {
		r.model = chunk.Model
	}
	if chunk.JSON.Usage.Valid() {
		r.usage = chunk.Usage
	}
	for _, ch := range chunk.Choices {
		if ch.Index != 0 {
			continue
		}
		r.text.WriteString(ch.Delta.Content)
		for _, tc := range ch.Delta.ToolCalls {
			i := int(tc.Index)
			if i < 0 || i > len(r.calls) {
				i = len(r.calls) // a server that numbers calls oddly: keep them in order
			}
			if i == len(r.calls) {
				r.calls = append(r.calls, toolCall{})
			}
			if tc.ID != "" {
				r.calls[i].id = tc.ID
			}
			if tc.Function.Name != "" {
				r.calls[i].name = tc.Function.Name
			}
			r.calls[i].args += tc.Function.Arguments
		}
		if ch.FinishReason != "" {
			r.finish = ch.FinishReason
		}
	}
}

func (c *Client) response(r *reply) (*llm.Response, error) {
	u := r.usage
	cached, written := int(u.PromptTokensDetails.CachedTokens), int(u.PromptTokensDetails.CacheWriteTokens)
	resp := &llm.Response{
		Model: r.model,
		Usage: llm.Usage{
			// prompt_tokens includes the cached part; memdir counts it apart.
			InputTokens:      max(0, int(u.PromptTokens)-cached-written),
			OutputTokens:     int(u.CompletionTokens),
			CacheReadTokens:  cached,
			CacheWriteTokens: written,
			Calls:            1,
		},
	}
	if r.text.Len() > 0 {
		resp.Content = append(resp.Content, llm.TextBlock(r.text.String()))
	}
	for _, tc := range r.calls {
		args := json.RawMessage(strings.TrimSpace(tc.args))
		switch {
		case len(args) == 0:
			args = json.RawMessage(`{}`)
		case !json.Valid(args):
			// Small local models wrap or garble arguments; keep what parses.
			// What cannot be repaired goes to the tool as a JSON string, so
			// the tool answers with an error the model can correct, rather
			// than the whole exchange failing.
			if fixed, err := jsonx.Extract(tc.args); err == nil {
				args = fixed
			} else {
				args, _ = json.Marshal(tc.args)
			}
		}
		resp.Content = append(resp.Content, llm.Block{Type: llm.BlockToolUse, ToolUseID: tc.id, ToolName: tc.name, Input: args})
	}
	switch {
	case len(r.calls) > 0:
		// Some compatible servers say "stop" even when they called a tool.
		resp.StopReason = llm.StopToolUse
	case r.finish == "stop":
		resp.StopReason = llm.StopEndTurn
	case r.finish == "length":
		resp.StopReason = llm.StopMaxTokens
	default:
		resp.StopReason = llm.StopOther
	}
	return resp, nil
}
