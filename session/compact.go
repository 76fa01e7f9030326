package session

// Session-memory compaction: when a conversation fills its context, a host
// can replace the older messages with the session notes instead of asking
// a model for a summary. It costs no model call and loses less, because
// the notes were written while the details were still in view.

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/llm"
)

// Claude Code's limits on the messages session-memory compaction keeps.
const (
	// DefaultCompactMinTokens is the least, in estimated tokens, the kept
	// messages should hold.
	DefaultCompactMinTokens = 10_000
	// DefaultCompactMinTextMessages is the least number of kept messages
	// with text in them.
	DefaultCompactMinTextMessages = 5
	// DefaultCompactMaxTokens stops the search for older messages to keep.
	DefaultCompactMaxTokens = 40_000
)

// ErrCompactFallback is wrapped by every [CompactFallbackError]: the notes
// cannot replace the conversation, and the host should summarise it with
// a model as usual.
var ErrCompactFallback = errors.New("session notes cannot replace the conversation; summarise it with a model")

// Reasons for a [CompactFallbackError].
const (
	FallbackNoNotes       = "no_notes"             // the notes are missing or empty
	FallbackTemplate      = "template"             // the notes are still the template
	FallbackNotFound      = "summarized_not_found" // the last summarised message is not in the conversation
	FallbackOverThreshold = "over_threshold"       // the compacted context would still be too big
	FallbackEmptyMessages = "no_messages"          // there is nothing to compact
)

// CompactFallbackError says why [Compact] declined.
type CompactFallbackError struct {
	// Reason is one of the Fallback constants.
	Reason string
	// Detail says what was found, for people.
	Detail string
}

func (e *CompactFallbackError) Error() string {
	return "session-memory compaction not possible: " + e.Detail
}

// Is makes errors.Is(err, ErrCompactFallback) true.
func (e *CompactFallbackError) Is(target error) bool { return target == ErrCompactFallback }

func fallback(reason, format string, args ...any) error {
	return &CompactFallbackError{Reason: reason, Detail: fmt.Sprintf(format, args...)}
}

// CompactOptions configure [Compact]. Zero limits
// take Claude Code's defaults.
type CompactOptions struct {
	// LastSummarizedID is the last message the notes cover
	// (State.LastSummarizedMessageID). Empty means unknown, as for
	// a resumed session: the notes then stand for everything before the
	// messages kept to meet the minimums.
	LastSummarizedID string
	// Template is the template the notes started from; notes still equal
	// to it cannot summarise anything. Empty means DefaultTemplate.
	Template string
	// MinTokens, MinTextMessages and MaxTokens bound the kept messages.
	MinTokens       int
	MinTextMessages int
	MaxTokens       int
	// AutoCompactThreshold, when above zero, is the context size the
	// compacted conversation must stay under; at or above it, compaction
	// falls back.
	AutoCompactThreshold int
	// NotesPath and TranscriptPath, when set, are named in the summary so
	// the model can read the full notes or transcript if it needs to.
	NotesPath      string
	TranscriptPath string
}

// Compaction is the result of [Compact]: put Summary, as a
// user message, in place of messages[:Start], and keep Keep.
type Compaction struct {
	// Summary is the text of the user message that replaces the earlier
	// conversation: the notes, framed.
	Summary string `json:"summary"`
	// Notes are the notes as the summary holds them, each section cut to
	// SectionTokens×4 characters.
	Notes string `json:"notes"`
	// Truncated lists the headings of the sections that were cut.
	Truncated []string `json:"truncated,omitempty"`
	// Start is the index in the messages of the first one kept.
	Start int `json:"start"`
	// Keep are the messages kept, messages[Start:].
	Keep []Message `json:"-"`
	// Floor is the index of the first message after the last compaction
	// boundary: nothing before it is ever kept.
	Floor int `json:"floor"`
	// Resumed reports that the last summarised message was not known.
	Resumed bool `json:"resumed,omitempty"`
	// KeptTokens and KeptTextMessages measure Keep; SummaryTokens the
	// summary; Tokens the whole compacted context (summary and Keep), all
	// estimated at four characters a token.
	KeptTokens       int `json:"kept_tokens"`
	KeptTextMessages int `json:"kept_text_messages"`
	SummaryTokens    int `json:"summary_tokens"`
	Tokens           int `json:"tokens"`
}

