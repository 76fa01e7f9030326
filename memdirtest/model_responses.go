package memdirtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/memdir/memdir/llm"
)

// responsesWire speaks POST /v1/responses, the OpenAI Responses API, as
// Codex CLI uses it: an input list of items, streamed replies of typed
// events.
//
// Tool calls map to the neutral form both ways. A function tool takes JSON
// arguments; a custom (freeform) tool, such as Codex's apply_patch, takes a
// plain string, which the neutral form carries as a JSON string in Input. So
// a scripted tool_use block whose Input is a JSON string is sent as a
// custom_tool_call, any other as a function_call.
type responsesWire struct{}

// writeError writes the error body the Chat Completions API uses too.
func (responsesWire) writeError(w http.ResponseWriter, status int, message string) {
	openaiWire{}.writeError(w, status, message)
}

// responsesItem is one element of a Responses API input list, with the
// fields of every kind of item the fake understands.
type responsesItem struct {
	Type    string          `json:"type"`
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
	CallID  string          `json:"call_id"`
	Name    string          `json:"name"`
	// Arguments are a function_call's, Input a custom_tool_call's.
	Arguments string          `json:"arguments"`
	Input     string          `json:"input"`
	Output    json.RawMessage `json:"output"`
}

// responsesRequest is the body of POST /v1/responses, the fields the fake
// reads.
type responsesRequest struct {
	Model           string          `json:"model"`
	Stream          bool            `json:"stream"`
	Instructions    string          `json:"instructions"`
	Input           json.RawMessage `json:"input"`
	MaxOutputTokens int             `json:"max_output_tokens"`
	Tools           []struct {
		Type        string          `json:"type"`
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
	} `json:"tools"`
	ToolChoice json.RawMessage `json:"tool_choice"`
	Text       *struct {
		Format *struct {
			Type   string          `json:"type"`
			Name   string          `json:"name"`
			Schema json.RawMessage `json:"schema"`
		} `json:"format"`
	} `json:"text"`
}

func (responsesWire) decode(body []byte, req *ModelRequest) error {
	var in responsesRequest
	if err := json.Unmarshal(body, &in); err != nil {
		return err
	}
	if in.Model == "" {
		return fmt.Errorf("model is required")
	}
	req.Model, req.Stream, req.MaxTokens = in.Model, in.Stream, in.MaxOutputTokens
	items, err := responsesInput(in.Input)
	if err != nil {
		return err
	}
	system := []string{}
	if in.Instructions != "" {
		system = append(system, in.Instructions)
	}
	for i, it := range items {
		if system, err = decodeResponsesItem(req, system, i, it); err != nil {
			return err
		}
	}
	req.System = strings.Join(system, "\n\n")
	return in.decodeTools(req)
}

// responsesInput returns the input items: a list as it is, a string as
// one user message.
func responsesInput(input json.RawMessage) ([]responsesItem, error) {
	var items []responsesItem
	raw := bytes.TrimSpace(input)
	switch {
	case len(raw) > 0 && raw[0] == '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, fmt.Errorf("input: %w", err)
		}
		items = []responsesItem{{Type: "message", Role: "user", Content: raw}}
	case len(raw) > 0 && raw[0] == '[':
		if err := json.Unmarshal(raw, &items); err != nil {
			return nil, fmt.Errorf("input: %w", err)
		}
	default:
		return nil, fmt.Errorf("input is required")
	}
	return items, nil
}

