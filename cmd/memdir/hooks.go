package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/hooks"
	"github.com/memdir/memdir/internal/atomicfile"
	"github.com/memdir/memdir/internal/cli"
	"github.com/memdir/memdir/locate"
)

// The timeouts, in seconds, memdir's hooks are installed with.
const (
	// SessionStart holds up the session's start: a team pull is bounded
	// by --pull-timeout (5 s) well within it.
	hookTimeoutSessionStart = 10
	// UserPromptSubmit: the model is given 8 s (--model-timeout), recall
	// falls back to lexical ranking after that; Claude Code drops the
	// output of a hook it times out.
	hookTimeoutPrompt = 10
	hookTimeoutTool   = 10
	hookTimeoutStop   = 10
	// SessionEnd hooks share a 1.5 s budget that a longer timeout would
	// raise; starting dream in the background takes milliseconds.
	hookTimeoutSessionEnd = 1
)

// editToolsMatcher is the PreToolUse matcher of the checkpoint hook.
var editToolsMatcher = strings.Join(hooks.EditTools, "|")

var hooksCmd = &cli.Command{
	Name:  "hooks",
	Args:  "install|uninstall|status [--agent claude|codex|gemini] [--user|--project|--local] [--no-checkpoint] [--inject-index] [--binary PATH] [--dry-run] [--json]",
	Short: "add memdir's hooks to Claude Code's, Codex CLI's or Gemini CLI's configuration, or remove them",
	Long: `Hooks install merges the handlers that run 'memdir hook' into a Claude Code
settings file; hooks uninstall removes them again.

Which file:
  --user     ~/.claude/settings.json ($CLAUDE_CONFIG_DIR/settings.json), for
             every project (the default)
  --project  .claude/settings.json of the project (the working directory),
             usually committed and shared
  --local    .claude/settings.local.json of the project, not committed

What install writes, for the memdir binary running this command (or
--binary PATH), quoted for the shell when its path needs it:
  SessionStart      memdir hook [--inject-index]      timeout 10
  UserPromptSubmit  memdir hook [--no-checkpoint]     timeout 10
  PreToolUse        memdir hook, matcher Edit|Write|MultiEdit|NotebookEdit,
                    timeout 10 (left out with --no-checkpoint)
  Stop              memdir hook                       timeout 10
  SessionEnd        memdir hook                       timeout 1
each as {"type":"command","command":"...","timeout":N} in a group of its
own. See 'memdir help hook' for what each event does.

Every other key, event, group and handler of the file is kept, in its
order, with its values as written. memdir's handlers are recognised by
their command: a program named memdir run with "hook" as its first
argument. Install updates them in place (keeping any key you added, such as
statusMessage) rather than adding them twice, so running it again changes
nothing, and running it with other flags switches the file over. Uninstall
removes exactly those handlers, and the groups and events left empty by
their removal.

Before changing the file, memdir copies it to FILE.bak beside it; the new
file is written atomically with the old one's permissions (0600 for a new
file), under a lock, and the change is journaled in the project's memory
journal, which keeps the old file byte for byte. A settings file that is
not valid JSON, or whose "hooks" is not an object of arrays, is an error
naming it, and is left untouched. --dry-run prints the resulting file
instead of writing it.

Since the command holds this machine's path to memdir, a committed project
file is better written with --binary memdir (found on each user's PATH).

Hooks status lists memdir's handlers in the file and what would stop them
from running (--json for a script).

Codex CLI and Gemini CLI (--agent codex, --agent gemini) get the same
hooks, running 'memdir hook --agent codex|gemini', in their own files:
  Codex   $CODEX_HOME/hooks.json (default ~/.codex), or with --project the
          project's .codex/hooks.json; SessionStart (with --inject-index:
          Codex does not load MEMORY.md), UserPromptSubmit, PreToolUse
          (matcher apply_patch), Stop, timeout 10, and SessionEnd, timeout
          3 (Codex's cap). Codex skips a hook nobody trusted, without a
          word, so install also writes a trust record per handler in
          $CODEX_HOME/config.toml, with the hash Codex computes, and
          [features] hooks = true when the file does not set it, all in
          one marked block at its end.
  Gemini  ~/.gemini/settings.json, or with --project the project's
          .gemini/settings.json; SessionStart (--inject-index),
          BeforeAgent, BeforeTool (matcher write_file|replace), AfterAgent
          and SessionEnd, named "memdir", timeout 10000 ms; and
          hooksConfig.enabled = true when the file does not set it.
Every other key, line and hook is kept, each changed file is copied to
FILE.bak first, the change is journaled ('memdir undo' reverts it), and
running it again changes nothing. Uninstall removes what install wrote:
when nothing else changed since, the files are put back byte for byte (a
file install created is removed); otherwise memdir's handlers, trust
records and block are removed one by one. --local is Claude Code's only.

Examples:
  memdir hooks install
  memdir hooks install --project --binary memdir --dry-run
  memdir hooks install --no-checkpoint
  memdir hooks uninstall
  memdir hooks install --agent codex
  memdir hooks status --agent gemini`,
	Setup: cli.Setup(runHooks),
}

