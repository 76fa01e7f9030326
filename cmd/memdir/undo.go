package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/internal/cli"
)

var undoCmd = &cli.Command{
	Name:  "undo",
	Args:  "[--force] [--json] [RUN]",
	Short: "revert a journaled change",
	Long: `Undo restores every file a run changed (a save, rm, mv, doctor fix,
extraction, consolidation or sync pull) to its content before the run, byte
for byte, and puts back the MEMORY.md lines it had. RUN is a run id from
'memdir log' (a unique prefix is enough); without it, the newest run that has
not been undone.

If a file changed again after the run, undo stops and names it, so a later
edit is never lost by accident; --force restores anyway. An undo is itself a
run: undoing it redoes the change.

` + locationHelp + `

Examples:
  memdir undo
  memdir log && memdir undo 20261129T150405`,
	Setup: cli.Setup(runUndo),
}

// undoOptions holds the flag values of memdir undo.
type undoOptions struct {
	lf     locationFlags
	force  bool
	asJSON bool
}

func (o *undoOptions) Declare(fs *flag.FlagSet) {
	o.lf.register(fs, false)
	fs.BoolVar(&o.force, "force", false, "restore even files that changed after the run")
	fs.BoolVar(&o.asJSON, "json", false, "print the undo run as JSON")
}

func runUndo(ctx context.Context, env *cli.Env, o *undoOptions, args []string) error {
	if len(args) > 1 {
		return cli.Usagef("undo takes at most one run id")
	}
	d, _, err := o.lf.open(env)
	if err != nil {
		return err
	}
	id := ""
	if len(args) == 1 {
		id = args[0]
	} else if id, err = lastUndoable(d.Journal()); err != nil {
		return err
	}
	run, err := d.Undo(ctx, id, &memdir.UndoOptions{Force: o.force})
	if err != nil {
		return err
	}
	return cli.Emit(env, o.asJSON, run, func(w io.Writer) error {
		fmt.Fprintf(w, "Undid run %s:\n", run.Undoes)
		for _, f := range run.ChangedFiles() {
			what := "restored"
			switch {
			case f.After == "":
				what = "removed"
			case f.Before == "":
				what = "recreated"
			}
			fmt.Fprintf(w, "  %-9s %s\n", what, f.Path)
		}
		for _, m := range run.Modes {
			fmt.Fprintf(w, "  %-9s %s (%04o)\n", "chmod", m.Path, m.After)
		}
		fmt.Fprintf(w, "Redo with: memdir undo %s\n", run.ID)
		return nil
	})
}

// lastUndoable returns the newest run that changed something, has not been
// undone, and is not itself an undo.
func lastUndoable(j *memdir.Journal) (string, error) {
	runs, _ := j.Runs()
	for _, r := range runs {
		if r.UndoneBy == "" && r.Undoes == "" && r.State != memdir.RunOpen && r.HasChanges() {
			return r.ID, nil
		}
	}
	return "", fmt.Errorf("nothing to undo in the journal %s: %w", j.Dir(), memdir.ErrNotFound)
}
