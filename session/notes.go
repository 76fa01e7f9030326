package session

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

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/agent"
	"github.com/memdir/memdir/internal/atomicfile"
	"github.com/memdir/memdir/internal/flock"
	"github.com/memdir/memdir/llm"
	"github.com/memdir/memdir/locate"
	"github.com/memdir/memdir/memtool"
)

// Claude Code's session-memory limits and thresholds.
const (
	// SectionTokens is the budget of one section of the notes; the
	// update prompt asks the model to stay under it, and compaction cuts
	// each section to SectionTokens×4 characters.
	SectionTokens = 2000
	// NotesTokens is the budget of the whole notes file.
	NotesTokens = 12000

	// DefaultMinTokensToInit is the context size, in tokens, a
	// session must reach before its notes are first written.
	DefaultMinTokensToInit = 10000
	// DefaultMinTokensBetweenUpdates is the context growth, in
	// tokens, since the last update that every further update needs.
	DefaultMinTokensBetweenUpdates = 5000
	// DefaultToolCallsBetweenUpdates is the number of tool calls
	// since the last update that, with enough growth, triggers an update
	// even while the assistant is still calling tools.
	DefaultToolCallsBetweenUpdates = 3

	// DefaultMaxTurns bounds the model calls of one update: the
	// model is asked to make all its edits in one reply, so a second turn
	// is only needed to correct a failed edit.
	DefaultMaxTurns = 4
	// DefaultConversationChars bounds the conversation text sent
	// to the model in one update (about 100,000 tokens); the oldest
	// messages are left out first.
	DefaultConversationChars = 400_000
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
	// NotesFile is the notes, Claude Code's summary.md.
	NotesFile = "summary.md"
	// StateFile is memdir's own record of the updates. It is hidden
	// so that the memory tool, which the updating model uses, neither
	// lists nor touches it.
	StateFile = ".memdir-state.json"
	// sessionModelPath is where the model sees the notes through the
	// memory tool.
	sessionModelPath = memtool.Prefix + "/" + NotesFile
)

// DefaultTemplate is the notes a session starts with when the user
// has no template of their own: Claude Code's ten sections, each a "# "
// heading followed by an italic line saying what belongs there. The update
// prompt forbids the model to touch either kind of line.
const DefaultTemplate = `
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

// DefaultPrompt is the update instruction sent after the
// conversation when the user has no prompt.md. {{notesPath}} becomes the
// notes' path as the model's memory tool sees it and {{currentNotes}} their
// content; [BuildPrompt] adds size reminders.
const DefaultPrompt = `This message comes from the note-taking process, not from the user. Do not mention note-taking, these instructions or the update process anywhere in the notes.

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

// Message is one message of a session's conversation, as session
// memory works on it: the message itself, its id, the token usage of the
// API response that produced it, and how many compactions came before it.
//
// This package does not depend on package transcript, so hosts convert:
// from a transcript.Message m, Message{Message: m.Message, ID:
// m.UUID, Usage: m.Usage, Compactions: m.Compactions}. A host without
// compactions leaves Compactions at zero; one that keeps only the messages
// since its last compaction may too.
type Message struct {
	llm.Message
	// ID identifies the message; it must be unique within the session.
	// The state file records ids, so they must stay the same from one call
	// to the next.
	ID string `json:"id"`
	// Usage is what the API reported for the response that produced an
	// assistant message: its input (cached or not) and output tokens are
	// the size of the context at that point. Zero when unknown.
	Usage llm.Usage `json:"usage,omitzero"`
	// Compactions counts the compaction boundaries before the message.
	// Messages before the last boundary have been summarised away: they
	// count for nothing and compaction never keeps them.
	Compactions int `json:"compactions,omitempty"`
}