// hooksOptions holds the flag values of memdir hooks.
type hooksOptions struct {
	user         bool
	project      bool
	local        bool
	noCheckpoint bool
	injectIndex  bool
	binary       string
	dryRun       bool
	agent        string
	asJSON       bool
}

func (o *hooksOptions) Declare(fs *flag.FlagSet) {
	fs.BoolVar(&o.user, "user", false, "edit the user's settings, ~/.claude/settings.json (default)")
	fs.BoolVar(&o.project, "project", false, "edit the project's .claude/settings.json")
	fs.BoolVar(&o.local, "local", false, "edit the project's .claude/settings.local.json")
	fs.BoolVar(&o.noCheckpoint, "no-checkpoint", false, "install: no checkpoints (no PreToolUse hook, no snapshots)")
	fs.BoolVar(&o.injectIndex, "inject-index", false, "install: SessionStart gives the model MEMORY.md as context")
	fs.StringVar(&o.binary, "binary", "", "install: the memdir `PATH` the hooks run (default: this binary)")
	fs.BoolVar(&o.dryRun, "dry-run", false, "print the resulting settings file instead of writing it")
	fs.StringVar(&o.agent, "agent", "claude", "the program whose configuration to edit: claude, codex or gemini")
	fs.BoolVar(&o.asJSON, "json", false, "status: print the status as JSON")
}

func runHooks(ctx context.Context, env *cli.Env, o *hooksOptions, args []string) error {
	if len(args) != 1 || (args[0] != "install" && args[0] != "uninstall" && args[0] != "status") {
		return cli.Usagef("hooks needs one of install, uninstall, status")
	}
	agent, err := hooks.ParseAgent(o.agent)
	if err != nil {
		return cli.Usagef("--agent %q: want claude, codex or gemini", o.agent)
	}
	install := args[0] == "install"
	n := 0
	for _, b := range []bool{o.user, o.project, o.local} {
		if b {
			n++
		}
	}
	if n > 1 {
		return cli.Usagef("choose one of --user, --project, --local")
	}
	if !install && (o.noCheckpoint || o.injectIndex || o.binary != "") {
		return cli.Usagef("--no-checkpoint, --inject-index and --binary apply to install only")
	}
	if o.asJSON && args[0] != "status" {
		return cli.Usagef("--json applies to status only")
	}
	if args[0] == "status" {
		return runHooksStatus(env, o, agent)
	}
	if agent != hooks.Claude {
		return runAgentHooks(ctx, env, o, agent, install)
	}
	var lf locationFlags
	d, loc, err := lf.open(env)
	if err != nil {
		return err
	}
	path := filepath.Join(loc.ProjectRoot, ".claude", "settings.json")
	switch {
	case o.local:
		path = filepath.Join(loc.ProjectRoot, ".claude", "settings.local.json")
	case !o.project:
		path = locate.UserSettingsPath(loc.ConfigHome)
	}
	var entries []hooks.Entry
	if install {
		bin, err := hookBinary(env, o.binary)
		if err != nil {
			return err
		}
		entries = memdirHookEntries(bin, o.noCheckpoint, o.injectIndex)
		if o.project && filepath.IsAbs(bin) {
			fmt.Fprintf(env.Stderr, "note: %s is usually committed, and it now runs %s, which teammates may not have; --binary memdir runs the memdir on each user's PATH.\n", path, bin)
		}
	}
	e := &settingsEdit{path: path, install: install, entries: entries}
	switch {
	case o.project:
		e.scopeFlag = " --project"
	case o.local:
		e.scopeFlag = " --local"
	}
	if o.dryRun {
		return e.dryRun(env)
	}
	return e.apply(ctx, env, d)
}

