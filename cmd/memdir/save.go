package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/internal/cli"
	"github.com/memdir/memdir/screen"
)

// warnScreen prints screening findings for a write a person made.
func warnScreen(env *cli.Env, path string, findings []screen.Finding) {
	if len(findings) == 0 {
		return
	}
	fmt.Fprintf(env.Stderr, "warning: %s looks like it may contain a prompt injection; saved anyway because you wrote it:\n", path)
	for _, f := range findings {
		fmt.Fprintf(env.Stderr, "  %s: %q\n", f.Rule, f.Excerpt)
	}
}

var saveCmd = &cli.Command{
	Name:  "save",
	Args:  "--name NAME --description TEXT --type TYPE [--team] [--file PATH] [--body TEXT | < body.md]",
	Short: "save a memory and its MEMORY.md line",
	Long: `Save writes a memory file and keeps its pointer line in MEMORY.md current,
the two steps Claude Code's agents take, done atomically and under a lock so
concurrent sessions never lose an index line.

The body comes from --body, or from standard input when it is piped. The
file is <type>_<name>.md unless --file names it; saving a name that already
exists updates that memory in place, keeping frontmatter keys memdir does not
manage. --team saves into team/ and its own MEMORY.md; team memory is
shared with every collaborator, so a memory in which the secret scanner
finds a credential (API token, private key, password in a URL, ...) is
refused there with exit 4, naming the kind of secret but never the secret.

Types:
  user       who the user is: role, goals, knowledge
  feedback   how to work: corrections and confirmations (add **Why:** and
             **How to apply:** lines)
  project    ongoing work, decisions, deadlines not derivable from the code
  reference  pointers to external systems (dashboards, trackers, channels)

If the save makes MEMORY.md longer than Claude Code loads (200 lines or
25,000 characters), a warning says so; 'memdir doctor' helps compact it.
Every save is journaled: 'memdir undo' reverts it. The file records
provenance: {by: user, via: cli}. The text is screened for prompt-injection
patterns (see 'memdir help review'); a match is printed as a warning on
standard error but the save goes ahead: it is your own write.

When auto memory is turned off (autoMemoryEnabled=false in settings, or
CLAUDE_CODE_DISABLE_AUTO_MEMORY=1), save refuses with exit 8, naming the
setting, as Claude Code stops saving then too; --dir DIR saves anyway.

` + locationHelp + `

Examples:
  memdir save --name testing-policy --type feedback \
      --description "integration tests hit a real database, never mocks" \
      --body "Use the docker-compose Postgres. **Why:** mocks hid a broken migration."
  git log -1 --format=%B | memdir save --name release-notes --type project --description "what shipped in 2.4"`,
	Setup: cli.Setup(runSave),
}

// saveOptions holds the flag values of memdir save.
type saveOptions struct {
	// fs is the flag set as parsed: it tells whether --body was given.
	fs     *flag.FlagSet
	lf     locationFlags
	name   string
	desc   string
	typ    string
	body   string
	file   string
	create bool
	asJSON bool
}

func (o *saveOptions) Declare(fs *flag.FlagSet) {
	o.fs = fs
	o.lf.register(fs, true)
	o.lf.creates = true
	fs.StringVar(&o.name, "name", "", "the memory's `NAME` (required)")
	fs.StringVar(&o.desc, "description", "", "one line that says when the memory is relevant (required)")
	fs.StringVar(&o.typ, "type", "", "user, feedback, project or reference (required)")
	fs.StringVar(&o.body, "body", "", "the memory's `TEXT` (default: standard input)")
	fs.StringVar(&o.file, "file", "", "save to `PATH` in the memory directory instead of the default file name")
	fs.BoolVar(&o.create, "create", false, "fail if the file already exists")
	fs.BoolVar(&o.asJSON, "json", false, "print the result as JSON")
}

