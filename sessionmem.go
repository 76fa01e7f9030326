package memdir

// Session memory: Claude Code's per-session notes. A background model keeps
// one Markdown file per session up to date while the conversation runs, so
// that when the context fills up the notes can stand in for an LLM-written
// summary (see compact.go). Unlike the memory directory, which collects
// what is worth knowing across sessions, the notes only carry one session
// across its own compactions.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/memdir/memdir/internal/atomicfile"
	"github.com/memdir/memdir/internal/flock"
)

// Claude Code's session-memory limits and thresholds.
const (
	// SessionSectionTokens is the budget of one section of the notes; the
	// update prompt asks the model to stay under it, and compaction cuts
	// each section to SessionSectionTokens×4 characters.
	SessionSectionTokens = 2000
	// SessionNotesTokens is the budget of the whole notes file.
	SessionNotesTokens = 12000

	// DefaultSessionMinTokensToInit is the context size, in tokens, a
	// session must reach before its notes are first written.
	DefaultSessionMinTokensToInit = 10000
	// DefaultSessionMinTokensBetweenUpdates is the context growth, in
	// tokens, since the last update that every further update needs.
	DefaultSessionMinTokensBetweenUpdates = 5000
	// DefaultSessionToolCallsBetweenUpdates is the number of tool calls
	// since the last update that, with enough growth, triggers an update
	// even while the assistant is still calling tools.
	DefaultSessionToolCallsBetweenUpdates = 3

	// DefaultSessionMaxTurns bounds the model calls of one update: the
	// model is asked to make all its edits in one reply, so a second turn
	// is only needed to correct a failed edit.
	DefaultSessionMaxTurns = 4
	// DefaultSessionConversationChars bounds the conversation text sent
	// to the model in one update (about 100,000 tokens); the oldest
	// messages are left out first.
	DefaultSessionConversationChars = 400_000
	// sessionBlockChars bounds one tool input or tool result in that text;
	// the middle of a longer one is cut.
	sessionBlockChars = 8000

	// maxSessionNotesBytes bounds the notes file memdir reads: the memory
	// tool refuses to write a bigger file anyway.
	maxSessionNotesBytes = 1 << 20
	// maxSessionConfigBytes bounds the user's template.md and prompt.md.
	maxSessionConfigBytes = 256 << 10
)

// Names inside a session's session-memory directory.
const (
	// SessionNotesFile is the notes, Claude Code's summary.md.
	SessionNotesFile = "summary.md"
	// SessionStateFile is memdir's own record of the updates. It is hidden
	// so that the memory tool, which the updating model uses, neither
	// lists nor touches it.
	SessionStateFile = ".memdir-state.json"
	// sessionModelPath is where the model sees the notes through the
	// memory tool (memtool.Prefix + "/" + SessionNotesFile; memtool
	// imports this package, so the prefix is spelt out here).
	sessionModelPath = "/memories/" + SessionNotesFile
)

// DefaultSessionTemplate is the notes a session starts with when the user
// has no template of their own: Claude Code's ten sections, each a "# "
// heading followed by an italic line saying what belongs there. The update
// prompt forbids the model to touch either kind of line.
const DefaultSessionTemplate = `
# Session Title
_Five to ten distinctive words naming what this session is about; no filler_

# Current State
_What is under way at this moment, what is still open, and the immediate next steps_

# Task specification
_What the user asked for, with the design decisions and background that shape it_

# Files and Functions
_The files that matter, what each one holds, and why it is relevant_

# Workflow
_The commands run routinely, in their usual order, and how to read their output where that is not obvious_

# Errors & Corrections
_Errors met and how they were fixed, corrections the user made, and approaches that failed and must not be retried_

# Codebase and System Documentation
_The main components of the system and how they fit together_

# Learnings
_What worked, what did not, and what to avoid; nothing already said in another section_

# Key results
_Exact copies of the specific outputs the user asked for: answers, tables, documents_

# Worklog
_Each step tried or done, one terse line per step_
`

// DefaultSessionPrompt is the update instruction sent after the
// conversation when the user has no prompt.md. {{notesPath}} becomes the
// notes' path as the model's memory tool sees it and {{currentNotes}} their
// content; [BuildSessionPrompt] adds size reminders.
const DefaultSessionPrompt = `This message comes from the note-taking process, not from the user. Do not mention note-taking, these instructions or the update process anywhere in the notes.

Bring the session notes up to date with the conversation above. Use only what the user and the assistant said and did; leave out the system prompt, CLAUDE.md and AGENTS.md content, and summaries of earlier sessions or compactions. The notes already cover what came before the conversation shown.

The notes file is {{notesPath}}. You do not need to view it; this is its current content:
<current_notes>
{{currentNotes}}
</current_notes>

How to edit:
- Change {{notesPath}} with the memory tool's str_replace command (insert works too), and no other file. Put every edit in one reply as parallel tool calls, then stop. Call no other tool.
- The structure is fixed. Each line starting with "# " is a section heading, and the italic line just under it (it starts and ends with "_") describes what the section is for. Never edit, remove or add a heading or an italic line, and add no sections. Write only below the italic lines.
- Skip a section when there is nothing substantial to add. No placeholders such as "none yet".
- Be specific and dense: file paths, function names, exact commands, exact error messages, numbers.
- Under "Key results", copy the complete output the user asked for (an answer, a table, a document) word for word.
- Keep each section under about 2000 tokens (some 8000 characters). When a section nears that, condense it: drop the least important details and keep what someone would need to carry on the work.
- Always bring "Current State" up to date with the latest work: after a compaction it is where the session picks up again.

Once more: headings and italic lines stay exactly as they are; make all edits in parallel, then stop.`

