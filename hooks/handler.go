package hooks

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/checkpoint"
	"github.com/memdir/memdir/internal/atomicfile"
	"github.com/memdir/memdir/locate"
	"github.com/memdir/memdir/prompt"
	"github.com/memdir/memdir/recall"
	"github.com/memdir/memdir/usage"
)

// StateMaxAge is how long per-session state and logs are kept.
const StateMaxAge = 30 * 24 * time.Hour

// Handler is what memdir does for each hook event: the behaviour behind
// 'memdir hook'. The program wires what depends on its configuration (the
// model, the team server, how background work is started) into the
// fields; the zero value of each optional field leaves that part out.
type Handler struct {
	// Open locates and opens the memory directory of the project at cwd,
	// by Claude Code's rules. Required.
	Open func(cwd string) (*memdir.Dir, *locate.Location, error)
	// Configure adds to a recall's options what the configuration asks
	// for (the manifest budget, an embedder, a model), saying what could
	// not be set up with r.Warn. Nil recalls lexically on the defaults.
	Configure func(ctx context.Context, r *Run, o *recall.Options, dir string)
	// PullTeam pulls team memory for the project at cwd at session start,
	// within ctx's deadline, noting or warning through r. Nil: no pull.
	PullTeam func(ctx context.Context, r *Run, cwd string)
	// PullTimeout bounds PullTeam (it holds up the session's first
	// prompt).
	PullTimeout time.Duration
	// ModelConfigured reports whether a model is configured for the
	// background work (extraction, consolidation). Nil means none is.
	ModelConfigured func() (bool, error)
	// Background starts memdir with args, detached, its output appended
	// to logPath. Nil means nothing is started.
	Background func(args []string, logPath string) error
	// NoCheckpoint takes no checkpoint snapshots and tracks no edits.
	NoCheckpoint bool
	// InjectIndex gives the model MEMORY.md as context at session start.
	InjectIndex bool
	// LookupEnv finds the state directory and the configuration home; nil
	// means the process environment is not read (the hook then fails to
	// find them).
	LookupEnv memdir.LookupEnvFunc
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Log receives the notes for the agent's debug log; nil discards them.
	Log io.Writer
}

// Run is one event being handled.
type Run struct {
	h  *Handler
	In *Input
	// Warnings are problems the user should see that did not stop the
	// event's main work.
	Warnings []string
}

// Warn records a problem for the user that does not stop the event's work.
func (r *Run) Warn(format string, args ...any) {
	r.Warnings = append(r.Warnings, fmt.Sprintf(format, args...))
}

// Note writes a line for the agent's debug log.
func (r *Run) Note(format string, args ...any) {
	if r.h.Log != nil {
		fmt.Fprintf(r.h.Log, "memdir hook: "+format+"\n", args...)
	}
}

func (h *Handler) now() time.Time {
	if h.Now != nil {
		return h.Now()
	}
	return time.Now()
}

// Handle answers one event. The Output is nil when there is nothing to
// say; warnings are also in it, as the system message. An error means the
// event's main work failed (the hook then exits 1, never 2).
func (h *Handler) Handle(ctx context.Context, in *Input) (*Output, *Run, error) {
	r := &Run{h: h, In: in}
	out, err := h.dispatch(ctx, r)
	if err != nil {
		return nil, r, err
	}
	if len(r.Warnings) > 0 {
		if out == nil {
			out = &Output{}
		}
		out.SystemMessage, _ = Truncate("memdir: "+strings.Join(r.Warnings, "; "), MaxContextChars, "…")
	}
	if out != nil && out.HookSpecificOutput != nil && in.AgentEvent != "" {
		// The answer names the event as the program does (BeforeAgent).
		out.HookSpecificOutput.HookEventName = in.AgentEvent
	}
	return out, r, nil
}

func (h *Handler) dispatch(ctx context.Context, r *Run) (*Output, error) {
	switch r.In.HookEventName {
	case SessionStart:
		return h.sessionStart(ctx, r)
	case UserPromptSubmit:
		return h.userPromptSubmit(ctx, r)
	case PreToolUse:
		return nil, h.preToolUse(ctx, r)
	case Stop:
		return nil, h.stop(r)
	case SessionEnd:
		return nil, h.sessionEnd(r)
	}
	return nil, nil
}