// hookBinary returns the memdir program the hooks run: --binary (relative
// paths with a directory are made absolute; a bare name is looked up on
// PATH by the shell), else this binary.
func hookBinary(env *cli.Env, flagValue string) (string, error) {
	bin := flagValue
	if bin == "" {
		exe, err := os.Executable()
		if err != nil {
			return "", fmt.Errorf("cannot find this memdir binary (%v): pass --binary PATH", err)
		}
		bin = exe
	} else if strings.ContainsAny(bin, `/\`) && !filepath.IsAbs(bin) {
		bin = filepath.Join(env.Cwd, bin)
	}
	if !hooks.IsProgram(bin) {
		return "", fmt.Errorf("%s is not named %s, and memdir recognises its hooks by the program's name (to update or remove them later): rename the binary or pass --binary PATH/TO/%s: %w",
			bin, hooks.ProgramName, hooks.ProgramName, memdir.ErrInvalid)
	}
	return bin, nil
}

// memdirHookEntries are the handlers `memdir hooks install` writes.
func memdirHookEntries(bin string, noCheckpoint, injectIndex bool) []hooks.Entry {
	var startFlags, promptFlags []string
	if injectIndex {
		startFlags = append(startFlags, "--inject-index")
	}
	if noCheckpoint {
		promptFlags = append(promptFlags, "--no-checkpoint")
	}
	es := []hooks.Entry{
		{Event: hooks.SessionStart, Command: hooks.HookCommand(bin, startFlags...), Timeout: hookTimeoutSessionStart},
		{Event: hooks.UserPromptSubmit, Command: hooks.HookCommand(bin, promptFlags...), Timeout: hookTimeoutPrompt},
	}
	if !noCheckpoint {
		es = append(es, hooks.Entry{Event: hooks.PreToolUse, Matcher: editToolsMatcher, Command: hooks.HookCommand(bin), Timeout: hookTimeoutTool})
	}
	return append(es,
		hooks.Entry{Event: hooks.Stop, Command: hooks.HookCommand(bin), Timeout: hookTimeoutStop},
		hooks.Entry{Event: hooks.SessionEnd, Command: hooks.HookCommand(bin), Timeout: hookTimeoutSessionEnd},
	)
}

// settingsEdit is one install or uninstall on one settings file.
type settingsEdit struct {
	path    string
	install bool
	entries []hooks.Entry
	changes *hooks.Changes
	// scopeFlag is " --project" or " --local", "" for the user's file.
	scopeFlag string
}

// compute returns the new content, or old itself when memdir's handlers
// are already as wanted, so that nothing is rewritten for formatting alone.
func (e *settingsEdit) compute(old []byte) ([]byte, error) {
	var out []byte
	var err error
	if e.install {
		out, e.changes, err = hooks.Install(old, e.entries)
	} else {
		out, e.changes, err = hooks.Uninstall(old)
	}
	if err != nil {
		return nil, fmt.Errorf("settings file %s: %v; memdir leaves it untouched: %w", e.path, err, memdir.ErrInvalid)
	}
	if !e.changes.Changed() {
		return old, nil
	}
	return out, nil
}

func (e *settingsEdit) dryRun(env *cli.Env) error {
	old, err := os.ReadFile(e.path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("settings file: %w", err)
	}
	out, err := e.compute(old)
	if err != nil {
		return err
	}
	env.Stdout.Write(out)
	fmt.Fprintf(env.Stderr, "dry run: %s not written (%s)\n", e.path, e.summary())
	return nil
}

func (e *settingsEdit) apply(ctx context.Context, env *cli.Env, d *memdir.Dir) error {
	if !e.install {
		if _, err := os.Stat(e.path); errors.Is(err, fs.ErrNotExist) {
			fmt.Fprintf(env.Stdout, "%s does not exist: no memdir hooks to remove.\n", e.path)
			return nil
		}
	}
	backup := ""
	summary := "hooks install: " + e.path
	if !e.install {
		summary = "hooks uninstall: " + e.path
	}
	run, err := memdir.EditExternalFile(ctx, d.Journal(), "hooks", summary, e.path, func(old []byte, exists bool) ([]byte, error) {
		out, err := e.compute(old)
		if err != nil || !exists || bytes.Equal(out, old) {
			return out, err
		}
		// Under EditExternalFile's lock, so the copy is of what is replaced.
		mode := fs.FileMode(0o600)
		if fi, err := os.Stat(e.path); err == nil {
			mode = fi.Mode().Perm()
		}
		backup = e.path + ".bak"
		if err := atomicfile.WriteFile(backup, old, mode); err != nil {
			return nil, fmt.Errorf("back up %s before changing it: %w", e.path, err)
		}
		return out, nil
	})
	if err != nil {
		return err
	}
	if run == nil {
		if e.install {
			fmt.Fprintf(env.Stdout, "memdir hooks are already installed in %s; nothing changed.\n", e.path)
		} else {
			fmt.Fprintf(env.Stdout, "No memdir hooks in %s; nothing changed.\n", e.path)
		}
		return nil
	}
	verb := "Installed memdir hooks in"
	if !e.install {
		verb = "Removed memdir hooks from"
	}
	fmt.Fprintf(env.Stdout, "%s %s (%s).\n", verb, e.path, e.summary())
	if backup != "" {
		fmt.Fprintf(env.Stdout, "The previous file is saved as %s.\n", backup)
	}
	// 'memdir undo' reverts runs of the memory directory itself; this
	// run (rooted at the settings file's directory) is undone through
	// Dir.Undo, or by the opposite command.
	if e.install {
		fmt.Fprintf(env.Stdout, "Journal run %s. Remove them with: memdir hooks uninstall%s\n", run.ID, e.scopeFlag)
	} else {
		fmt.Fprintf(env.Stdout, "Journal run %s.\n", run.ID)
	}
	return nil
}

// summary lists the events per kind of change.
func (e *settingsEdit) summary() string { return hookChangesSummary(e.changes) }
