package main

import (
	"context"
	"flag"
	"fmt"
	"text/tabwriter"

	"github.com/memdir/memdir"
)

func init() {
	register(&Command{
		Name:  "log",
		Args:  "[--limit N] [--json] | show RUN",
		Short: "list the journaled changes that undo can revert",
		Long: `Log lists the runs in the directory's journal, newest first: when each ran,
its kind (save, remove, rename, doctor, extract, dream, sync-pull, undo), how
many files it changed, the model tokens it used, and whether it was undone.
'memdir log show RUN' lists a run's files with their content ids before and
after.

The journal lives outside the memory directory, under memdir's state
directory (MEMDIR_STATE_DIR, else $XDG_STATE_HOME/memdir, else
~/.local/state/memdir), so Claude Code never sees it.

` + locationHelp + `

Examples:
  memdir log
  memdir log show 20261129T150405`,
		Setup: func(fs *flag.FlagSet) RunFunc {
			var lf locationFlags
			lf.register(fs, false)
			limit := fs.Int("limit", 20, "show at most `N` runs (0: all)")
			asJSON := fs.Bool("json", false, "print JSON")
			return func(ctx context.Context, env *Env, args []string) error {
				d, _, err := lf.open(env)
				if err != nil {
					return err
				}
				j := d.Journal()
				if len(args) > 0 {
					if args[0] != "show" || len(args) != 2 {
						return usagef("log takes no arguments, or: show RUN")
					}
					run, err := j.Run(args[1])
					if err != nil {
						return err
					}
					if *asJSON {
						return writeJSON(env.Stdout, run)
					}
					printRun(env, run)
					return nil
				}
				runs, errs := j.Runs()
				for _, e := range errs {
					fmt.Fprintf(env.Stderr, "warning: %v\n", e)
				}
				if *limit > 0 && len(runs) > *limit {
					runs = runs[:*limit]
				}
				if *asJSON {
					if runs == nil {
						runs = []*memdir.JournalRun{}
					}
					return writeJSON(env.Stdout, map[string]any{"journal": j.Dir(), "runs": runs})
				}
				if len(runs) == 0 {
					fmt.Fprintf(env.Stderr, "The journal of %s is empty.\n", d.Path())
					return nil
				}
				tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "RUN\tWHEN\tKIND\tFILES\tTOKENS\tSUMMARY")
				for _, r := range runs {
					tokens := "-"
					if r.Usage != nil {
						tokens = fmt.Sprintf("%d in/%d out", r.Usage.InputTokens, r.Usage.OutputTokens)
					}
					summary := r.Summary
					switch {
					case r.UndoneBy != "":
						summary += " [undone by " + r.UndoneBy + "]"
					case r.State == memdir.RunFailed:
						summary += " [failed: " + r.Error + "]"
					case r.State == memdir.RunOpen:
						summary += " [interrupted]"
					}
					fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\n", r.ID, r.Start.In(env.Now().Location()).Format("2006-01-02 15:04"), r.Kind, len(r.ChangedFiles()), tokens, summary)
				}
				return tw.Flush()
			}
		},
	})
}

func printRun(env *Env, r *memdir.JournalRun) {
	fmt.Fprintf(env.Stdout, "run      %s\nkind     %s\nstate    %s\nstarted  %s\nroot     %s\n", r.ID, r.Kind, r.State, r.Start.Format("2006-01-02 15:04:05 MST"), r.Root)
	if r.Summary != "" {
		fmt.Fprintf(env.Stdout, "summary  %s\n", r.Summary)
	}
	if r.Error != "" {
		fmt.Fprintf(env.Stdout, "error    %s\n", r.Error)
	}
	if r.Usage != nil {
		fmt.Fprintf(env.Stdout, "tokens   %d in, %d out, %d calls\n", r.Usage.InputTokens, r.Usage.OutputTokens, r.Usage.Calls)
	}
	if r.Undoes != "" {
		fmt.Fprintf(env.Stdout, "undoes   %s\n", r.Undoes)
	}
	if r.UndoneBy != "" {
		fmt.Fprintf(env.Stdout, "undone   by %s\n", r.UndoneBy)
	}
	fmt.Fprintln(env.Stdout, "files:")
	short := func(s string) string {
		if s == "" {
			return "(absent)"
		}
		return s[:len("sha256:")+12]
	}
	for _, f := range r.Files {
		mark := " "
		if f.Changed() {
			mark = "*"
		}
		fmt.Fprintf(env.Stdout, " %s %-40s %s -> %s\n", mark, f.Path, short(f.Before), short(f.After))
	}
}
