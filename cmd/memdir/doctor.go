package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/memdir/memdir/doctor"
	"github.com/memdir/memdir/internal/cli"
	"github.com/memdir/memdir/recall"
)

var doctorCmd = &cli.Command{
	Name:  "doctor",
	Args:  "[--fix [--compact]] [--unused-days N] [--json]",
	Short: "find and repair problems in a memory directory",
	Long: `Doctor checks a memory directory for what makes agents see less than is
there, and what is unsafe:

  unindexed             a memory with no line in MEMORY.md
  dangling-index-line   a MEMORY.md line pointing at a missing file
  duplicate-index-line  several lines for one memory
  index-over-limit      MEMORY.md over 200 lines or 25,000 characters, so
                        Claude Code silently loads only part of it
  long-index-line       an index line over ~200 characters
  frontmatter           missing, unclosed (past line 30) or broken YAML
  untyped               no type, or one other than user, feedback, project,
                        reference
  no-description        nothing for recall to judge relevance by
  unreadable            a file that cannot be read, or is binary
  duplicate-content     files with identical content
  duplicate-name        memories of one area (private or team/) with the
                        same frontmatter name: saving that name is refused
                        until you merge them or rename one
  permissions           files or directories other users can read
  too-large             a file over 4 MB, which memdir neither indexes nor
                        recalls
  temp-file             .NAME.tmp-* left by a write that was killed
  unfinished-change     a save, rm or mv killed between the memory and its
                        index line (the next write finishes it)
  sync-conflict         a team memory you and a teammate changed in the same
                        lines: team/ holds the server's version until
                        'memdir sync resolve' (see 'memdir help sync')
  stale-anchor          a project file the memory names changed since it
                        was written (see 'memdir help anchors')
  anchor-gone           a project file the memory names no longer exists

--fix repairs what is safe in one journaled run ('memdir undo' reverts it):
it adds missing index lines, removes dangling and repeated lines, rewrites
frontmatter that only parsed after quoting, sets modes to 0600/0700,
finishes an unfinished change, and removes temporary files older than five
minutes (younger ones may belong to a write in progress).
Doctor also suggests (informational: never fixed, never deleted, and no
cause for exit status 6):

  unused                a memory not surfaced to an agent (recall, hook,
                        MCP, UI search, memory-tool view) for --unused-days
                        days (default 90), or never since memdir began
                        counting uses that long ago; a memory changed more
                        recently than that is never flagged

--compact also shortens long index lines and collapses blank runs to bring
MEMORY.md under its limits; if that is not enough, it moves the lines of the
least recently changed memories into MEMORY-more.md, which MEMORY.md links
with one line. Doctor never deletes a memory; duplicates and broken files
are left for you to decide, and so are stale anchors: check the memory,
then 'memdir anchors refresh NAME'.

Exit status 6 means problems remain.

` + progressHelp + `

` + locationHelp + `

Examples:
  memdir doctor
  memdir doctor --fix
  memdir doctor --fix --compact`,
	Setup: cli.Setup(runDoctor),
}

// doctorOptions holds the flag values of memdir doctor.
type doctorOptions struct {
	lf         locationFlags
	fix        bool
	compact    bool
	asJSON     bool
	quiet      bool
	unusedDays int
}

func (o *doctorOptions) Declare(fs *flag.FlagSet) {
	o.lf.register(fs, false)
	fs.BoolVar(&o.fix, "fix", false, "repair what is safe to repair")
	fs.BoolVar(&o.compact, "compact", false, "with --fix, also compact MEMORY.md")
	fs.BoolVar(&o.asJSON, "json", false, "print the findings (and repairs) as JSON")
	fs.BoolVar(&o.quiet, "quiet", false, "show no progress")
	fs.IntVar(&o.unusedDays, "unused-days", doctor.DefaultUnusedDays, "suggest memories not surfaced for `N` days (0: no such suggestions)")
}