// SessionMessage is one message of a session's conversation, as session
// memory works on it: the message itself, its id, the token usage of the
// API response that produced it, and how many compactions came before it.
//
// The root package cannot depend on package transcript, so hosts convert:
// from a transcript.Message m, SessionMessage{Message: m.Message, ID:
// m.UUID, Usage: m.Usage, Compactions: m.Compactions}. A host without
// compactions leaves Compactions at zero; one that keeps only the messages
// since its last compaction may too.
type SessionMessage struct {
	Message
	// ID identifies the message; it must be unique within the session.
	// The state file records ids, so they must stay the same from one call
	// to the next.
	ID string `json:"id"`
	// Usage is what the API reported for the response that produced an
	// assistant message: its input (cached or not) and output tokens are
	// the size of the context at that point. Zero when unknown.
	Usage Usage `json:"usage,omitzero"`
	// Compactions counts the compaction boundaries before the message.
	// Messages before the last boundary have been summarised away: they
	// count for nothing and compaction never keeps them.
	Compactions int `json:"compactions,omitempty"`
}

// SessionThresholds decide when the notes are updated. Zero fields take
// Claude Code's defaults.
type SessionThresholds struct {
	// MinTokensToInit is the context size the session must reach before
	// the first update (10,000).
	MinTokensToInit int `json:"minimum_message_tokens_to_init"`
	// MinTokensBetweenUpdates is the context growth since the last update
	// that every update needs (5,000).
	MinTokensBetweenUpdates int `json:"minimum_tokens_between_update"`
	// ToolCallsBetweenUpdates is how many tool calls since the last update
	// allow an update while the assistant is still calling tools (3).
	ToolCallsBetweenUpdates int `json:"tool_calls_between_updates"`
}

func (t SessionThresholds) withDefaults() SessionThresholds {
	if t.MinTokensToInit <= 0 {
		t.MinTokensToInit = DefaultSessionMinTokensToInit
	}
	if t.MinTokensBetweenUpdates <= 0 {
		t.MinTokensBetweenUpdates = DefaultSessionMinTokensBetweenUpdates
	}
	if t.ToolCallsBetweenUpdates <= 0 {
		t.ToolCallsBetweenUpdates = DefaultSessionToolCallsBetweenUpdates
	}
	return t
}

// SessionState is what memdir remembers about a session's updates, in
// SessionStateFile next to the notes. Claude Code keeps the same values in
// memory; memdir runs as separate processes, so it persists them.
type SessionState struct {
	SessionID string `json:"session_id"`
	// Initialized is set once the context first reached MinTokensToInit;
	// from then on only growth counts.
	Initialized bool `json:"initialized"`
	// LastMessageID is the last message of the conversation at the last
	// update; tool calls are counted from there.
	LastMessageID string `json:"last_message_id,omitempty"`
	// LastSummarizedMessageID is the last message the notes are known to
	// cover. It only moves when an update ran at a natural break (the
	// last assistant turn made no tool calls), so that compaction never
	// keeps a tool result without its call.
	LastSummarizedMessageID string `json:"last_summarized_message_id,omitempty"`
	// TokensAtLastUpdate is the context size at the last update.
	TokensAtLastUpdate int `json:"tokens_at_last_update"`
	// CompactionsAtLastUpdate is the number of compactions the
	// conversation had been through at the last update.
	CompactionsAtLastUpdate int `json:"compactions_at_last_update,omitempty"`
	// Updates counts the updates made.
	Updates   int       `json:"updates"`
	UpdatedAt time.Time `json:"updated_at,omitzero"`
}

// SessionDecision says whether the notes are due for an update, and why.
type SessionDecision struct {
	// Update reports that the thresholds are met.
	Update bool `json:"update"`
	// Reason says in a sentence why the notes are or are not due.
	Reason string `json:"reason"`
	// Tokens is the context size now: the last API usage reported, plus an
	// estimate (characters / 4) of the messages after it.
	Tokens int `json:"tokens"`
	// Estimated reports that no message carried usage, so Tokens is all
	// estimate.
	Estimated bool `json:"estimated,omitempty"`
	// Initialized reports that the context has reached MinTokensToInit
	// now or before.
	Initialized bool `json:"initialized"`
	// Growth is Tokens minus the context size at the last update (from
	// zero when a compaction came after it).
	Growth int `json:"growth"`
	// ToolCalls counts the tool calls since the last update.
	ToolCalls int `json:"tool_calls"`
	// LastTurnToolCalls reports that the last assistant message calls
	// tools, so the turn is not over.
	LastTurnToolCalls bool              `json:"last_turn_tool_calls"`
	Thresholds        SessionThresholds `json:"thresholds"`
}

// DecideSessionUpdate applies Claude Code's rule to a conversation: no
// update before the context reaches MinTokensToInit; after that, an update
// needs MinTokensBetweenUpdates of growth since the last one, always, and
// either ToolCallsBetweenUpdates tool calls since the last one or a last
// assistant turn without tool calls (a natural break).
//
// Two things differ from Claude Code, on purpose. Tool calls are counted
// from the start when the last update's message is not in messages
// (Claude Code then counts none). And growth is measured from zero when a
// compaction came after the last update: Claude Code keeps comparing with
// the larger context before the compaction, so the notes would not move
// again until the context had regrown past it.
func DecideSessionUpdate(state SessionState, messages []SessionMessage, th SessionThresholds) SessionDecision {
	th = th.withDefaults()
	d := SessionDecision{Thresholds: th}
	d.Tokens, d.Estimated = SessionContextTokens(messages)
	if len(messages) == 0 {
		d.Reason = "the conversation is empty"
		return d
	}
	d.Initialized = state.Initialized || d.Tokens >= th.MinTokensToInit
	if !d.Initialized {
		d.Reason = fmt.Sprintf("the context holds %d tokens, fewer than the %d needed before the first update", d.Tokens, th.MinTokensToInit)
		return d
	}
	base := state.TokensAtLastUpdate
	if messages[len(messages)-1].Compactions > state.CompactionsAtLastUpdate {
		base = 0
	}
	d.Growth = d.Tokens - base
	d.ToolCalls = toolCallsSince(messages, state.LastMessageID)
	d.LastTurnToolCalls = lastTurnCallsTools(messages)
	switch {
	case d.Growth < th.MinTokensBetweenUpdates:
		d.Reason = fmt.Sprintf("the context grew by %d tokens since the last update, fewer than the %d needed", d.Growth, th.MinTokensBetweenUpdates)
	case d.ToolCalls >= th.ToolCallsBetweenUpdates:
		d.Update = true
		d.Reason = fmt.Sprintf("the context grew by %d tokens and %d tool calls were made since the last update", d.Growth, d.ToolCalls)
	case !d.LastTurnToolCalls:
		d.Update = true
		d.Reason = fmt.Sprintf("the context grew by %d tokens and the last assistant turn made no tool calls", d.Growth)
	default:
		d.Reason = fmt.Sprintf("the context grew by %d tokens, but only %d tool calls were made since the last update (%d needed) and the assistant is still calling tools", d.Growth, d.ToolCalls, th.ToolCallsBetweenUpdates)
	}
	return d
}

