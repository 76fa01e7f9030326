package memdirtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/memdir/memdir/llm"
)

// openaiWire speaks POST /v1/chat/completions.
type openaiWire struct{}

type openaiToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// openaiRequest is the body of POST /v1/chat/completions, the fields the
// fake reads.
type openaiRequest struct {
	Model               string          `json:"model"`
	Stream              bool            `json:"stream"`
	MaxTokens           int             `json:"max_tokens"`
	MaxCompletionTokens int             `json:"max_completion_tokens"`
	Messages            []openaiMessage `json:"messages"`
	Tools               []struct {
		Type     string `json:"type"`
		Function struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			Parameters  json.RawMessage `json:"parameters"`
		} `json:"function"`
	} `json:"tools"`
	ToolChoice     json.RawMessage `json:"tool_choice"`
	ResponseFormat *struct {
		Type       string `json:"type"`
		JSONSchema *struct {
			Name   string          `json:"name"`
			Schema json.RawMessage `json:"schema"`
		} `json:"json_schema"`
	} `json:"response_format"`
}

// openaiMessage is one message of a Chat Completions request.
type openaiMessage struct {
	Role       string           `json:"role"`
	Content    json.RawMessage  `json:"content"`
	ToolCalls  []openaiToolCall `json:"tool_calls"`
	ToolCallID string           `json:"tool_call_id"`
}

func (openaiWire) decode(body []byte, req *ModelRequest) error {
	var in openaiRequest
	if err := json.Unmarshal(body, &in); err != nil {
		return err
	}
	if in.Model == "" || len(in.Messages) == 0 {
		return fmt.Errorf("model and messages are required")
	}
	req.Model, req.Stream = in.Model, in.Stream
	req.MaxTokens = max(in.MaxTokens, in.MaxCompletionTokens)
	system, err := decodeOpenAIMessages(req, in.Messages)
	if err != nil {
		return err
	}
	req.System = strings.Join(system, "\n\n")
	return in.decodeTools(req)
}

// decodeOpenAIMessages adds the messages to req's and returns the texts
// of the system and developer ones. Tool messages become tool_result
// blocks of one user message, and a user message right after them joins
// it: the neutral form of a turn that answers tool calls.
func decodeOpenAIMessages(req *ModelRequest, msgs []openaiMessage) ([]string, error) {
	var system []string
	fromTools := false
	for i, m := range msgs {
		text, err := textOf(m.Content)
		if err != nil {
			return nil, fmt.Errorf("messages[%d]: %w", i, err)
		}
		switch m.Role {
		case "system", "developer":
			system = append(system, text)
		case "user":
			addUserBlock(req, llm.TextBlock(text), fromTools)
			fromTools = false
		case "tool":
			addUserBlock(req, llm.Block{Type: llm.BlockToolResult, ToolUseID: m.ToolCallID, Text: text}, fromTools)
			fromTools = true
		case "assistant":
			req.Messages = append(req.Messages, openaiAssistant(text, m.ToolCalls))
			fromTools = false
		default:
			return nil, fmt.Errorf("messages[%d]: role %q is not supported by the fake", i, m.Role)
		}
	}
	return system, nil
}

// addUserBlock adds b to the last message, the tool results it follows
// when afterTools, else as a user message of its own.
func addUserBlock(req *ModelRequest, b llm.Block, afterTools bool) {
	if afterTools {
		last := len(req.Messages) - 1
		req.Messages[last].Content = append(req.Messages[last].Content, b)
		return
	}
	req.Messages = append(req.Messages, llm.Message{Role: llm.RoleUser, Content: []llm.Block{b}})
}

// openaiAssistant is an assistant message: its text, if any, then its
// tool calls.
func openaiAssistant(text string, calls []openaiToolCall) llm.Message {
	msg := llm.Message{Role: llm.RoleAssistant}
	if text != "" {
		msg.Content = append(msg.Content, llm.TextBlock(text))
	}
	for _, tc := range calls {
		msg.Content = append(msg.Content, llm.Block{Type: llm.BlockToolUse, ToolUseID: tc.ID,
			ToolName: tc.Function.Name, Input: json.RawMessage(tc.Function.Arguments)})
	}
	return msg
}

// decodeTools records the tools, the function the request forces, if
// any, and the JSON schema it asks the reply to match.
func (in *openaiRequest) decodeTools(req *ModelRequest) error {
	for _, t := range in.Tools {
		req.Tools = append(req.Tools, llm.Tool{Name: t.Function.Name, Description: t.Function.Description, InputSchema: t.Function.Parameters})
	}
	if len(in.ToolChoice) > 0 && in.ToolChoice[0] == '{' {
		var tc struct {
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		}
		if err := json.Unmarshal(in.ToolChoice, &tc); err != nil {
			return fmt.Errorf("tool_choice: %w", err)
		}
		req.ToolChoice = tc.Function.Name
	}
	if rf := in.ResponseFormat; rf != nil && rf.Type == "json_schema" && rf.JSONSchema != nil {
		req.Schema, req.SchemaName = rf.JSONSchema.Schema, rf.JSONSchema.Name
	}
	return nil
}

