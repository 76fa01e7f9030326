package memdirtest

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/memdir/memdir/llm"
)

// anthropicWire speaks POST /v1/messages.
type anthropicWire struct{}

type anthropicBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
}

func (anthropicWire) decode(body []byte, req *ModelRequest) error {
	var in struct {
		Model     string          `json:"model"`
		MaxTokens int             `json:"max_tokens"`
		Stream    bool            `json:"stream"`
		System    json.RawMessage `json:"system"`
		Messages  []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
		Tools []struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			InputSchema json.RawMessage `json:"input_schema"`
		} `json:"tools"`
		ToolChoice *struct {
			Type string `json:"type"`
			Name string `json:"name"`
		} `json:"tool_choice"`
		OutputConfig *struct {
			Format *struct {
				Schema json.RawMessage `json:"schema"`
			} `json:"format"`
		} `json:"output_config"`
	}
	if err := json.Unmarshal(body, &in); err != nil {
		return err
	}
	if in.Model == "" || in.MaxTokens <= 0 {
		return fmt.Errorf("model and max_tokens are required")
	}
	req.Model, req.MaxTokens, req.Stream = in.Model, in.MaxTokens, in.Stream
	var err error
	if req.System, err = textOf(in.System); err != nil {
		return fmt.Errorf("system: %w", err)
	}
	for i, m := range in.Messages {
		msg := llm.Message{Role: llm.Role(m.Role)}
		if len(m.Content) > 0 && m.Content[0] == '"' {
			var s string
			if err := json.Unmarshal(m.Content, &s); err != nil {
				return fmt.Errorf("messages[%d]: %w", i, err)
			}
			msg.Content = []llm.Block{llm.TextBlock(s)}
			req.Messages = append(req.Messages, msg)
			continue
		}
		var blocks []anthropicBlock
		if err := json.Unmarshal(m.Content, &blocks); err != nil {
			return fmt.Errorf("messages[%d]: %w", i, err)
		}
		for _, b := range blocks {
			switch b.Type {
			case "text":
				msg.Content = append(msg.Content, llm.TextBlock(b.Text))
			case "tool_use":
				msg.Content = append(msg.Content, llm.Block{Type: llm.BlockToolUse, ToolUseID: b.ID, ToolName: b.Name, Input: b.Input})
			case "tool_result":
				text, err := textOf(b.Content)
				if err != nil {
					return fmt.Errorf("messages[%d] tool_result: %w", i, err)
				}
				msg.Content = append(msg.Content, llm.Block{Type: llm.BlockToolResult, ToolUseID: b.ToolUseID, Text: text, IsError: b.IsError})
			default:
				return fmt.Errorf("messages[%d]: block type %q is not supported by the fake", i, b.Type)
			}
		}
		req.Messages = append(req.Messages, msg)
	}
	for _, t := range in.Tools {
		req.Tools = append(req.Tools, llm.Tool{Name: t.Name, Description: t.Description, InputSchema: t.InputSchema})
	}
	if in.ToolChoice != nil && in.ToolChoice.Type == "tool" {
		req.ToolChoice = in.ToolChoice.Name
	}
	if in.OutputConfig != nil && in.OutputConfig.Format != nil {
		req.Schema = in.OutputConfig.Format.Schema
	}
	return nil
}

// anthropicErrorTypes are the error.type values the API uses per status.
var anthropicErrorTypes = map[int]string{
	400: "invalid_request_error",
	401: "authentication_error",
	403: "permission_error",
	404: "not_found_error",
	413: "request_too_large",
	429: "rate_limit_error",
	500: "api_error",
	529: "overloaded_error",
}

// anthropicErrorType is the error.type the API sends with status.
func anthropicErrorType(status int) string {
	if typ, ok := anthropicErrorTypes[status]; ok {
		return typ
	}
	return "api_error"
}

func (anthropicWire) writeError(w http.ResponseWriter, status int, message string) {
	typ := anthropicErrorType(status)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Request-Id", "req_fake")
	w.WriteHeader(status)
	writeJSON(w, map[string]any{
		"type":       "error",
		"error":      map[string]any{"type": typ, "message": message},
		"request_id": "req_fake",
	})
}