// SessionContextTokens returns the size of the context a conversation
// fills: the usage the last API response reported (input, cached input
// and output tokens), plus an estimate of the messages after it. With no
// usage at all it estimates the messages since the last compaction, and
// reports estimated.
func SessionContextTokens(messages []SessionMessage) (tokens int, estimated bool) {
	for i := len(messages) - 1; i >= 0; i-- {
		if n := contextSize(messages[i].Usage); n > 0 {
			return n + estimateSessionTokens(messages[i+1:]), false
		}
	}
	return estimateSessionTokens(messages[compactionFloor(messages):]), true
}

func contextSize(u Usage) int {
	return u.InputTokens + u.CacheReadTokens + u.CacheWriteTokens + u.OutputTokens
}

// EstimateTokens estimates the tokens of a message the way Claude Code's
// rough count does: its characters (text, tool names and inputs, tool
// results) divided by four, rounded up.
func EstimateTokens(m Message) int {
	chars := 0
	for _, b := range m.Content {
		switch b.Type {
		case BlockText, BlockToolResult:
			chars += utf8.RuneCountInString(b.Text)
		case BlockToolUse:
			chars += utf8.RuneCountInString(b.ToolName) + utf8.RuneCount(b.Input)
		}
	}
	return (chars + 3) / 4
}

func estimateSessionTokens(messages []SessionMessage) int {
	n := 0
	for _, m := range messages {
		n += EstimateTokens(m.Message)
	}
	return n
}

// estimateTextTokens is Claude Code's length/4 for a piece of text.
func estimateTextTokens(s string) int { return (utf8.RuneCountInString(s) + 2) / 4 }

// compactionFloor returns the index of the first message after the last
// compaction boundary.
func compactionFloor(messages []SessionMessage) int {
	if len(messages) == 0 {
		return 0
	}
	last := messages[len(messages)-1].Compactions
	i := len(messages)
	for i > 0 && messages[i-1].Compactions == last {
		i--
	}
	return i
}

// toolCallsSince counts tool_use blocks in assistant messages after the
// message with id since, or in all messages when since is empty or not
// found.
func toolCallsSince(messages []SessionMessage, since string) int {
	start := 0
	if since != "" {
		for i, m := range messages {
			if m.ID == since {
				start = i + 1
				break
			}
		}
	}
	n := 0
	for _, m := range messages[start:] {
		if m.Role == RoleAssistant {
			n += countBlocks(m.Message, BlockToolUse)
		}
	}
	return n
}

func countBlocks(m Message, t BlockType) int {
	n := 0
	for _, b := range m.Content {
		if b.Type == t {
			n++
		}
	}
	return n
}

// lastTurnCallsTools reports whether the last assistant message calls
// tools.
func lastTurnCallsTools(messages []SessionMessage) bool {
	for i := len(messages) - 1; i >= 0; i-- {
		if messages[i].Role == RoleAssistant {
			return countBlocks(messages[i].Message, BlockToolUse) > 0
		}
	}
	return false
}

// SessionNotesOptions configure [OpenSessionNotes]. The zero value works.
type SessionNotesOptions struct {
	// Runtime selects the hash of project paths longer than 200
	// characters, as for [SanitizePath].
	Runtime HashRuntime
	// Journal records the notes before every change, so that an update
	// can be undone (memdir undo --dir <Dir()>). Nil means the default
	// journal of the session-memory directory.
	Journal *Journal
	// LookupEnv finds the default journal; nil means os.LookupEnv.
	LookupEnv LookupEnvFunc
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Logger receives debug records; nil discards them.
	Logger *slog.Logger
}

// SessionNotes is one session's notes file and the state of its updates.
//
// Layout, as Claude Code has it:
//
//	<configHome>/projects/<SanitizePath(cwd)>/<sessionID>/session-memory/
//	    summary.md            the notes (0600, directory 0700)
//	    .memdir-state.json    memdir's update state
//	<configHome>/session-memory/config/template.md   the user's template (optional)
//	<configHome>/session-memory/config/prompt.md     the user's update prompt (optional)
//
// Concurrency: [SessionNotes.Update] holds an exclusive flock on the
// session-memory directory, so two processes never update one session at
// once (the second gets ErrLocked); the notes and the state file are
// replaced atomically. Reading needs no lock.
type SessionNotes struct {
	configHome string
	sessionID  string
	dir        string
	journal    *Journal
	now        func() time.Time
	log        *slog.Logger
}

