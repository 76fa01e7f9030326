package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/hooks"
	"github.com/memdir/memdir/internal/cli"
	"github.com/memdir/memdir/llm"
	"github.com/memdir/memdir/locate"
	"github.com/memdir/memdir/recall"
	"github.com/memdir/memdir/team"
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
)

var hookCmd = &cli.Command{
	NeverBlock: true,
	Name:       "hook",
	Args:       "[--agent claude|codex|gemini] [flags] < HOOK-INPUT.json",
	Short:      "answer a hook event of Claude Code, Codex CLI or Gemini CLI (its JSON on standard input)",
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

--agent codex and --agent gemini read Codex CLI's and Gemini CLI's hook
input instead ('memdir hooks install --agent codex|gemini' writes them),
and answer in the same JSON with the program's event name. Their events do
the work of Claude Code's: Codex's SessionStart, UserPromptSubmit,
PreToolUse (apply_patch: the files its patch names), Stop and SessionEnd;
Gemini's SessionStart, BeforeAgent, BeforeTool (write_file, replace),
AfterAgent and SessionEnd. The memory directory is the one Claude Code uses
for the input's cwd. A checkpoint snapshot is named after Codex's turn_id; Gemini
gives no turn id, so its snapshot is named gemini-<the BeforeAgent event's
timestamp>. SessionEnd also starts an extraction (a session cut off
mid-turn has no stop event; one that has finds nothing new).

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
	agent                     string
	noCheckpoint, injectIndex bool
	modelTimeout, pullTimeout time.Duration
}

func (f *hookOptions) Declare(fs *flag.FlagSet) {
	f.fs = fs
	f.mf = addConfigFlags(fs, "UserPromptSubmit: rank lexically even when a model is configured", keysAll)
	fs.StringVar(&f.agent, "agent", "claude", "the program sending the input: claude, codex or gemini")
	fs.BoolVar(&f.noCheckpoint, "no-checkpoint", false, "take no checkpoint snapshots (UserPromptSubmit) and track no edits (PreToolUse)")
	fs.BoolVar(&f.injectIndex, "inject-index", false, "SessionStart: give the model MEMORY.md as additional context")
	fs.DurationVar(&f.modelTimeout, "model-timeout", hookModelTimeout, "UserPromptSubmit: wait at most `DURATION` for the model, then rank lexically")
	fs.DurationVar(&f.pullTimeout, "pull-timeout", hookPullTimeout, "SessionStart: give up the team pull after `DURATION`")
}

func runHook(ctx context.Context, env *cli.Env, f *hookOptions, args []string) error {
	if len(args) > 0 {
		return &cli.ExitError{Code: cli.ExitFailure, Msg: fmt.Sprintf("hook takes no arguments (got %q): it reads the hook's JSON input on standard input", args)}
	}
	agent, err := hooks.ParseAgent(f.agent)
	if err != nil {
		return &cli.ExitError{Code: cli.ExitFailure, Msg: err.Error()}
	}
	in, err := hooks.ParseAgentInput(agent, env.Stdin)
	if err != nil {
		// Exit 1 whatever the error: Claude Code reads 2 as "block".
		return &cli.ExitError{Code: cli.ExitFailure, Msg: advise(err)}
	}
	out, run, err := hookHandler(env, f).Handle(ctx, in)
	for _, w := range run.Warnings {
		fmt.Fprintf(env.Stderr, "memdir hook: %s\n", w)
	}
	if err != nil {
		return &cli.ExitError{Code: cli.ExitFailure, Msg: advise(err)}
	}
	if out.Empty() {
		return nil
	}
	return cli.WriteJSONLine(env.Stdout, out)
}

