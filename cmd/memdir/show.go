package main

import (
	"context"
	"flag"
	"fmt"
	"time"

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/internal/cli"
	"github.com/memdir/memdir/recall"
)

var showCmd = &cli.Command{
	Name:  "show",
	Args:  "[--json] NAME",
	Short: "print a memory",
	Long: `Show prints a memory file as it is on disk. NAME is the file's path in the
memory directory (feedback_testing.md, team/oncall.md), the same without
".md", or the memory's name from its frontmatter.

With --json it prints the parsed fields instead, with the memory's age,
for memories older than a day the staleness warning agents are given, and
its provenance (how it was last written: the frontmatter's record, or for a
file a team sync pull wrote, the record kept outside the directory; null
when unknown).

` + locationHelp + `

Examples:
  memdir show feedback_testing
  memdir show "testing policy" --json`,
	Setup: cli.Setup(runShow),
}

// showOptions holds the flag values of memdir show.
type showOptions struct {
	lf     locationFlags
	asJSON bool
}

func (o *showOptions) Declare(fs *flag.FlagSet) {
	o.lf.register(fs, false)
	fs.BoolVar(&o.asJSON, "json", false, "print the parsed memory as JSON")
}

// showJSON is 'memdir show --json': the parsed memory.
type showJSON struct {
	Path        string      `json:"path"`
	AbsPath     string      `json:"abs_path"`
	Name        string      `json:"name"`
	Description string      `json:"description"`
	Type        memdir.Type `json:"type"`
	RawType     string      `json:"raw_type"`
	Body        string      `json:"body"`
	// Metadata holds the frontmatter fields other than name, description
	// and type: its keys are the file's.
	Metadata   map[string]any     `json:"metadata"`
	MTime      time.Time          `json:"mtime"`
	Age        string             `json:"age"`
	Freshness  string             `json:"freshness"`
	Provenance *memdir.Provenance `json:"provenance"`
}

func runShow(ctx context.Context, env *cli.Env, o *showOptions, args []string) error {
	if len(args) != 1 {
		return cli.Usagef("show takes one memory name")
	}
	d, q, _, err := o.lf.openReview(env)
	if err != nil {
		return err
	}
	m, raw, err := d.Read(ctx, args[0])
	if err != nil {
		return err
	}
	now := env.Now()
	if o.asJSON {
		// A sync pull's provenance is kept outside the file.
		prov, perr := q.WrittenBy(m.Path, raw)
		if perr != nil {
			fmt.Fprintf(env.Stderr, "warning: %v\n", perr)
		}
		return cli.WriteJSON(env.Stdout, showJSON{
			Path: m.Path, AbsPath: d.Abs(m.Path), Name: m.Name, Description: m.Description,
			Type: m.Type, RawType: m.RawType, Body: m.Body, Metadata: m.Metadata(),
			MTime: m.ModTime, Age: memdir.MemoryAge(m.ModTime, now),
			Freshness: recall.FreshnessText(m.ModTime, now), Provenance: prov,
		})
	}
	_, err = env.Stdout.Write(raw)
	if err == nil && env.StderrIsTerminal {
		fmt.Fprintf(env.Stderr, "(%s, saved %s)\n", d.Abs(m.Path), memdir.MemoryAge(m.ModTime, now))
	}
	return err
}