// openaiErrorCodes are typical error.code values per status.
var openaiErrorCodes = map[int]string{
	400: "invalid_request_error",
	401: "invalid_api_key",
	403: "unsupported_country_region_territory",
	404: "model_not_found",
	429: "rate_limit_exceeded",
}

// openaiError is the error body OpenAI sends for status.
func openaiError(status int, message string) map[string]any {
	typ := "invalid_request_error"
	if status >= 500 {
		typ = "server_error"
	}
	var code any
	if c, ok := openaiErrorCodes[status]; ok {
		code = c
	}
	return map[string]any{"error": map[string]any{"message": message, "type": typ, "param": nil, "code": code}}
}

func (openaiWire) writeError(w http.ResponseWriter, status int, message string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	writeJSON(w, openaiError(status, message))
}

var openaiFinish = map[llm.StopReason]string{
	llm.StopEndTurn:   "stop",
	llm.StopToolUse:   "tool_calls",
	llm.StopMaxTokens: "length",
	llm.StopOther:     "content_filter",
}

func openaiUsage(u llm.Usage) map[string]any {
	prompt := u.InputTokens + u.CacheReadTokens + u.CacheWriteTokens
	return map[string]any{
		"prompt_tokens":     prompt,
		"completion_tokens": u.OutputTokens,
		"total_tokens":      prompt + u.OutputTokens,
		"prompt_tokens_details": map[string]any{
			"cached_tokens":      u.CacheReadTokens,
			"cache_write_tokens": u.CacheWriteTokens,
		},
	}
}

// split returns the reply's text and its tool calls in wire form.
func (openaiWire) split(r ModelReply) (text string, calls []map[string]any) {
	var b bytes.Buffer
	for _, blk := range r.Content {
		switch blk.Type {
		case llm.BlockText:
			b.WriteString(blk.Text)
		case llm.BlockToolUse:
			calls = append(calls, map[string]any{"id": blk.ToolUseID, "type": "function",
				"function": map[string]any{"name": blk.ToolName, "arguments": string(input(blk))}})
		}
	}
	return b.String(), calls
}

func (o openaiWire) writeReply(w http.ResponseWriter, req *ModelRequest, r ModelReply, seq int) {
	text, calls := o.split(r)
	msg := map[string]any{"role": "assistant", "content": text, "refusal": nil}
	if text == "" && len(calls) > 0 {
		msg["content"] = nil
	}
	if len(calls) > 0 {
		msg["tool_calls"] = calls
	}
	writeJSON(w, map[string]any{
		"id":      fmt.Sprintf("chatcmpl-fake-%d", seq),
		"object":  "chat.completion",
		"created": 1700000000,
		"model":   r.model(req),
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": openaiFinish[r.stopReason()], "logprobs": nil}},
		"usage":   openaiUsage(r.Usage),
	})
}

// writeStream sends chat.completion.chunk events: the role, the text in
// pieces, each tool call's id and name then its arguments in pieces, the
// finish reason, a usage chunk when stream_options.include_usage asked for
// one, and data: [DONE].
func (o openaiWire) writeStream(w http.ResponseWriter, req *ModelRequest, r ModelReply, seq int) {
	chunk := func(delta map[string]any, finish any) map[string]any {
		return map[string]any{
			"id": fmt.Sprintf("chatcmpl-fake-%d", seq), "object": "chat.completion.chunk", "created": 1700000000,
			"model":   r.model(req),
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": nil}},
		}
	}
	text, calls := o.split(r)
	writeEvent(w, "", chunk(map[string]any{"role": "assistant", "content": ""}, nil))
	if r.Status >= 400 { // MidStream
		writeEvent(w, "", openaiError(r.Status, r.Message))
		return
	}
	for _, p := range pieces(text, 16) {
		writeEvent(w, "", chunk(map[string]any{"content": p}, nil))
	}
	for i, c := range calls {
		fn := c["function"].(map[string]any)
		writeEvent(w, "", chunk(map[string]any{"tool_calls": []any{map[string]any{"index": i, "id": c["id"], "type": "function",
			"function": map[string]any{"name": fn["name"], "arguments": ""}}}}, nil))
		for _, p := range pieces(fn["arguments"].(string), 16) {
			writeEvent(w, "", chunk(map[string]any{"tool_calls": []any{map[string]any{"index": i,
				"function": map[string]any{"arguments": p}}}}, nil))
		}
	}
	writeEvent(w, "", chunk(map[string]any{}, openaiFinish[r.stopReason()]))
	var opts struct {
		StreamOptions struct {
			IncludeUsage bool `json:"include_usage"`
		} `json:"stream_options"`
	}
	if json.Unmarshal(req.Body, &opts) == nil && opts.StreamOptions.IncludeUsage {
		writeEvent(w, "", map[string]any{
			"id": fmt.Sprintf("chatcmpl-fake-%d", seq), "object": "chat.completion.chunk", "created": 1700000000,
			"model": r.model(req), "choices": []any{}, "usage": openaiUsage(r.Usage),
		})
	}
	writeEvent(w, "", "[DONE]")
}
