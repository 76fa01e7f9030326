package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/agentmem"
	"github.com/memdir/memdir/internal/cli"
	"github.com/memdir/memdir/locate"
)

var agentCmd = &cli.Command{
	Name:  "agent",
	Args:  "list [--json] | sync AGENT [--scope S] [--yes | --keep] [--json]",
	Short: "list agents' memories and sync them from project snapshots",
	Long: `Agent works on the memory of custom agents (subagents).

'memdir agent list' reads the agent definitions Claude Code loads, Markdown
files with frontmatter in ~/.claude/agents/ (or $CLAUDE_CONFIG_DIR/agents/)
and in .claude/agents/ of the project and its parents up to the git root,
and shows each agent's memory scope (the definition's memory: field, user,
project or local), its memory directory, how many memories it holds, and
what the project's snapshot calls for.

A project can ship seed memories for an agent in
.claude/agent-memory-snapshots/AGENT/: memory files plus snapshot.json,
{"updatedAt": "<timestamp>"}. The agent's directory remembers the snapshot it
was synced from in .snapshot-synced.json. The snapshot column shows:

  initialize     the agent has no memories yet: sync copies the snapshot in
  prompt-update  the snapshot is newer than the last sync (or there was none):
                 sync replaces the local memories, but only with --yes
  none           nothing to do ("-" when the project ships no snapshot)

'memdir agent sync AGENT' applies it. A replace removes the agent's
top-level .md files and copies the snapshot's files in; without --yes it
only says what it would replace and exits 5. --keep records the snapshot as
seen and leaves the memories as they are. Every removal and overwrite is
journaled: 'memdir undo --agent AGENT --scope SCOPE' puts them back.
Claude Code does the initialize step by itself at startup, for agents with
user-scope memory only; it asks before a replace.

Examples:
  memdir agent list
  memdir agent sync code-reviewer
  memdir agent sync code-reviewer --yes`,
	Setup: cli.Setup(runAgent),
}

// agentOptions holds the flag values of memdir agent.
type agentOptions struct {
	lf     locationFlags
	scope  string
	yes    bool
	keep   bool
	asJSON bool
}

func (o *agentOptions) Declare(fs *flag.FlagSet) {
	fs.StringVar(&o.lf.project, "project", "", "resolve the project from `DIR` instead of the working directory")
	fs.StringVar(&o.scope, "scope", "", "(sync) memory `SCOPE` of the agent: user, project or local")
	fs.BoolVar(&o.yes, "yes", false, "(sync) replace local memories with a newer snapshot")
	fs.BoolVar(&o.keep, "keep", false, "(sync) record a newer snapshot as seen, keep local memories")
	fs.BoolVar(&o.asJSON, "json", false, "print JSON")
}

func runAgent(ctx context.Context, env *cli.Env, o *agentOptions, args []string) error {
	if len(args) == 0 {
		return cli.Usagef("agent needs a subcommand: list or sync AGENT")
	}
	loc, err := o.lf.locate(env)
	if err != nil {
		return err
	}
	switch args[0] {
	case "list":
		if len(args) != 1 || o.scope != "" || o.yes || o.keep {
			return cli.Usagef("agent list takes no arguments and only --project and --json")
		}
		return agentList(ctx, env, loc, o.asJSON)
	case "sync":
		if len(args) != 2 {
			return cli.Usagef("agent sync takes one agent name")
		}
		if o.yes && o.keep {
			return cli.Usagef("--yes and --keep exclude each other")
		}
		return agentSync(ctx, env, loc, args[1], o.scope, &agentmem.SyncOptions{Replace: o.yes, Keep: o.keep}, o.asJSON)
	default:
		return cli.Usagef("unknown agent subcommand %q: want list or sync", args[0])
	}
}

// agentRow is one line of 'memdir agent list'.
type agentRow struct {
	Name        string            `json:"name"`
	Description string            `json:"description"`
	Scope       locate.AgentScope `json:"scope,omitempty"`
	Source      string            `json:"source"`
	Definition  string            `json:"definition"`
	Dir         string            `json:"dir,omitempty"`
	Memories    int               `json:"memories"`
	Snapshot    *agentmem.Status  `json:"snapshot,omitempty"`
}

// agentListJSON is 'memdir agent list --json'.
type agentListJSON struct {
	Agents   []agentRow `json:"agents"`
	Warnings []string   `json:"warnings"`
}

func agentList(ctx context.Context, env *cli.Env, loc *locate.Location, asJSON bool) error {
	defs, warnings, err := agentmem.LoadDefs(loc)
	if err != nil {
		return err
	}
	rows := []agentRow{}
	defined := map[string]bool{}
	for _, d := range defs {
		defined[d.Name] = true
		r := agentRow{Name: d.Name, Description: d.Description, Scope: d.Scope, Source: d.Source, Definition: d.Path}
		if d.Scope != "" {
			if r.Dir, err = loc.AgentDir(d.Name, d.Scope); err != nil {
				warnings = append(warnings, fmt.Sprintf("%s: %v", d.Path, err))
				rows = append(rows, r)
				continue
			}
			res, err := memdir.ScanDir(ctx, r.Dir, &memdir.ScanOptions{Limit: -1})
			if err != nil {
				return err
			}
			r.Memories = res.Total
			if r.Snapshot, err = agentSnapshot(loc, d.Name, r.Dir); err != nil {
				return err
			}
		}
		rows = append(rows, r)
	}
	// Snapshots shipped for agents nobody defines are worth a word.
	if entries, err := os.ReadDir(filepath.Join(loc.ProjectRoot, ".claude", agentmem.SnapshotsDirName)); err == nil {
		for _, e := range entries {
			if e.IsDir() && !defined[e.Name()] {
				warnings = append(warnings, fmt.Sprintf("the project ships a snapshot for agent %q, which has no definition in .claude/agents/", e.Name()))
			}
		}
	}
	if warnings == nil {
		warnings = []string{}
	}
	return cli.Emit(env, asJSON, agentListJSON{Agents: rows, Warnings: warnings}, func(out io.Writer) error {
		for _, w := range warnings {
			fmt.Fprintf(env.Stderr, "warning: %s\n", w)
		}
		if len(rows) == 0 {
			fmt.Fprintf(env.Stderr, "No agent definitions in %s or the project's .claude/agents/.\n", filepath.Join(loc.ConfigHome, "agents"))
			return nil
		}
		tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "AGENT\tSCOPE\tMEMORIES\tSNAPSHOT\tDIRECTORY")
		for _, r := range rows {
			scope, count, snap, dir := "-", "-", "-", "-"
			if r.Scope != "" {
				scope, count, dir = string(r.Scope), fmt.Sprint(r.Memories), r.Dir
			}
			if r.Snapshot != nil && r.Snapshot.HasSnapshot {
				snap = string(r.Snapshot.Action)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", r.Name, scope, count, snap, dir)
		}
		return tw.Flush()
	})
}

