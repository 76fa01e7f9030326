package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/agent"
	"github.com/memdir/memdir/internal/cli"
	"github.com/memdir/memdir/locate"
)

var dreamCmd = &cli.Command{
	Name:  "dream",
	Args:  "[--force] [--session ID] [--json]",
	Short: "consolidate the memory directory (Claude Code's auto-dream)",
	Long: `Dream makes a reflective pass over the memory directory with a model: it
reads the daily logs, checks memories against each other and against recent
session transcripts, merges duplicates, corrects what is out of date, and
tidies MEMORY.md back under its limits.

Without --force it runs only when Claude Code's gates open, cheapest first:
autoDreamEnabled is on in the settings ('memdir settings'); 24 hours have
passed since the last consolidation (the modification time of
.consolidate-lock in the memory directory); sessions were not counted in the
last 10 minutes; and at least 5 sessions other than --session have touched
the project's transcripts since then. --force runs it now, as /dream does.
The consolidation lock keeps two runs apart (it is stale after an hour or
when its process has died) and is rolled back if the run fails.

The model gets the memory tool and read-only search over the project's
session transcripts; it cannot run anything. Every file it changes or deletes
is journaled first: 'memdir undo' restores them. A model must be configured.

` + locationHelp + `

Examples:
  memdir dream            # only if due
  memdir dream --force    # now`,
	Setup: cli.Setup(runDream),
}

// dreamOptions holds the flag values of memdir dream.
type dreamOptions struct {
	lf      locationFlags
	mf      *modelFlags
	force   bool
	session string
	asJSON  bool
}

func (o *dreamOptions) Declare(fs *flag.FlagSet) {
	o.lf.register(fs, false)
	o.mf = addConfigFlags(fs, "", keysModel)
	fs.BoolVar(&o.force, "force", false, "run now, whatever the time, session and enabled gates say")
	fs.StringVar(&o.session, "session", "", "the current session `ID`, not counted by the session gate")
	fs.BoolVar(&o.asJSON, "json", false, "print the result as JSON")
}

func runDream(ctx context.Context, env *cli.Env, o *dreamOptions, args []string) error {
	if len(args) > 0 {
		return cli.Usagef("dream takes no arguments")
	}
	d, loc, err := o.lf.open(env)
	if err != nil {
		return err
	}
	if loc == nil {
		loc, err = o.lf.locate(env)
		if err != nil {
			return err
		}
	} else if !loc.Enabled {
		return fmt.Errorf("%w (%s)", memdir.ErrDisabled, loc.EnabledReason)
	}
	model, err := o.mf.requireModel(env, "dream")
	if err != nil {
		return err
	}
	state, err := locate.StateDir(env.LookupEnv)
	if err != nil {
		return err
	}
	enabled, _ := loc.AutoDreamEnabled()
	res, err := agent.Dream(ctx, &agent.DreamOptions{
		Model: model, Dir: d, TranscriptDir: loc.TranscriptDir(), CurrentSession: o.session,
		Enabled: enabled, Force: o.force, StateDir: state, Now: env.Now, OnEvent: agentProgress(env),
	})
	if err != nil {
		return err
	}
	return cli.Emit(env, o.asJSON, res, func(w io.Writer) error {
		if res.Skipped {
			fmt.Fprintf(w, "Not consolidating (%s gate): %s.\n", res.Gate, res.Reason)
			return nil
		}
		fmt.Fprintf(w, "Improved %s.\n", cli.Plural(len(res.Changed)+len(res.Removed), "memory", "memories"))
		for _, p := range res.Changed {
			fmt.Fprintf(w, "  changed  %s\n", p)
		}
		for _, p := range res.Removed {
			fmt.Fprintf(w, "  removed  %s\n", p)
		}
		if res.Summary != "" {
			fmt.Fprintf(w, "\n%s\n", res.Summary)
		}
		fmt.Fprintf(env.Stderr, "model: %s, %d tokens in, %d out", cli.Plural(res.Turns, "turn", "turns"), res.Usage.InputTokens, res.Usage.OutputTokens)
		if res.RunID != "" {
			fmt.Fprintf(env.Stderr, "; undo with: memdir undo %s", res.RunID)
		}
		fmt.Fprintln(env.Stderr)
		return nil
	})
}
