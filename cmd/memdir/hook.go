package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/checkpoint"
	"github.com/memdir/memdir/hooks"
	"github.com/memdir/memdir/internal/cli"
	"github.com/memdir/memdir/llm"
	"github.com/memdir/memdir/locate"
	"github.com/memdir/memdir/prompt"
	"github.com/memdir/memdir/recall"
	"github.com/memdir/memdir/team"
	"github.com/memdir/memdir/usage"
)

// Defaults of the hook's bounds.
const (
	// hookModelTimeout bounds the recall selector's model call, well under
	// the 10 s the UserPromptSubmit hook is installed with: past it, recall
	// answers lexically instead of Claude Code dropping the hook's output.
	hookModelTimeout = 8 * time.Second
	// hookPullTimeout bounds the team pull at session start, which holds up
	// the session's first prompt.
	hookPullTimeout = 5 * time.Second
	// hookStateAge is how long per-session state and logs are kept.
	hookStateAge = 30 * 24 * time.Hour
)

var hookCmd = &cli.Command{
	NeverBlock: true,
	Name:       "hook",
	Args:       "[flags] < HOOK-INPUT.json",
	Short:      "answer a Claude Code hook event (its JSON on standard input)",
	Long: `Hook is what Claude Code runs for memdir's hooks ('memdir hooks install' sets
them up). It reads the hook's JSON input on standard input and acts on its
hook_event_name. The memory directory is located from the input's cwd (the
project Claude is working in), by Claude Code's rules.

  SessionStart      Creates the memory directory (0700) if it is missing.
                    If team sync is configured (team.url, team.token and a
                    repository, see 'memdir sync'), pulls team memory,
                    waiting at most --pull-timeout; a failed pull is shown
                    to the user and does not stop the session. With
                    --inject-index, gives the model MEMORY.md (and
                    team/MEMORY.md) as additional context; off by default,
                    since Claude Code loads MEMORY.md itself.
  UserPromptSubmit  Recalls the memories relevant to the prompt (see 'memdir
                    recall') and gives them to the model as additional
                    context: whole memories only, at most 10,000 characters
                    in all, none that this session was already given, and
                    no more once the session has had 60 KB of memories. What
                    was given is remembered per session under memdir's state
                    directory (hooks/sessions/). Without a model this takes
                    tens of milliseconds; a model's answer is awaited at
                    most --model-timeout, then recall ranks lexically (the
                    fallback is noted on standard error). Also takes a
                    checkpoint snapshot for the input's prompt_id (see
                    'memdir checkpoint'), unless --no-checkpoint.
  PreToolUse        For Edit, Write, MultiEdit and NotebookEdit: records the
                    file about to change in the session's checkpoints, so
                    'memdir checkpoint rewind' can put it back, unless
                    --no-checkpoint. When the file is a memory of the
                    project, also leaves the recall index a hint to read it
                    again at the next prompt. A failure never blocks the
                    edit.
  Stop              Unless stop_hook_active is true, and if a model is
                    configured, starts 'memdir extract' on the transcript in
                    the background and returns at once.
  SessionEnd        If autoDreamEnabled is on and a model is configured,
                    starts 'memdir dream' in the background (it checks its
                    own gates) and returns at once.
  any other event   Nothing.

Background runs are detached from Claude Code (a session of their own,
standard input from /dev/null) and append their output to
hooks/logs/SESSION.log under memdir's state directory. State and logs older
than 30 days are removed at session start. When auto memory is disabled
(CLAUDE_CODE_DISABLE_AUTO_MEMORY, autoMemoryEnabled), recall, team pull,
extraction and consolidation do nothing; checkpoints still work.

Output follows Claude Code's hook protocol: nothing, or one JSON object with
hookSpecificOutput.additionalContext and, for problems that did not stop the
hook's main work, a systemMessage shown to the user (also written to
standard error). Notes for the debug log go to standard error.

Exit status: 0 when the event was handled (or needs nothing); 1 when the
input is malformed (the message names the field) or the event's main work
failed. Never 2, which would make Claude Code block the prompt, the edit or
the stop; only a malformed memdir command line (an unknown flag) exits 2.

Configuration (model, team server) comes from 'memdir config'; the config
flags below override it and are passed on to the background runs.

Example (what Claude Code does):
  echo '{"session_id":"s1","transcript_path":"/tmp/s1.jsonl","cwd":"'$PWD'",
    "hook_event_name":"UserPromptSubmit","prompt_id":"p1",
    "prompt":"why do the settlement tests fail on CI?"}' | memdir hook`,
	Setup: cli.Setup(runHook),
}

