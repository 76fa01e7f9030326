package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/internal/atomicfile"
	"github.com/memdir/memdir/internal/flock"
	"github.com/memdir/memdir/llm"
	"github.com/memdir/memdir/locate"
	"github.com/memdir/memdir/memtool"
	"github.com/memdir/memdir/prompt"
	"github.com/memdir/memdir/recall"
	"github.com/memdir/memdir/transcript"
)

// ExtractMaxTurns is the turn budget of an extraction, as in Claude Code.
const ExtractMaxTurns = 5

// ExtractOptions configure an Extractor.
type ExtractOptions struct {
	// Model runs the extraction. Required.
	Model llm.Model
	// Dir is the auto-memory directory. Required.
	Dir *memdir.Dir
	// StateDir holds the per-session cursors (see locate.StateDir). Required.
	StateDir string
	// SessionID names the conversation; its cursor is kept per session.
	SessionID string
	// Team makes the prompt cover team/ as well (team memory is on).
	Team bool
	// ProjectDir is the project the conversation worked in, when known: a
	// Read of a file outside it marks the memories written as coming from
	// untrusted content (web tools always do). See memdir.Provenance.
	ProjectDir string
	// SkipIndex drops the MEMORY.md step from the prompt; memdir then adds
	// the index lines itself.
	SkipIndex bool
	// Every runs an extraction on every Nth eligible call (default 1).
	Every int
	// MaxTurns caps the model calls (default ExtractMaxTurns).
	MaxTurns int
	// Load reloads a conversation from a Source's Path, for the trailing
	// run after a coalesced call; nil means a Source's Messages are used.
	Load func(path string) ([]transcript.Message, error)
	// Now is the clock (dates in the prompt); nil means time.Now.
	Now func() time.Time
	// OnEvent receives the agent's progress.
	OnEvent func(Event)
	Logger  *slog.Logger
}

// Source is the conversation to extract from: its messages, and where they
// came from, so a trailing run can read the newest version of it.
type Source struct {
	Messages []transcript.Message
	Path     string
}

// ExtractResult reports one extraction.
type ExtractResult struct {
	// Skipped is true when no model was called; Reason says why.
	Skipped bool   `json:"skipped"`
	Reason  string `json:"reason,omitempty"`
	// NewMessages counts the user and assistant messages after the cursor.
	NewMessages int `json:"new_messages"`
	// Saved lists the memory files written (MEMORY.md excluded); Team
	// counts those under team/.
	Saved []string `json:"saved"`
	Team  int      `json:"team"`
	// RunID is the journal run that 'memdir undo' reverts.
	RunID string    `json:"run,omitempty"`
	Usage llm.Usage `json:"usage"`
	Turns int       `json:"turns"`
	// ToolCalls counts the tool calls the model made; Denied those the
	// policy refused (as in a session update's edit).
	ToolCalls int `json:"tool_calls"`
	Denied    int `json:"denied,omitempty"`
	// Cursor is the message the next extraction starts after.
	Cursor string `json:"cursor,omitempty"`
	// Trailing holds the result of the run that followed a coalesced call.
	Trailing *ExtractResult `json:"trailing,omitempty"`
	// Agent is the full record of the agent run, when there was one.
	Agent *Result `json:"-"`
}

// Extractor extracts memories from a conversation after each final answer,
// as Claude Code's background extraction does:
//
//   - a cursor per session remembers the last message processed, so each
//     run sees only what is new (all messages when the cursor is gone, for
//     instance after a compaction);
//   - if the conversation itself already wrote memory files since the
//     cursor, the run is skipped and the cursor moves on;
//   - with Every > 1 only every Nth eligible call runs;
//   - a call that arrives while a run is in progress, in this process or
//     another, is coalesced: the latest one is remembered and a single
//     trailing run follows the current one;
//   - the model works through the restricted agent (the memory tool only,
//     at most 5 turns), under the memory directory's lock, and every file
//     it changes is journaled first, so the run can be undone.
//
// An Extractor is safe for concurrent use.
type Extractor struct {
	o   ExtractOptions
	log *slog.Logger

	mu      sync.Mutex
	running bool
	pending *Source
}