// Compact decides, as Claude Code's session-memory
// compaction does, which recent messages to keep and returns the notes as
// the summary of the rest. A host calls it in place of an LLM summary; an
// error wrapping ErrCompactFallback (a *CompactFallbackError) means it
// should summarise with a model after all.
//
// The kept messages start right after LastSummarizedID (or at the end,
// when it is empty) and reach back, one message at a time, until they hold
// at least MinTokens and MinTextMessages messages with text, or until they
// reach MaxTokens; they never reach back past the last compaction
// boundary. The messages after LastSummarizedID are always kept, whatever
// their size. The start then moves back further if a kept tool result
// would lose its tool call, so tool_use/tool_result pairs are never split.
//
// It falls back when the notes are empty or still the template, when
// LastSummarizedID is not among the messages since the last compaction,
// and when AutoCompactThreshold is set and the summary and the kept
// messages together would reach it.
//
// Messages carry ids and compaction counts ([Message]); Claude
// Code's rule that split records of one API response stay together needs
// nothing here, because such records are one message by then (package
// transcript merges them).
func Compact(notes string, messages []Message, opts *CompactOptions) (*Compaction, error) {
	var o CompactOptions
	if opts != nil {
		o = *opts
	}
	if o.Template == "" {
		o.Template = DefaultTemplate
	}
	if o.MinTokens <= 0 {
		o.MinTokens = DefaultCompactMinTokens
	}
	if o.MinTextMessages <= 0 {
		o.MinTextMessages = DefaultCompactMinTextMessages
	}
	if o.MaxTokens <= 0 {
		o.MaxTokens = DefaultCompactMaxTokens
	}
	if strings.TrimSpace(notes) == "" {
		return nil, fallback(FallbackNoNotes, "the session has no notes")
	}
	if IsTemplate(notes, o.Template) {
		return nil, fallback(FallbackTemplate, "the session notes are still the empty template")
	}
	if len(messages) == 0 {
		return nil, fallback(FallbackEmptyMessages, "there are no messages to compact")
	}
	c := &Compaction{Floor: compactionFloor(messages)}
	last := len(messages) - 1
	if o.LastSummarizedID == "" {
		c.Resumed = true
	} else {
		last = -1
		for i := c.Floor; i < len(messages); i++ {
			if messages[i].ID == o.LastSummarizedID {
				last = i
				break
			}
		}
		if last < 0 {
			return nil, fallback(FallbackNotFound, "the last message the notes cover (%s) is not in the conversation since its last compaction", o.LastSummarizedID)
		}
	}
	c.Start = keepFrom(messages, last+1, c.Floor, o)

	c.Keep = messages[c.Start:]
	for _, m := range c.Keep {
		c.KeptTokens += EstimateTokens(m.Message)
		if hasText(m.Message) {
			c.KeptTextMessages++
		}
	}
	c.Notes, c.Truncated = TruncateNotes(notes)
	c.Summary = compactSummary(c.Notes, len(c.Truncated) > 0, len(c.Keep) > 0, o)
	c.SummaryTokens = estimateTextTokens(c.Summary)
	c.Tokens = c.SummaryTokens + c.KeptTokens
	if o.AutoCompactThreshold > 0 && c.Tokens >= o.AutoCompactThreshold {
		return nil, fallback(FallbackOverThreshold, "the compacted conversation would hold about %d tokens, not under the auto-compact threshold of %d", c.Tokens, o.AutoCompactThreshold)
	}
	return c, nil
}

// keepFrom returns the index of the first message to keep, given that
// messages[start:] are kept anyway.
func keepFrom(messages []Message, start, floor int, o CompactOptions) int {
	tokens, texts := 0, 0
	for _, m := range messages[start:] {
		tokens += EstimateTokens(m.Message)
		if hasText(m.Message) {
			texts++
		}
	}
	enough := func() bool { return tokens >= o.MaxTokens || tokens >= o.MinTokens && texts >= o.MinTextMessages }
	for i := start - 1; i >= floor && !enough(); i-- {
		tokens += EstimateTokens(messages[i].Message)
		if hasText(messages[i].Message) {
			texts++
		}
		start = i
	}
	return keepToolCalls(messages, start, floor)
}

// keepToolCalls moves start back to the assistant messages whose tool
// calls are answered by tool results in messages[start:], so that no kept
// result is left without its call.
func keepToolCalls(messages []Message, start, floor int) int {
	if start <= floor || start >= len(messages) {
		return start
	}
	calls := map[string]bool{}
	var results []string
	for _, m := range messages[start:] {
		for _, b := range m.Content {
			switch b.Type {
			case llm.BlockToolUse:
				calls[b.ToolUseID] = true
			case llm.BlockToolResult:
				results = append(results, b.ToolUseID)
			}
		}
	}
	need := map[string]bool{}
	for _, id := range results {
		if !calls[id] {
			need[id] = true
		}
	}
	for i := start - 1; i >= floor && len(need) > 0; i-- {
		if messages[i].Role != llm.RoleAssistant {
			continue
		}
		for _, b := range messages[i].Content {
			if b.Type == llm.BlockToolUse && need[b.ToolUseID] {
				delete(need, b.ToolUseID)
				start = i
			}
		}
	}
	return start
}