// hookOptions holds the flag values of memdir hook.
type hookOptions struct {
	// fs is the flag set as parsed: spawn passes the configuration flags
	// set on it on to the background commands.
	fs                        *flag.FlagSet
	mf                        *modelFlags
	noCheckpoint, injectIndex bool
	modelTimeout, pullTimeout time.Duration
}

func (f *hookOptions) Declare(fs *flag.FlagSet) {
	f.fs = fs
	f.mf = addModelFlags(fs, "UserPromptSubmit: rank lexically even when a model is configured")
	fs.BoolVar(&f.noCheckpoint, "no-checkpoint", false, "take no checkpoint snapshots (UserPromptSubmit) and track no edits (PreToolUse)")
	fs.BoolVar(&f.injectIndex, "inject-index", false, "SessionStart: give the model MEMORY.md as additional context")
	fs.DurationVar(&f.modelTimeout, "model-timeout", hookModelTimeout, "UserPromptSubmit: wait at most `DURATION` for the model, then rank lexically")
	fs.DurationVar(&f.pullTimeout, "pull-timeout", hookPullTimeout, "SessionStart: give up the team pull after `DURATION`")
}

func runHook(ctx context.Context, env *cli.Env, f *hookOptions, args []string) error {
	h := &hookRun{env: env, fs: f.fs, mf: f.mf, f: f}
	out, err := h.run(ctx, args)
	for _, w := range h.warnings {
		fmt.Fprintf(env.Stderr, "memdir hook: %s\n", w)
	}
	if err != nil {
		// Exit 1 whatever the error: Claude Code reads 2 as "block".
		return &cli.ExitError{Code: cli.ExitFailure, Msg: err.Error()}
	}
	if len(h.warnings) > 0 {
		if out == nil {
			out = &hooks.Output{}
		}
		out.SystemMessage, _ = hooks.Truncate("memdir: "+strings.Join(h.warnings, "; "), hooks.MaxContextChars, "…")
	}
	return out.Write(env.Stdout)
}

// hookRun is one run of the hook command.
type hookRun struct {
	env *cli.Env
	fs  *flag.FlagSet
	mf  *modelFlags
	f   *hookOptions
	in  *hooks.Input
	// warnings are problems the user should see that did not stop the
	// event's main work.
	warnings []string
}

func (h *hookRun) warn(format string, args ...any) {
	h.warnings = append(h.warnings, fmt.Sprintf(format, args...))
}

// note writes a line for Claude Code's debug log.
func (h *hookRun) note(format string, args ...any) {
	fmt.Fprintf(h.env.Stderr, "memdir hook: "+format+"\n", args...)
}

func (h *hookRun) run(ctx context.Context, args []string) (*hooks.Output, error) {
	if len(args) > 0 {
		return nil, fmt.Errorf("hook takes no arguments (got %q): it reads the hook's JSON input on standard input", args)
	}
	in, err := hooks.ParseInput(h.env.Stdin)
	if err != nil {
		return nil, err
	}
	h.in = in
	switch in.HookEventName {
	case hooks.SessionStart:
		return h.sessionStart(ctx)
	case hooks.UserPromptSubmit:
		return h.userPromptSubmit(ctx)
	case hooks.PreToolUse:
		return nil, h.preToolUse(ctx)
	case hooks.Stop:
		return nil, h.stop()
	case hooks.SessionEnd:
		return nil, h.sessionEnd()
	}
	return nil, nil
}

// locate opens the memory directory of the input's cwd. It returns nil
// (and says so) when auto memory is disabled there.
func (h *hookRun) locate() (*memdir.Dir, *locate.Location, error) {
	lf := locationFlags{project: h.in.Cwd}
	d, loc, err := lf.open(h.env)
	if err != nil {
		return nil, nil, err
	}
	if !loc.Enabled {
		h.note("auto memory is disabled (%s): nothing to do for %s", loc.EnabledReason, h.in.HookEventName)
		return nil, loc, nil
	}
	return d, loc, nil
}

