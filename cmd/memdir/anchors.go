package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/anchors"
	"github.com/memdir/memdir/doctor"
	"github.com/memdir/memdir/internal/cli"
)

var anchorsCmd = &cli.Command{
	Name:  "anchors",
	Args:  "check [--json] | refresh [--json] NAME",
	Short: "see and re-record the code files memories name",
	Long: `When a memory is saved in a project, memdir records the project files it
names (paths, path:line, and Go, Python or TypeScript declarations such as
RefreshToken) with each file's content hash in the memory's frontmatter
(the anchors key; see docs/format.md). Recall then says which of them
changed, or no longer exist, since the memory was written.

  check          list the memories whose anchored files changed or went
                 away, with the lines and commits changed since
  refresh NAME   re-record NAME's anchors against the files as they are now,
                 once you have checked that the memory still holds (edit it
                 first if not). Only the anchors key changes; the change is
                 journaled ('memdir undo' reverts it).

Anchors are recorded against the located project's git root (or the project
directory outside git); with --dir, against the git repository holding the
working directory. MEMDIR_ANCHORS=0 turns them off.

Exit status 6 means check found stale memories; 3 that NAME names no memory.

` + locationHelp + `

Examples:
  memdir anchors check
  memdir anchors refresh project_token_refresh`,
	Setup: cli.Setup(runAnchors),
}

// anchorsOptions holds the flag values of memdir anchors.
type anchorsOptions struct {
	lf     locationFlags
	asJSON bool
}

func (o *anchorsOptions) Declare(fs *flag.FlagSet) {
	o.lf.register(fs, false)
	fs.BoolVar(&o.asJSON, "json", false, "print the result as JSON")
}

func runAnchors(ctx context.Context, env *cli.Env, o *anchorsOptions, args []string) error {
	if len(args) == 0 {
		return cli.Usagef("anchors needs check or refresh")
	}
	d, _, err := o.lf.open(env)
	if err != nil {
		return err
	}
	switch args[0] {
	case "check":
		if len(args) != 1 {
			return cli.Usagef("anchors check takes no arguments")
		}
		return anchorsCheck(ctx, env, d, o.asJSON)
	case "refresh":
		if len(args) != 2 {
			return cli.Usagef("anchors refresh takes one memory name")
		}
		res, err := doctor.RefreshAnchors(ctx, d, args[1])
		if err != nil {
			return err
		}
		return cli.Emit(env, o.asJSON, res, func(w io.Writer) error {
			fmt.Fprintf(w, "%s: %d anchor(s) recorded\n", res.Path, len(res.Anchors))
			for _, a := range res.Anchors {
				fmt.Fprintf(w, "  %s\n", anchorRef(a))
			}
			if res.RunID != "" {
				fmt.Fprintf(w, "Undo with: memdir undo %s\n", res.RunID)
			}
			return nil
		})
	}
	return cli.Usagef("anchors: unknown action %q (want check or refresh)", args[0])
}

func anchorsCheck(ctx context.Context, env *cli.Env, d *memdir.Dir, asJSON bool) error {
	if d.ProjectRoot() == "" {
		return fmt.Errorf("anchors check: no project root for %s (use it from inside the project, or drop MEMDIR_ANCHORS=0): %w", d.Path(), memdir.ErrInvalid)
	}
	stale, err := doctor.StaleMemories(ctx, d)
	if err != nil {
		return err
	}
	if stale == nil {
		stale = []doctor.StaleMemory{}
	}
	if err := cli.Emit(env, asJSON, anchorsCheckJSON{Project: d.ProjectRoot(), Stale: stale}, func(w io.Writer) error {
		for _, m := range stale {
			fmt.Fprintf(w, "%s\n", m.Path)
			for _, a := range m.Anchors {
				fmt.Fprintf(w, "  %-8s %s: %s\n", a.State, anchorRef(a.Anchor), a.Summary)
			}
		}
		if len(stale) == 0 {
			fmt.Fprintln(w, "No memory names code that changed since it was written.")
		}
		return nil
	}); err != nil {
		return err
	}
	if len(stale) > 0 {
		return &cli.ExitError{Code: cli.ExitProblems}
	}
	return nil
}

// anchorsCheckJSON is 'memdir anchors check --json'.
type anchorsCheckJSON struct {
	Project string               `json:"project"`
	Stale   []doctor.StaleMemory `json:"stale"`
}

func anchorRef(a anchors.Anchor) string {
	var b strings.Builder
	b.WriteString(a.Path)
	if a.Line > 0 {
		fmt.Fprintf(&b, ":%d", a.Line)
	}
	if a.Symbol != "" {
		b.WriteString(" (" + a.Symbol + ")")
	}
	return b.String()
}
