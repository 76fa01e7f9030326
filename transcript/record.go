package transcript

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/memdir/memdir/llm"
)

// record is one JSONL line, reduced to the fields memdir uses. Fields that
// a record type does not carry stay zero.
type record struct {
	Type        string `json:"type"`
	Subtype     string `json:"subtype"`
	UUID        string `json:"uuid"`
	ParentUUID  string `json:"parentUuid"` // null decodes as ""
	SessionID   string `json:"sessionId"`
	Timestamp   string `json:"timestamp"`
	IsSidechain bool   `json:"isSidechain"`
	IsMeta      bool   `json:"isMeta"`

	IsCompactSummary          bool `json:"isCompactSummary"`
	IsVisibleInTranscriptOnly bool `json:"isVisibleInTranscriptOnly"`

	RequestID string      `json:"requestId"`
	Message   *rawMessage `json:"message"`

	// compact_boundary
	LogicalParentUUID string `json:"logicalParentUuid"`
	CompactMetadata   *struct {
		Trigger   string `json:"trigger"`
		PreTokens int    `json:"preTokens"`
	} `json:"compactMetadata"`

	// last-prompt, summary
	LeafUUID string `json:"leafUuid"`

	line int
}

type rawMessage struct {
	ID      string          `json:"id"`
	Role    string          `json:"role"`
	Model   string          `json:"model"`
	Content json.RawMessage `json:"content"` // a string or a list of blocks
	Usage   *rawUsage       `json:"usage"`
}

type rawUsage struct {
	InputTokens              int `json:"input_tokens"`
	OutputTokens             int `json:"output_tokens"`
	CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int `json:"cache_read_input_tokens"`
}

func (u *rawUsage) usage() llm.Usage {
	if u == nil {
		return llm.Usage{}
	}
	return llm.Usage{
		InputTokens:      u.InputTokens,
		OutputTokens:     u.OutputTokens,
		CacheReadTokens:  u.CacheReadInputTokens,
		CacheWriteTokens: u.CacheCreationInputTokens,
		Calls:            1,
	}
}

// rawBlock is an Anthropic content block, any kind.
type rawBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"` // tool_result: a string or a list of blocks
	IsError   bool            `json:"is_error"`
}

var errNotObject = errors.New("not a JSON object")

// parseRecord decodes one line. It fails only on lines that are not a JSON
// object; what the object holds is judged later.
func parseRecord(line []byte) (*record, error) {
	if len(line) == 0 || line[0] != '{' {
		return nil, errNotObject
	}
	var r record
	if err := json.Unmarshal(line, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

func (r *record) time() time.Time {
	t, err := time.Parse(time.RFC3339Nano, r.Timestamp)
	if err != nil {
		return time.Time{}
	}
	return t
}

// decodeContent turns message content (a string or a block list) into
// memdir blocks. Thinking, images, documents and server-side tool blocks
// have no memdir equivalent and are dropped; the count of dropped blocks is
// returned so callers can tell an empty message from a stripped one.
func decodeContent(raw json.RawMessage) ([]llm.Block, int, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, 0, nil
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, 0, err
		}
		return []llm.Block{llm.TextBlock(s)}, 0, nil
	}
	var blocks []rawBlock
	if err := json.Unmarshal(raw, &blocks); err != nil {
		return nil, 0, fmt.Errorf("content is neither a string nor a list of blocks: %w", err)
	}
	out := make([]llm.Block, 0, len(blocks))
	dropped := 0
	for _, b := range blocks {
		switch b.Type {
		case "text":
			out = append(out, llm.TextBlock(b.Text))
		case "tool_use":
			out = append(out, llm.Block{Type: llm.BlockToolUse, ToolUseID: b.ID, ToolName: b.Name, Input: b.Input})
		case "tool_result":
			text, err := resultText(b.Content)
			if err != nil {
				return nil, 0, fmt.Errorf("tool_result %s: %w", b.ToolUseID, err)
			}
			out = append(out, llm.Block{Type: llm.BlockToolResult, ToolUseID: b.ToolUseID, Text: text, IsError: b.IsError})
		default:
			dropped++
		}
	}
	return out, dropped, nil
}

// resultText flattens a tool result's content: a string, or the text blocks
// of a block list joined by newlines (images are left out).
func resultText(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	if raw[0] == '"' {
		var s string
		err := json.Unmarshal(raw, &s)
		return s, err
	}
	var blocks []rawBlock
	if err := json.Unmarshal(raw, &blocks); err != nil {
		return "", fmt.Errorf("content is neither a string nor a list of blocks: %w", err)
	}
	var b strings.Builder
	for _, c := range blocks {
		if c.Type != "text" {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(c.Text)
	}
	return b.String(), nil
}