func (h *hookRun) sessionStart(ctx context.Context) (*hooks.Output, error) {
	d, _, err := h.locate()
	if err != nil || d == nil {
		return nil, err
	}
	if err := d.Ensure(); err != nil {
		return nil, err
	}
	h.prune()
	h.pullTeam(ctx)
	if !h.f.injectIndex {
		return nil, nil
	}
	text, err := indexContext(d)
	if err != nil || text == "" {
		return nil, err
	}
	return hooks.WithContext(hooks.SessionStart, text), nil
}

// prune removes session state and logs of sessions idle for 30 days.
func (h *hookRun) prune() {
	cutoff := h.env.Now().Add(-hookStateAge)
	for _, p := range []struct {
		dir      func(memdir.LookupEnvFunc) (string, error)
		suffixes []string
	}{
		{hooks.DefaultSessionDir, []string{".json", ".corrupt"}},
		{hooks.DefaultLogDir, []string{".log"}},
	} {
		dir, err := p.dir(h.env.LookupEnv)
		if err == nil {
			_, err = hooks.Prune(dir, cutoff, p.suffixes...)
		}
		if err != nil {
			h.note("old hook state not removed: %v", err)
		}
	}
}

// pullTeam pulls team memory when a server, a token and a repository are
// configured; anything else is not configured, and is only noted.
func (h *hookRun) pullTeam(ctx context.Context) {
	cfg, err := h.mf.config(h.env)
	if err != nil {
		h.warn("team memory not pulled: %v", err)
		return
	}
	if !cfg.Team.URL.Set() || !cfg.Team.Token.Set() {
		return
	}
	lf := locationFlags{project: h.in.Cwd}
	s, err := newSyncer(h.env, &lf, syncConfig{url: cfg.Team.URL.Value, token: cfg.Team.Token.Value, repo: cfg.Team.Repo.Value}, slog.New(slog.DiscardHandler))
	if errors.Is(err, team.ErrNoRepo) {
		h.note("team memory not pulled: %v", err)
		return
	}
	if err != nil {
		h.warn("team memory not pulled: %v", err)
		return
	}
	ctx, cancel := context.WithTimeout(ctx, h.f.pullTimeout)
	defer cancel()
	res, err := s.client.Pull(ctx, false)
	if err != nil {
		if ctx.Err() == context.DeadlineExceeded {
			err = fmt.Errorf("no answer within %s: %w", h.f.pullTimeout, err)
		}
		h.warn("team memory pull for %s failed: %v", s.repo, err)
		return
	}
	var b strings.Builder
	printPull(&b, s.repo, res)
	h.note("%s", strings.TrimSpace(b.String()))
}

// indexContext renders MEMORY.md and team/MEMORY.md as Claude Code shows
// them, within the 10,000-character limit: an index that does not fit is
// cut at a line end, with a note naming the file to read.
func indexContext(d *memdir.Dir) (string, error) {
	var b strings.Builder
	room := hooks.MaxContextChars
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
		part, _ := hooks.Truncate(prompt.IndexContext(p, text, team), room-hooks.Len(sep),
			fmt.Sprintf("[The index continues in %s: hook context is limited to %d characters.]", p, hooks.MaxContextChars))
		if part == "" {
			break
		}
		b.WriteString(sep + part)
		room -= hooks.Len(sep + part)
	}
	return b.String(), nil
}

