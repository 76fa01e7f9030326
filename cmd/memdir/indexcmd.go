package main

import (
	"context"
	"flag"
	"fmt"
	"path/filepath"

	"github.com/memdir/memdir"
)

func init() {
	register(&Command{
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
		Setup: func(fs *flag.FlagSet) RunFunc {
			var lf locationFlags
			lf.register(fs, true)
			asJSON := fs.Bool("json", false, "print the loaded text and its measurements as JSON")
			return func(ctx context.Context, env *Env, args []string) error {
				if len(args) > 0 {
					return usagef("index takes no arguments")
				}
				d, _, err := lf.open(env)
				if err != nil {
					return err
				}
				loaded, err := d.LoadIndex(lf.team)
				if err != nil {
					return err
				}
				text, st, exists := loaded.Text, loaded.Status, loaded.Exists
				path := d.Abs(memdir.EntrypointName)
				if lf.team {
					path = d.Abs(filepath.Join(memdir.TeamDirName, memdir.EntrypointName))
				}
				if *asJSON {
					return writeJSON(env.Stdout, map[string]any{
						"path": path, "exists": exists, "text": text, "lines": st.Lines, "chars": st.Chars,
						"truncated": st.Truncated(), "line_truncated": st.LineTruncated, "char_truncated": st.CharTruncated,
						"warning": st.Warning(),
					})
				}
				if !exists {
					fmt.Fprintf(env.Stderr, "%s does not exist yet: agents load no index.\n", path)
					return nil
				}
				if text != "" {
					fmt.Fprintln(env.Stdout, text)
				}
				if w := st.Warning(); w != "" {
					fmt.Fprintf(env.Stderr, "warning: %s\n", w)
				}
				return nil
			}
		},
	})
}