// hasText reports whether a message says something in words (Claude
// Code's "text block" messages, as opposed to bare tool traffic).
func hasText(m llm.Message) bool {
	for _, b := range m.Content {
		if b.Type == llm.BlockText && b.Text != "" {
			return true
		}
	}
	return false
}

// sessionSectionChars is the most characters of one section compaction
// keeps: SectionTokens at Claude Code's four characters a token.
const sessionSectionChars = SectionTokens * 4

// truncationMark ends a section that compaction cut.
const truncationMark = "[… the rest of this section was cut for length …]"

// TruncateNotes cuts every section of the notes whose body is
// longer than SectionTokens×4 characters at the last line that
// fits, marks the cut, and returns the notes with the headings of the
// sections it cut. Text before the first heading is left as it is. The
// line that crosses the limit is cut at it rather than dropped, so one
// long paragraph does not empty a section. Line ends come out as "\n".
func TruncateNotes(notes string) (string, []string) {
	pre, sections := ParseNotes(notes)
	var b strings.Builder
	b.WriteString(pre)
	hasPre := !strings.HasPrefix(notes, "# ")
	var cut []string
	for i, s := range sections {
		if i > 0 || hasPre {
			b.WriteString("\n")
		}
		b.WriteString(s.Heading)
		b.WriteString("\n")
		if utf8.RuneCountInString(s.Body) <= sessionSectionChars {
			b.WriteString(s.Body)
			continue
		}
		cut = append(cut, s.Heading)
		used := 0
		for line := range strings.SplitSeq(s.Body, "\n") {
			n := utf8.RuneCountInString(line) + 1
			if used+n > sessionSectionChars {
				if room := sessionSectionChars - used - 1; room > 0 {
					b.WriteString(string([]rune(line)[:room]))
					b.WriteString("\n")
				}
				break
			}
			b.WriteString(line)
			b.WriteString("\n")
			used += n
		}
		b.WriteString("\n" + truncationMark)
	}
	return b.String(), cut
}

// compactSummary frames the notes as the message that opens the compacted
// conversation.
func compactSummary(notes string, truncated, kept bool, o CompactOptions) string {
	var b strings.Builder
	b.WriteString("This session continues an earlier part of the conversation that no longer fits in the context. The session notes below record what happened in it.\n\n<session_notes>\n")
	b.WriteString(strings.TrimSpace(notes))
	b.WriteString("\n</session_notes>")
	if truncated {
		b.WriteString("\n\nSome sections of the notes were cut for length.")
		if o.NotesPath != "" {
			fmt.Fprintf(&b, " The full notes are in %s.", o.NotesPath)
		}
	}
	if o.TranscriptPath != "" {
		fmt.Fprintf(&b, "\n\nIf a detail from before this point is needed, the full transcript is in %s.", o.TranscriptPath)
	}
	if kept {
		b.WriteString("\n\nThe most recent messages follow as they were.")
	}
	b.WriteString(" Carry on with the work from where it stopped, without asking the user to repeat anything.")
	return b.String()
}

// Compact reads the notes and state of the session and calls
// [Compact] with them: the last summarised message from
// the state, the user's template, and the notes' path. opts supplies the
// limits and the threshold; its LastSummarizedID, Template and NotesPath
// are ignored. Missing notes fall back like empty ones.
func (s *Notes) Compact(messages []Message, opts *CompactOptions) (*Compaction, error) {
	var o CompactOptions
	if opts != nil {
		o = *opts
	}
	notes, err := s.Read()
	if errors.Is(err, memdir.ErrNotFound) {
		return nil, fallback(FallbackNoNotes, "session %s has no notes (%s)", s.sessionID, s.Path())
	}
	if err != nil {
		return nil, err
	}
	st, err := s.State()
	if err != nil {
		return nil, err
	}
	if o.Template, err = s.Template(); err != nil {
		return nil, err
	}
	o.LastSummarizedID = st.LastSummarizedMessageID
	o.NotesPath = s.Path()
	return Compact(notes, messages, &o)
}