func (h *hookRun) userPromptSubmit(ctx context.Context) (*hooks.Output, error) {
	if !h.f.noCheckpoint {
		h.snapshot(ctx)
	}
	d, _, err := h.locate()
	if err != nil || d == nil {
		return nil, err
	}
	dir, err := hooks.DefaultSessionDir(h.env.LookupEnv)
	if err != nil {
		return nil, err
	}
	store := hooks.NewSessionStore(dir)
	sess, err := store.Load(h.in.SessionID)
	if err != nil {
		h.warn("%v", err)
		sess = &hooks.Session{ID: h.in.SessionID}
	}
	cache, err := recall.DefaultIndexPath(d.Path(), h.env.LookupEnv)
	if err != nil {
		return nil, err
	}
	opts := &recall.Options{
		Index:    recall.NewIndex(d.Path(), cache),
		Surfaced: sess.Surfaced, SessionBytes: sess.Bytes, Now: h.env.Now,
		// Counted below: only the memories that fit the context.
		NoCount: true,
	}
	h.configureRecall(ctx, opts, d.Path())
	res, err := recall.Recall(ctx, d, *h.in.Prompt, opts)
	if err != nil {
		return nil, err
	}
	printRecallSummary(h.env, res)
	if len(res.Memories) == 0 {
		return nil, nil
	}
	inj := recall.Inject(d.Path(), res, nil)
	for i, m := range res.Memories {
		if !inj.Included[i] {
			h.note("%s left out: the context would pass %d characters", m.Path, hooks.MaxContextChars)
		}
	}
	if len(inj.Paths) == 0 {
		return nil, nil
	}
	text := inj.Text
	if err := d.Uses().Record(ctx, usage.Hook, inj.Paths...); err != nil {
		h.warn("recalled memories not counted in the use log: %v", err)
	}
	if _, err := store.Add(ctx, h.in.SessionID, inj.AbsPaths, inj.Bytes, h.env.Now()); err != nil {
		h.warn("recalled memories not recorded, so they may be shown again this session: %v", err)
	}
	return hooks.WithContext(hooks.UserPromptSubmit, text), nil
}

// configureRecall sets what the configuration says about recall, as
// `memdir recall` reads it: the manifest budget, and the model with each
// call bounded by --model-timeout (none for lexical recall). A bad
// configuration is a warning: the hook recalls on the defaults.
func (h *hookRun) configureRecall(ctx context.Context, opts *recall.Options, dir string) {
	cfg, err := h.mf.config(h.env)
	if err != nil {
		h.warn("recall on the defaults, without a model: %v", err)
		return
	}
	opts.ManifestTokens = cfg.ManifestTokens()
	if e, cache, err := recallEmbedder(h.env, cfg, dir); err != nil {
		h.warn("recall without embeddings: %v", err)
	} else if e != nil {
		opts.Embedder, opts.EmbedCache, opts.EmbedOptions = e, cache, cfg.EmbedOptions()
	}
	m, err := h.mf.model(cfg) // nil with --no-model
	if err != nil {
		h.warn("recall without a model: %v", err)
		return
	}
	if m != nil {
		opts.Model = boundedModel{m: m, limit: h.f.modelTimeout}
	}
}

// boundedModel gives every call its own deadline. Recall falls back to
// lexical ranking when a call fails but gives up when its own context
// ends, so the deadline must be the call's, not the hook's.
type boundedModel struct {
	m     llm.Model
	limit time.Duration
}

var _ llm.Model = boundedModel{}

func (b boundedModel) Generate(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	cctx, cancel := context.WithTimeout(ctx, b.limit)
	defer cancel()
	resp, err := b.m.Generate(cctx, req)
	if err != nil && ctx.Err() == nil && cctx.Err() == context.DeadlineExceeded {
		err = fmt.Errorf("no answer within %s: %w", b.limit, err)
	}
	return resp, err
}

// history returns the session's checkpoints; relative paths are taken
// from the input's cwd.
func (h *hookRun) history() (*checkpoint.History, error) {
	home, err := locate.ConfigHome(h.env.LookupEnv)
	if err != nil {
		return nil, err
	}
	return checkpoint.New(home, h.in.SessionID, &checkpoint.Options{Cwd: h.in.Cwd, Now: h.env.Now})
}

// snapshot checkpoints the tracked files as the user turn starts. Its
// problems are warnings: failing the hook would lose the recalled context.
func (h *hookRun) snapshot(ctx context.Context) {
	if h.in.PromptID == "" {
		h.warn("no checkpoint snapshot: the hook input has no prompt_id")
		return
	}
	hist, err := h.history()
	if err != nil {
		h.warn("no checkpoint snapshot: %v", err)
		return
	}
	res, err := hist.Snapshot(ctx, h.in.PromptID)
	if err != nil {
		h.warn("no checkpoint snapshot: %v", err)
		return
	}
	if err := res.Err(); err != nil {
		h.warn("checkpoint snapshot %d is missing files: %v", res.Snapshot.Sequence, err)
	}
}