func agentSnapshot(loc *locate.Location, agent, dir string) (*agentmem.Status, error) {
	snapDir, err := agentmem.SnapshotDir(loc.ProjectRoot, agent)
	if err != nil {
		return nil, err
	}
	return agentmem.Check(snapDir, dir)
}

func agentSync(ctx context.Context, env *cli.Env, loc *locate.Location, agent, scopeFlag string, opts *agentmem.SyncOptions, asJSON bool) error {
	defs, _, err := agentmem.LoadDefs(loc)
	if err != nil {
		return err
	}
	var scope locate.AgentScope
	found := false
	for _, d := range defs {
		if d.Name == agent {
			found, scope = true, d.Scope
		}
	}
	if scopeFlag != "" {
		if scope, err = locate.ParseAgentScope(scopeFlag); err != nil {
			return err
		}
	}
	switch {
	case !found && scope == "":
		return fmt.Errorf("no agent named %q in %s or the project's .claude/agents/ (give --scope to sync it anyway): %w", agent, filepath.Join(loc.ConfigHome, "agents"), memdir.ErrNotFound)
	case scope == "":
		return fmt.Errorf("agent %q keeps no memory: its definition has no memory: field (give --scope to sync it anyway): %w", agent, memdir.ErrInvalid)
	}
	dir, err := loc.AgentDir(agent, scope)
	if err != nil {
		return err
	}
	snapDir, err := agentmem.SnapshotDir(loc.ProjectRoot, agent)
	if err != nil {
		return err
	}
	d, _, err := openStore(env, dir, &memdir.Options{})
	if err != nil {
		return err
	}
	res, err := agentmem.Sync(ctx, d, snapDir, opts)
	if errors.Is(err, memdir.ErrExists) {
		st, cerr := agentmem.Check(snapDir, dir)
		if cerr != nil || st.Action != agentmem.ActionPromptUpdate {
			return err
		}
		if jerr := cli.Emit(env, asJSON, &agentmem.SyncResult{Status: st, Done: "needs-confirmation"}, func(w io.Writer) error {
			fmt.Fprintf(w, "The project's snapshot of %s (updated %s) is newer than this memory (synced: %s).\n", agent, st.UpdatedAt, orNeverSynced(st.SyncedFrom))
			fmt.Fprintf(w, "Replacing %s would remove %s\n  %s\nand copy from %s\n  %s\n", dir,
				cli.Plural(len(st.Local), "local memory file:", "local memory files:"), strings.Join(st.Local, "\n  "),
				snapDir, strings.Join(st.Files, "\n  "))
			fmt.Fprintf(w, "Run 'memdir agent sync %s --yes' to replace (undoable), or --keep to keep the local memories.\n", agent)
			return nil
		}); jerr != nil {
			return jerr
		}
		return &cli.ExitError{Code: cli.ExitExists}
	}
	if err != nil {
		return err
	}
	return cli.Emit(env, asJSON, res, func(w io.Writer) error {
		st := res.Status
		switch res.Done {
		case "none":
			switch {
			case !st.HasSnapshot && st.Note != "":
				fmt.Fprintf(w, "Nothing to do for %s: %s.\n", agent, st.Note)
			case !st.HasSnapshot:
				fmt.Fprintf(w, "Nothing to do for %s: the project ships no snapshot in %s.\n", agent, snapDir)
			case st.Note != "":
				fmt.Fprintf(w, "Nothing to do for %s: %s.\n", agent, st.Note)
			default:
				fmt.Fprintf(w, "%s is in step with the snapshot of %s.\n", agent, st.UpdatedAt)
			}
			return nil
		case "initialize":
			fmt.Fprintf(w, "Initialized the %s memory of %s (%s) from the snapshot of %s: copied %s.\n", scope, agent, dir, st.UpdatedAt, cli.Plural(len(res.Copied), "file", "files"))
		case "replace":
			fmt.Fprintf(w, "Replaced the %s memory of %s (%s) with the snapshot of %s: removed %s, copied %s.\n", scope, agent, dir, st.UpdatedAt, cli.Plural(len(res.Removed), "file", "files"), cli.Plural(len(res.Copied), "file", "files"))
		case "keep":
			fmt.Fprintf(w, "Kept the memories of %s; the snapshot of %s is recorded as seen.\n", agent, st.UpdatedAt)
		}
		if res.RunID != "" {
			fmt.Fprintf(w, "Undo with: memdir undo --agent %s --scope %s %s\n", agent, scope, res.RunID)
		}
		return nil
	})
}

func orNeverSynced(s string) string {
	if s == "" {
		return "never"
	}
	return s
}