// NewExtractor checks the options and returns an Extractor.
func NewExtractor(opts *ExtractOptions) (*Extractor, error) {
	if opts == nil || opts.Model == nil || opts.Dir == nil || opts.StateDir == "" {
		return nil, fmt.Errorf("extract: a model, a memory directory and a state directory are required: %w", memdir.ErrInvalid)
	}
	o := *opts
	if o.SessionID == "" {
		o.SessionID = "default"
	}
	if !sessionIDRe().MatchString(o.SessionID) {
		return nil, fmt.Errorf("extract: session id %q: use letters, digits, '.', '_' and '-' (at most 128): %w", o.SessionID, memdir.ErrInvalid)
	}
	if o.Every <= 0 {
		o.Every = 1
	}
	if o.MaxTurns <= 0 {
		o.MaxTurns = ExtractMaxTurns
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Extractor{o: o, log: log}, nil
}

var sessionIDRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9._-]{1,128}$`) })

// cursorState is what an Extractor keeps per session between runs.
type cursorState struct {
	Cursor     string    `json:"cursor,omitempty"`
	TurnsSince int       `json:"turns_since_last_extraction"`
	LastRun    time.Time `json:"last_run,omitzero"`
}

func (e *Extractor) stateDir() string {
	return filepath.Join(e.o.StateDir, "extract", locate.SanitizePath(e.o.Dir.Path(), locate.HashBun))
}

func (e *Extractor) statePath() string { return filepath.Join(e.stateDir(), e.o.SessionID+".json") }
func (e *Extractor) lockPath() string  { return filepath.Join(e.stateDir(), e.o.SessionID+".lock") }
func (e *Extractor) pendingPath() string {
	return filepath.Join(e.stateDir(), e.o.SessionID+".pending")
}

func (e *Extractor) loadState() (cursorState, error) {
	var st cursorState
	data, err := os.ReadFile(e.statePath())
	if errors.Is(err, fs.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return st, fmt.Errorf("extract: cursor: %w", err)
	}
	if err := json.Unmarshal(data, &st); err != nil {
		// A damaged cursor costs one extraction of the whole conversation,
		// never a failure.
		e.log.Debug("extract: cursor file unreadable; starting over", "path", e.statePath(), "err", err)
		return cursorState{}, nil
	}
	return st, nil
}

func (e *Extractor) saveState(st cursorState) error {
	data, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(e.statePath(), append(data, '\n'), 0o600)
}

// Extract runs an extraction on the conversation (see Extractor). A call
// coalesced into a running extraction returns Skipped with the reason.
func (e *Extractor) Extract(ctx context.Context, src Source) (*ExtractResult, error) {
	e.mu.Lock()
	if e.running {
		e.pending = &src
		e.mu.Unlock()
		return &ExtractResult{Skipped: true, Reason: "an extraction is already running for this session; the latest conversation will be extracted when it ends"}, nil
	}
	e.running = true
	e.mu.Unlock()
	defer func() {
		e.mu.Lock()
		e.running = false
		e.mu.Unlock()
	}()

	if err := atomicfile.MkdirAll(e.stateDir(), 0o700); err != nil {
		return nil, fmt.Errorf("extract: %w", err)
	}
	lock, ok, err := flock.TryAcquire(e.lockPath())
	if err != nil {
		return nil, fmt.Errorf("extract: %w", err)
	}
	if !ok {
		// Another process is extracting this session: leave it a note so
		// it runs once more when it finishes.
		if err := atomicfile.WriteFile(e.pendingPath(), []byte(src.Path), 0o600); err != nil {
			return nil, fmt.Errorf("extract: %w", err)
		}
		return &ExtractResult{Skipped: true, Reason: "another process is extracting this session; it will run once more for this conversation when it ends"}, nil
	}
	defer lock.Unlock()

	res, err := e.extract(ctx, src, false)
	if err != nil {
		return res, err
	}
	// One trailing run for whatever arrived meanwhile, from this process
	// or another; it covers only what follows the cursor just advanced.
	if next, ok := e.takePending(); ok {
		trailing, err := e.extract(ctx, next, true)
		res.Trailing = trailing
		if err != nil {
			return res, fmt.Errorf("extract: trailing run: %w", err)
		}
	}
	return res, nil
}

func (e *Extractor) takePending() (Source, bool) {
	e.mu.Lock()
	p := e.pending
	e.pending = nil
	e.mu.Unlock()
	if data, err := os.ReadFile(e.pendingPath()); err == nil {
		os.Remove(e.pendingPath())
		if p == nil && e.o.Load != nil && len(data) > 0 {
			p = &Source{Path: string(data)}
		}
	}
	if p == nil {
		return Source{}, false
	}
	if p.Path != "" && e.o.Load != nil {
		msgs, err := e.o.Load(p.Path)
		if err != nil {
			e.log.Debug("extract: cannot reload the pending conversation", "path", p.Path, "err", err)
			return Source{}, false
		}
		p.Messages = msgs
	}
	return *p, true
}

func (e *Extractor) extract(ctx context.Context, src Source, trailing bool) (*ExtractResult, error) {
	st, err := e.loadState()
	if err != nil {
		return nil, err
	}
	msgs := src.Messages
	res := &ExtractResult{Saved: []string{}}
	newMsgs, found := sinceCursor(msgs, st.Cursor)
	if !found && st.Cursor != "" {
		e.log.Debug("extract: cursor not in the conversation (compacted?); using every message", "cursor", st.Cursor)
	}
	for _, m := range newMsgs {
		if m.Role == llm.RoleUser || m.Role == llm.RoleAssistant {
			res.NewMessages++
		}
	}
	last := ""
	if len(msgs) > 0 {
		last = msgs[len(msgs)-1].UUID
	}
	res.Cursor = st.Cursor
	if res.NewMessages == 0 {
		res.Skipped, res.Reason = true, "no new messages since the last extraction"
		return res, nil
	}
	if p := e.memoryWrite(newMsgs); p != "" {
		// The conversation saved memories itself; extracting again would
		// duplicate them.
		st.Cursor, res.Cursor = last, last
		res.Skipped, res.Reason = true, "the conversation already wrote to memory ("+p+") since the last extraction"
		return res, e.saveState(st)
	}
	if !trailing {
		st.TurnsSince++
		if st.TurnsSince < e.o.Every {
			res.Skipped, res.Reason = true, fmt.Sprintf("throttled: extraction runs every %d eligible turns (%d so far)", e.o.Every, st.TurnsSince)
			return res, e.saveState(st)
		}
	}
	st.TurnsSince = 0

	if _, err := e.runAgent(ctx, newMsgs, res); err != nil {
		// The cursor stays: the next call covers these messages again.
		return res, err
	}
	st.Cursor, res.Cursor, st.LastRun = last, last, e.o.Now().UTC()
	return res, e.saveState(st)
}

// sinceCursor returns the messages after the one with UUID cursor, or all of
// them (found false) when the cursor is empty or not in the conversation.
func sinceCursor(msgs []transcript.Message, cursor string) ([]transcript.Message, bool) {
	if cursor == "" {
		return msgs, false
	}
	for i, m := range msgs {
		if m.UUID == cursor || contains(m.PartUUIDs, cursor) {
			return msgs[i+1:], true
		}
	}
	return msgs, false
}

func contains(list []string, s string) bool {
	return slices.Contains(list, s)
}

// writeTools are the tools whose calls, when they target the memory
// directory, mean the conversation saved memories itself: Claude Code's
// and Gemini CLI's (write_file, replace), which name the file in
// file_path. Codex CLI's apply_patch names its files in the patch.
var writeTools = map[string]bool{"Write": true, "Edit": true, "MultiEdit": true, "NotebookEdit": true, "write_file": true, "replace": true}

// patchFileRe matches the lines of an apply_patch patch that name a file.
var patchFileRe = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?m)^\*\*\* (?:Add|Update|Delete) File: (.+)$|^\*\*\* Move to: (.+)$`)
})

