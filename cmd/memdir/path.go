package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"path/filepath"

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/hooks"
	"github.com/memdir/memdir/internal/cli"
	"github.com/memdir/memdir/locate"
)

var pathCmd = &cli.Command{
	Name:  "path",
	Args:  "[--explain] [--team] [--agent TYPE --scope S] [--agent-cli claude|codex|gemini] [--json]",
	Short: "print the project's memory directory",
	Long: `Path prints the memory directory Claude Code uses for this project, with a
trailing separator, exactly as Claude Code computes it:

  1. CLAUDE_COWORK_MEMORY_PATH_OVERRIDE, if valid;
  2. autoMemoryDirectory from the managed policy, --settings, local
     (.claude/settings.local.json) or user (~/.claude/settings.json) settings;
     the project's checked-in .claude/settings.json is ignored on purpose;
  3. <base>/projects/<sanitized canonical git root>/memory/, where <base> is
     CLAUDE_CODE_REMOTE_MEMORY_DIR, CLAUDE_CONFIG_DIR or ~/.claude, and all
     worktrees of a repository share the main repository's directory.

--explain says which rule chose it and whether auto memory is enabled
(CLAUDE_CODE_DISABLE_AUTO_MEMORY, CLAUDE_CODE_SIMPLE, CLAUDE_CODE_REMOTE,
autoMemoryEnabled). --team prints the team directory, --agent TYPE --scope S
an agent's memory directory. The directory need not exist yet.

Codex CLI and Gemini CLI, through memdir's hooks, get the same directory as
Claude Code for the project: --explain --agent-cli codex (or gemini, or
claude) says how the program gets it and where its hooks are installed.

` + locationHelp + `

Examples:
  memdir path
  memdir path --explain
  memdir path --agent code-reviewer --scope project
  memdir path --explain --agent-cli codex`,
	Setup: cli.Setup(runPath),
}

// pathOptions holds the flag values of memdir path.
type pathOptions struct {
	lf       locationFlags
	explain  bool
	asJSON   bool
	agentCLI string
}

func (o *pathOptions) Declare(fs *flag.FlagSet) {
	o.lf.register(fs, true)
	fs.BoolVar(&o.explain, "explain", false, "say which rule chose the directory")
	fs.BoolVar(&o.asJSON, "json", false, "print the location as JSON")
	fs.StringVar(&o.agentCLI, "agent-cli", "", "with --explain: say how agent program `NAME` (claude, codex, gemini) gets the directory")
}

// pathAgentJSON is how an agent program gets the directory.
type pathAgentJSON struct {
	Name    string   `json:"name"`
	Explain []string `json:"explain"`
}

// pathJSON is 'memdir path --json': the directory, and how it was found
// unless --dir named it.
type pathJSON struct {
	Path string `json:"path"`
	*pathLocationJSON
}

// pathLocationJSON is how the directory was located.
type pathLocationJSON struct {
	Source        locate.DirSource `json:"source"`
	SourceDetail  string           `json:"source_detail"`
	Enabled       bool             `json:"enabled"`
	EnabledReason string           `json:"enabled_reason"`
	ProjectRoot   string           `json:"project_root"`
	GitRoot       string           `json:"git_root"`
	CanonicalRoot string           `json:"canonical_root"`
	ConfigHome    string           `json:"config_home"`
	TranscriptDir string           `json:"transcript_dir"`
	Explain       []string         `json:"explain"`
	Warnings      []string         `json:"warnings"`
	// AgentCLI, with --agent-cli, says how that program gets the directory
	// (the lines --explain prints for it).
	AgentCLI *pathAgentJSON `json:"agent_cli,omitempty"`
}

func runPath(ctx context.Context, env *cli.Env, o *pathOptions, args []string) error {
	if len(args) > 0 {
		return cli.Usagef("path takes no arguments")
	}
	if o.agentCLI != "" {
		if _, err := hooks.ParseAgent(o.agentCLI); err != nil {
			return cli.Usagef("--agent-cli %q: want claude, codex or gemini", o.agentCLI)
		}
		if o.lf.agent != "" {
			return cli.Usagef("--agent-cli is about the project's directory, not an agent's memory (--agent)")
		}
	}
	p, loc, err := o.lf.path(env)
	if err != nil {
		return err
	}
	out := p + string(filepath.Separator)
	if o.lf.team {
		out = filepath.Join(p, memdir.TeamDirName) + string(filepath.Separator)
	}
	v := pathJSON{Path: out}
	if loc != nil {
		v.pathLocationJSON = &pathLocationJSON{
			Source: loc.Source, SourceDetail: loc.SourceDetail, Enabled: loc.Enabled, EnabledReason: loc.EnabledReason,
			ProjectRoot: loc.ProjectRoot, GitRoot: loc.GitRoot, CanonicalRoot: loc.CanonicalRoot, ConfigHome: loc.ConfigHome,
			TranscriptDir: loc.TranscriptDir(), Explain: loc.Explain, Warnings: loc.Warnings,
		}
		if o.agentCLI != "" && o.lf.agent == "" {
			v.AgentCLI = &pathAgentJSON{Name: o.agentCLI, Explain: agentCLIExplain(env, o.agentCLI, loc)}
		}
	}
	return cli.Emit(env, o.asJSON, v, func(stdout io.Writer) error {
		fmt.Fprintln(stdout, out)
		if loc != nil {
			for _, w := range loc.Warnings {
				fmt.Fprintf(env.Stderr, "warning: %s\n", w)
			}
		}
		if o.explain {
			if loc == nil {
				fmt.Fprintln(stdout, "  chosen by --dir")
				return nil
			}
			for _, line := range loc.Explain {
				fmt.Fprintf(stdout, "  %s\n", line)
			}
			if o.lf.agent != "" {
				fmt.Fprintf(stdout, "  agent memory: %s scope of agent %q\n", o.lf.scope, o.lf.agent)
			} else {
				for _, line := range agentCLIExplain(env, o.agentCLI, loc) {
					fmt.Fprintf(stdout, "  %s\n", line)
				}
			}
		}
		return nil
	})
}
