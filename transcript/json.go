package transcript

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/llm"
)

// jsonMessage is one element of a plain JSON message list, in the shape of
// the Anthropic Messages API.
type jsonMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// ReadMessagesJSON reads a plain JSON list of messages,
//
//	[{"role": "user", "content": "..."}, {"role": "assistant", "content": [{"type": "text", "text": "..."}]}]
//
// where content is a string or a list of Anthropic content blocks (text,
// tool_use, tool_result; others are dropped and counted). Unlike a JSONL
// log, this is a file someone wrote on purpose, so anything malformed is an
// error naming the message. Messages get UUIDs "json-1", "json-2", … in
// order, each the parent of the next, so [Transcript.Since] works on them.
func ReadMessagesJSON(r io.Reader) (*Transcript, error) {
	dec := json.NewDecoder(r)
	var list []json.RawMessage
	if err := dec.Decode(&list); err != nil {
		return nil, fmt.Errorf("decode message list: %w: %w", err, memdir.ErrInvalid)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("decode message list: unexpected data after the list: %w", memdir.ErrInvalid)
	}
	t := &Transcript{Format: FormatJSON, Lines: len(list), Types: map[string]int{}, after: make(map[string]int, len(list))}
	parent := ""
	for i, raw := range list {
		var jm jsonMessage
		if err := json.Unmarshal(raw, &jm); err != nil {
			return nil, fmt.Errorf("message %d: %w: %w", i+1, err, memdir.ErrInvalid)
		}
		var role llm.Role
		switch jm.Role {
		case "user":
			role = llm.RoleUser
		case "assistant":
			role = llm.RoleAssistant
		default:
			return nil, fmt.Errorf("message %d: role %q, want \"user\" or \"assistant\": %w", i+1, jm.Role, memdir.ErrInvalid)
		}
		content, dropped, err := decodeContent(jm.Content)
		if err != nil {
			return nil, fmt.Errorf("message %d: %w: %w", i+1, err, memdir.ErrInvalid)
		}
		uuid := "json-" + strconv.Itoa(i+1)
		t.messages = append(t.messages, Message{
			Message:    llm.Message{Role: role, Content: content},
			UUID:       uuid,
			ParentUUID: parent,
			PartUUIDs:  []string{uuid},
			Line:       i + 1,
			Dropped:    dropped,
		})
		t.Types[jm.Role]++
		t.after[uuid] = i + 1
		parent = uuid
	}
	t.Leaf = parent
	return t, nil
}
