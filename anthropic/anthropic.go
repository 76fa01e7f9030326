// Package anthropic implements llm.Model on the Anthropic Messages API,
// through the official Go SDK (github.com/anthropics/anthropic-sdk-go/v2).
//
// The client reads nothing from the environment: the caller (the memdir
// command resolves ANTHROPIC_API_KEY, ANTHROPIC_AUTH_TOKEN and
// ANTHROPIC_BASE_URL) passes every setting in [Options]. This keeps library
// users and tests hermetic.
//
// A request's system prompt and last tool definition carry cache_control
// markers, so the stable prefix of repeated calls (the memory selector sends
// the same instructions every time) is read from the prompt cache. A request
// with a JSON schema uses the API's structured output (output_config.format);
// a server that rejects it with HTTP 400 is asked again with a forced tool
// whose input schema is the schema, and the client keeps using the tool from
// then on. Either way the JSON arrives as the text of the reply.
//
// Retries with exponential backoff on 408, 409, 429 and 5xx, and the
// Retry-After headers, are the SDK's (internal/requestconfig); [Options]
// sets how many. Every failure the provider reports comes back as a
// *llm.ModelError.
package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"regexp"
	"sync"
	"time"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/internal/modelkit"
	"github.com/memdir/memdir/llm"
)

// Defaults used when Options leaves a field zero.
const (
	DefaultBaseURL    = "https://api.anthropic.com"
	DefaultMaxTokens  = modelkit.DefaultMaxTokens
	DefaultTimeout    = modelkit.DefaultTimeout
	DefaultMaxRetries = modelkit.DefaultMaxRetries
)

// Options configure a Client. Only Model is required.
type Options struct {
	// Model is the model name, such as claude-sonnet-4-5.
	Model string
	// APIKey is sent as a bearer token. AuthToken is the alternative for
	// gateways that issue OAuth-style tokens (ANTHROPIC_AUTH_TOKEN); APIKey
	// wins when both are set.
	APIKey    string
	AuthToken string
	// BaseURL is the server root, without /v1 (DefaultBaseURL when empty).
	BaseURL string
	// HTTPClient defaults to a plain *http.Client.
	HTTPClient *http.Client
	// Timeout limits one attempt, including reading a streamed reply
	// (DefaultTimeout when zero). The caller's context bounds the whole call.
	Timeout time.Duration
	// MaxRetries is how many times a failed attempt (429, 5xx, connection
	// error, timeout) is retried: 0 means DefaultMaxRetries, negative none.
	MaxRetries int
	// MaxTokens is used when a request does not set its own.
	MaxTokens int
	// Stream makes each call use the streaming API and assemble the reply.
	Stream bool
	// ForcedToolSchema sends structured output requests as a forced tool call
	// from the start, for servers and models without output_config.
	ForcedToolSchema bool
	// Logger receives a debug record per HTTP attempt; nil discards.
	Logger *slog.Logger
}

// Client is a llm.Model backed by the Messages API. It is safe for
// concurrent use.
type Client struct {
	msgs   sdk.MessageService
	opts   Options
	caller modelkit.Caller
	shape  modelkit.Shape // the fallback is the forced tool
}

var _ llm.Model = (*Client)(nil)

// New returns a client for opts.Model.
func New(opts *Options) (*Client, error) {
	if opts == nil || opts.Model == "" {
		return nil, fmt.Errorf("anthropic: no model name given: %w", memdir.ErrInvalid)
	}
	o := *opts
	if o.BaseURL == "" {
		o.BaseURL = DefaultBaseURL
	}
	modelkit.FillDefaults(&o.Timeout, &o.MaxRetries, &o.MaxTokens, &o.HTTPClient, &o.Logger)
	ro := []option.RequestOption{
		option.WithoutEnvironmentDefaults(),
		option.WithBaseURL(o.BaseURL),
		option.WithHTTPClient(o.HTTPClient),
		option.WithMaxRetries(o.MaxRetries),
		option.WithRequestTimeout(o.Timeout),
		option.WithMiddleware(modelkit.LogAttempts(o.Logger, "anthropic")),
	}
	switch {
	case o.APIKey != "":
		ro = append(ro, option.WithAPIKey(o.APIKey))
	case o.AuthToken != "":
		ro = append(ro, option.WithAuthToken(o.AuthToken))
	}
	c := &Client{
		msgs: sdk.NewClient(ro...).Messages,
		opts: o,
		caller: modelkit.Caller{
			Provider: "anthropic",
			Model:    o.Model,
			BaseURL:  o.BaseURL,
			KeyEnv:   "ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN)",
			KeySet:   o.APIKey != "" || o.AuthToken != "",
			Tries:    o.MaxRetries + 1,
			Timeout:  o.Timeout,
		},
	}
	if o.ForcedToolSchema {
		c.shape.SetFallback()
	}
	return c, nil
}