func (h *hookRun) preToolUse(ctx context.Context) error {
	path, edits, err := h.in.EditedFile()
	if !edits || err != nil {
		return err
	}
	h.hintEdit(path)
	if h.f.noCheckpoint {
		return nil
	}
	if h.in.PromptID == "" {
		return fmt.Errorf("hook input: field prompt_id is missing, so %s cannot be checkpointed before %s (the edit goes ahead): %w", path, h.in.ToolName, memdir.ErrInvalid)
	}
	hist, err := h.history()
	if err != nil {
		return err
	}
	res, err := hist.Track(ctx, path, h.in.PromptID)
	if err != nil {
		return fmt.Errorf("checkpoint of %s before %s failed (the edit goes ahead without a backup): %w", path, h.in.ToolName, err)
	}
	if !res.AlreadyTracked {
		h.note("tracked %s (version %d) in snapshot %d", res.Path, res.Backup.Version, res.Sequence)
	}
	return nil
}

// hintEdit tells the recall index when the tool is about to write a memory
// file in place (Claude Code's Edit and Write do), so that the next
// prompt's recall reads it again however large the directory (see
// RecallIndex.NoteEdit). Problems are only noted: the edit goes ahead.
func (h *hookRun) hintEdit(path string) {
	if !filepath.IsAbs(path) {
		path = filepath.Join(h.in.Cwd, path)
	}
	lf := locationFlags{project: h.in.Cwd}
	dir, loc, err := lf.path(h.env)
	if err != nil || loc == nil || !loc.Enabled {
		return
	}
	cache, err := recall.DefaultIndexPath(dir, h.env.LookupEnv)
	if err != nil {
		return
	}
	if _, err := recall.NewIndex(dir, cache).NoteEdit(path); err != nil {
		h.note("%v", err)
	}
}

func (h *hookRun) stop() error {
	if h.in.StopHookActive {
		h.note("stop_hook_active is true: Claude is continuing because of a Stop hook; nothing to do")
		return nil
	}
	d, _, err := h.locate()
	if err != nil || d == nil {
		return err
	}
	if ok, err := h.modelConfigured("extraction"); !ok || err != nil {
		return err
	}
	return h.spawn("extract", "--transcript", h.in.TranscriptPath, "--session", h.in.SessionID, "--project", h.in.Cwd)
}

func (h *hookRun) sessionEnd() error {
	d, loc, err := h.locate()
	if err != nil || d == nil {
		return err
	}
	if on, why := loc.AutoDreamEnabled(); !on {
		h.note("consolidation not started: auto-dream is off (%s)", why)
		return nil
	}
	if ok, err := h.modelConfigured("consolidation"); !ok || err != nil {
		return err
	}
	return h.spawn("dream", "--session", h.in.SessionID, "--project", h.in.Cwd)
}

// modelConfigured reports whether a model is configured for the background
// work, noting when none is.
func (h *hookRun) modelConfigured(what string) (bool, error) {
	cfg, err := h.mf.config(h.env)
	if err != nil {
		return false, err
	}
	if provider, _ := cfg.ModelName(); provider == "" {
		h.note("no model configured (see 'memdir config'): no background %s", what)
		return false, nil
	}
	return true, nil
}

// spawn starts memdir with args, plus the config flags this hook was given,
// in the background, its output going to the session's log.
func (h *hookRun) spawn(args ...string) error {
	h.fs.Visit(func(f *flag.Flag) {
		if isConfigFlag(f.Name) {
			args = append(args, "--"+f.Name+"="+f.Value.String())
		}
	})
	dir, err := hooks.DefaultLogDir(h.env.LookupEnv)
	if err != nil {
		return err
	}
	logPath := filepath.Join(dir, h.in.SessionID+".log")
	spawn := h.env.Spawn
	if spawn == nil {
		spawn = spawnDetached
	}
	if err := spawn(args, logPath); err != nil {
		return err
	}
	h.note("started memdir %s in the background; its output goes to %s", args[0], logPath)
	return nil
}

// spawnDetached starts this binary in the background (see
// hooks.StartDetached).
func spawnDetached(args []string, logPath string) error {
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("cannot find the memdir binary to run in the background: %w", err)
	}
	return hooks.StartDetached(exe, args, logPath)
}
