package transcript

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/memdir/memdir/llm"
)

// FormatCodex is Codex CLI's session file ("rollout"), one JSON object a
// line: $CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<session>.jsonl.
const FormatCodex Format = "codex"

// codexLine is one line of a rollout file: {"timestamp", "ordinal",
// "type", "payload"}.
type codexLine struct {
	Timestamp string          `json:"timestamp"`
	Type      string          `json:"type"`
	Payload   json.RawMessage `json:"payload"`
}

// codexItem is the payload of a response_item line (the history the model
// sees) or of a session_meta or turn_context line, reduced to the fields
// memdir reads.
type codexItem struct {
	Type string `json:"type"`
	// session_meta
	ID        string `json:"id"`
	SessionID string `json:"session_id"`
	// turn_context
	Model string `json:"model"`
	// message
	Role    string `json:"role"`
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	Meta *struct {
		Kinds []string `json:"content_item_kinds"`
	} `json:"internal_chat_message_metadata_passthrough"`
	// function_call, custom_tool_call and their outputs
	CallID    string          `json:"call_id"`
	Name      string          `json:"name"`
	Arguments string          `json:"arguments"`
	Input     string          `json:"input"`
	Output    json.RawMessage `json:"output"`
}

// ReadCodex reads a Codex CLI rollout file. The conversation is the
// response_item lines: what the user typed, the assistant's text, and the
// tool calls with their outputs. Instructions, hook context and the other
// blocks Codex adds to the history (developer messages, user-role
// <environment_context> and the like) are left out: Codex marks the
// user's own text with the content kind "user.text", and an older file
// without those marks is read by leaving out user blocks that are one
// wrapped <tag>…</tag>. Consecutive assistant items (a message and the
// calls after it) are one message, as are consecutive tool outputs.
//
// Messages are identified by their line ("line-12"), which never changes
// in a file Codex only appends to, so [Transcript.Since] works as an
// extraction cursor. Lines are read as [Read] reads Claude Code's:
// broken ones are skipped and listed, unknown types counted.
func ReadCodex(r io.Reader) (*Transcript, error) {
	c := &codexBuilder{t: &Transcript{Format: FormatCodex, Types: map[string]int{}}}
	n, err := scanLines(r, c.line, func(n int) {
		c.t.skip(n, fmt.Sprintf("line longer than %d bytes", maxLineBytes))
	})
	if err != nil {
		return nil, err
	}
	c.t.Lines = n
	finishLinear(c.t)
	return c.t, nil
}

type codexBuilder struct {
	t     *Transcript
	model string
}

func (c *codexBuilder) line(n int, text []byte, complete bool) {
	var l codexLine
	if !decodeLine(c.t, n, text, complete, &l) {
		return
	}
	var it codexItem
	if len(l.Payload) > 0 && l.Payload[0] == '{' {
		if err := json.Unmarshal(l.Payload, &it); err != nil {
			c.t.skip(n, l.Type+" line: payload: "+err.Error())
			return
		}
	}
	typ := cmp.Or(l.Type, "(none)")
	if l.Type == "response_item" {
		typ += "/" + cmp.Or(it.Type, "(none)")
	}
	c.t.Types[typ]++
	switch l.Type {
	case "session_meta":
		if c.t.SessionID == "" {
			c.t.SessionID = cmp.Or(it.ID, it.SessionID)
		}
	case "turn_context":
		if it.Model != "" {
			c.model = it.Model
		}
	case "response_item":
		c.item(n, parseTime(l.Timestamp), &it)
	}
}

