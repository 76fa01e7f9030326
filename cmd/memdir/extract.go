package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/agent"
	"github.com/memdir/memdir/internal/cli"
	"github.com/memdir/memdir/locate"
	"github.com/memdir/memdir/transcript"
)

var extractCmd = &cli.Command{
	Name:  "extract",
	Args:  "--transcript FILE [--session ID] [--every N] [--team] [--json]",
	Short: "save memories from a conversation, in the background agent's way",
	Long: `Extract reads a conversation and lets a model save what is worth remembering
from it, as Claude Code's background extraction does after each answer. The
hooks of Claude Code, Codex CLI and Gemini CLI run it at a session's end.

FILE is a session log, its format told from its content: Claude Code's
(~/.claude/projects/<project>/<session>.jsonl), Codex CLI's
($CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<session>.jsonl), Gemini
CLI's (~/.gemini/tmp/<project>/chats/session-<time>-<session>.jsonl), or a
JSON list of messages ([{"role":"user","content":"..."}]). Only the
messages after the last extraction of this session are read (the cursor is
kept per session under memdir's state directory; after a compaction the whole
conversation is read again). If the conversation itself already wrote memory
files since then, the run is skipped. --every N runs only every Nth call. A
call that arrives while another extraction of the session is running is
coalesced: that run extracts once more when it ends.

The model works through a restricted agent: the memory tool on the memory
directory, nothing else (it cannot read the project or run commands), at most
5 turns, under the directory's lock. Every file it changes is journaled first:
'memdir undo' reverts the run. A model must be configured (see 'memdir
config'). The session id defaults to the transcript's file name.

` + locationHelp + `

Examples:
  memdir extract --transcript ~/.claude/projects/-src-app/3f2a…c9.jsonl
  memdir extract --transcript chat.json --session chat-42 --json`,
	Setup: cli.Setup(runExtract),
}

// extractOptions holds the flag values of memdir extract.
type extractOptions struct {
	lf      locationFlags
	mf      *modelFlags
	path    string
	session string
	every   int
	team    bool
	asJSON  bool
}

func (o *extractOptions) Declare(fs *flag.FlagSet) {
	o.lf.register(fs, false)
	o.lf.creates = true
	o.mf = addConfigFlags(fs, "", keysModel)
	fs.StringVar(&o.path, "transcript", "", "the conversation `FILE` (required)")
	fs.StringVar(&o.session, "session", "", "the session `ID` (default: the transcript's file name)")
	fs.IntVar(&o.every, "every", 1, "extract on every `N`th call")
	fs.BoolVar(&o.team, "team", false, "cover team memory (team/) as well")
	fs.BoolVar(&o.asJSON, "json", false, "print the result as JSON")
}

func runExtract(ctx context.Context, env *cli.Env, o *extractOptions, args []string) error {
	if len(args) > 0 || o.path == "" {
		return cli.Usagef("extract needs --transcript FILE and no arguments")
	}
	p := o.path
	if !filepath.IsAbs(p) {
		p = filepath.Join(env.Cwd, p)
	}
	d, loc, err := o.lf.open(env)
	if err != nil {
		return err
	}
	if loc != nil && !loc.Enabled {
		return fmt.Errorf("%w (%s)", memdir.ErrDisabled, loc.EnabledReason)
	}
	model, err := o.mf.requireModel(env, "extract")
	if err != nil {
		return err
	}
	load := func(p string) ([]transcript.Message, error) {
		t, err := transcript.ReadFile(p)
		if err != nil {
			return nil, err
		}
		return t.Messages(), nil
	}
	msgs, err := load(p)
	if err != nil {
		return err
	}
	id := o.session
	if id == "" {
		id = strings.TrimSuffix(filepath.Base(p), filepath.Ext(p))
	}
	state, err := locate.StateDir(env.LookupEnv)
	if err != nil {
		return err
	}
	e, err := agent.NewExtractor(&agent.ExtractOptions{
		Model: model, Dir: d, StateDir: state, SessionID: id, Team: o.team, Every: o.every,
		Load: load, Now: env.Now, OnEvent: agentProgress(env),
	})
	if err != nil {
		return err
	}
	res, err := e.Extract(ctx, agent.Source{Messages: msgs, Path: p})
	if err != nil {
		return err
	}
	return cli.Emit(env, o.asJSON, res, func(w io.Writer) error {
		for r := res; r != nil; r = r.Trailing {
			printExtract(env, d, r)
		}
		return nil
	})
}

func printExtract(env *cli.Env, d *memdir.Dir, r *agent.ExtractResult) {
	if r.Skipped {
		fmt.Fprintf(env.Stdout, "No extraction: %s.\n", r.Reason)
		return
	}
	what := cli.Plural(len(r.Saved)-r.Team, "memory", "memories")
	if r.Team > 0 {
		what += " · " + cli.Plural(r.Team, "team memory", "team memories")
	}
	fmt.Fprintf(env.Stdout, "Saved %s from %s.\n", what, cli.Plural(r.NewMessages, "new message", "new messages"))
	for _, p := range r.Saved {
		fmt.Fprintf(env.Stdout, "  %s\n", d.Abs(p))
	}
	fmt.Fprintf(env.Stderr, "model: %s, %s", cli.Plural(r.Turns, "turn", "turns"), cli.Plural(r.ToolCalls, "tool call", "tool calls"))
	if r.Denied > 0 {
		fmt.Fprintf(env.Stderr, " (%d refused)", r.Denied)
	}
	fmt.Fprintf(env.Stderr, ", %d tokens in, %d out", r.Usage.InputTokens, r.Usage.OutputTokens)
	if r.RunID != "" {
		fmt.Fprintf(env.Stderr, "; undo with: memdir undo %s", r.RunID)
	}
	fmt.Fprintln(env.Stderr)
}

// agentProgress shows an agent's turns and tool calls on standard error when it
// is a terminal.
func agentProgress(env *cli.Env) func(agent.Event) {
	if !env.StderrIsTerminal {
		return nil
	}
	return func(ev agent.Event) {
		switch ev.Kind {
		case agent.EventTurn:
			fmt.Fprintf(env.Stderr, "\r\033[Kturn %d…", ev.Turn)
		case agent.EventToolCall:
			if ev.Call != nil {
				fmt.Fprintf(env.Stderr, "\r\033[Kturn %d: %s", ev.Turn, ev.Call.Name)
			}
		case agent.EventReply:
			fmt.Fprint(env.Stderr, "\r\033[K")
		}
	}
}
