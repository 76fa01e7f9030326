package transcript

import (
	"slices"
	"strings"
	"time"

	"github.com/memdir/memdir/llm"
)

// Format is the kind of file a transcript was read from.
type Format string

// Transcript formats.
const (
	// FormatJSONL is Claude Code's session log, one record per line.
	FormatJSONL Format = "jsonl"
	// FormatJSON is a plain JSON list of messages.
	FormatJSON Format = "json"
)

// Message is one message of the conversation: a llm.Message (role and
// content blocks) with where it sits in the session and what kind of turn
// it is.
type Message struct {
	llm.Message

	// UUID identifies the message's record. For an assistant response
	// split across several records, it is the last record's UUID (the one
	// the next record names as its parent); PartUUIDs lists them all.
	UUID       string
	ParentUUID string
	PartUUIDs  []string
	Timestamp  time.Time
	// Line is the 1-based line of the message's first record (for a JSON
	// list, the message's 1-based position).
	Line int

	// MessageID and RequestID identify the API response of an assistant
	// message; Model is the model that wrote it and Usage its token usage.
	MessageID string
	RequestID string
	Model     string
	Usage     llm.Usage

	// IsMeta marks user records Claude Code adds itself (command
	// expansions, caveats) rather than the human typing them.
	IsMeta bool
	// IsCompactSummary marks the summary that opens the conversation after
	// a compaction.
	IsCompactSummary bool
	// IsVisibleInTranscriptOnly marks records shown to the human but never
	// sent to the model.
	IsVisibleInTranscriptOnly bool
	// IsSidechain marks records of an inline subagent (older versions).
	IsSidechain bool
	// Compactions counts the compaction boundaries before this message on
	// the chain: messages with the highest count come after the last one.
	Compactions int
	// Dropped counts content blocks left out because memdir has no block
	// for them (thinking, images, documents).
	Dropped int
}

// IsToolResult reports whether m is a user record that only carries tool
// results: the harness answering a tool call, not the human speaking.
func (m *Message) IsToolResult() bool {
	if m.Role != llm.RoleUser || len(m.Content) == 0 {
		return false
	}
	for _, b := range m.Content {
		if b.Type != llm.BlockToolResult {
			return false
		}
	}
	return true
}

// IsHumanPrompt reports whether m is something the human typed: a user
// message that is not a tool result, not meta, not a compaction summary,
// not transcript-only, and has text left once wrappers are stripped.
func (m *Message) IsHumanPrompt() bool {
	return m.Role == llm.RoleUser && !m.IsToolResult() && !m.IsMeta &&
		!m.IsCompactSummary && !m.IsVisibleInTranscriptOnly && m.HumanText() != ""
}