// locate opens the memory directory of the input's cwd. It returns nil
// (and says so) when auto memory is disabled there.
func (h *Handler) locate(r *Run) (*memdir.Dir, *locate.Location, error) {
	d, loc, err := h.Open(r.In.Cwd)
	if err != nil {
		return nil, nil, err
	}
	if !loc.Enabled {
		r.Note("auto memory is disabled (%s): nothing to do for %s", loc.EnabledReason, r.In.HookEventName)
		return nil, loc, nil
	}
	return d, loc, nil
}

func (h *Handler) sessionStart(ctx context.Context, r *Run) (*Output, error) {
	d, _, err := h.locate(r)
	if err != nil || d == nil {
		return nil, err
	}
	if err := d.Ensure(); err != nil {
		return nil, err
	}
	h.prune(r)
	if h.PullTeam != nil {
		pctx, cancel := context.WithTimeout(ctx, h.PullTimeout)
		h.PullTeam(pctx, r, r.In.Cwd)
		cancel()
	}
	if !h.InjectIndex {
		return nil, nil
	}
	text, err := IndexContext(d)
	if err != nil || text == "" {
		return nil, err
	}
	return WithContext(SessionStart, text), nil
}

// prune removes session state and logs of sessions idle for 30 days.
func (h *Handler) prune(r *Run) {
	cutoff := h.now().Add(-StateMaxAge)
	for _, p := range []struct {
		dir      func(memdir.LookupEnvFunc) (string, error)
		suffixes []string
	}{
		{DefaultSessionDir, []string{".json", ".corrupt"}},
		{DefaultLogDir, []string{".log"}},
	} {
		dir, err := p.dir(h.LookupEnv)
		if err == nil {
			_, err = Prune(dir, cutoff, p.suffixes...)
		}
		if err != nil {
			r.Note("old hook state not removed: %v", err)
		}
	}
}

// IndexContext renders MEMORY.md and team/MEMORY.md as Claude Code shows
// them, within MaxContextChars: an index that does not fit is cut at a
// line end, with a note naming the file to read.
func IndexContext(d *memdir.Dir) (string, error) {
	var b strings.Builder
	room := MaxContextChars
	for _, team := range []bool{false, true} {
		loaded, err := d.LoadIndex(team)
		if err != nil {
			return "", err
		}
		text := loaded.Text
		if !loaded.Exists || strings.TrimSpace(text) == "" {
			continue
		}
		p := d.Abs(memdir.EntrypointName)
		if team {
			p = d.Abs(memdir.TeamDirName + "/" + memdir.EntrypointName)
		}
		sep := ""
		if b.Len() > 0 {
			sep = "\n\n"
		}
		part, _ := Truncate(prompt.IndexContext(p, text, team), room-Len(sep),
			fmt.Sprintf("[The index continues in %s: hook context is limited to %d characters.]", p, MaxContextChars))
		if part == "" {
			break
		}
		b.WriteString(sep + part)
		room -= Len(sep + part)
	}
	return b.String(), nil
}

func (h *Handler) userPromptSubmit(ctx context.Context, r *Run) (*Output, error) {
	if !h.NoCheckpoint {
		h.snapshot(ctx, r)
	}
	d, _, err := h.locate(r)
	if err != nil || d == nil {
		return nil, err
	}
	text, err := h.recallContext(ctx, r, d, *r.In.Prompt)
	if err != nil || text == "" {
		return nil, err
	}
	return WithContext(UserPromptSubmit, text), nil
}