// OpenSessionNotes returns the notes of session sessionID of the project
// Claude Code was started in at cwd, under configHome ([ConfigHome]).
// Nothing is created until the notes are first written. The session id
// must be usable as one directory name: not empty, no slash, backslash,
// NUL or control character, not "." or "..".
func OpenSessionNotes(configHome, cwd, sessionID string, opts *SessionNotesOptions) (*SessionNotes, error) {
	if opts == nil {
		opts = &SessionNotesOptions{}
	}
	if configHome == "" || !filepath.IsAbs(configHome) {
		return nil, fmt.Errorf("session notes: config home %q is not an absolute path: %w", configHome, ErrInvalid)
	}
	if cwd == "" || !filepath.IsAbs(cwd) {
		return nil, fmt.Errorf("session notes: project directory %q is not an absolute path: %w", cwd, ErrInvalid)
	}
	if err := CheckSessionID(sessionID); err != nil {
		return nil, err
	}
	s := &SessionNotes{
		configHome: filepath.Clean(configHome),
		sessionID:  sessionID,
		now:        opts.Now,
		log:        opts.Logger,
		journal:    opts.Journal,
	}
	s.dir = filepath.Join(s.configHome, "projects", SanitizePath(filepath.Clean(cwd), opts.Runtime), sessionID, "session-memory")
	var err error
	if s.now, s.log, s.journal, err = withDefaults(s.dir, &Options{Now: s.now, Logger: s.log, Journal: s.journal, LookupEnv: opts.LookupEnv}); err != nil {
		return nil, fmt.Errorf("session notes %s: journal: %w", sessionID, err)
	}
	return s, nil
}