// hookHandler wires the hook's behaviour (package hooks) to the command's
// configuration: the memory directory located from the input's cwd, the
// model and embedder for recall, the team server, and background runs of
// this binary.
func hookHandler(env *cli.Env, f *hookOptions) *hooks.Handler {
	return &hooks.Handler{
		Open: func(cwd string) (*memdir.Dir, *locate.Location, error) {
			lf := locationFlags{project: cwd}
			return lf.open(env)
		},
		Configure: func(ctx context.Context, r *hooks.Run, o *recall.Options, dir string) {
			configureHookRecall(env, f, r, o, dir)
		},
		PullTeam:    func(ctx context.Context, r *hooks.Run, cwd string) { pullTeam(ctx, env, f, r, cwd) },
		PullTimeout: f.pullTimeout,
		ModelConfigured: func() (bool, error) {
			cfg, err := f.mf.config(env)
			if err != nil {
				return false, err
			}
			provider, _ := cfg.ModelName()
			return provider != "", nil
		},
		Background:   func(args []string, logPath string) error { return spawnHookRun(env, f, args, logPath) },
		NoCheckpoint: f.noCheckpoint,
		InjectIndex:  f.injectIndex,
		LookupEnv:    env.LookupEnv,
		Now:          env.Now,
		Log:          env.Stderr,
	}
}

// pullTeam pulls team memory when a server, a token and a repository are
// configured; anything else is not configured, and is only noted.
func pullTeam(ctx context.Context, env *cli.Env, f *hookOptions, r *hooks.Run, cwd string) {
	cfg, err := f.mf.config(env)
	if err != nil {
		r.Warn("team memory not pulled: %s", advise(err))
		return
	}
	if !cfg.Team.URL.Set() || !cfg.Team.Token.Set() {
		return
	}
	lf := locationFlags{project: cwd}
	s, err := newSyncer(env, &lf, syncConfig{url: cfg.Team.URL.Value, token: cfg.Team.Token.Value, repo: cfg.Team.Repo.Value}, slog.New(slog.DiscardHandler))
	if errors.Is(err, team.ErrNoRepo) {
		r.Note("team memory not pulled: %s", advise(err))
		return
	}
	if err != nil {
		r.Warn("team memory not pulled: %s", advise(err))
		return
	}
	res, err := s.client.Pull(ctx, false)
	if err != nil {
		if ctx.Err() == context.DeadlineExceeded {
			err = fmt.Errorf("no answer within %s: %w", f.pullTimeout, err)
		}
		r.Warn("team memory pull for %s failed: %s", s.repo, advise(err))
		return
	}
	var b strings.Builder
	printPull(&b, s.repo, res)
	r.Note("%s", strings.TrimSpace(b.String()))
}

// configureHookRecall sets what the configuration says about recall, as
// `memdir recall` reads it: the manifest budget, and the model with each
// call bounded by --model-timeout (none for lexical recall). A bad
// configuration is a warning: the hook recalls on the defaults.
func configureHookRecall(env *cli.Env, f *hookOptions, r *hooks.Run, opts *recall.Options, dir string) {
	cfg, err := f.mf.config(env)
	if err != nil {
		r.Warn("recall on the defaults, without a model: %s", advise(err))
		return
	}
	opts.ManifestTokens = cfg.ManifestTokens()
	if e, cache, err := recallEmbedder(env, cfg, dir); err != nil {
		r.Warn("recall without embeddings: %s", advise(err))
	} else if e != nil {
		opts.Embedder, opts.EmbedCache, opts.EmbedOptions = e, cache, cfg.EmbedOptions()
	}
	m, err := f.mf.model(cfg) // nil with --no-model
	if err != nil {
		r.Warn("recall without a model: %s", advise(err))
		return
	}
	if m != nil {
		opts.Model = boundedModel{m: m, limit: f.modelTimeout}
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

// spawnHookRun starts memdir with args, plus the config flags this hook
// was given, in the background, its output going to logPath.
func spawnHookRun(env *cli.Env, f *hookOptions, args []string, logPath string) error {
	f.fs.Visit(func(fl *flag.Flag) {
		if isConfigFlag(fl.Name) {
			args = append(args, "--"+fl.Name+"="+fl.Value.String())
		}
	})
	spawn := env.Spawn
	if spawn == nil {
		spawn = spawnDetached
	}
	return spawn(args, logPath)
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