// recallContext recalls the memories relevant to prompt that this session
// was not given yet, and returns them as hook context, recording them as
// given.
func (h *Handler) recallContext(ctx context.Context, r *Run, d *memdir.Dir, prompt string) (string, error) {
	dir, err := DefaultSessionDir(h.LookupEnv)
	if err != nil {
		return "", err
	}
	store := NewSessionStore(dir)
	sess, err := store.Load(r.In.SessionID)
	if err != nil {
		r.Warn("%v", err)
		sess = &Session{ID: r.In.SessionID}
	}
	cache, err := recall.DefaultIndexPath(d.Path(), h.LookupEnv)
	if err != nil {
		return "", err
	}
	opts := &recall.Options{
		Index:    recall.NewIndex(d.Path(), &recall.IndexOptions{CachePath: cache}),
		Surfaced: sess.Surfaced, SessionBytes: sess.Bytes, Now: h.Now,
		// Counted below: only the memories that fit the context.
		NoCount: true,
	}
	if h.Configure != nil {
		h.Configure(ctx, r, opts, d.Path())
	}
	res, err := recall.Recall(ctx, d, prompt, opts)
	if err != nil {
		return "", err
	}
	if h.Log != nil {
		io.WriteString(h.Log, res.Summary())
	}
	if res.VectorsMissing > 0 {
		h.fillVectors(r, d)
	}
	inj := recall.Inject(d.Path(), res, nil)
	for i, m := range res.Memories {
		if !inj.Included[i] {
			r.Note("%s left out: the context would pass %d characters", m.Path, MaxContextChars)
		}
	}
	if len(inj.Paths) == 0 {
		return "", nil
	}
	if err := d.Uses().Record(ctx, usage.Hook, inj.Paths...); err != nil {
		r.Warn("recalled memories not counted in the use log: %v", err)
	}
	if _, err := store.Add(ctx, r.In.SessionID, inj.AbsPaths, inj.Bytes, h.now()); err != nil {
		r.Warn("recalled memories not recorded, so they may be shown again this session: %v", err)
	}
	return inj.Text, nil
}

// fillAgain is how long a background `memdir embed` started by a prompt
// keeps later prompts from starting another: it embeds every memory
// missing, saving as it goes, so one at a time is enough, and a run
// killed midway is resumed by the next prompt after it.
const fillAgain = 10 * time.Minute

// fillVectors starts `memdir embed` in the background to fill the vectors
// this prompt's recall did without, unless one was started less than
// fillAgain ago (a marker beside the vector cache says when).
func (h *Handler) fillVectors(r *Run, d *memdir.Dir) {
	cache, err := recall.DefaultEmbedCachePath(d.Path(), h.LookupEnv)
	if err != nil {
		r.Warn("memory vectors not filled: %v", err)
		return
	}
	marker := cache + ".filling"
	if st, err := os.Lstat(marker); err == nil && st.Mode().IsRegular() && h.now().Sub(st.ModTime()) < fillAgain {
		return
	}
	if err := atomicfile.MkdirAll(filepath.Dir(marker), 0o700); err != nil {
		r.Warn("memory vectors not filled: %v", err)
		return
	}
	if err := atomicfile.WriteFile(marker, []byte(h.now().UTC().Format(time.RFC3339)+"\n"), 0o600); err != nil {
		r.Warn("memory vectors not filled: %v", err)
		return
	}
	if err := h.spawn(r, "embed", "--dir", d.Path()); err != nil {
		r.Warn("memory vectors not filled: %v", err)
	}
}

// history returns the session's checkpoints; relative paths are taken
// from the input's cwd.
func (h *Handler) history(r *Run) (*checkpoint.History, error) {
	home, err := locate.ConfigHome(h.LookupEnv)
	if err != nil {
		return nil, err
	}
	return checkpoint.New(home, r.In.SessionID, &checkpoint.Options{Cwd: r.In.Cwd, Now: h.Now})
}

// snapshot checkpoints the tracked files as the user turn starts. Its
// problems are warnings: failing the hook would lose the recalled context.
func (h *Handler) snapshot(ctx context.Context, r *Run) {
	if r.In.PromptID == "" {
		r.Warn("no checkpoint snapshot: the hook input has no %s", promptIDField(r.In.Agent))
		return
	}
	hist, err := h.history(r)
	if err != nil {
		r.Warn("no checkpoint snapshot: %v", err)
		return
	}
	res, err := hist.Snapshot(ctx, r.In.PromptID)
	if err != nil {
		r.Warn("no checkpoint snapshot: %v", err)
		return
	}
	if err := res.Err(); err != nil {
		r.Warn("checkpoint snapshot %d is missing files: %v", res.Snapshot.Sequence, err)
	}
}

func (h *Handler) preToolUse(ctx context.Context, r *Run) error {
	paths, edits, err := r.In.EditedFiles()
	if !edits || err != nil {
		return err
	}
	for _, p := range paths {
		h.hintEdit(r, p)
	}
	if h.NoCheckpoint {
		return nil
	}
	if r.In.PromptID == "" {
		return fmt.Errorf("hook input: field %s is missing, so %s cannot be checkpointed before %s (the edit goes ahead): %w", promptIDField(r.In.Agent), strings.Join(paths, ", "), r.In.ToolName, memdir.ErrInvalid)
	}
	hist, err := h.history(r)
	if err != nil {
		return err
	}
	for _, p := range paths {
		res, err := hist.Track(ctx, p, r.In.PromptID)
		if err != nil {
			return fmt.Errorf("checkpoint of %s before %s failed (the edit goes ahead without a backup): %w", p, r.In.ToolName, err)
		}
		if !res.AlreadyTracked {
			r.Note("tracked %s (version %d) in snapshot %d", res.Path, res.Backup.Version, res.Sequence)
		}
	}
	return nil
}