// decodeResponsesItem adds input item i to req's messages, or, for a
// system or developer message, its text to system, which it returns.
func decodeResponsesItem(req *ModelRequest, system []string, i int, it responsesItem) ([]string, error) {
	typ := it.Type
	if typ == "" && it.Role != "" {
		typ = "message" // the short form {"role", "content"}
	}
	switch typ {
	case "message":
		text, err := textOf(it.Content)
		if err != nil {
			return system, fmt.Errorf("input[%d]: %w", i, err)
		}
		switch it.Role {
		case "system", "developer":
			system = append(system, text)
		case "user":
			joinBlock(req, llm.RoleUser, llm.TextBlock(text))
		case "assistant":
			joinBlock(req, llm.RoleAssistant, llm.TextBlock(text))
		default:
			return system, fmt.Errorf("input[%d]: role %q is not supported by the fake", i, it.Role)
		}
	case "function_call":
		joinBlock(req, llm.RoleAssistant, llm.Block{Type: llm.BlockToolUse, ToolUseID: it.CallID, ToolName: it.Name, Input: json.RawMessage(it.Arguments)})
	case "custom_tool_call":
		arg, _ := json.Marshal(it.Input)
		joinBlock(req, llm.RoleAssistant, llm.Block{Type: llm.BlockToolUse, ToolUseID: it.CallID, ToolName: it.Name, Input: arg})
	case "function_call_output", "custom_tool_call_output":
		text, err := textOf(it.Output)
		if err != nil {
			return system, fmt.Errorf("input[%d] output: %w", i, err)
		}
		joinBlock(req, llm.RoleUser, llm.Block{Type: llm.BlockToolResult, ToolUseID: it.CallID, Text: text})
	case "reasoning":
		// The model's own reasoning, replayed: nothing a test asserts on.
	default:
		return system, fmt.Errorf("input[%d]: item type %q is not supported by the fake", i, typ)
	}
	return system, nil
}

// joinBlock adds b to req's messages. Consecutive items of one side join
// into one neutral message: an assistant message and the calls after it
// are one turn, tool outputs and the user text after them another.
func joinBlock(req *ModelRequest, role llm.Role, b llm.Block) {
	if n := len(req.Messages); n > 0 && req.Messages[n-1].Role == role {
		req.Messages[n-1].Content = append(req.Messages[n-1].Content, b)
		return
	}
	req.Messages = append(req.Messages, llm.Message{Role: role, Content: []llm.Block{b}})
}

// decodeTools records the function and custom tools, the tool the
// request forces, if any, and the JSON schema it asks the reply to match.
func (in *responsesRequest) decodeTools(req *ModelRequest) error {
	for _, t := range in.Tools {
		// Built-in tools (web_search, tool_search) have no name; they are
		// in Body for a test that cares.
		if t.Type == "function" || t.Type == "custom" {
			req.Tools = append(req.Tools, llm.Tool{Name: t.Name, Description: t.Description, InputSchema: t.Parameters})
		}
	}
	if len(in.ToolChoice) > 0 && in.ToolChoice[0] == '{' {
		var tc struct {
			Name string `json:"name"`
		}
		if err := json.Unmarshal(in.ToolChoice, &tc); err != nil {
			return fmt.Errorf("tool_choice: %w", err)
		}
		req.ToolChoice = tc.Name
	}
	if in.Text != nil && in.Text.Format != nil && in.Text.Format.Type == "json_schema" {
		req.Schema, req.SchemaName = in.Text.Format.Schema, in.Text.Format.Name
	}
	return nil
}

// responsesUsage is the usage object of a response: input_tokens counts the
// cached tokens too, as in the Chat Completions format.
func responsesUsage(u llm.Usage) map[string]any {
	in := u.InputTokens + u.CacheReadTokens + u.CacheWriteTokens
	return map[string]any{
		"input_tokens":          in,
		"input_tokens_details":  map[string]any{"cached_tokens": u.CacheReadTokens},
		"output_tokens":         u.OutputTokens,
		"output_tokens_details": map[string]any{"reasoning_tokens": 0},
		"total_tokens":          in + u.OutputTokens,
	}
}

// outputItems returns the reply's content as finished output items, in
// order: one message item per text block, one call item per tool call.
func (responsesWire) outputItems(r ModelReply, seq int) []map[string]any {
	var out []map[string]any
	for i, b := range r.Content {
		switch b.Type {
		case llm.BlockText:
			out = append(out, map[string]any{
				"type": "message", "id": fmt.Sprintf("msg_fake_%d_%d", seq, i), "status": "completed", "role": "assistant",
				"content": []any{map[string]any{"type": "output_text", "text": b.Text, "annotations": []any{}}},
			})
		case llm.BlockToolUse:
			in := input(b)
			var s string
			if len(in) > 0 && in[0] == '"' && json.Unmarshal(in, &s) == nil {
				out = append(out, map[string]any{
					"type": "custom_tool_call", "id": fmt.Sprintf("ctc_fake_%d_%d", seq, i), "status": "completed",
					"call_id": b.ToolUseID, "name": b.ToolName, "input": s,
				})
				continue
			}
			out = append(out, map[string]any{
				"type": "function_call", "id": fmt.Sprintf("fc_fake_%d_%d", seq, i), "status": "completed",
				"call_id": b.ToolUseID, "name": b.ToolName, "arguments": string(in),
			})
		}
	}
	return out
}