// saveJSON is 'memdir save --json' (docs/json.md).
type saveJSON struct {
	Path           string           `json:"path"`
	AbsPath        string           `json:"abs_path"`
	Created        bool             `json:"created"`
	Changed        bool             `json:"changed"`
	RunID          string           `json:"run_id"`
	Index          indexStatusJSON  `json:"index"`
	IndexWarning   string           `json:"index_warning"`
	ScreenFindings []screen.Finding `json:"screen_findings"`
}

func runSave(ctx context.Context, env *cli.Env, o *saveOptions, args []string) error {
	if len(args) > 0 {
		return cli.Usagef("save takes no arguments (did you mean --body %q?)", strings.Join(args, " "))
	}
	if missing := missingFlags(map[string]string{"--name": o.name, "--description": o.desc, "--type": o.typ}, "--name", "--description", "--type"); missing != "" {
		return cli.Usagef("save needs %s (--name, --description and --type are required)", missing)
	}
	t := memdir.ParseType(o.typ)
	if t == "" {
		return cli.Usagef("--type %q: want user, feedback, project or reference", o.typ)
	}
	text := o.body
	bodySet := false
	o.fs.Visit(func(f *flag.Flag) { bodySet = bodySet || f.Name == "body" })
	if !bodySet {
		if env.StdinIsTerminal {
			return cli.Usagef("give the body with --body, or pipe it on standard input")
		}
		data, err := io.ReadAll(io.LimitReader(env.Stdin, memdir.MaxMemoryFileBytes+1))
		if err != nil {
			return fmt.Errorf("read the body from standard input: %w", err)
		}
		if len(data) > memdir.MaxMemoryFileBytes {
			return fmt.Errorf("the body on standard input is over %s; memories should be short: %w", memdir.FormatFileSize(memdir.MaxMemoryFileBytes), memdir.ErrInvalid)
		}
		text = string(data)
	}
	d, _, err := o.lf.openEnabled(env)
	if err != nil {
		return err
	}
	m := &memdir.Memory{Name: o.name, Description: o.desc, Type: t, Body: text}
	if o.file != "" {
		m.Path = o.file
		if o.lf.team && !strings.HasPrefix(m.Path, teamPrefix) {
			m.Path = teamPrefix + m.Path
		}
	}
	res, err := d.Save(ctx, m, &memdir.SaveOptions{Team: o.lf.team, Create: o.create, Origin: &memdir.Provenance{By: memdir.ByUser, Via: "cli"}})
	if err != nil {
		return err
	}
	// A person's own save is never held, only warned about.
	findings := screen.Check(o.name + "\n" + o.desc + "\n" + text)
	warnScreen(env, res.Path, findings)
	warning := indexWarning(res.Index)
	if findings == nil {
		findings = []screen.Finding{}
	}
	return cli.Emit(env, o.asJSON, saveJSON{
		Path: res.Path, AbsPath: d.Abs(res.Path), Created: res.Created, Changed: res.Changed,
		RunID: res.RunID, Index: newIndexStatusJSON(res.Index), IndexWarning: warning, ScreenFindings: findings,
	}, func(w io.Writer) error {
		state := "updated"
		switch {
		case res.Created:
			state = "new"
		case !res.Changed:
			state = "unchanged"
		}
		fmt.Fprintf(w, "Saved %s (%s)\n", d.Abs(res.Path), state)
		if warning != "" {
			fmt.Fprintf(env.Stderr, "warning: %s\n", warning)
		}
		return nil
	})
}

// missingFlags names the flags of order whose value in set is empty, as
// "--a", "--a and --b" or "--a, --b and --c"; "" when none is.
func missingFlags(set map[string]string, order ...string) string {
	var miss []string
	for _, f := range order {
		if set[f] == "" {
			miss = append(miss, f)
		}
	}
	switch len(miss) {
	case 0:
		return ""
	case 1:
		return miss[0]
	}
	return strings.Join(miss[:len(miss)-1], ", ") + " and " + miss[len(miss)-1]
}