// CheckSessionID reports whether id can name a session's directory.
func CheckSessionID(id string) error {
	bad := ""
	switch {
	case id == "":
		bad = "it is empty"
	case id == "." || id == "..":
		bad = "it is . or .."
	case len(id) > 255:
		bad = "it is longer than 255 bytes"
	case !utf8.ValidString(id):
		bad = "it is not valid UTF-8"
	case strings.ContainsAny(id, `/\`):
		bad = "it contains a slash or backslash"
	case strings.IndexFunc(id, unicode.IsControl) >= 0:
		bad = "it contains a NUL or control character"
	case !filepath.IsLocal(id):
		bad = "it is not a plain file name on this system"
	}
	if bad != "" {
		return fmt.Errorf("session id %q cannot name a directory: %s: %w", id, bad, ErrInvalid)
	}
	return nil
}

// SessionID returns the session's id.
func (s *SessionNotes) SessionID() string { return s.sessionID }

// Dir returns the session-memory directory.
func (s *SessionNotes) Dir() string { return s.dir }

// Path returns the notes file.
func (s *SessionNotes) Path() string { return filepath.Join(s.dir, SessionNotesFile) }

// Journal returns the journal the notes' changes are recorded in.
func (s *SessionNotes) Journal() *Journal { return s.journal }

// TemplatePath and PromptPath return where the user's own template and
// update prompt are looked for.
func (s *SessionNotes) TemplatePath() string {
	return filepath.Join(s.configHome, "session-memory", "config", "template.md")
}

// PromptPath is where the user's own update prompt is looked for; see
// [SessionNotes.TemplatePath].
func (s *SessionNotes) PromptPath() string {
	return filepath.Join(s.configHome, "session-memory", "config", "prompt.md")
}

// Template returns the template new notes start from: the user's
// template.md when it exists, otherwise [DefaultSessionTemplate]. A
// template.md that cannot be read, is not text or is over 256 KiB is an
// error naming it.
func (s *SessionNotes) Template() (string, error) {
	return readSessionConfig(s.TemplatePath(), DefaultSessionTemplate)
}

// PromptTemplate returns the update prompt before substitution: the
// user's prompt.md when it exists, otherwise [DefaultSessionPrompt].
func (s *SessionNotes) PromptTemplate() (string, error) {
	return readSessionConfig(s.PromptPath(), DefaultSessionPrompt)
}

func readSessionConfig(path, def string) (string, error) {
	data, err := readCapped(path, maxSessionConfigBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return def, nil
	}
	if err != nil {
		return "", fmt.Errorf("session memory config %s: %w (fix or remove the file to use the default)", path, err)
	}
	return string(data), nil
}

// readCapped reads a regular text file of at most limit bytes.
func readCapped(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readCappedFile(f, limit)
}

func readCappedFile(f *os.File, limit int64) ([]byte, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("not a regular file: %w", ErrInvalid)
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("larger than %d bytes: %w", limit, ErrInvalid)
	}
	if !utf8.Valid(data) || slices.Contains(data, 0) {
		return nil, fmt.Errorf("not UTF-8 text: %w", ErrInvalid)
	}
	return data, nil
}

// Read returns the notes. Missing notes are an error wrapping ErrNotFound.
func (s *SessionNotes) Read() (string, error) {
	root, err := os.OpenRoot(s.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("session %s has no notes yet (%s): %w", s.sessionID, s.Path(), ErrNotFound)
	}
	if err != nil {
		return "", fmt.Errorf("session notes: %w", err)
	}
	defer root.Close()
	return s.readIn(root)
}

func (s *SessionNotes) readIn(root *os.Root) (string, error) {
	f, err := root.Open(SessionNotesFile)
	if errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("session %s has no notes yet (%s): %w", s.sessionID, s.Path(), ErrNotFound)
	}
	if err != nil {
		return "", fmt.Errorf("session notes %s: %w", s.Path(), err)
	}
	defer f.Close()
	data, err := readCappedFile(f, maxSessionNotesBytes)
	if err != nil {
		return "", fmt.Errorf("session notes %s: %w", s.Path(), err)
	}
	return string(data), nil
}

// Ensure creates the notes from [SessionNotes.Template] unless they exist:
// the directory with mode 0700, the file with O_EXCL and mode 0600, so an
// existing file, even one created a moment ago by another process, is
// never overwritten. It reports whether it created the file.
func (s *SessionNotes) Ensure() (created bool, err error) {
	tmpl, err := s.Template()
	if err != nil {
		return false, err
	}
	if err := atomicfile.MkdirAll(s.dir, 0o700); err != nil {
		return false, fmt.Errorf("session notes: %w", err)
	}
	root, err := os.OpenRoot(s.dir)
	if err != nil {
		return false, fmt.Errorf("session notes: %w", err)
	}
	defer root.Close()
	return s.ensureIn(root, tmpl)
}

func (s *SessionNotes) ensureIn(root *os.Root, tmpl string) (created bool, err error) {
	f, err := root.OpenFile(SessionNotesFile, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("create session notes %s: %w", s.Path(), err)
	}
	defer func() {
		if err != nil {
			f.Close()
			root.Remove(SessionNotesFile) // ours, and incomplete
		}
	}()
	if _, err = f.WriteString(tmpl); err != nil {
		return false, fmt.Errorf("create session notes %s: %w", s.Path(), err)
	}
	if err = f.Sync(); err != nil {
		return false, fmt.Errorf("create session notes %s: fsync: %w", s.Path(), err)
	}
	if err = f.Close(); err != nil {
		return false, fmt.Errorf("create session notes %s: %w", s.Path(), err)
	}
	if err = atomicfile.SyncDirIn(root, "."); err != nil {
		return false, err
	}
	return true, nil
}

// State returns the update state; a session never updated has the zero
// state. A state file that is not valid JSON is an error naming it (delete
// it to start counting afresh).
func (s *SessionNotes) State() (SessionState, error) {
	st := SessionState{SessionID: s.sessionID}
	path := filepath.Join(s.dir, SessionStateFile)
	data, err := readCapped(path, maxSessionConfigBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return st, nil
	}
	if err == nil {
		err = json.Unmarshal(data, &st)
	}
	if err != nil {
		return SessionState{}, fmt.Errorf("session state %s: %w (delete it to start counting afresh): %w", path, err, ErrInvalid)
	}
	st.SessionID = s.sessionID
	return st, nil
}

func (s *SessionNotes) saveState(st SessionState) error {
	data, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(filepath.Join(s.dir, SessionStateFile), append(data, '\n'), 0o600)
}

// Decide reads the state and applies [DecideSessionUpdate].
func (s *SessionNotes) Decide(messages []SessionMessage, th SessionThresholds) (SessionDecision, error) {
	st, err := s.State()
	if err != nil {
		return SessionDecision{}, err
	}
	return DecideSessionUpdate(st, messages, th), nil
}

// NotesEditor lets a model edit the notes. It is the restricted agent loop
// of package agent, seen from here: that package imports this one, so the
// host supplies the loop (the memdir command wraps agent.Run, setting
// MemoryDir to Dir, OnlyFile to File and no project directory).
//
// An implementation must send Messages with System to the model, offer it
// only the memory tool over Dir (seen as /memories), allow changes to File
// alone, call BeforeChange before each change and stop the run when it
// fails, and stop after MaxTurns model calls. It returns what it knows
// even when it fails, so the caller can account for a partial run.
type NotesEditor interface {
	EditNotes(ctx context.Context, edit *NotesEdit) (*NotesEditResult, error)
}

// NotesEdit is one request to a [NotesEditor].
type NotesEdit struct {
	Dir          string
	File         string
	System       string
	Messages     []Message
	MaxTurns     int
	BeforeChange func(relPath string) error
}

// NotesEditResult is what a [NotesEditor] did.
type NotesEditResult struct {
	// Text is the model's last reply.
	Text      string `json:"text,omitempty"`
	Turns     int    `json:"turns"`
	TurnLimit bool   `json:"turn_limit,omitempty"`
	// ToolCalls counts the calls made; Denied those the policy refused.
	ToolCalls int   `json:"tool_calls"`
	Denied    int   `json:"denied,omitempty"`
	Usage     Usage `json:"usage"`
}

// SessionUpdateOptions configure [SessionNotes.Update]. Editor is required.
type SessionUpdateOptions struct {
	Editor     NotesEditor
	Thresholds SessionThresholds
	// Force updates whatever the thresholds say.
	Force bool
	// MaxTurns caps the model calls; zero means DefaultSessionMaxTurns.
	MaxTurns int
	// MaxConversationChars caps the conversation text sent; zero means
	// DefaultSessionConversationChars.
	MaxConversationChars int
}

// SessionUpdate is the outcome of [SessionNotes.Update].
type SessionUpdate struct {
	SessionID string          `json:"session_id"`
	Path      string          `json:"path"`
	Decision  SessionDecision `json:"decision"`
	// Updated reports that the model ran. The notes may still be
	// unchanged (Changed) or put back (RolledBack).
	Updated bool `json:"updated"`
	// Created reports that the notes were created from the template.
	Created bool `json:"created,omitempty"`
	// Changed reports that the notes differ from before the update.
	Changed bool `json:"changed"`
	// Sections lists the sections whose content changed, by heading text.
	Sections []string `json:"sections,omitempty"`
	// TokensBefore and TokensAfter estimate the size of the notes.
	TokensBefore int `json:"tokens_before"`
	TokensAfter  int `json:"tokens_after"`
	// RolledBack reports that the model broke the notes' structure (a
	// heading or italic line changed, added or removed) and the notes
	// were put back as they were; Problem says what was broken. The
	// state does not advance, so the next call tries again.
	RolledBack bool   `json:"rolled_back,omitempty"`
	Problem    string `json:"problem,omitempty"`
	// RunID is the journal run of the update (undo it with memdir undo
	// --dir <Dir>); RestoreRunID the run that put the notes back.
	RunID        string `json:"run_id,omitempty"`
	RestoreRunID string `json:"restore_run_id,omitempty"`
	// Messages is the number of conversation messages sent to the model,
	// Omitted the earlier ones left out to fit MaxConversationChars.
	Messages int              `json:"messages"`
	Omitted  int              `json:"omitted,omitempty"`
	Edit     *NotesEditResult `json:"edit,omitempty"`
	State    SessionState     `json:"state"`
}

// Update brings the notes up to date with messages when the thresholds
// say it is time (or opts.Force is set): it creates the notes from the
// template if needed, sends the model the messages since the last update
// and the update prompt, lets it edit the notes file alone, and checks
// that every heading and italic description line survived. If not, the
// previous notes are put back (as a journaled run of its own, so the
// model's version can still be recovered) and the result says so.
//
// On success the state advances: the context size and last message are
// recorded, and the last summarised message moves to the last message when
// the assistant's turn is over. A model failure returns the error with the
// partial result; what the model changed stays journaled and the state
// stays where it was.
func (s *SessionNotes) Update(ctx context.Context, messages []SessionMessage, opts *SessionUpdateOptions) (*SessionUpdate, error) {
	if opts == nil || opts.Editor == nil {
		return nil, fmt.Errorf("update session notes: no model to edit them: %w", ErrInvalid)
	}
	if len(messages) == 0 {
		return nil, fmt.Errorf("update session notes of %s: the conversation is empty: %w", s.sessionID, ErrInvalid)
	}
	// A first look without the lock, so that a session that is not due
	// gets no directory: most checks end here.
	st, err := s.State()
	if err != nil {
		return nil, err
	}
	if d := DecideSessionUpdate(st, messages, opts.Thresholds); !d.Update && !opts.Force && d.Initialized == st.Initialized {
		return &SessionUpdate{SessionID: s.sessionID, Path: s.Path(), State: st, Decision: d}, nil
	}
	if err := atomicfile.MkdirAll(s.dir, 0o700); err != nil {
		return nil, fmt.Errorf("session notes: %w", err)
	}
	lock, ok, err := flock.TryAcquire(s.dir)
	if err != nil {
		return nil, fmt.Errorf("session notes: %w", err)
	}
	if !ok {
		return nil, fmt.Errorf("another process is updating the notes of session %s (%s): %w", s.sessionID, s.dir, ErrLocked)
	}
	defer lock.Unlock()

	// Decide again under the lock: another process may have just updated.
	if st, err = s.State(); err != nil {
		return nil, err
	}
	res := &SessionUpdate{SessionID: s.sessionID, Path: s.Path(), State: st}
	res.Decision = DecideSessionUpdate(st, messages, opts.Thresholds)
	if !res.Decision.Update && !opts.Force {
		if res.Decision.Initialized && !st.Initialized {
			st.Initialized = true
			if err := s.saveState(st); err != nil {
				return nil, err
			}
			res.State = st
		}
		return res, nil
	}
	return s.update(ctx, messages, opts, st, res)
}

func (s *SessionNotes) update(ctx context.Context, messages []SessionMessage, opts *SessionUpdateOptions, st SessionState, res *SessionUpdate) (*SessionUpdate, error) {
	tmpl, err := s.Template()
	if err != nil {
		return nil, err
	}
	promptTmpl, err := s.PromptTemplate()
	if err != nil {
		return nil, err
	}
	root, err := os.OpenRoot(s.dir)
	if err != nil {
		return nil, fmt.Errorf("session notes: %w", err)
	}
	defer root.Close()

	rec, err := s.journal.Begin("session-notes", s.dir)
	if err != nil {
		return nil, fmt.Errorf("session notes: journal: %w", err)
	}
	rec.SetSummary("update the notes of session " + s.sessionID)
	res.RunID = rec.ID()
	if err := rec.Before(SessionNotesFile); err != nil {
		return nil, err
	}
	if res.Created, err = s.ensureIn(root, tmpl); err != nil {
		return nil, s.abandon(rec, err)
	}
	before, err := s.readIn(root)
	if err != nil {
		return nil, s.abandon(rec, err)
	}
	res.TokensBefore = estimateTextTokens(before)

	maxChars := opts.MaxConversationChars
	if maxChars <= 0 {
		maxChars = DefaultSessionConversationChars
	}
	sent := messagesSince(messages, st.LastMessageID)
	convo, omitted := renderConversation(sent, maxChars)
	res.Messages, res.Omitted = len(sent)-omitted, omitted
	prompt := BuildSessionPrompt(promptTmpl, before, sessionModelPath)
	maxTurns := opts.MaxTurns
	if maxTurns <= 0 {
		maxTurns = DefaultSessionMaxTurns
	}
	s.log.DebugContext(ctx, "session notes: update", slog.String("session", s.sessionID), slog.Int("messages", res.Messages), slog.String("reason", res.Decision.Reason))
	edit, runErr := opts.Editor.EditNotes(ctx, &NotesEdit{
		Dir:          s.dir,
		File:         SessionNotesFile,
		System:       sessionSystemPrompt,
		Messages:     []Message{{Role: RoleUser, Content: []Block{TextBlock(convo + "\n\n" + prompt)}}},
		MaxTurns:     maxTurns,
		BeforeChange: func(rel string) error { return rec.Before(rel) },
	})
	res.Updated = true
	res.Edit = edit
	if edit != nil {
		rec.AddUsage(edit.Usage)
	}

	after, err := s.readIn(root)
	if err != nil {
		return res, s.abandon(rec, errors.Join(runErr, err))
	}
	if problem := CheckSessionStructure(before, after); problem != "" {
		res.RolledBack, res.Problem = true, problem
		if _, err := rec.Finish(fmt.Errorf("the model broke the notes' structure: %s", problem)); err != nil {
			return res, err
		}
		if res.RestoreRunID, err = s.restore(root, before); err != nil {
			return res, err
		}
		res.TokensAfter = res.TokensBefore
		return res, runErr
	}
	if _, err := rec.Finish(runErr); err != nil {
		return res, errors.Join(runErr, err)
	}
	res.Changed = after != before
	res.Sections = changedSections(before, after)
	res.TokensAfter = estimateTextTokens(after)
	if runErr != nil {
		return res, runErr
	}

	last := messages[len(messages)-1]
	st.Initialized = true
	st.LastMessageID = last.ID
	st.TokensAtLastUpdate = res.Decision.Tokens
	st.CompactionsAtLastUpdate = last.Compactions
	if !res.Decision.LastTurnToolCalls {
		st.LastSummarizedMessageID = last.ID
	}
	st.Updates++
	st.UpdatedAt = s.now().UTC()
	if err := s.saveState(st); err != nil {
		return res, err
	}
	res.State = st
	return res, nil
}

// abandon closes a journal run that failed before or around the model
// call, and returns err.
func (s *SessionNotes) abandon(rec *Recorder, err error) error {
	if _, ferr := rec.Finish(err); ferr != nil {
		return errors.Join(err, ferr)
	}
	return err
}

// restore writes the notes back as they were, as a journaled run.
func (s *SessionNotes) restore(root *os.Root, notes string) (string, error) {
	rec, err := s.journal.Begin("session-notes-restore", s.dir)
	if err != nil {
		return "", fmt.Errorf("session notes: journal: %w", err)
	}
	rec.SetSummary("put back the notes of session " + s.sessionID + " after the model broke their structure")
	if err := rec.Before(SessionNotesFile); err != nil {
		return "", err
	}
	werr := atomicfile.WriteFileIn(root, SessionNotesFile, []byte(notes), 0o600)
	if werr != nil {
		werr = fmt.Errorf("put back session notes %s: %w", s.Path(), werr)
	}
	if _, err := rec.Finish(werr); err != nil {
		return rec.ID(), errors.Join(werr, err)
	}
	return rec.ID(), werr
}

// sessionSystemPrompt frames the updating model's job; the instructions
// proper come with the conversation.
const sessionSystemPrompt = `You keep the running notes of a software engineering session between a user and an AI assistant, so that the work can go on after the conversation is compacted. You see the conversation and the current notes, and you edit the notes file with the memory tool, following the instructions exactly. You change nothing else.`

// messagesSince returns the messages after the one with id, or all of
// them when id is empty or not found.
func messagesSince(messages []SessionMessage, id string) []SessionMessage {
	if id != "" {
		for i, m := range messages {
			if m.ID == id {
				return messages[i+1:]
			}
		}
	}
	return messages
}

// renderConversation writes messages as plain text for the updating model,
// newest last, leaving out the oldest ones that do not fit in maxChars. A
// text rendering, rather than the messages themselves, cannot break the
// providers' rules on turn order and tool pairs, however the conversation
// was cut.
func renderConversation(messages []SessionMessage, maxChars int) (string, int) {
	parts := make([]string, len(messages))
	total := 0
	first := len(messages)
	for i := len(messages) - 1; i >= 0; i-- {
		parts[i] = renderMessage(messages[i].Message)
		n := utf8.RuneCountInString(parts[i])
		if total+n > maxChars && first < len(messages) {
			break
		}
		total += n
		first = i
	}
	var b strings.Builder
	b.WriteString("<conversation>\n")
	if first > 0 {
		fmt.Fprintf(&b, "(%d earlier messages are left out; the notes cover them.)\n\n", first)
	}
	for _, p := range parts[first:] {
		b.WriteString(p)
	}
	b.WriteString("</conversation>")
	return b.String(), first
}

func renderMessage(m Message) string {
	var b strings.Builder
	fmt.Fprintf(&b, "[%s]\n", m.Role)
	for _, c := range m.Content {
		switch c.Type {
		case BlockText:
			b.WriteString(strings.TrimSpace(c.Text))
		case BlockToolUse:
			fmt.Fprintf(&b, "(tool call %s, id %s) %s", c.ToolName, c.ToolUseID, cutMiddle(string(c.Input), sessionBlockChars))
		case BlockToolResult:
			status := "result"
			if c.IsError {
				status = "error"
			}
			fmt.Fprintf(&b, "(tool %s for id %s) %s", status, c.ToolUseID, cutMiddle(c.Text, sessionBlockChars))
		}
		b.WriteString("\n")
	}
	b.WriteString("\n")
	return b.String()
}

// cutMiddle keeps the first and last parts of s when it is longer than n
// characters: where a long tool output starts and how it ends (the error,
// the summary line) say the most.
func cutMiddle(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	head, tail := n*2/3, n/3
	return string(r[:head]) + fmt.Sprintf("\n[… %d characters cut …]\n", len(r)-head-tail) + string(r[len(r)-tail:])
}

// placeholder matches {{name}} in a prompt template.
var placeholder = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\{\{(\w+)\}\}`) })