// response returns the response object; status is "completed", or
// "incomplete" when the reply stopped at the token limit.
func (w responsesWire) response(req *ModelRequest, r ModelReply, seq int) map[string]any {
	resp := map[string]any{
		"id": fmt.Sprintf("resp_fake_%d", seq), "object": "response", "created_at": 1700000000,
		"status": "completed", "model": r.model(req), "output": w.outputItems(r, seq),
		"usage": responsesUsage(r.Usage), "error": nil, "incomplete_details": nil,
	}
	if r.stopReason() == llm.StopMaxTokens {
		resp["status"] = "incomplete"
		resp["incomplete_details"] = map[string]any{"reason": "max_output_tokens"}
	}
	return resp
}

func (w responsesWire) writeReply(rw http.ResponseWriter, req *ModelRequest, r ModelReply, seq int) {
	writeJSON(rw, w.response(req, r, seq))
}

// writeStream sends the events of a streamed response: response.created and
// response.in_progress; per output item output_item.added, its deltas (text
// in content_part and output_text events, a function call's arguments, a
// custom tool call's input) and output_item.done; then response.completed
// (response.incomplete at the token limit) carrying the whole response and
// its usage. Every event has its sequence_number, as the service sends.
func (w responsesWire) writeStream(rw http.ResponseWriter, req *ModelRequest, r ModelReply, seq int) {
	n := 0
	send := func(typ string, fields map[string]any) {
		fields["type"] = typ
		fields["sequence_number"] = n
		n++
		writeEvent(rw, typ, fields)
	}
	final := w.response(req, r, seq)
	start := map[string]any{}
	for k, v := range final {
		start[k] = v
	}
	start["status"], start["output"], start["usage"] = "in_progress", []any{}, nil
	send("response.created", map[string]any{"response": start})
	send("response.in_progress", map[string]any{"response": start})
	for i, item := range final["output"].([]map[string]any) {
		id := item["id"]
		added := map[string]any{}
		for k, v := range item {
			added[k] = v
		}
		added["status"] = "in_progress"
		switch item["type"] {
		case "message":
			text := item["content"].([]any)[0].(map[string]any)["text"].(string)
			added["content"] = []any{}
			send("response.output_item.added", map[string]any{"output_index": i, "item": added})
			send("response.content_part.added", map[string]any{"item_id": id, "output_index": i, "content_index": 0,
				"part": map[string]any{"type": "output_text", "text": "", "annotations": []any{}}})
			for _, p := range pieces(text, 16) {
				send("response.output_text.delta", map[string]any{"item_id": id, "output_index": i, "content_index": 0, "delta": p, "logprobs": []any{}})
			}
			send("response.output_text.done", map[string]any{"item_id": id, "output_index": i, "content_index": 0, "text": text, "logprobs": []any{}})
			send("response.content_part.done", map[string]any{"item_id": id, "output_index": i, "content_index": 0,
				"part": map[string]any{"type": "output_text", "text": text, "annotations": []any{}}})
		case "function_call":
			args := item["arguments"].(string)
			added["arguments"] = ""
			send("response.output_item.added", map[string]any{"output_index": i, "item": added})
			for _, p := range pieces(args, 16) {
				send("response.function_call_arguments.delta", map[string]any{"item_id": id, "output_index": i, "delta": p})
			}
			send("response.function_call_arguments.done", map[string]any{"item_id": id, "output_index": i, "arguments": args})
		case "custom_tool_call":
			in := item["input"].(string)
			added["input"] = ""
			send("response.output_item.added", map[string]any{"output_index": i, "item": added})
			for _, p := range pieces(in, 16) {
				send("response.custom_tool_call_input.delta", map[string]any{"item_id": id, "output_index": i, "delta": p})
			}
			send("response.custom_tool_call_input.done", map[string]any{"item_id": id, "output_index": i, "input": in})
		}
		send("response.output_item.done", map[string]any{"output_index": i, "item": item})
	}
	if final["status"] == "incomplete" {
		send("response.incomplete", map[string]any{"response": final})
		return
	}
	send("response.completed", map[string]any{"response": final})
}