// Generate sends req and returns the model's reply.
func (c *Client) Generate(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	return c.shape.Generate(ctx, &c.caller, c.opts.Logger, req, func(forceTool bool) (*llm.Response, error) {
		params, err := c.params(req, forceTool)
		if err != nil {
			return nil, err
		}
		msg, err := c.send(ctx, params)
		if err != nil {
			return nil, err
		}
		return c.response(msg, req, forceTool), nil
	})
}

// send makes one call (with the SDK's retries), plain or streaming.
func (c *Client) send(ctx context.Context, params sdk.MessageNewParams) (*sdk.Message, error) {
	var raw *http.Response
	into := option.WithResponseInto(&raw)
	if !c.opts.Stream {
		msg, err := c.msgs.New(ctx, params, into)
		if err != nil {
			return nil, c.caller.Failure(ctx, raw, err)
		}
		if msg.ID == "" && msg.Type == "" {
			// JSON, but not a message: a proxy's status page, a wrong path.
			return nil, c.caller.BadResponse(fmt.Sprintf("the reply from %s is not a message", c.opts.BaseURL), nil)
		}
		return msg, nil
	}
	stream := c.msgs.NewStreaming(ctx, params, into)
	defer stream.Close()
	var msg sdk.Message
	for stream.Next() {
		if err := msg.Accumulate(stream.Current()); err != nil {
			return nil, c.caller.BadResponse("the streamed reply is inconsistent: "+err.Error(), err)
		}
	}
	if err := stream.Err(); err != nil {
		var apiErr *sdk.Error
		if errors.As(err, &apiErr) && apiErr.StatusCode < 400 && ctx.Err() == nil {
			// An error event inside a 200 stream: classify it by its type.
			return nil, c.caller.StatusError(modelkit.ErrorTypeStatus(string(apiErr.Type())), apiErr.Message, err)
		}
		return nil, c.caller.Failure(ctx, raw, err)
	}
	if msg.ID == "" && msg.Type == "" {
		return nil, c.caller.BadResponse("the stream ended without a message_start event", nil)
	}
	return &msg, nil
}

// schemaToolName is the forced tool's name when the request names no schema.
const schemaToolName = "structured_output"

var toolNameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`) })

func (c *Client) schemaTool(req *llm.Request) string {
	if toolNameRE().MatchString(req.SchemaName) {
		return req.SchemaName
	}
	return schemaToolName
}

func (c *Client) params(req *llm.Request, forceTool bool) (sdk.MessageNewParams, error) {
	p := sdk.MessageNewParams{
		Model:     sdk.Model(c.opts.Model),
		MaxTokens: int64(c.opts.MaxTokens),
	}
	if req.MaxTokens > 0 {
		p.MaxTokens = int64(req.MaxTokens)
	}
	if req.System != "" {
		p.System = []sdk.TextBlockParam{{Text: req.System, CacheControl: sdk.NewCacheControlEphemeralParam()}}
	}
	for i, m := range req.Messages {
		blocks, err := contentParams(m.Content)
		if err != nil {
			return p, fmt.Errorf("anthropic: message %d: %w", i, err)
		}
		switch m.Role {
		case llm.RoleUser:
			p.Messages = append(p.Messages, sdk.NewUserMessage(blocks...))
		case llm.RoleAssistant:
			p.Messages = append(p.Messages, sdk.NewAssistantMessage(blocks...))
		default:
			return p, fmt.Errorf("anthropic: message %d has role %q: %w", i, m.Role, memdir.ErrInvalid)
		}
	}
	for _, t := range req.Tools {
		tp, err := toolParam(t.Name, t.Description, t.InputSchema)
		if err != nil {
			return p, err
		}
		p.Tools = append(p.Tools, tp)
	}
	if len(req.Schema) > 0 {
		schema, err := modelkit.SchemaMap(req.Schema)
		if err != nil {
			return p, fmt.Errorf("anthropic: request schema: %w", err)
		}
		if forceTool {
			name := c.schemaTool(req)
			tp, err := toolParam(name, "Give your answer as this tool's input. It must match the input schema.", req.Schema)
			if err != nil {
				return p, err
			}
			p.Tools = append(p.Tools, tp)
			p.ToolChoice = sdk.ToolChoiceUnionParam{OfTool: &sdk.ToolChoiceToolParam{Name: name}}
		} else {
			p.OutputConfig = sdk.OutputConfigParam{Format: sdk.JSONOutputFormatParam{Schema: schema}}
		}
	}
	if n := len(p.Tools); n > 0 {
		// Tools come before the system prompt in the cached prefix; marking
		// the last one caches all of them.
		p.Tools[n-1].OfTool.CacheControl = sdk.NewCacheControlEphemeralParam()
	}
	return p, nil
}

func contentParams(blocks []llm.Block) ([]sdk.ContentBlockParamUnion, error) {
	var out []sdk.ContentBlockParamUnion
	for _, b := range blocks {
		switch b.Type {
		case llm.BlockText:
			if b.Text == "" {
				continue // the API rejects empty text blocks
			}
			out = append(out, sdk.NewTextBlock(b.Text))
		case llm.BlockToolUse:
			in := b.Input
			if len(in) == 0 {
				in = json.RawMessage(`{}`)
			}
			if !json.Valid(in) {
				return nil, fmt.Errorf("tool_use %q has invalid JSON input: %w", b.ToolUseID, memdir.ErrInvalid)
			}
			out = append(out, sdk.NewToolUseBlock(b.ToolUseID, in, b.ToolName))
		case llm.BlockToolResult:
			r := sdk.ToolResultBlockParam{ToolUseID: b.ToolUseID}
			if b.Text != "" {
				r.Content = []sdk.ToolResultBlockParamContentUnion{{OfText: &sdk.TextBlockParam{Text: b.Text}}}
			}
			if b.IsError {
				r.IsError = sdk.Bool(true)
			}
			out = append(out, sdk.ContentBlockParamUnion{OfToolResult: &r})
		default:
			return nil, fmt.Errorf("block type %q: %w", b.Type, memdir.ErrInvalid)
		}
	}
	return out, nil
}

// toolParam sends an arbitrary input schema: the SDK's typed fields cover
// only part of JSON schema, so everything but "type" goes through ExtraFields.
func toolParam(name, description string, schema json.RawMessage) (sdk.ToolUnionParam, error) {
	if len(schema) == 0 {
		schema = json.RawMessage(`{"type":"object"}`)
	}
	m, err := modelkit.SchemaMap(schema)
	if err != nil {
		return sdk.ToolUnionParam{}, fmt.Errorf("anthropic: tool %q input schema: %w", name, err)
	}
	delete(m, "type")
	t := &sdk.ToolParam{Name: name, InputSchema: sdk.ToolInputSchemaParam{ExtraFields: m}}
	if description != "" {
		t.Description = sdk.String(description)
	}
	return sdk.ToolUnionParam{OfTool: t}, nil
}

// response converts the API's message; in forced-tool mode the schema tool's
// input becomes the reply text.
func (c *Client) response(msg *sdk.Message, req *llm.Request, forceTool bool) *llm.Response {
	resp := &llm.Response{
		Model:      string(msg.Model),
		StopReason: stopReason(msg.StopReason),
		Usage: llm.Usage{
			InputTokens:      int(msg.Usage.InputTokens),
			OutputTokens:     int(msg.Usage.OutputTokens),
			CacheReadTokens:  int(msg.Usage.CacheReadInputTokens),
			CacheWriteTokens: int(msg.Usage.CacheCreationInputTokens),
			Calls:            1,
		},
	}
	schemaTool := ""
	if forceTool && len(req.Schema) > 0 {
		schemaTool = c.schemaTool(req)
	}
	var answer *llm.Block // the schema tool's input, when forced
	for _, b := range msg.Content {
		switch {
		case b.Type == "text":
			resp.Content = append(resp.Content, llm.TextBlock(b.Text))
		case b.Type == "tool_use" && b.Name == schemaTool && answer == nil:
			blk := llm.TextBlock(string(b.Input))
			answer = &blk
		case b.Type == "tool_use":
			resp.Content = append(resp.Content, llm.Block{
				Type: llm.BlockToolUse, ToolUseID: b.ID, ToolName: b.Name, Input: append(json.RawMessage(nil), b.Input...),
			})
		}
	}
	if answer != nil {
		// The answer is the tool input alone: any remark the model wrote
		// beside the call is not part of it.
		content := []llm.Block{*answer}
		for _, b := range resp.Content {
			if b.Type != llm.BlockText {
				content = append(content, b)
			}
		}
		resp.Content = content
		if resp.StopReason == llm.StopToolUse {
			resp.StopReason = llm.StopEndTurn
		}
	}
	return resp
}

func stopReason(r sdk.StopReason) llm.StopReason {
	switch r {
	case sdk.StopReasonEndTurn, sdk.StopReasonStopSequence:
		return llm.StopEndTurn
	case sdk.StopReasonToolUse:
		return llm.StopToolUse
	case sdk.StopReasonMaxTokens:
		return llm.StopMaxTokens
	default:
		return llm.StopOther
	}
}
