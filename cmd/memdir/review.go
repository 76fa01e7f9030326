package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"

	"github.com/memdir/memdir/internal/cli"
	"github.com/memdir/memdir/review"
	"github.com/memdir/memdir/screen"
)

var reviewCmd = &cli.Command{
	Name:  "review",
	Args:  "[list [--all] | show ID | accept ID | reject ID] [--json]",
	Short: "list, accept or reject writes held back by injection screening",
	Long: `Every write to memory is screened for prompt-injection patterns: text
addressed to the model that tries to override its instructions, reassign its
role, reveal the system prompt, keep things from the user or send secrets
away; chat-role markup such as </user><system>; invisible, bidirectional or
tag Unicode characters; long base64 or hex runs, and short ones that decode
to such text. The rules are listed below.

A write made by a program (extraction, dream, a sync pull, an agent's call
through the MCP server or the memory tool) that matches is not written: it is
held in a review queue outside the memory directory, under the state
directory, where no agent reads it. A person's own 'memdir save' is only
warned about.

  review [list]      the pending held writes (--all adds accepted and rejected)
  review show ID     one held write: who made it, the findings, the content
  review accept ID   perform the write (journaled: 'memdir undo' reverts it);
                     refused with exit 5 when the file changed since
  review reject ID   drop the write; the item is kept, marked rejected

Rules:
` + ruleHelp() + `

` + locationHelp + `

Examples:
  memdir review
  memdir review show r20261201-101500-1a2b3c
  memdir review accept r20261201-101500-1a2b3c --json`,
	Setup: cli.Setup(runReview),
}

// reviewOptions holds the flag values of memdir review.
type reviewOptions struct {
	// fs is the flag set, parsed again for flags after the subcommand.
	fs     *flag.FlagSet
	lf     locationFlags
	all    bool
	asJSON bool
}

func (o *reviewOptions) Declare(fs *flag.FlagSet) {
	o.fs = fs
	o.lf.register(fs, false)
	fs.BoolVar(&o.all, "all", false, "list accepted and rejected items too")
	fs.BoolVar(&o.asJSON, "json", false, "print the result as JSON")
}

// reviewListJSON is 'memdir review list --json'.
type reviewListJSON struct {
	ReviewDir string              `json:"review_dir"`
	Items     []*review.HeldWrite `json:"items"`
}

func runReview(ctx context.Context, env *cli.Env, o *reviewOptions, args []string) error {
	// Flags may follow the subcommand: parse what is left.
	if len(args) > 0 {
		sub := args[0]
		if err := o.fs.Parse(args[1:]); err != nil {
			return cli.Usagef("%v", err)
		}
		args = append([]string{sub}, o.fs.Args()...)
	}
	op := "list"
	if len(args) > 0 {
		op = args[0]
	}
	d, q, _, err := o.lf.openReview(env)
	if err != nil {
		return err
	}
	switch op {
	case "list":
		if len(args) > 1 {
			return cli.Usagef("review list takes no arguments")
		}
		items, errs := q.List(o.all)
		for _, e := range errs {
			fmt.Fprintf(env.Stderr, "warning: %v\n", e)
		}
		if items == nil {
			items = []*review.HeldWrite{}
		}
		return cli.Emit(env, o.asJSON, reviewListJSON{ReviewDir: q.Dir(), Items: items}, func(w io.Writer) error {
			if len(items) == 0 {
				fmt.Fprintln(w, "No writes held for review.")
				return nil
			}
			for _, it := range items {
				fmt.Fprintf(w, "%s  %-8s  %s  %s  by %s  [%s]\n", it.ID, it.State, it.Queued.Format("2006-01-02 15:04"), it.Path, it.Provenance, ruleNames(it.Findings))
			}
			return nil
		})
	case "show", "accept", "reject":
		if len(args) != 2 {
			return cli.Usagef("review %s takes one ID (see 'memdir review list')", op)
		}
		var it *review.HeldWrite
		switch op {
		case "show":
			it, err = q.Get(args[1])
		case "accept":
			it, err = q.Accept(ctx, d, args[1])
		default:
			it, err = q.Reject(ctx, args[1])
		}
		if err != nil {
			return err
		}
		return cli.Emit(env, o.asJSON, it, func(w io.Writer) error {
			switch op {
			case "accept":
				fmt.Fprintf(w, "Accepted %s: wrote %s (undo with 'memdir undo %s')\n", it.ID, d.Abs(it.Path), it.RunID)
			case "reject":
				fmt.Fprintf(w, "Rejected %s: %s was not written; the item is kept in %s\n", it.ID, it.Path, q.Dir())
			default:
				printHeld(env, it)
			}
			return nil
		})
	default:
		return cli.Usagef("unknown review subcommand %q: want list, show, accept or reject", op)
	}
}

func printHeld(env *cli.Env, it *review.HeldWrite) {
	w := env.Stdout
	fmt.Fprintf(w, "ID:       %s\nState:    %s\nPath:     %s\nQueued:   %s\nBy:       %s\n", it.ID, it.State, it.Path, it.Queued.Format("2006-01-02 15:04:05 MST"), it.Provenance)
	if it.Decided != nil {
		fmt.Fprintf(w, "Decided:  %s\n", it.Decided.Format("2006-01-02 15:04:05 MST"))
	}
	if it.UndoneBy != "" {
		fmt.Fprintf(w, "Undone:   its accept (%s) was undone by %s; decide again\n", it.RunID, it.UndoneBy)
	}
	fmt.Fprintln(w, "Findings:")
	for _, f := range it.Findings {
		fmt.Fprintf(w, "  line %d  %s: %q\n", f.Line, f.Rule, f.Excerpt)
	}
	// The content is shown with hidden characters made visible.
	fmt.Fprintln(w, "Content:")
	for line := range strings.SplitSeq(strings.TrimRight(it.Content, "\n"), "\n") {
		fmt.Fprintf(w, "  | %s\n", review.ShowHidden(line))
	}
}

func ruleNames(fs []screen.Finding) string {
	var names []string
	for _, f := range fs {
		if !containsStr(names, f.Rule) {
			names = append(names, f.Rule)
		}
	}
	return strings.Join(names, ", ")
}

func containsStr(list []string, s string) bool {
	return slices.Contains(list, s)
}

func ruleHelp() string {
	names := make([]string, 0, len(screen.Rules))
	for n := range screen.Rules {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	for _, n := range names {
		fmt.Fprintf(&b, "  %-22s %s\n", n, screen.Rules[n])
	}
	return strings.TrimRight(b.String(), "\n")
}