// Thresholds decide when the notes are updated. Zero fields take
// Claude Code's defaults.
type Thresholds struct {
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

func (t Thresholds) withDefaults() Thresholds {
	if t.MinTokensToInit <= 0 {
		t.MinTokensToInit = DefaultMinTokensToInit
	}
	if t.MinTokensBetweenUpdates <= 0 {
		t.MinTokensBetweenUpdates = DefaultMinTokensBetweenUpdates
	}
	if t.ToolCallsBetweenUpdates <= 0 {
		t.ToolCallsBetweenUpdates = DefaultToolCallsBetweenUpdates
	}
	return t
}

// State is what memdir remembers about a session's updates, in
// StateFile next to the notes. Claude Code keeps the same values in
// memory; memdir runs as separate processes, so it persists them.
type State struct {
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

// Decision says whether the notes are due for an update, and why.
type Decision struct {
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
	LastTurnToolCalls bool       `json:"last_turn_tool_calls"`
	Thresholds        Thresholds `json:"thresholds"`
}

// Decide applies Claude Code's rule to a conversation: no
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
func Decide(state State, messages []Message, th Thresholds) Decision {
	th = th.withDefaults()
	d := Decision{Thresholds: th}
	d.Tokens, d.Estimated = ContextTokens(messages)
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

// ContextTokens returns the size of the context a conversation
// fills: the usage the last API response reported (input, cached input
// and output tokens), plus an estimate of the messages after it. With no
// usage at all it estimates the messages since the last compaction, and
// reports estimated.
func ContextTokens(messages []Message) (tokens int, estimated bool) {
	for i := len(messages) - 1; i >= 0; i-- {
		if n := contextSize(messages[i].Usage); n > 0 {
			return n + estimateSessionTokens(messages[i+1:]), false
		}
	}
	return estimateSessionTokens(messages[compactionFloor(messages):]), true
}

func contextSize(u llm.Usage) int {
	return u.InputTokens + u.CacheReadTokens + u.CacheWriteTokens + u.OutputTokens
}

// EstimateTokens estimates the tokens of a message the way Claude Code's
// rough count does: its characters (text, tool names and inputs, tool
// results) divided by four, rounded up.
func EstimateTokens(m llm.Message) int {
	chars := 0
	for _, b := range m.Content {
		switch b.Type {
		case llm.BlockText, llm.BlockToolResult:
			chars += utf8.RuneCountInString(b.Text)
		case llm.BlockToolUse:
			chars += utf8.RuneCountInString(b.ToolName) + utf8.RuneCount(b.Input)
		}
	}
	return (chars + 3) / 4
}

func estimateSessionTokens(messages []Message) int {
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
func compactionFloor(messages []Message) int {
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
func toolCallsSince(messages []Message, since string) int {
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
		if m.Role == llm.RoleAssistant {
			n += countBlocks(m.Message, llm.BlockToolUse)
		}
	}
	return n
}

func countBlocks(m llm.Message, t llm.BlockType) int {
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
func lastTurnCallsTools(messages []Message) bool {
	for i := len(messages) - 1; i >= 0; i-- {
		if messages[i].Role == llm.RoleAssistant {
			return countBlocks(messages[i].Message, llm.BlockToolUse) > 0
		}
	}
	return false
}

// Options configure [Open]. The zero value works.
type Options struct {
	// Runtime selects the hash of project paths longer than 200
	// characters, as for [locate.SanitizePath].
	Runtime locate.HashRuntime
	// Journal records the notes before every change, so that an update
	// can be undone (memdir undo --dir <Dir()>). Nil means the default
	// journal of the session-memory directory.
	Journal *memdir.Journal
	// LookupEnv finds the default journal; nil means os.LookupEnv.
	LookupEnv memdir.LookupEnvFunc
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Logger receives debug records; nil discards them.
	Logger *slog.Logger
}

// Notes is one session's notes file and the state of its updates.
//
// Layout, as Claude Code has it:
//
//	<configHome>/projects/<SanitizePath(cwd)>/<sessionID>/session-memory/
//	    summary.md            the notes (0600, directory 0700)
//	    .memdir-state.json    memdir's update state
//	<configHome>/session-memory/config/template.md   the user's template (optional)
//	<configHome>/session-memory/config/prompt.md     the user's update prompt (optional)
//
// Concurrency: [Notes.Update] holds an exclusive flock on the
// session-memory directory, so two processes never update one session at
// once (the second gets ErrLocked); the notes and the state file are
// replaced atomically. Reading needs no lock.
type Notes struct {
	configHome string
	sessionID  string
	dir        string
	journal    *memdir.Journal
	now        func() time.Time
	log        *slog.Logger
}

// Open returns the notes of session sessionID of the project
// Claude Code was started in at cwd, under configHome ([locate.ConfigHome]).
// Nothing is created until the notes are first written. The session id
// must be usable as one directory name: not empty, no slash, backslash,
// NUL or control character, not "." or "..".
func Open(configHome, cwd, sessionID string, opts *Options) (*Notes, error) {
	if opts == nil {
		opts = &Options{}
	}
	if configHome == "" || !filepath.IsAbs(configHome) {
		return nil, fmt.Errorf("session notes: config home %q is not an absolute path: %w", configHome, memdir.ErrInvalid)
	}
	if cwd == "" || !filepath.IsAbs(cwd) {
		return nil, fmt.Errorf("session notes: project directory %q is not an absolute path: %w", cwd, memdir.ErrInvalid)
	}
	if err := CheckID(sessionID); err != nil {
		return nil, err
	}
	s := &Notes{
		configHome: filepath.Clean(configHome),
		sessionID:  sessionID,
		now:        opts.Now,
		log:        opts.Logger,
		journal:    opts.Journal,
	}
	s.dir = filepath.Join(s.configHome, "projects", locate.SanitizePath(filepath.Clean(cwd), opts.Runtime), sessionID, "session-memory")
	if s.now == nil {
		s.now = time.Now
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.journal == nil {
		lookup := opts.LookupEnv
		if lookup == nil {
			lookup = os.LookupEnv
		}
		jdir, err := memdir.DefaultJournalDir(s.dir, lookup)
		if err != nil {
			return nil, fmt.Errorf("session notes %s: journal: %w", sessionID, err)
		}
		s.journal = memdir.NewJournal(jdir, s.now)
	}
	return s, nil
}

// CheckID reports whether id can name a session's directory.
func CheckID(id string) error {
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
		return fmt.Errorf("session id %q cannot name a directory: %s: %w", id, bad, memdir.ErrInvalid)
	}
	return nil
}

// SessionID returns the session's id.
func (s *Notes) SessionID() string { return s.sessionID }

// Dir returns the session-memory directory.
func (s *Notes) Dir() string { return s.dir }

// Path returns the notes file.
func (s *Notes) Path() string { return filepath.Join(s.dir, NotesFile) }

// Journal returns the journal the notes' changes are recorded in.
func (s *Notes) Journal() *memdir.Journal { return s.journal }

// TemplatePath and PromptPath return where the user's own template and
// update prompt are looked for.
func (s *Notes) TemplatePath() string {
	return filepath.Join(s.configHome, "session-memory", "config", "template.md")
}

// PromptPath: see [Notes.TemplatePath].
func (s *Notes) PromptPath() string {
	return filepath.Join(s.configHome, "session-memory", "config", "prompt.md")
}

// Template returns the template new notes start from: the user's
// template.md when it exists, otherwise [DefaultTemplate]. A
// template.md that cannot be read, is not text or is over 256 KiB is an
// error naming it.
func (s *Notes) Template() (string, error) {
	return readSessionConfig(s.TemplatePath(), DefaultTemplate)
}

// PromptTemplate returns the update prompt before substitution: the
// user's prompt.md when it exists, otherwise [DefaultPrompt].
func (s *Notes) PromptTemplate() (string, error) {
	return readSessionConfig(s.PromptPath(), DefaultPrompt)
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
		return nil, fmt.Errorf("not a regular file: %w", memdir.ErrInvalid)
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("larger than %d bytes: %w", limit, memdir.ErrInvalid)
	}
	if !utf8.Valid(data) || slices.Contains(data, 0) {
		return nil, fmt.Errorf("not UTF-8 text: %w", memdir.ErrInvalid)
	}
	return data, nil
}

// Read returns the notes. Missing notes are an error wrapping ErrNotFound.
func (s *Notes) Read() (string, error) {
	root, err := os.OpenRoot(s.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("session %s has no notes yet (%s): %w", s.sessionID, s.Path(), memdir.ErrNotFound)
	}
	if err != nil {
		return "", fmt.Errorf("session notes: %w", err)
	}
	defer root.Close()
	return s.readIn(root)
}

func (s *Notes) readIn(root *os.Root) (string, error) {
	f, err := root.Open(NotesFile)
	if errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("session %s has no notes yet (%s): %w", s.sessionID, s.Path(), memdir.ErrNotFound)
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

// Ensure creates the notes from [Notes.Template] unless they exist:
// the directory with mode 0700, the file with O_EXCL and mode 0600, so an
// existing file, even one created a moment ago by another process, is
// never overwritten. It reports whether it created the file.
func (s *Notes) Ensure() (created bool, err error) {
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

func (s *Notes) ensureIn(root *os.Root, tmpl string) (created bool, err error) {
	f, err := root.OpenFile(NotesFile, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("create session notes %s: %w", s.Path(), err)
	}
	defer func() {
		if err != nil {
			f.Close()
			root.Remove(NotesFile) // ours, and incomplete
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
func (s *Notes) State() (State, error) {
	st := State{SessionID: s.sessionID}
	path := filepath.Join(s.dir, StateFile)
	data, err := readCapped(path, maxSessionConfigBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return st, nil
	}
	if err == nil {
		err = json.Unmarshal(data, &st)
	}
	if err != nil {
		return State{}, fmt.Errorf("session state %s: %w (delete it to start counting afresh): %w", path, err, memdir.ErrInvalid)
	}
	st.SessionID = s.sessionID
	return st, nil
}

func (s *Notes) saveState(st State) error {
	data, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(filepath.Join(s.dir, StateFile), append(data, '\n'), 0o600)
}

// Decide reads the state and applies [Decide].
func (s *Notes) Decide(messages []Message, th Thresholds) (Decision, error) {
	st, err := s.State()
	if err != nil {
		return Decision{}, err
	}
	return Decide(st, messages, th), nil
}

// EditResult is what the model did in one update: the restricted agent
// loop of package agent, offered only the memory tool over the
// session-memory directory and allowed to change the notes file alone.
type EditResult struct {
	// Text is the model's last reply.
	Text      string `json:"text,omitempty"`
	Turns     int    `json:"turns"`
	TurnLimit bool   `json:"turn_limit,omitempty"`
	// ToolCalls counts the calls made; Denied those the policy refused.
	ToolCalls int       `json:"tool_calls"`
	Denied    int       `json:"denied,omitempty"`
	Usage     llm.Usage `json:"usage"`
}

// UpdateOptions configure [Notes.Update]. Model is required.
type UpdateOptions struct {
	// Model edits the notes.
	Model      llm.Model
	Thresholds Thresholds
	// Force updates whatever the thresholds say.
	Force bool
	// MaxTurns caps the model calls; zero means DefaultMaxTurns.
	MaxTurns int
	// MaxConversationChars caps the conversation text sent; zero means
	// DefaultConversationChars.
	MaxConversationChars int
}

// UpdateResult is the outcome of [Notes.Update].
type UpdateResult struct {
	SessionID string   `json:"session_id"`
	Path      string   `json:"path"`
	Decision  Decision `json:"decision"`
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
	Messages int         `json:"messages"`
	Omitted  int         `json:"omitted,omitempty"`
	Edit     *EditResult `json:"edit,omitempty"`
	State    State       `json:"state"`
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
func (s *Notes) Update(ctx context.Context, messages []Message, opts *UpdateOptions) (*UpdateResult, error) {
	if opts == nil || opts.Model == nil {
		return nil, fmt.Errorf("update session notes: no model to edit them: %w", memdir.ErrInvalid)
	}
	if len(messages) == 0 {
		return nil, fmt.Errorf("update session notes of %s: the conversation is empty: %w", s.sessionID, memdir.ErrInvalid)
	}
	// A first look without the lock, so that a session that is not due
	// gets no directory: most checks end here.
	st, err := s.State()
	if err != nil {
		return nil, err
	}
	if d := Decide(st, messages, opts.Thresholds); !d.Update && !opts.Force && d.Initialized == st.Initialized {
		return &UpdateResult{SessionID: s.sessionID, Path: s.Path(), State: st, Decision: d}, nil
	}
	if err := atomicfile.MkdirAll(s.dir, 0o700); err != nil {
		return nil, fmt.Errorf("session notes: %w", err)
	}
	lock, ok, err := flock.TryAcquire(s.dir)
	if err != nil {
		return nil, fmt.Errorf("session notes: %w", err)
	}
	if !ok {
		return nil, fmt.Errorf("another process is updating the notes of session %s (%s): %w", s.sessionID, s.dir, memdir.ErrLocked)
	}
	defer lock.Unlock()

	// Decide again under the lock: another process may have just updated.
	if st, err = s.State(); err != nil {
		return nil, err
	}
	res := &UpdateResult{SessionID: s.sessionID, Path: s.Path(), State: st}
	res.Decision = Decide(st, messages, opts.Thresholds)
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

func (s *Notes) update(ctx context.Context, messages []Message, opts *UpdateOptions, st State, res *UpdateResult) (*UpdateResult, error) {
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
	if err := rec.Before(NotesFile); err != nil {
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
		maxChars = DefaultConversationChars
	}
	sent := messagesSince(messages, st.LastMessageID)
	convo, omitted := renderConversation(sent, maxChars)
	res.Messages, res.Omitted = len(sent)-omitted, omitted
	prompt := BuildPrompt(promptTmpl, before, sessionModelPath)
	maxTurns := opts.MaxTurns
	if maxTurns <= 0 {
		maxTurns = DefaultMaxTurns
	}
	s.log.DebugContext(ctx, "session notes: update", slog.String("session", s.sessionID), slog.Int("messages", res.Messages), slog.String("reason", res.Decision.Reason))
	edit, runErr := editNotes(ctx, &agent.Options{
		Model:        opts.Model,
		System:       sessionSystemPrompt,
		MemoryDir:    s.dir,
		OnlyFile:     NotesFile,
		MaxTurns:     maxTurns,
		BeforeChange: func(rel string) error { return rec.Before(rel) },
	}, []llm.Message{{Role: llm.RoleUser, Content: []llm.Block{llm.TextBlock(convo + "\n\n" + prompt)}}})
	res.Updated = true
	res.Edit = edit
	if edit != nil {
		rec.AddUsage(edit.Usage)
	}

	after, err := s.readIn(root)
	if err != nil {
		return res, s.abandon(rec, errors.Join(runErr, err))
	}
	if problem := CheckStructure(before, after); problem != "" {
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

// editNotes runs the restricted agent loop over the session-memory
// directory: the memory tool only, changes to the notes file alone, no
// project tools. It returns what the loop did even when it fails, so the
// caller can account for a partial run.
func editNotes(ctx context.Context, opts *agent.Options, messages []llm.Message) (*EditResult, error) {
	res, err := agent.Run(ctx, opts, messages)
	out := &EditResult{Text: res.Text, Turns: res.Turns, TurnLimit: res.TurnLimit, ToolCalls: len(res.ToolCalls), Usage: res.Usage}
	for _, c := range res.ToolCalls {
		if c.Denied {
			out.Denied++
		}
	}
	return out, err
}

// abandon closes a journal run that failed before or around the model
// call, and returns err.
func (s *Notes) abandon(rec *memdir.Recorder, err error) error {
	if _, ferr := rec.Finish(err); ferr != nil {
		return errors.Join(err, ferr)
	}
	return err
}

// restore writes the notes back as they were, as a journaled run.
func (s *Notes) restore(root *os.Root, notes string) (string, error) {
	rec, err := s.journal.Begin("session-notes-restore", s.dir)
	if err != nil {
		return "", fmt.Errorf("session notes: journal: %w", err)
	}
	rec.SetSummary("put back the notes of session " + s.sessionID + " after the model broke their structure")
	if err := rec.Before(NotesFile); err != nil {
		return "", err
	}
	werr := atomicfile.WriteFileIn(root, NotesFile, []byte(notes), 0o600)
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
func messagesSince(messages []Message, id string) []Message {
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
func renderConversation(messages []Message, maxChars int) (string, int) {
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

func renderMessage(m llm.Message) string {
	var b strings.Builder
	fmt.Fprintf(&b, "[%s]\n", m.Role)
	for _, c := range m.Content {
		switch c.Type {
		case llm.BlockText:
			b.WriteString(strings.TrimSpace(c.Text))
		case llm.BlockToolUse:
			fmt.Fprintf(&b, "(tool call %s, id %s) %s", c.ToolName, c.ToolUseID, cutMiddle(string(c.Input), sessionBlockChars))
		case llm.BlockToolResult:
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

// BuildPrompt fills in a prompt template (the default or the
// user's prompt.md): {{currentNotes}} becomes notes and {{notesPath}}
// notesPath, in one pass, so text inside the notes that looks like a
// placeholder stays as it is; unknown placeholders are left alone. When a
// section of the notes is over SectionTokens, or the notes over
// NotesTokens, a reminder to condense them is appended.
func BuildPrompt(template, notes, notesPath string) string {
	vars := map[string]string{"currentNotes": notes, "notesPath": notesPath}
	out := placeholder().ReplaceAllStringFunc(template, func(m string) string {
		if v, ok := vars[m[2:len(m)-2]]; ok {
			return v
		}
		return m
	})
	return out + sizeReminders(notes)
}

// Section is one "# " section of the notes.
type Section struct {
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
func (s Section) Title() string { return strings.TrimSpace(strings.TrimPrefix(s.Heading, "#")) }

// ParseNotes splits notes into their preamble (text before the
// first heading) and sections. A section starts at each line beginning
// with "# "; its description is the first non-blank line after the
// heading when that line is in italics (starts and ends with "_").
func ParseNotes(notes string) (preamble string, sections []Section) {
	lines := strings.Split(notes, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSuffix(l, "\r")
	}
	var pre []string
	var cur *Section
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
			cur, body = &Section{Heading: h}, nil
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

// CheckStructure compares the headings and italic description lines
// of two versions of the notes and returns "" when they match, or what
// changed.
func CheckStructure(before, after string) string {
	_, b := ParseNotes(before)
	_, a := ParseNotes(after)
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
	_, b := ParseNotes(before)
	_, a := ParseNotes(after)
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

// IsTemplate reports whether notes hold nothing yet: they equal
// template once both are trimmed (Claude Code's test), or no section has
// anything besides its heading and italic line (which also recognises an
// untouched template written by another version or in other words).
func IsTemplate(notes, template string) bool {
	if strings.TrimSpace(notes) == strings.TrimSpace(template) {
		return true
	}
	pre, sections := ParseNotes(notes)
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
	_, sections := ParseNotes(notes)
	var over []Section
	for _, s := range sections {
		if s.Tokens > SectionTokens {
			over = append(over, s)
		}
	}
	sort.SliceStable(over, func(i, j int) bool { return over[i].Tokens > over[j].Tokens })
	tooBig := total > NotesTokens
	if !tooBig && len(over) == 0 {
		return ""
	}
	var b strings.Builder
	if tooBig {
		fmt.Fprintf(&b, "\n\nThe notes are now about %d tokens, over the %d-token limit for the whole file. Shorten them until they fit: condense the longest sections, merge related points, and summarise older Worklog entries. Keep \"Current State\" and \"Errors & Corrections\" precise and complete.", total, NotesTokens)
	}
	if len(over) > 0 {
		if tooBig {
			b.WriteString("\n\nSections to shorten:")
		} else {
			b.WriteString("\n\nThese sections are over their limit and must be shortened:")
		}
		for _, s := range over {
			fmt.Fprintf(&b, "\n- %q: about %d tokens (limit %d)", s.Heading, s.Tokens, SectionTokens)
		}
	}
	return b.String()
}
