package main

import (
	"context"
	"flag"
	"fmt"
	"strings"

	"github.com/memdir/memdir"
)

func init() {
	register(&Command{
		Name:  "list",
		Args:  "[--team] [--type T] [--limit N] [--json]",
		Short: "list memories, newest first",
		Long: `List shows every memory in the directory, newest first: its type, age, path
and description, read from the first 30 lines of each file as Claude Code
reads them. Team memories (team/) are included and shown with their path;
--team shows only them. Files whose frontmatter is missing or broken are
listed too, and counted in a note; 'memdir doctor' says what is wrong.

Claude Code's recall looks only at the 200 newest files; list shows them all
unless --limit is given.

` + locationHelp + `

Examples:
  memdir list
  memdir list --type feedback
  memdir list --json | jq -r '.memories[].path'`,
		Setup: func(fs *flag.FlagSet) RunFunc {
			var lf locationFlags
			lf.register(fs, true)
			typ := fs.String("type", "", "show only memories of type `T` (user, feedback, project, reference, or none for untyped)")
			limit := fs.Int("limit", 0, "show at most `N` memories (0: all)")
			asJSON := fs.Bool("json", false, "print JSON")
			return func(ctx context.Context, env *Env, args []string) error {
				if len(args) > 0 {
					return usagef("list takes no arguments")
				}
				if *typ != "" && *typ != "none" && memdir.ParseType(*typ) == "" {
					return usagef("--type %q: want user, feedback, project, reference or none", *typ)
				}
				d, _, err := lf.open(env)
				if err != nil {
					return err
				}
				res, err := d.List(ctx)
				if err != nil {
					return err
				}
				now := env.Now()
				var shown []memdir.Header
				for _, h := range res.Memories {
					if lf.team && !strings.HasPrefix(h.Path, teamPrefix) {
						continue
					}
					if *typ == "none" && h.Type != "" || *typ != "" && *typ != "none" && string(h.Type) != *typ {
						continue
					}
					shown = append(shown, h)
				}
				matched := len(shown)
				if *limit > 0 && len(shown) > *limit {
					shown = shown[:*limit]
				}
				problems := countSkipped(res.Problems)
				if *asJSON {
					type item struct {
						memdir.Header
						Age string `json:"age"`
					}
					items := make([]item, 0, len(shown))
					for _, h := range shown {
						items = append(items, item{h, memdir.MemoryAge(h.ModTime, now)})
					}
					return writeJSON(env.Stdout, map[string]any{
						"dir": d.Path(), "memories": items, "matched": matched, "total": res.Total, "problems": res.Problems,
					})
				}
				if res.Total == 0 && !d.Exists() {
					fmt.Fprintf(env.Stderr, "No memories yet: %s does not exist. Save one with 'memdir save'.\n", d.Path())
					return nil
				}
				rows := [][]string{{"TYPE", "AGE", "PATH", "DESCRIPTION"}}
				for _, h := range shown {
					t := string(h.Type)
					if t == "" {
						t = "-"
					}
					rows = append(rows, []string{t, memdir.MemoryAge(h.ModTime, now), h.Path, h.Description})
				}
				if err := writeTable(env.Stdout, rows); err != nil {
					return err
				}
				fmt.Fprintf(env.Stderr, "%d of %s in %s", len(shown), plural(res.Total, "memory", "memories"), d.Path())
				if problems > 0 {
					fmt.Fprintf(env.Stderr, "; %s (run 'memdir doctor')", plural(problems, "file could not be read", "files could not be read"))
				}
				fmt.Fprintln(env.Stderr)
				return nil
			}
		},
	})
}

func countSkipped(ps []memdir.Problem) int {
	n := 0
	for _, p := range ps {
		if p.Skipped {
			n++
		}
	}
	return n
}
