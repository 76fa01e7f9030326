package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/dailylog"
	"github.com/memdir/memdir/internal/cli"
)

var logCmd = &cli.Command{
	Name:  "log",
	Args:  "[--limit N] [--json] | show RUN | append TEXT...",
	Short: "list the journaled changes that undo can revert; append to the daily log",
	Long: `Log lists the runs in the directory's journal, newest first: when each ran,
its kind (save, remove, rename, doctor, extract, dream, sync-pull, promote,
log-append, undo), how many files it changed, the model tokens it used, and
whether it was undone.
'memdir log show RUN' lists a run's files with their content ids before and
after.

'memdir log append TEXT' is something else: it adds a timestamped bullet,
"- HH:MM TEXT", to today's assistant-mode daily log in the memory directory,
logs/YYYY/MM/YYYY-MM-DD.md (the local date and time of the clock), creating
the file and its folders, and prints the file's path. Several words are
joined with spaces; line breaks become spaces, so one call is one bullet.
Without TEXT the text is read from standard input. Claude Code's assistant
mode writes these logs; consolidation reads them first. Appends are locked
and atomic, so parallel appends lose nothing; each append is one journal
run (kind log-append), so 'memdir undo' takes it back. With --json it prints
{"path": FILE}.

The journal lives outside the memory directory, under memdir's state
directory (MEMDIR_STATE_DIR, else $XDG_STATE_HOME/memdir, else
~/.local/state/memdir), so Claude Code never sees it.

` + locationHelp + `

Examples:
  memdir log
  memdir log show 20261129T150405
  memdir log append "user prefers tabs; deploys go through Argo"`,
	Setup: cli.Setup(runLog),
}

// logOptions holds the flag values of memdir log.
type logOptions struct {
	lf     locationFlags
	limit  int
	asJSON bool
}

func (o *logOptions) Declare(fs *flag.FlagSet) {
	o.lf.register(fs, false)
	fs.IntVar(&o.limit, "limit", 20, "show at most `N` runs (0: all)")
	fs.BoolVar(&o.asJSON, "json", false, "print JSON")
}

// logJSON is 'memdir log --json'.
type logJSON struct {
	Journal string               `json:"journal"`
	Runs    []*memdir.JournalRun `json:"runs"`
}

// logAppendJSON is 'memdir log append --json': the daily log written.
type logAppendJSON struct {
	Path string `json:"path"`
}

func runLog(ctx context.Context, env *cli.Env, o *logOptions, args []string) error {
	d, _, err := o.lf.open(env)
	if err != nil {
		return err
	}
	j := d.Journal()
	if len(args) > 0 && args[0] == "append" {
		return logAppend(env, j, d.Path(), args[1:], o.asJSON)
	}
	if len(args) > 0 {
		if args[0] != "show" || len(args) != 2 {
			return cli.Usagef("log takes no arguments, or: show RUN, or: append TEXT")
		}
		run, err := j.Run(args[1])
		if err != nil {
			return err
		}
		return cli.Emit(env, o.asJSON, run, func(w io.Writer) error {
			printRun(env, run)
			return nil
		})
	}
	runs, errs := j.Runs()
	for _, e := range errs {
		fmt.Fprintf(env.Stderr, "warning: %v\n", e)
	}
	if o.limit > 0 && len(runs) > o.limit {
		runs = runs[:o.limit]
	}
	if runs == nil {
		runs = []*memdir.JournalRun{}
	}
	return cli.Emit(env, o.asJSON, logJSON{Journal: j.Dir(), Runs: runs}, func(w io.Writer) error {
		if len(runs) == 0 {
			fmt.Fprintf(env.Stderr, "The journal of %s is empty.\n", d.Path())
			return nil
		}
		rows := [][]string{{"RUN", "WHEN", "KIND", "FILES", "TOKENS", "SUMMARY"}}
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
			rows = append(rows, []string{r.ID, r.Start.In(env.Now().Location()).Format("2006-01-02 15:04"), string(r.Kind), strconv.Itoa(len(r.ChangedFiles())), tokens, summary})
		}
		return writeTable(w, rows, &tableOptions{Width: tableWidth(env), Whole: []bool{true}})
	})
}

func printRun(env *cli.Env, r *memdir.JournalRun) {
	fmt.Fprintf(env.Stdout, "run      %s\nkind     %s\nstate    %s\nstarted  %s\nroot     %s\n", r.ID, r.Kind, r.State, r.Start.Format("2006-01-02 15:04:05 MST"), r.Root)
	if r.Summary != "" {
		fmt.Fprintf(env.Stdout, "summary  %s\n", r.Summary)
	}
	if r.Error != "" {
		fmt.Fprintf(env.Stdout, "error    %s\n", r.Error)
	}
	if r.Usage != nil {
		fmt.Fprintf(env.Stdout, "tokens   %d in, %d out, %s\n", r.Usage.InputTokens, r.Usage.OutputTokens, cli.Plural(r.Usage.Calls, "call", "calls"))
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
		name := f.Path
		if f.Root != "" {
			name = filepath.Join(f.Root, f.Path)
		}
		fmt.Fprintf(env.Stdout, " %s %-40s %s -> %s\n", mark, name, short(f.Before), short(f.After))
	}
	for _, m := range r.Modes {
		fmt.Fprintf(env.Stdout, " * %-40s mode %04o -> %04o\n", m.Path, m.Before, m.After)
	}
}

// logAppend is 'memdir log append': one bullet in today's daily log.
func logAppend(env *cli.Env, j *memdir.Journal, dir string, words []string, asJSON bool) error {
	text := strings.Join(words, " ")
	if len(words) == 0 {
		if env.StdinIsTerminal {
			return cli.Usagef("log append needs the text: memdir log append \"what happened\" (or pipe it on standard input)")
		}
		data, err := io.ReadAll(io.LimitReader(env.Stdin, 64<<10))
		if err != nil {
			return fmt.Errorf("log append: read standard input: %w", err)
		}
		text = string(data)
	}
	path, _, err := dailylog.AppendJournaled(j, dir, text, env.Now())
	if err != nil {
		return err
	}
	return cli.Emit(env, asJSON, logAppendJSON{Path: path}, func(w io.Writer) error {
		fmt.Fprintln(w, path)
		return nil
	})
}