// memoryWrite returns the memory path that an assistant message among msgs
// wrote, or "" when none did: Claude Code's Write and Edit tools on a file
// in the memory directory, a memory-tool change, or memdir's own MCP tools.
func (e *Extractor) memoryWrite(msgs []transcript.Message) string {
	dir := e.o.Dir.Path() + string(filepath.Separator)
	for _, m := range msgs {
		if m.Role != llm.RoleAssistant {
			continue
		}
		for _, b := range m.Content {
			if b.Type != llm.BlockToolUse {
				continue
			}
			var in struct {
				FilePath     string `json:"file_path"`
				NotebookPath string `json:"notebook_path"`
				Command      string `json:"command"`
				Path         string `json:"path"`
				Input        string `json:"input"`
			}
			json.Unmarshal(b.Input, &in)
			name := b.ToolName
			switch {
			case name == "apply_patch":
				for _, m := range patchFileRe().FindAllStringSubmatch(in.Input+"\n"+in.Command, -1) {
					p := strings.TrimSpace(m[1] + m[2])
					if filepath.IsAbs(p) && strings.HasPrefix(filepath.Clean(p)+string(filepath.Separator), dir) {
						return p
					}
				}
			case writeTools[name]:
				p := in.FilePath
				if p == "" {
					p = in.NotebookPath
				}
				if p != "" && strings.HasPrefix(filepath.Clean(p)+string(filepath.Separator), dir) {
					return p
				}
			case name == memtool.Name && in.Command != "" && in.Command != "view":
				return in.Path
			case strings.HasPrefix(name, "mcp__") && strings.Contains(strings.ToLower(name), "memdir") &&
				(strings.HasSuffix(name, "__save") || strings.HasSuffix(name, "__forget") ||
					strings.HasSuffix(name, "__memory") && in.Command != "" && in.Command != "view"):
				return name
			}
		}
	}
	return ""
}

