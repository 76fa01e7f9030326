package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/internal/cli"
	"github.com/memdir/memdir/promote"
)

var promoteCmd = &cli.Command{
	Name:  "promote",
	Args:  "[--json] [CONTEXT...] | --apply [--keep-memory] ID...",
	Short: "review memory layers: promotions to CLAUDE.md, duplicates, stale entries, conflicts",
	Long: `Promote reviews every memory layer, as Claude Code's /remember does, and
proposes what should move or go. It changes nothing by itself.

It reads the auto memory, the team memory (team/), the project's CLAUDE.md
and .claude/CLAUDE.md (and .claude/rules/, from the git root down),
CLAUDE.local.md, and your own CLAUDE.md in ~/.claude (or $CLAUDE_CONFIG_DIR),
and reports four sections, each item with an id:

  Promotions  auto memories that belong elsewhere: in CLAUDE.md (feedback
              that reads as a rule for everyone on the project), in
              CLAUDE.local.md (how you want to work: your feedback and
              preferences), or in team memory (project and reference
              memories the team needs, when team memory is in use)
  Cleanup     exact duplicates (the same text in two memories, or a memory
              already stated in a CLAUDE.md), near duplicates (lexical
              similarity of 0.6 or more), outdated project memories (every
              date they name is past) and memories marked superseded
  Ambiguous   conflicts (on one topic, one entry negates what another
              asserts, or one memory saved with two types) and memories
              whose place is unclear: for you to decide
  No action   everything that is where it belongs

Without a model the review is lexical and gives the same report every time.
With a model (--model, or MEMDIR_MODEL; see 'memdir config') the model
classifies and explains, given the lexical findings as hints; its answer is
checked (only known memories and files, kinds in their sections, a rule for
every promotion) and if it does not check out, or the call fails, the
lexical report is shown and a note says why. CONTEXT words are passed to
the model as additional context.

The report is saved (under memdir's state directory) so that
'memdir promote --apply ID...' carries out exactly what you reviewed:

  a promotion to CLAUDE.md or CLAUDE.local.md appends the rule as a list
  item (creating the file if needed) and removes the memory (--keep-memory
  keeps it); a promotion to team memory moves the memory into team/; a
  cleanup item removes the memory it names. Ambiguous and no-action items
  cannot be applied. A memory changed since the review stops the apply.

An apply is one journal run, whatever number of items it carries out (the
CLAUDE.md files it edits are recorded in it beside the memories): 'memdir
log' lists it and one 'memdir undo' reverts all of it.

` + locationHelp + `

Examples:
  memdir promote
  memdir promote --model anthropic:claude-sonnet-4-5 we are moving to a monorepo
  memdir promote --apply P1 C2
  memdir promote --json | jq '.items[] | select(.section == "cleanup")'`,
	Setup: cli.Setup(runPromote),
}

// promoteOptions holds the flag values of memdir promote.
type promoteOptions struct {
	lf     locationFlags
	mf     *modelFlags
	apply  bool
	keep   bool
	asJSON bool
}

func (o *promoteOptions) Declare(fs *flag.FlagSet) {
	fs.StringVar(&o.lf.project, "project", "", "resolve the memory directory and CLAUDE.md files from `DIR` instead of the working directory")
	fs.StringVar(&o.lf.dir, "dir", "", "review `DIR` as the auto-memory directory (CLAUDE.md files still come from the project)")
	fs.BoolVar(&o.apply, "apply", false, "carry out the items whose ids follow, from the last review")
	fs.BoolVar(&o.keep, "keep-memory", false, "with --apply: keep memories promoted to CLAUDE.md or CLAUDE.local.md")
	fs.BoolVar(&o.asJSON, "json", false, "print the report (or what was applied) as JSON")
	o.mf = addConfigFlags(fs, "", keysModel)
}

func runPromote(ctx context.Context, env *cli.Env, o *promoteOptions, args []string) error {
	if o.keep && !o.apply {
		return cli.Usagef("--keep-memory goes with --apply")
	}
	dir, src, err := promoteSources(env, &o.lf)
	if err != nil {
		return err
	}
	reviewFile, err := promote.DefaultReportPath(dir, env.LookupEnv)
	if err != nil {
		return err
	}
	if o.apply {
		if len(args) == 0 {
			return cli.Usagef("--apply needs the ids of the items to carry out, such as P1 C2")
		}
		return promoteApply(ctx, env, dir, reviewFile, args, o.keep, o.asJSON)
	}
	model, err := o.mf.loadModel(env)
	if err != nil {
		return err
	}
	rep, err := promote.Review(ctx, src, &promote.Options{Model: model, Context: strings.Join(args, " "), Now: env.Now})
	if err != nil {
		return err
	}
	if err := promote.SaveReport(reviewFile, rep); err != nil {
		return err
	}
	for _, w := range rep.Warnings {
		fmt.Fprintf(env.Stderr, "warning: %s\n", w)
	}
	if rep.Method == promote.MethodFallback {
		fmt.Fprintf(env.Stderr, "note: the model's review was not used (%s); this is the lexical review\n", rep.Fallback)
	}
	return cli.Emit(env, o.asJSON, rep, func(w io.Writer) error {
		printReview(env, rep)
		return nil
	})
}