// BuildSessionPrompt fills in a prompt template (the default or the
// user's prompt.md): {{currentNotes}} becomes notes and {{notesPath}}
// notesPath, in one pass, so text inside the notes that looks like a
// placeholder stays as it is; unknown placeholders are left alone. When a
// section of the notes is over SessionSectionTokens, or the notes over
// SessionNotesTokens, a reminder to condense them is appended.
func BuildSessionPrompt(template, notes, notesPath string) string {
	vars := map[string]string{"currentNotes": notes, "notesPath": notesPath}
	out := placeholder().ReplaceAllStringFunc(template, func(m string) string {
		if v, ok := vars[m[2:len(m)-2]]; ok {
			return v
		}
		return m
	})
	return out + sizeReminders(notes)
}

// SessionSection is one "# " section of the notes.
type SessionSection struct {
	// Heading is the heading line, "# Current State".
	Heading string `json:"heading"`
	// Description is the italic line describing the section, "" if none.
	Description string `json:"description,omitempty"`
	// Body is everything after the heading up to the next heading,
	// description included.
	Body string `json:"-"`
	// Tokens estimates Body, trimmed.
	Tokens int `json:"tokens"`
}

// Title returns the heading without its "# ".
func (s SessionSection) Title() string { return strings.TrimSpace(strings.TrimPrefix(s.Heading, "#")) }