func (e *Extractor) runAgent(ctx context.Context, msgs []transcript.Message, res *ExtractResult) (*Result, error) {
	d := e.o.Dir
	if err := d.Ensure(); err != nil {
		return nil, err
	}
	var out *Result
	run, err := d.Change(ctx, "extract", nil, func(rec *memdir.Recorder) error {
		scan, err := d.Scan(ctx, nil)
		if err != nil {
			return err
		}
		mode := prompt.Individual
		if e.o.Team {
			mode = prompt.Team
		}
		memPrompt, err := prompt.Build(&prompt.Options{Mode: mode, Dir: d.Path(), SkipIndex: e.o.SkipIndex})
		if err != nil {
			return err
		}
		system := memPrompt + "\n" + ExtractionInstructions(&ExtractPromptOptions{
			NewMessages: res.NewMessages, MaxTurns: e.o.MaxTurns, Team: e.o.Team, SkipIndex: e.o.SkipIndex,
			Today: e.o.Now(),
		})
		user := extractionRequest(recall.Manifest(scan.Memories), RenderConversation(msgs, conversationBudget))
		var runErr error
		out, runErr = Run(ctx, &Options{
			Model: e.o.Model, System: system, MemoryDir: d.Path(), AnchorRoot: d.ProjectRoot(), MaxTurns: e.o.MaxTurns,
			BeforeChange: journalChange(d, rec), OnEvent: e.o.OnEvent, Logger: e.o.Logger,
			Write: d.WriteGuard(&memdir.Provenance{By: memdir.ByExtraction, Session: e.o.SessionID,
				Position: lastUUID(msgs), Untrusted: untrustedSources(msgs, e.o.ProjectDir)}),
		}, []llm.Message{{Role: llm.RoleUser, Content: []llm.Block{llm.TextBlock(user)}}})
		res.Agent = out
		if out != nil {
			res.Usage, res.Turns, res.ToolCalls = out.Usage, out.Turns, len(out.ToolCalls)
			for _, c := range out.ToolCalls {
				if c.Denied {
					res.Denied++
				}
			}
			rec.AddUsage(out.Usage)
			for _, p := range out.Saved() {
				res.Saved = append(res.Saved, p)
				if strings.HasPrefix(p, memdir.TeamDirName+"/") {
					res.Team++
				}
			}
		}
		if runErr == nil && len(res.Saved) > 0 {
			// A model that forgot the index step still leaves MEMORY.md complete.
			_, runErr = d.IndexMissing(rec, res.Saved)
		}
		rec.SetSummary(fmt.Sprintf("extract %s from %s", plural(len(res.Saved), "memory", "memories"), plural(res.NewMessages, "new message", "new messages")))
		return runErr
	})
	if run != nil && len(run.ChangedFiles()) > 0 {
		res.RunID = run.ID
	}
	return out, err
}

// journalChange records each file (every file below a directory) in the
// journal before the agent changes it.
func journalChange(d *memdir.Dir, rec *memdir.Recorder) func(string) error {
	return func(rel string) error {
		abs := d.Abs(rel)
		fi, err := os.Lstat(abs)
		if err != nil || !fi.IsDir() {
			return rec.Before(rel)
		}
		return filepath.WalkDir(abs, func(p string, de fs.DirEntry, err error) error {
			if err != nil || de.IsDir() {
				return err
			}
			r, err := filepath.Rel(d.Path(), p)
			if err != nil {
				return err
			}
			return rec.Before(filepath.ToSlash(r))
		})
	}
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