// Text returns the message's text blocks joined by newlines, as stored.
func (m *Message) Text() string {
	var parts []string
	for _, b := range m.Content {
		if b.Type == llm.BlockText {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// HumanText returns the message's text with the wrappers Claude Code puts
// around injected content removed: system reminders, slash-command names
// and messages, local command output and caveats, and shell-mode input and
// output. The arguments of a slash command (<command-args>) are kept,
// since the human typed them. The result is trimmed.
func (m *Message) HumanText() string {
	return StripWrappers(m.Text())
}

// Boundary is a compaction: the point where Claude Code replaced the
// conversation so far with a summary.
type Boundary struct {
	UUID string
	// LogicalParentUUID is the last record before the compaction.
	LogicalParentUUID string
	Timestamp         time.Time
	// Trigger is "manual" or "auto"; PreTokens the context size before.
	Trigger   string
	PreTokens int
	// Index is the position in Messages() of the first message after the
	// boundary (len(Messages()) if none follows yet).
	Index int
	Line  int
}

// SkippedLine is a line the reader could not use.
type SkippedLine struct {
	Line   int    // 1-based
	Reason string // "blank", "invalid JSON: ...", "partial last line: ...", ...
}

// Transcript is a conversation read from a file. Its methods return copies
// of slices, so callers may modify what they get.
type Transcript struct {
	Format    Format
	SessionID string
	// Lines is the number of lines read (JSONL) or messages (JSON).
	Lines int
	// Skipped lists lines that were blank, not JSON, cut short or
	// unusable. Reading never fails because of them.
	Skipped []SkippedLine
	// Types counts the records of each type, known or not.
	Types map[string]int
	// Leaf is the UUID of the record the main chain ends at.
	Leaf string
	// Orphan is set when the chain climbs to a parent UUID that is not in
	// the file (a session resumed from another file): the chain starts
	// below it.
	Orphan string

	messages   []Message
	boundaries []Boundary
	// after maps each chain record's UUID to the number of messages up to
	// and including that record, so Since can cut there.
	after map[string]int
	usage llm.Usage
}

// Messages returns the user and assistant messages of the main chain, from
// the root to the leaf, across compactions (the summary that opens each
// compacted segment is included and flagged).
func (t *Transcript) Messages() []Message { return slices.Clone(t.messages) }

// Boundaries returns the compaction boundaries on the main chain, oldest
// first.
func (t *Transcript) Boundaries() []Boundary { return slices.Clone(t.boundaries) }

// SinceLastCompaction returns the messages after the last compaction
// boundary (all messages if there was none), starting with its summary.
func (t *Transcript) SinceLastCompaction() []Message {
	if len(t.boundaries) == 0 {
		return t.Messages()
	}
	return slices.Clone(t.messages[t.boundaries[len(t.boundaries)-1].Index:])
}

// Since returns the messages after the record with this UUID, which may be
// a message, any part of a split assistant message, an attachment or a
// system record on the main chain. It reports false when the UUID is not
// on the main chain (compacted away, on an abandoned branch, unknown); an
// extraction cursor then starts from the beginning.
func (t *Transcript) Since(uuid string) ([]Message, bool) {
	n, ok := t.after[uuid]
	if !ok {
		return nil, false
	}
	return slices.Clone(t.messages[n:]), true
}

// LastHumanPrompt returns the last message on the main chain that the
// human typed (see [Message.IsHumanPrompt]).
func (t *Transcript) LastHumanPrompt() (Message, bool) {
	for i := len(t.messages) - 1; i >= 0; i-- {
		if t.messages[i].IsHumanPrompt() {
			return t.messages[i], true
		}
	}
	return Message{}, false
}

// RecentTools returns the names of the tools called since the last human
// prompt whose calls all succeeded, in order of first use. A tool with a
// failed call, or a call with no result yet, is left out. This is the
// "recently used tools" list the recall selector is given.
func (t *Transcript) RecentTools() []string {
	start := 0
	for i := len(t.messages) - 1; i >= 0; i-- {
		if t.messages[i].IsHumanPrompt() {
			start = i + 1
			break
		}
	}
	type call struct {
		tool     string
		answered bool
		failed   bool
	}
	calls := make(map[string]*call)
	var order []string
	for _, m := range t.messages[start:] {
		for _, b := range m.Content {
			switch b.Type {
			case llm.BlockToolUse:
				calls[b.ToolUseID] = &call{tool: b.ToolName}
				if !slices.Contains(order, b.ToolName) {
					order = append(order, b.ToolName)
				}
			case llm.BlockToolResult:
				if c, ok := calls[b.ToolUseID]; ok {
					c.answered, c.failed = true, b.IsError
				}
			}
		}
	}
	bad := make(map[string]bool)
	for _, c := range calls {
		if !c.answered || c.failed {
			bad[c.tool] = true
		}
	}
	var out []string
	for _, name := range order {
		if !bad[name] {
			out = append(out, name)
		}
	}
	return out
}

// Usage returns the token usage of every API response recorded in the
// file, on any branch or sidechain, each counted once: records that
// repeat a response (a split assistant message) share its message id and
// request id, and the last such record's figures are kept.
func (t *Transcript) Usage() llm.Usage { return t.usage }
