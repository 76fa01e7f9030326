package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/memdir/memdir/internal/cli"
)

var rmCmd = &cli.Command{
	Name:  "rm",
	Args:  "[--json] NAME",
	Short: "remove a memory and its MEMORY.md line",
	Long: `Rm removes a memory file and its pointer line from MEMORY.md. NAME is the
file's path, the path without ".md", or the memory's name.

Nothing is lost: the file and the exact index line are journaled first, and
'memdir undo' (which rm prints) puts both back.

` + locationHelp + `

Examples:
  memdir rm feedback_old_rule
  memdir undo          # changed your mind`,
	Setup: cli.Setup(runRm),
}

// rmOptions holds the flag values of memdir rm.
type rmOptions struct {
	lf     locationFlags
	asJSON bool
}

func (o *rmOptions) Declare(fs *flag.FlagSet) {
	o.lf.register(fs, false)
	fs.BoolVar(&o.asJSON, "json", false, "print the result as JSON")
}

// rmJSON is 'memdir rm --json' (docs/json.md).
type rmJSON struct {
	Path       string   `json:"path"`
	AbsPath    string   `json:"abs_path"`
	IndexLines []string `json:"index_lines"`
	RunID      string   `json:"run_id"`
}

func runRm(ctx context.Context, env *cli.Env, o *rmOptions, args []string) error {
	if len(args) != 1 {
		return cli.Usagef("rm takes one memory name")
	}
	d, _, err := o.lf.open(env)
	if err != nil {
		return err
	}
	res, err := d.Remove(ctx, args[0], nil)
	if err != nil {
		return err
	}
	lines := res.IndexLines
	if lines == nil {
		lines = []string{}
	}
	return cli.Emit(env, o.asJSON, rmJSON{
		Path: res.Path, AbsPath: d.Abs(res.Path), IndexLines: lines, RunID: res.RunID,
	}, func(w io.Writer) error {
		fmt.Fprintf(w, "Removed %s", res.Path)
		if n := len(res.IndexLines); n > 0 {
			fmt.Fprintf(w, " and its MEMORY.md line")
		}
		fmt.Fprintf(w, ". Undo with: memdir undo %s\n", res.RunID)
		return nil
	})
}