// promoteSources picks the memory directory and the instruction files.
func promoteSources(env *cli.Env, lf *locationFlags) (string, promote.Sources, error) {
	if lf.dir != "" && lf.project != "" {
		return "", promote.Sources{}, cli.Usagef("--dir cannot be combined with --project")
	}
	loc, err := lf.locate(env)
	if err != nil {
		return "", promote.Sources{}, err
	}
	src := promote.SourcesFor(loc)
	if lf.dir != "" {
		p, _, err := lf.path(env)
		if err != nil {
			return "", promote.Sources{}, err
		}
		src.MemoryDir = p
	} else if !loc.Enabled {
		fmt.Fprintf(env.Stderr, "note: auto memory is disabled (%s); Claude Code offers /remember only while it is on\n", loc.EnabledReason)
	}
	return src.MemoryDir, src, nil
}

func printReview(env *cli.Env, rep *promote.Report) {
	how := "lexical review, no model configured"
	switch rep.Method {
	case promote.MethodByModel:
		how = fmt.Sprintf("classified by the model; %d tokens in, %d out", rep.Usage.InputTokens, rep.Usage.OutputTokens)
	case promote.MethodFallback:
		how = "lexical review: the model's answer was not used"
	}
	fmt.Fprintf(env.Stdout, "Reviewed %s and %s in %s (%s).\n", cli.Plural(rep.Memories, "memory", "memories"),
		cli.Plural(rep.Rules, "instruction", "instructions"), cli.Plural(len(rep.Files), "CLAUDE file", "CLAUDE files"), how)
	titles := map[promote.Section]string{
		promote.SectionPromotions: "Promotions", promote.SectionCleanup: "Cleanup",
		promote.SectionAmbiguous: "Ambiguous", promote.SectionNoAction: "No action",
	}
	var applicable []string
	for _, sec := range promote.Sections {
		items := rep.Section(sec)
		fmt.Fprintf(env.Stdout, "\n%s\n", titles[sec])
		if len(items) == 0 {
			fmt.Fprintln(env.Stdout, "  (none)")
			continue
		}
		for _, it := range items {
			if it.Applicable {
				applicable = append(applicable, it.ID)
			}
			fmt.Fprintf(env.Stdout, "  %-4s %s\n", it.ID, reviewHeadline(it))
			if it.Rule != "" {
				fmt.Fprintf(env.Stdout, "       + %s\n", it.Rule)
			}
			fmt.Fprintf(env.Stdout, "       %s\n", it.Reason)
		}
	}
	if len(applicable) > 0 {
		fmt.Fprintf(env.Stdout, "\nApply with: memdir promote --apply %s\n(pick the ids you agree with; every change can be undone with 'memdir undo')\n", strings.Join(applicable, " "))
	}
}

// reviewHeadline says in one line what an item is about.
func reviewHeadline(it promote.Item) string {
	var names []string
	for _, s := range it.Subjects {
		names = append(names, s.Display)
	}
	switch it.Kind {
	case promote.KindToClaudeMD, promote.KindToLocal:
		return names[0] + " → " + filepath.Base(it.Target)
	case promote.KindToTeam:
		return names[0] + " → " + it.Target
	case promote.KindKeep, promote.KindUnclear:
		return strings.Join(names, ", ")
	}
	head := string(it.Kind) + ": " + strings.Join(names, " ↔ ")
	if it.Remove != "" {
		head += " (removes " + it.Remove + ")"
	}
	return head
}

// promoteApplyJSON is 'memdir promote apply --json'.
type promoteApplyJSON struct {
	Applied []promote.AppliedItem `json:"applied"`
}

func promoteApply(ctx context.Context, env *cli.Env, dir, reviewFile string, ids []string, keep, asJSON bool) error {
	rep, err := promote.LoadReport(reviewFile)
	if errors.Is(err, memdir.ErrNotFound) {
		return fmt.Errorf("no review of %s to apply: run 'memdir promote' first: %w", dir, memdir.ErrNotFound)
	}
	if err != nil {
		return err
	}
	d, _, err := openStore(env, dir, &memdir.Options{})
	if err != nil {
		return err
	}
	done, err := promote.Apply(ctx, d, rep, ids, &promote.ApplyOptions{KeepMemory: keep})
	if done == nil {
		done = []promote.AppliedItem{}
	}
	if jerr := cli.Emit(env, asJSON, promoteApplyJSON{Applied: done}, func(w io.Writer) error {
		run := ""
		for _, a := range done {
			fmt.Fprintf(w, "%s: %s.\n", a.ID, a.Done)
			if len(a.RunIDs) > 0 {
				run = a.RunIDs[0]
			}
		}
		if run != "" {
			// The items are one run: one undo reverts them all.
			fmt.Fprintf(w, "Undo with: memdir undo %s\n", run)
		}
		return nil
	}); jerr != nil {
		return jerr
	}
	return err
}
