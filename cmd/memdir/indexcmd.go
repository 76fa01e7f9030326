package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"path/filepath"

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/internal/cli"
)

var indexCmd = &cli.Command{
	Name:  "index",
	Args:  "[--team] [--json]",
	Short: "print MEMORY.md as an agent loads it",
	Long: `Index prints MEMORY.md the way Claude Code puts it in every prompt: HTML
comments and any frontmatter removed, at most 200 lines, then at most 25,000
characters cut at a line end, and, when anything was cut, Claude Code's
WARNING line. Claude Code truncates silently; memdir tells you, on standard
error, how much agents do not see.

` + locationHelp + `

Examples:
  memdir index
  memdir index --team
  memdir index --json | jq .truncated`,
	Setup: cli.Setup(runIndex),
}

// indexOptions holds the flag values of memdir index.
type indexOptions struct {
	lf     locationFlags
	asJSON bool
}

func (o *indexOptions) Declare(fs *flag.FlagSet) {
	o.lf.register(fs, true)
	fs.BoolVar(&o.asJSON, "json", false, "print the loaded text and its measurements as JSON")
}

// indexJSON is 'memdir index --json': the text Claude Code loads and its
// measurements.
type indexJSON struct {
	Path   string `json:"path"`
	Exists bool   `json:"exists"`
	Text   string `json:"text"`
	indexStatusJSON
	Warning string `json:"warning"`
}

func runIndex(ctx context.Context, env *cli.Env, o *indexOptions, args []string) error {
	if len(args) > 0 {
		return cli.Usagef("index takes no arguments")
	}
	d, _, err := o.lf.open(env)
	if err != nil {
		return err
	}
	loaded, err := d.LoadIndex(o.lf.team)
	if err != nil {
		return err
	}
	text, st, exists := loaded.Text, loaded.Status, loaded.Exists
	path := d.Abs(memdir.EntrypointName)
	if o.lf.team {
		path = d.Abs(filepath.Join(memdir.TeamDirName, memdir.EntrypointName))
	}
	return cli.Emit(env, o.asJSON, indexJSON{
		Path: path, Exists: exists, Text: text, indexStatusJSON: newIndexStatusJSON(st), Warning: indexWarning(st),
	}, func(stdout io.Writer) error {
		if !exists {
			fmt.Fprintf(env.Stderr, "%s does not exist yet: agents load no index.\n", path)
			return nil
		}
		if text != "" {
			fmt.Fprintln(stdout, text)
		}
		if w := indexWarning(st); w != "" {
			fmt.Fprintf(env.Stderr, "warning: %s\n", w)
		}
		return nil
	})
}