// ParseSessionNotes splits notes into their preamble (text before the
// first heading) and sections. A section starts at each line beginning
// with "# "; its description is the first non-blank line after the
// heading when that line is in italics (starts and ends with "_").
func ParseSessionNotes(notes string) (preamble string, sections []SessionSection) {
	lines := strings.Split(notes, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSuffix(l, "\r")
	}
	var pre []string
	var cur *SessionSection
	var body []string
	flush := func() {
		if cur != nil {
			cur.Body = strings.Join(body, "\n")
			cur.Tokens = estimateTextTokens(strings.TrimSpace(cur.Body))
			sections = append(sections, *cur)
		}
	}
	for _, line := range lines {
		if isSessionHeading(line) {
			flush()
			h := strings.TrimRight(line, " \t\r")
			if !isSessionHeading(h) {
				h = "# " // a heading with no title
			}
			cur, body = &SessionSection{Heading: h}, nil
			continue
		}
		if cur == nil {
			pre = append(pre, line)
			continue
		}
		if cur.Description == "" && len(body) == countBlank(body) && strings.TrimSpace(line) != "" && isItalicLine(line) {
			cur.Description = strings.TrimSpace(line)
		}
		body = append(body, line)
	}
	flush()
	return strings.Join(pre, "\n"), sections
}