func runDoctor(ctx context.Context, env *cli.Env, o *doctorOptions, args []string) error {
	if len(args) > 0 {
		return cli.Usagef("doctor takes no arguments")
	}
	if o.compact && !o.fix {
		return cli.Usagef("--compact needs --fix")
	}
	if o.unusedDays < 0 {
		return cli.Usagef("--unused-days %d: want 0 (off) or a number of days", o.unusedDays)
	}
	d, _, err := o.lf.open(env)
	if err != nil {
		return err
	}
	var rep *doctor.Report
	var fixed *doctor.FixResult
	prog := env.Progress("doctor", o.quiet || o.asJSON)
	if o.fix {
		fixed, err = doctor.Fix(ctx, d, &doctor.FixOptions{Compact: o.compact, Progress: prog.Step})
		if err == nil {
			rep = fixed.Remaining
		}
	} else {
		prog.Step("checking", 0, 0)
		rep, err = doctor.Check(ctx, d)
	}
	prog.Stop()
	if err != nil {
		return err
	}
	conflicts, err := syncConflictFindings(ctx, env, d.Path())
	if err != nil {
		return err
	}
	rep.Findings = append(rep.Findings, conflicts...)
	leftovers, err := stateLeftovers(env, d.Path(), fixed)
	if err != nil {
		return err
	}
	rep.Findings = append(rep.Findings, leftovers...)
	adviseFindings(rep.Findings)
	suggestions := []doctor.Finding{}
	if o.unusedDays > 0 {
		if suggestions, err = doctor.Unused(ctx, d, o.unusedDays, env.Now()); err != nil {
			return err
		}
	}
	out := doctorJSON{Dir: rep.Dir, Memories: rep.Memories, Findings: rep.Findings, Suggestions: suggestions}
	if fixed != nil {
		out.doctorFixJSON = &doctorFixJSON{Actions: fixed.Actions, Run: fixed.RunID}
	}
	if err := cli.Emit(env, o.asJSON, out, func(w io.Writer) error {
		printDoctor(env, rep, fixed, o.fix)
		for _, f := range suggestions {
			fmt.Fprintf(w, "suggestion: %-8s %s: %s\n", f.Kind, f.Path, f.Message)
		}
		return nil
	}); err != nil {
		return err
	}
	if len(rep.Findings) > 0 {
		return &cli.ExitError{Code: cli.ExitProblems}
	}
	return nil
}

// stateLeftovers reports the temporary files killed writes of the recall
// index and embedding cache left in the state directory, or, when fixing,
// removes them and adds what it removed to fixed's actions. They are torn
// copies of derived data, so removing them needs no undo.
func stateLeftovers(env *cli.Env, memDir string, fixed *doctor.FixResult) ([]doctor.Finding, error) {
	found, err := recall.Leftovers(memDir, env.LookupEnv, fixed != nil)
	if fixed != nil {
		for _, p := range found {
			fixed.Actions = append(fixed.Actions, fmt.Sprintf("removed %s, a temporary file a killed write of derived data left", p))
		}
		return nil, err
	}
	var out []doctor.Finding
	for _, p := range found {
		out = append(out, doctor.Finding{Kind: doctor.FindTempFile, Path: p, Fix: "remove it",
			Message: "a torn copy of the recall index or embedding cache, left by a write that was killed; the file it was for is intact"})
	}
	return out, err
}

// doctorJSON is 'memdir doctor --json'; --fix adds what it did.
type doctorJSON struct {
	Dir         string           `json:"dir"`
	Memories    int              `json:"memories"`
	Findings    []doctor.Finding `json:"findings"`
	Suggestions []doctor.Finding `json:"suggestions"`
	*doctorFixJSON
}

// doctorFixJSON is what 'memdir doctor --fix --json' adds.
type doctorFixJSON struct {
	Actions []string `json:"actions"`
	Run     string   `json:"run"`
}

func printDoctor(env *cli.Env, rep *doctor.Report, fixed *doctor.FixResult, fixing bool) {
	if fixed != nil {
		for _, a := range fixed.Actions {
			fmt.Fprintf(env.Stdout, "fixed: %s\n", a)
		}
		if fixed.RunID != "" {
			fmt.Fprintf(env.Stdout, "Undo these repairs with: memdir undo %s\n", fixed.RunID)
		}
	}
	fixable, compactable := 0, 0
	for _, f := range rep.Findings {
		fmt.Fprintf(env.Stdout, "%-20s %s: %s\n", f.Kind, f.Path, f.Message)
		switch {
		case f.Fix != "" && f.CompactOnly:
			compactable++
		case f.Fix != "":
			fixable++
		}
	}
	switch {
	case len(rep.Findings) == 0:
		fmt.Fprintf(env.Stdout, "%s: %s, no problems found.\n", rep.Dir, cli.Plural(rep.Memories, "memory", "memories"))
	default:
		fmt.Fprintf(env.Stdout, "%s: %s, %s.", rep.Dir, cli.Plural(rep.Memories, "memory", "memories"), cli.Plural(len(rep.Findings), "problem", "problems"))
		if !fixing && fixable > 0 {
			fmt.Fprintf(env.Stdout, " 'memdir doctor --fix' repairs %d.", fixable)
		}
		if compactable > 0 {
			fmt.Fprintf(env.Stdout, " 'memdir doctor --fix --compact' compacts MEMORY.md.")
		}
		fmt.Fprintln(env.Stdout)
	}
}

// plural formats a count with the singular or plural form of a noun.