// promptIDField names the input field a prompt id comes from.
func promptIDField(a Agent) string {
	switch a {
	case Codex:
		return "turn_id"
	case Gemini:
		return "timestamp"
	}
	return "prompt_id"
}

// hintEdit tells the recall index when the tool is about to write a memory
// file in place (Claude Code's Edit and Write do), so that the next
// prompt's recall reads it again however large the directory (see
// recall.Index.NoteEdit). Problems are only noted: the edit goes ahead.
func (h *Handler) hintEdit(r *Run, path string) {
	if !filepath.IsAbs(path) {
		path = filepath.Join(r.In.Cwd, path)
	}
	d, loc, err := h.Open(r.In.Cwd)
	if err != nil || loc == nil || !loc.Enabled {
		return
	}
	cache, err := recall.DefaultIndexPath(d.Path(), h.LookupEnv)
	if err != nil {
		return
	}
	if _, err := recall.NewIndex(d.Path(), &recall.IndexOptions{CachePath: cache}).NoteEdit(path); err != nil {
		r.Note("%v", err)
	}
}

func (h *Handler) stop(r *Run) error {
	if r.In.StopHookActive {
		r.Note("stop_hook_active is true: the agent is continuing because of a stop hook; nothing to do")
		return nil
	}
	d, _, err := h.locate(r)
	if err != nil || d == nil {
		return err
	}
	return h.extract(r)
}

// extract starts the background extraction of the input's transcript
// ('memdir extract' tells its format from its content), when a model is
// configured.
func (h *Handler) extract(r *Run) error {
	if ok, err := h.modelConfigured(r, "extraction"); !ok || err != nil {
		return err
	}
	return h.spawn(r, "extract", "--transcript", r.In.TranscriptPath, "--session", r.In.SessionID, "--project", r.In.Cwd)
}

// sessionEnd starts consolidation. For Codex and Gemini it first starts
// an extraction too: a session that ends in the middle of a turn has no
// stop event, and one that does finds nothing new (the extraction's
// cursor is past it), so this costs no model call.
func (h *Handler) sessionEnd(r *Run) error {
	d, loc, err := h.locate(r)
	if err != nil || d == nil {
		return err
	}
	if r.In.Agent != Claude && r.In.Agent != "" {
		if r.In.TranscriptPath == "" || !filepath.IsAbs(r.In.TranscriptPath) {
			r.Note("no extraction at session end: field transcript_path is %q, not an absolute path", r.In.TranscriptPath)
		} else if err := h.extract(r); err != nil {
			return err
		}
	}
	if on, why := loc.AutoDreamEnabled(); !on {
		r.Note("consolidation not started: auto-dream is off (%s)", why)
		return nil
	}
	if ok, err := h.modelConfigured(r, "consolidation"); !ok || err != nil {
		return err
	}
	return h.spawn(r, "dream", "--session", r.In.SessionID, "--project", r.In.Cwd)
}

// modelConfigured reports whether a model is configured for the background
// work, noting when none is.
func (h *Handler) modelConfigured(r *Run, what string) (bool, error) {
	ok := false
	if h.ModelConfigured != nil {
		var err error
		if ok, err = h.ModelConfigured(); err != nil {
			return false, err
		}
	}
	if !ok {
		r.Note("no model configured (see 'memdir config'): no background %s", what)
	}
	return ok, nil
}

// spawn starts memdir with args in the background, its output going to the
// session's log.
func (h *Handler) spawn(r *Run, args ...string) error {
	dir, err := DefaultLogDir(h.LookupEnv)
	if err != nil {
		return err
	}
	logPath := filepath.Join(dir, r.In.SessionID+".log")
	if h.Background == nil {
		return fmt.Errorf("no way to start memdir %s in the background", args[0])
	}
	if err := h.Background(args, logPath); err != nil {
		return err
	}
	r.Note("started memdir %s in the background; its output goes to %s", args[0], logPath)
	return nil
}