func isSessionHeading(line string) bool { return strings.HasPrefix(line, "# ") }

func isItalicLine(line string) bool {
	t := strings.TrimSpace(line)
	return len(t) >= 2 && strings.HasPrefix(t, "_") && strings.HasSuffix(t, "_")
}

func countBlank(lines []string) int {
	n := 0
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			n++
		}
	}
	return n
}

// CheckSessionStructure compares the headings and italic description lines
// of two versions of the notes and returns "" when they match, or what
// changed.
func CheckSessionStructure(before, after string) string {
	_, b := ParseSessionNotes(before)
	_, a := ParseSessionNotes(after)
	for i := range max(len(a), len(b)) {
		switch {
		case i >= len(a):
			return fmt.Sprintf("section %q was removed", b[i].Heading)
		case i >= len(b):
			return fmt.Sprintf("section %q was added", a[i].Heading)
		case a[i].Heading != b[i].Heading:
			return fmt.Sprintf("heading %q became %q", b[i].Heading, a[i].Heading)
		case a[i].Description != b[i].Description && b[i].Description == "":
			return fmt.Sprintf("section %q gained an italic line it did not have: %q", b[i].Heading, a[i].Description)
		case a[i].Description != b[i].Description && a[i].Description == "":
			return fmt.Sprintf("section %q lost its italic description line %q", b[i].Heading, b[i].Description)
		case a[i].Description != b[i].Description:
			return fmt.Sprintf("the italic line of section %q became %q", b[i].Heading, a[i].Description)
		}
	}
	return ""
}

// changedSections lists, by title, the sections whose body changed.
func changedSections(before, after string) []string {
	_, b := ParseSessionNotes(before)
	_, a := ParseSessionNotes(after)
	old := make(map[string]string, len(b))
	for _, s := range b {
		old[s.Heading] = s.Body
	}
	var out []string
	for _, s := range a {
		if prev, ok := old[s.Heading]; !ok || strings.TrimSpace(prev) != strings.TrimSpace(s.Body) {
			out = append(out, s.Title())
		}
	}
	return out
}

// IsSessionTemplate reports whether notes hold nothing yet: they equal
// template once both are trimmed (Claude Code's test), or no section has
// anything besides its heading and italic line (which also recognises an
// untouched template written by another version or in other words).
func IsSessionTemplate(notes, template string) bool {
	if strings.TrimSpace(notes) == strings.TrimSpace(template) {
		return true
	}
	pre, sections := ParseSessionNotes(notes)
	if strings.TrimSpace(pre) != "" || len(sections) == 0 {
		return false
	}
	for _, s := range sections {
		rest := strings.TrimSpace(s.Body)
		if s.Description != "" {
			rest = strings.TrimSpace(strings.Replace(rest, s.Description, "", 1))
		}
		if rest != "" {
			return false
		}
	}
	return true
}

// sizeReminders returns the text appended to the update prompt when the
// notes or some of their sections are over budget, "" otherwise.
func sizeReminders(notes string) string {
	total := estimateTextTokens(notes)
	_, sections := ParseSessionNotes(notes)
	var over []SessionSection
	for _, s := range sections {
		if s.Tokens > SessionSectionTokens {
			over = append(over, s)
		}
	}
	sort.SliceStable(over, func(i, j int) bool { return over[i].Tokens > over[j].Tokens })
	tooBig := total > SessionNotesTokens
	if !tooBig && len(over) == 0 {
		return ""
	}
	var b strings.Builder
	if tooBig {
		fmt.Fprintf(&b, "\n\nThe notes are now about %d tokens, over the %d-token limit for the whole file. Shorten them until they fit: condense the longest sections, merge related points, and summarise older Worklog entries. Keep \"Current State\" and \"Errors & Corrections\" precise and complete.", total, SessionNotesTokens)
	}
	if len(over) > 0 {
		if tooBig {
			b.WriteString("\n\nSections to shorten:")
		} else {
			b.WriteString("\n\nThese sections are over their limit and must be shortened:")
		}
		for _, s := range over {
			fmt.Fprintf(&b, "\n- %q: about %d tokens (limit %d)", s.Heading, s.Tokens, SessionSectionTokens)
		}
	}
	return b.String()
}
