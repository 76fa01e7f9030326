package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/memdir/memdir"
)

func init() {
	register(&Command{
		Name:  "list",
		Args:  "[--team] [--type T] [--sort new|used|unused] [--limit N] [--json]",
		Short: "list memories, newest first (or by use)",
		Long: `List shows every memory in the directory, newest first: its type, age, path
and description, read from the first 30 lines of each file as Claude Code
reads them. Team memories (team/) are included and shown with their path;
--team shows only them. Files whose frontmatter is missing or broken are
listed too, and counted in a note; 'memdir doctor' says what is wrong.

Claude Code's recall looks only at the 200 newest files; list shows them all
unless --limit is given.

USES is how many times the memory was surfaced to an agent (recall, the
Claude Code hook, MCP, the UI's search, a memory-tool view), counted in the
use log under the state directory, never in the memory file. --sort used
puts the most used first; --sort unused the least used first (never used,
then the longest unused). A memory renamed with 'memdir mv' starts again at
zero. 'memdir doctor' suggests memories unused for long; nothing is deleted.

` + locationHelp + `

Examples:
  memdir list
  memdir list --type feedback
  memdir list --sort unused --limit 10
  memdir list --json | jq -r '.memories[].path'`,
		Setup: func(fs *flag.FlagSet) RunFunc {
			var lf locationFlags
			lf.register(fs, true)
			typ := fs.String("type", "", "show only memories of type `T` (user, feedback, project, reference, or none for untyped)")
			limit := fs.Int("limit", 0, "show at most `N` memories (0: all)")
			sortBy := fs.String("sort", "new", "order: `new` (newest first), used (most used first) or unused (least used first)")
			asJSON := fs.Bool("json", false, "print JSON")
			return func(ctx context.Context, env *Env, args []string) error {
				if len(args) > 0 {
					return usagef("list takes no arguments")
				}
				if *typ != "" && *typ != "none" && memdir.ParseType(*typ) == "" {
					return usagef("--type %q: want user, feedback, project, reference or none", *typ)
				}
				if *sortBy != "new" && *sortBy != "used" && *sortBy != "unused" {
					return usagef("--sort %q: want new, used or unused", *sortBy)
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
				uses, err := d.UseStats(ctx)
				if err != nil {
					return err
				}
				sortByUse(shown, uses, *sortBy)
				matched := len(shown)
				if *limit > 0 && len(shown) > *limit {
					shown = shown[:*limit]
				}
				problems := countSkipped(res.Problems)
				if *asJSON {
					type item struct {
						memdir.Header
						Age      string    `json:"age"`
						Uses     int       `json:"uses"`
						LastUsed time.Time `json:"last_used,omitzero"`
					}
					items := make([]item, 0, len(shown))
					for _, h := range shown {
						u := uses.Get(h.Path)
						items = append(items, item{h, memdir.MemoryAge(h.ModTime, now), u.Uses, u.LastUsed})
					}
					out := map[string]any{
						"dir": d.Path(), "memories": items, "matched": matched, "total": res.Total, "problems": res.Problems,
					}
					if !uses.Since.IsZero() {
						out["uses_since"] = uses.Since
					}
					return writeJSON(env.Stdout, out)
				}
				if res.Total == 0 && !d.Exists() {
					fmt.Fprintf(env.Stderr, "No memories yet: %s does not exist. Save one with 'memdir save'.\n", d.Path())
					return nil
				}
				rows := [][]string{{"TYPE", "AGE", "USES", "LAST USED", "PATH", "DESCRIPTION"}}
				for _, h := range shown {
					t := string(h.Type)
					if t == "" {
						t = "-"
					}
					u := uses.Get(h.Path)
					last := "never"
					if !u.LastUsed.IsZero() {
						last = memdir.MemoryAge(u.LastUsed, now)
					}
					rows = append(rows, []string{t, memdir.MemoryAge(h.ModTime, now), strconv.Itoa(u.Uses), last, h.Path, h.Description})
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

// sortByUse orders memories (newest first already) for --sort: "used" puts
// the most used first, then the most recently used; "unused" the least
// used first, then the longest unused. Ties keep the newest-first order.
func sortByUse(hs []memdir.Header, uses *memdir.UseStats, by string) {
	if by == "new" {
		return
	}
	slices.SortStableFunc(hs, func(a, b memdir.Header) int {
		ua, ub := uses.Get(a.Path), uses.Get(b.Path)
		c := cmp.Compare(ub.Uses, ua.Uses)
		if c == 0 {
			c = ub.LastUsed.Compare(ua.LastUsed)
		}
		if by == "unused" {
			c = -c
		}
		return c
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
