package main

import (
	"context"
	"flag"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/internal/cli"
	"github.com/memdir/memdir/locate"
	"github.com/memdir/memdir/prompt"
)

// multiFlag collects a repeatable string flag.
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, "; ") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

var promptCmd = &cli.Command{
	Name:  "prompt",
	Args:  "[--mode individual|team|daily-log|agent] [--skip-index] [--with-index] [--extra TEXT]...",
	Short: "print the memory section of an agent's system prompt",
	Long: `Prompt prints the memory instructions to put in an agent's system prompt:
where the memory is, the four memory types with when to save and how to use
each, what not to save, how to save (a file plus a MEMORY.md line), when to
read memories and how far to trust them. The structure and rules are Claude
Code's; the words are memdir's.

Modes:
  individual  one private memory directory (the default)
  team        the private directory and its shared team/ directory, with a
              scope for each type and a rule against secrets in team memory
  daily-log   long-lived sessions that append to logs/YYYY/MM/YYYY-MM-DD.md
  agent       an agent's own memory (--agent TYPE --scope S), with its
              MEMORY.md inlined

--skip-index drops the MEMORY.md step, for setups where recall brings the
relevant memories instead of the index. --with-index appends MEMORY.md (and
team/MEMORY.md in team mode) as an agent loads them, truncated like Claude
Code. Extra guidelines come from --extra and from
CLAUDE_COWORK_MEMORY_EXTRA_GUIDELINES. --search adds how to search past
context (memory files, then session transcripts).

` + locationHelp + `

Examples:
  memdir prompt
  memdir prompt --mode team --with-index
  memdir prompt --mode agent --agent code-reviewer --scope project`,
	Setup: cli.Setup(runPrompt),
}

// promptOptions holds the flag values of memdir prompt.
type promptOptions struct {
	lf        locationFlags
	mode      string
	skipIndex bool
	withIndex bool
	search    bool
	extra     multiFlag
}

func (o *promptOptions) Declare(fs *flag.FlagSet) {
	o.lf.register(fs, false)
	fs.StringVar(&o.mode, "mode", "individual", "individual, team, daily-log or agent")
	fs.BoolVar(&o.skipIndex, "skip-index", false, "leave out the MEMORY.md step (recall replaces the index)")
	fs.BoolVar(&o.withIndex, "with-index", false, "append MEMORY.md as loaded")
	fs.BoolVar(&o.search, "search", false, "add the section on searching past context")
	fs.Var(&o.extra, "extra", "an extra guideline `TEXT` (repeatable)")
}

func runPrompt(ctx context.Context, env *cli.Env, o *promptOptions, args []string) error {
	if len(args) > 0 {
		return cli.Usagef("prompt takes no arguments")
	}
	m, err := prompt.ParseMode(o.mode)
	if err != nil {
		return cli.Usagef("%v", err)
	}
	if (m == prompt.Agent) != (o.lf.agent != "") {
		return cli.Usagef("--mode agent goes with --agent TYPE --scope S")
	}
	d, loc, err := o.lf.open(env)
	if err != nil {
		return err
	}
	if g := strings.TrimSpace(env.Getenv("CLAUDE_COWORK_MEMORY_EXTRA_GUIDELINES")); g != "" {
		o.extra = append(o.extra, g)
	}
	opts := &prompt.Options{Mode: m, Dir: d.Path(), SkipIndex: o.skipIndex, ExtraGuidelines: o.extra}
	if o.search {
		if loc == nil {
			return cli.Usagef("--search needs the located directory (not --dir): it names the session transcripts")
		}
		opts.SearchDir = loc.TranscriptDir()
	}
	if m == prompt.Agent {
		opts.AgentScope = locate.AgentScope(o.lf.scope)
		index, err := d.LoadIndex(false)
		if err != nil {
			return err
		}
		opts.Index, opts.IndexExists = index.Text, index.Exists
	}
	text, err := prompt.Build(opts)
	if err != nil {
		return err
	}
	fmt.Fprint(env.Stdout, text)
	if o.withIndex && m != prompt.Agent {
		areas := []bool{false}
		if m == prompt.Team {
			areas = append(areas, true)
		}
		for _, team := range areas {
			idx, err := d.LoadIndex(team)
			if err != nil {
				return err
			}
			if !idx.Exists {
				continue
			}
			p := d.Abs(memdir.EntrypointName)
			if team {
				p = d.Abs(filepath.Join(memdir.TeamDirName, memdir.EntrypointName))
			}
			fmt.Fprintf(env.Stdout, "\n%s\n", prompt.IndexContext(p, idx.Text, team))
		}
	}
	return nil
}
