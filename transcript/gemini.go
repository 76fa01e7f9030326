package transcript

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/memdir/memdir/llm"
)

// FormatGemini is Gemini CLI's chat file, one JSON object a line:
// ~/.gemini/tmp/<project>/chats/session-<time>-<session>.jsonl.
const FormatGemini Format = "gemini"

// geminiLine is one line of a chat file: the header, a message, or a
// {"$set": …} patch of the header or of the whole message list.
type geminiLine struct {
	SessionID   string `json:"sessionId"`
	ProjectHash string `json:"projectHash"`
	Set         *struct {
		Messages []json.RawMessage `json:"messages"`
	} `json:"$set"`
	geminiRecord
}

// geminiRecord is one message of the chat.
type geminiRecord struct {
	ID        string          `json:"id"`
	Timestamp string          `json:"timestamp"`
	Type      string          `json:"type"`    // user, gemini, info, error, warning
	Content   json.RawMessage `json:"content"` // user: a list of parts; gemini: the reply text
	Model     string          `json:"model"`
	ToolCalls []struct {
		ID   string          `json:"id"`
		Name string          `json:"name"`
		Args json.RawMessage `json:"args"`
	} `json:"toolCalls"`

	line int
}

// geminiPart is one part of a message's content.
type geminiPart struct {
	Text             *string `json:"text"`
	FunctionResponse *struct {
		ID       string          `json:"id"`
		Name     string          `json:"name"`
		Response json.RawMessage `json:"response"`
	} `json:"functionResponse"`
}

// geminiInjected wrap what Gemini CLI adds to the user's text: the session
// context it opens a chat with, and hook context.
var geminiInjected = []string{"session_context", "hook_context"}

// ReadGemini reads a Gemini CLI chat file. The conversation is the user
// and gemini lines: the user's text (without the <session_context> and
// <hook_context> sections Gemini adds to it), tool results, and the
// model's replies with their tool calls. A message written again under
// the same id replaces the earlier line in place (a reply gains its tool
// calls that way), and {"$set": {"messages": […]}} replaces the whole
// list. Lines are read as [Read] reads Claude Code's: broken ones are
// skipped and listed, unknown types counted. Messages keep Gemini's ids,
// so [Transcript.Since] works as an extraction cursor.
func ReadGemini(r io.Reader) (*Transcript, error) {
	g := &geminiBuilder{t: &Transcript{Format: FormatGemini, Types: map[string]int{}}, byID: map[string]int{}}
	n, err := scanLines(r, g.line, func(n int) {
		g.t.skip(n, fmt.Sprintf("line longer than %d bytes", maxLineBytes))
	})
	if err != nil {
		return nil, err
	}
	g.t.Lines = n
	for _, rec := range g.records {
		if m, ok := g.message(rec); ok {
			g.t.messages = append(g.t.messages, m)
		}
	}
	finishLinear(g.t)
	return g.t, nil
}

type geminiBuilder struct {
	t       *Transcript
	records []geminiRecord
	byID    map[string]int // message id → index in records
}

func (g *geminiBuilder) line(n int, text []byte, complete bool) {
	var l geminiLine
	if !decodeLine(g.t, n, text, complete, &l) {
		return
	}
	switch {
	case l.Set != nil:
		g.t.Types["$set"]++
		if l.Set.Messages != nil {
			g.records, g.byID = nil, map[string]int{}
			for _, raw := range l.Set.Messages {
				var rec geminiRecord
				if err := json.Unmarshal(raw, &rec); err != nil {
					g.t.skip(n, "$set message: "+err.Error())
					continue
				}
				g.put(n, rec)
			}
		}
	case l.Type == "" && l.ProjectHash != "":
		g.t.Types["header"]++
		g.t.SessionID = cmp.Or(g.t.SessionID, l.SessionID)
	default:
		g.t.Types[cmp.Or(l.Type, "(none)")]++
		g.put(n, l.geminiRecord)
	}
}

// put adds a message, or replaces the one with its id.
func (g *geminiBuilder) put(n int, rec geminiRecord) {
	rec.line = n
	if rec.ID == "" {
		rec.ID = "line-" + strconv.Itoa(n)
	}
	if i, ok := g.byID[rec.ID]; ok {
		rec.line = g.records[i].line
		g.records[i] = rec
		return
	}
	g.byID[rec.ID] = len(g.records)
	g.records = append(g.records, rec)
}

// message turns a record into a message; ok is false for records that are
// not part of the conversation (notices, the session context alone).
func (g *geminiBuilder) message(rec geminiRecord) (Message, bool) {
	m := Message{UUID: rec.ID, PartUUIDs: []string{rec.ID}, Timestamp: parseTime(rec.Timestamp), Line: rec.line}
	switch rec.Type {
	case "user":
		m.Role = llm.RoleUser
		m.Content = geminiUserContent(rec.Content)
	case "gemini":
		m.Role, m.Model = llm.RoleAssistant, rec.Model
		if text := geminiText(rec.Content); strings.TrimSpace(text) != "" {
			m.Content = append(m.Content, llm.TextBlock(text))
		}
		for _, c := range rec.ToolCalls {
			m.Content = append(m.Content, llm.Block{Type: llm.BlockToolUse, ToolUseID: c.ID, ToolName: c.Name, Input: c.Args})
		}
	default:
		return Message{}, false
	}
	return m, len(m.Content) > 0
}

// geminiUserContent returns a user message's text, without what Gemini
// injected, and its tool results.
func geminiUserContent(raw json.RawMessage) []llm.Block {
	var parts []geminiPart
	if json.Unmarshal(raw, &parts) != nil {
		if text := stripGemini(geminiText(raw)); text != "" {
			return []llm.Block{llm.TextBlock(text)}
		}
		return nil
	}
	var out []llm.Block
	for _, p := range parts {
		switch {
		case p.Text != nil:
			if text := stripGemini(*p.Text); text != "" {
				out = append(out, llm.TextBlock(text))
			}
		case p.FunctionResponse != nil:
			fr := p.FunctionResponse
			out = append(out, llm.Block{Type: llm.BlockToolResult, ToolUseID: fr.ID, Text: geminiResult(fr.Response)})
		}
	}
	return out
}

// geminiText returns content that is a string, or the text parts of a
// list of parts joined by newlines.
func geminiText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []geminiPart
	json.Unmarshal(raw, &parts)
	var texts []string
	for _, p := range parts {
		if p.Text != nil {
			texts = append(texts, *p.Text)
		}
	}
	return strings.Join(texts, "\n")
}

// geminiResult flattens a function response: its output or error text,
// else the response as JSON.
func geminiResult(raw json.RawMessage) string {
	var r struct {
		Output *string `json:"output"`
		Error  *string `json:"error"`
	}
	if json.Unmarshal(raw, &r) == nil {
		if r.Output != nil {
			return *r.Output
		}
		if r.Error != nil {
			return *r.Error
		}
	}
	return string(raw)
}

func stripGemini(s string) string {
	for _, tag := range geminiInjected {
		s = cutTagged(s, tag, false)
	}
	return collapseBlankLines(strings.TrimSpace(s))
}