// item adds one response item to the conversation.
func (c *codexBuilder) item(n int, at time.Time, it *codexItem) {
	var role llm.Role
	var blocks []llm.Block
	switch it.Type {
	case "message":
		role, blocks = codexMessage(it)
	case "function_call", "custom_tool_call":
		input := json.RawMessage(it.Arguments)
		if it.Type == "custom_tool_call" || !json.Valid(input) {
			// A freeform tool (apply_patch) takes its input as text.
			input, _ = json.Marshal(map[string]string{"input": cmp.Or(it.Input, it.Arguments)})
		}
		role, blocks = llm.RoleAssistant, []llm.Block{{Type: llm.BlockToolUse, ToolUseID: it.CallID, ToolName: it.Name, Input: input}}
	case "function_call_output", "custom_tool_call_output":
		role, blocks = llm.RoleUser, []llm.Block{{Type: llm.BlockToolResult, ToolUseID: it.CallID, Text: codexOutput(it.Output)}}
	}
	if len(blocks) == 0 {
		return
	}
	id := "line-" + strconv.Itoa(n)
	msgs := c.t.messages
	if k := len(msgs) - 1; k >= 0 && msgs[k].Role == role && (role == llm.RoleAssistant || msgs[k].IsToolResult() && blocks[0].Type == llm.BlockToolResult) {
		m := &msgs[k]
		m.Content = append(m.Content, blocks...)
		m.UUID = id
		m.PartUUIDs = append(m.PartUUIDs, id)
		return
	}
	m := Message{Message: llm.Message{Role: role, Content: blocks}, UUID: id, PartUUIDs: []string{id}, Timestamp: at, Line: n}
	if role == llm.RoleAssistant {
		m.Model = c.model
	}
	c.t.messages = append(c.t.messages, m)
}

// codexMessage returns the role and text of a message item, nil blocks for
// one that is not part of the conversation: instructions, hook context,
// injected environment blocks.
func codexMessage(it *codexItem) (llm.Role, []llm.Block) {
	var role llm.Role
	switch it.Role {
	case "user":
		role = llm.RoleUser
	case "assistant":
		role = llm.RoleAssistant
	default: // developer, system: instructions and hook context
		return "", nil
	}
	var blocks []llm.Block
	for i, part := range it.Content {
		if part.Text == "" || part.Type != "input_text" && part.Type != "output_text" && part.Type != "text" {
			continue
		}
		if role == llm.RoleUser && !codexTyped(it, i, part.Text) {
			continue
		}
		blocks = append(blocks, llm.TextBlock(part.Text))
	}
	return role, blocks
}

// codexTyped reports whether content item i of a user message is what the
// user typed, by Codex's own mark when the file has it.
func codexTyped(it *codexItem, i int, text string) bool {
	if it.Meta != nil && len(it.Meta.Kinds) > 0 {
		k := it.Meta.Kinds[min(i, len(it.Meta.Kinds)-1)]
		return k == "user.text"
	}
	return !isWrappedBlock(text)
}

// isWrappedBlock reports whether s is one <tag>…</tag> section and nothing
// else, as the context blocks a harness adds are.
func isWrappedBlock(s string) bool {
	s = strings.TrimSpace(s)
	if !strings.HasPrefix(s, "<") {
		return false
	}
	end := strings.IndexAny(s, "> \n")
	if end < 2 || s[end] != '>' {
		return false
	}
	return strings.HasSuffix(s, "</"+s[1:end]+">")
}

// codexOutput flattens a tool output: a string, or an object with the
// text under content or output.
func codexOutput(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var o struct {
		Content json.RawMessage `json:"content"`
		Output  json.RawMessage `json:"output"`
	}
	if json.Unmarshal(raw, &o) == nil {
		for _, v := range []json.RawMessage{o.Content, o.Output} {
			if json.Unmarshal(v, &s) == nil {
				return s
			}
		}
	}
	return string(raw)
}

// finishLinear completes a transcript whose messages were built in file
// order with no branches: the leaf is the last message, each message's
// parent the one before, and Since can cut after any part of one.
func finishLinear(t *Transcript) {
	t.after = make(map[string]int, len(t.messages))
	parent := ""
	for i := range t.messages {
		m := &t.messages[i]
		m.ParentUUID = parent
		for _, id := range m.PartUUIDs {
			t.after[id] = i + 1
		}
		parent = m.UUID
	}
	t.Leaf = parent
	sortSkipped(t.Skipped)
}

func parseTime(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}
	}
	return t
}
