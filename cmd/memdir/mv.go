package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/memdir/memdir/internal/cli"
)

var mvCmd = &cli.Command{
	Name:  "mv",
	Args:  "[--json] OLD NEW",
	Short: "rename a memory file and repoint its MEMORY.md line",
	Long: `Mv renames a memory file and points its MEMORY.md line at the new name,
keeping the line's title and hook. OLD is a path, a path without ".md", or a
memory name; NEW is a path in the memory directory (".md" is added if
missing). Moving into or out of team/ moves the line between the private and
the team MEMORY.md. A move into team/ is refused (exit 4) when the file or
its index line holds what the secret scanner flags, since team memory is
shared with every collaborator. Mv never replaces an existing file, and
'memdir undo' reverts it.

` + locationHelp + `

Examples:
  memdir mv notes.md project_release_freeze.md
  memdir mv reference_grafana team/reference_grafana   # share with the team`,
	Setup: cli.Setup(runMv),
}

// mvOptions holds the flag values of memdir mv.
type mvOptions struct {
	lf     locationFlags
	asJSON bool
}

func (o *mvOptions) Declare(fs *flag.FlagSet) {
	o.lf.register(fs, false)
	fs.BoolVar(&o.asJSON, "json", false, "print the result as JSON")
}

// mvJSON is 'memdir mv --json' (docs/json.md).
type mvJSON struct {
	From    string `json:"from"`
	To      string `json:"to"`
	AbsPath string `json:"abs_path"`
	RunID   string `json:"run_id"`
}

func runMv(ctx context.Context, env *cli.Env, o *mvOptions, args []string) error {
	if len(args) != 2 {
		return cli.Usagef("mv takes two names: OLD NEW")
	}
	d, _, err := o.lf.open(env)
	if err != nil {
		return err
	}
	res, err := d.Rename(ctx, args[0], args[1], nil)
	if err != nil {
		return err
	}
	return cli.Emit(env, o.asJSON, mvJSON{
		From: res.From, To: res.To, AbsPath: d.Abs(res.To), RunID: res.RunID,
	}, func(w io.Writer) error {
		fmt.Fprintf(w, "Renamed %s to %s. Undo with: memdir undo %s\n", res.From, res.To, res.RunID)
		return nil
	})
}