func anthropicUsage(u llm.Usage) map[string]any {
	return map[string]any{
		"input_tokens":                u.InputTokens,
		"output_tokens":               u.OutputTokens,
		"cache_read_input_tokens":     u.CacheReadTokens,
		"cache_creation_input_tokens": u.CacheWriteTokens,
	}
}

func anthropicContent(r ModelReply) []map[string]any {
	out := []map[string]any{}
	for _, b := range r.Content {
		switch b.Type {
		case llm.BlockText:
			out = append(out, map[string]any{"type": "text", "text": b.Text})
		case llm.BlockToolUse:
			out = append(out, map[string]any{"type": "tool_use", "id": b.ToolUseID, "name": b.ToolName, "input": input(b)})
		}
	}
	return out
}

// anthropicStop are the stop_reason values the API sends; StopOther is
// sent as a refusal, one of the reasons that are none of the others.
var anthropicStop = map[llm.StopReason]string{
	llm.StopEndTurn:   "end_turn",
	llm.StopToolUse:   "tool_use",
	llm.StopMaxTokens: "max_tokens",
	llm.StopOther:     "refusal",
}

func (anthropicWire) message(req *ModelRequest, r ModelReply, seq int) map[string]any {
	return map[string]any{
		"id":            fmt.Sprintf("msg_fake_%d", seq),
		"type":          "message",
		"role":          "assistant",
		"model":         r.model(req),
		"content":       anthropicContent(r),
		"stop_reason":   anthropicStop[r.stopReason()],
		"stop_sequence": nil,
		"usage":         anthropicUsage(r.Usage),
	}
}

func (a anthropicWire) writeReply(w http.ResponseWriter, req *ModelRequest, r ModelReply, seq int) {
	writeJSON(w, a.message(req, r, seq))
}

// writeStream sends the event sequence of the streaming Messages API:
// message_start, then per block content_block_start, deltas and
// content_block_stop, then message_delta (stop reason, output tokens) and
// message_stop.
func (a anthropicWire) writeStream(w http.ResponseWriter, req *ModelRequest, r ModelReply, seq int) {
	start := a.message(req, r, seq)
	start["content"] = []any{}
	start["stop_reason"] = nil
	usage := anthropicUsage(r.Usage)
	usage["output_tokens"] = 0
	start["usage"] = usage
	writeEvent(w, "message_start", map[string]any{"type": "message_start", "message": start})
	writeEvent(w, "ping", map[string]any{"type": "ping"})
	if r.Status >= 400 { // MidStream
		writeEvent(w, "error", map[string]any{"type": "error", "error": map[string]any{"type": anthropicErrorType(r.Status), "message": r.Message}})
		return
	}
	i := 0 // the index of the block on the wire
	for _, b := range r.Content {
		switch b.Type {
		case llm.BlockText:
			writeEvent(w, "content_block_start", map[string]any{"type": "content_block_start", "index": i,
				"content_block": map[string]any{"type": "text", "text": ""}})
			for _, p := range pieces(b.Text, 16) {
				writeEvent(w, "content_block_delta", map[string]any{"type": "content_block_delta", "index": i,
					"delta": map[string]any{"type": "text_delta", "text": p}})
			}
		case llm.BlockToolUse:
			writeEvent(w, "content_block_start", map[string]any{"type": "content_block_start", "index": i,
				"content_block": map[string]any{"type": "tool_use", "id": b.ToolUseID, "name": b.ToolName, "input": map[string]any{}}})
			for _, p := range pieces(string(input(b)), 16) {
				writeEvent(w, "content_block_delta", map[string]any{"type": "content_block_delta", "index": i,
					"delta": map[string]any{"type": "input_json_delta", "partial_json": p}})
			}
		default:
			continue
		}
		writeEvent(w, "content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
		i++
	}
	writeEvent(w, "message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": anthropicStop[r.stopReason()], "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": r.Usage.OutputTokens}})
	writeEvent(w, "message_stop", map[string]any{"type": "message_stop"})
}
