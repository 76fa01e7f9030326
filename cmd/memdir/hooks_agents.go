package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/hooks"
	"github.com/memdir/memdir/internal/claudedir"
	"github.com/memdir/memdir/internal/cli"
	"github.com/memdir/memdir/internal/jsonobj"
	"github.com/memdir/memdir/locate"
)

// The timeouts memdir's Codex and Gemini hooks are installed with: the
// same 10 s as Claude Code's, except Codex's SessionEnd, which Codex caps
// at 3 s (starting the background runs takes milliseconds); Gemini counts
// in milliseconds.
const (
	codexHookTimeout           = 10
	codexHookTimeoutSessionEnd = 3
	geminiHookTimeoutMS        = 10_000
)

// codexHookEntries are the handlers 'memdir hooks install --agent codex'
// writes. SessionStart gives the model MEMORY.md: Codex, unlike Claude
// Code, does not load it.
func codexHookEntries(bin string, noCheckpoint bool) []hooks.Entry {
	cmd := func(flags ...string) string {
		return hooks.HookCommand(bin, append([]string{"--agent", "codex"}, flags...)...)
	}
	var promptFlags []string
	if noCheckpoint {
		promptFlags = []string{"--no-checkpoint"}
	}
	es := []hooks.Entry{
		{Event: hooks.SessionStart, Command: cmd("--inject-index"), Timeout: codexHookTimeout},
		{Event: hooks.UserPromptSubmit, Command: cmd(promptFlags...), Timeout: codexHookTimeout},
	}
	if !noCheckpoint {
		es = append(es, hooks.Entry{Event: hooks.PreToolUse, Matcher: strings.Join(hooks.CodexEditTools, "|"), Command: cmd(), Timeout: codexHookTimeout})
	}
	return append(es,
		hooks.Entry{Event: hooks.Stop, Command: cmd(), Timeout: codexHookTimeout},
		hooks.Entry{Event: hooks.SessionEnd, Command: cmd(), Timeout: codexHookTimeoutSessionEnd},
	)
}

// geminiHookEntries are the handlers 'memdir hooks install --agent gemini'
// writes, named "memdir" (hooksConfig.disabled can list the name).
func geminiHookEntries(bin string, noCheckpoint bool) []hooks.Entry {
	cmd := func(flags ...string) string {
		return hooks.HookCommand(bin, append([]string{"--agent", "gemini"}, flags...)...)
	}
	var promptFlags []string
	if noCheckpoint {
		promptFlags = []string{"--no-checkpoint"}
	}
	entry := func(event, matcher, command string) hooks.Entry {
		return hooks.Entry{Event: event, Matcher: matcher, Command: command, Timeout: geminiHookTimeoutMS, Name: hooks.GeminiHookName}
	}
	es := []hooks.Entry{entry(hooks.SessionStart, "", cmd("--inject-index")), entry("BeforeAgent", "", cmd(promptFlags...))}
	if !noCheckpoint {
		es = append(es, entry("BeforeTool", strings.Join(hooks.GeminiEditTools, "|"), cmd()))
	}
	return append(es, entry("AfterAgent", "", cmd()), entry(hooks.SessionEnd, "", cmd()))
}

// agentHooks is one install, uninstall or status of a Codex or Gemini
// configuration.
type agentHooks struct {
	agent hooks.Agent
	// hooksPath is hooks.json (Codex) or settings.json (Gemini);
	// configPath is Codex's config.toml, "" for Gemini.
	hooksPath, configPath string
	// trustPath is hooks.json as Codex names it in trust keys: its real
	// path, symlinks followed.
	trustPath string
	// project is the project root with --project, else "".
	project string
	entries []hooks.Entry
}

// newAgentHooks finds the agent's files: the user's (Codex: $CODEX_HOME,
// default ~/.codex; Gemini: ~/.gemini) or, with project, the project's
// (.codex/hooks.json, .gemini/settings.json under its root).
func newAgentHooks(env *cli.Env, agent hooks.Agent, loc *locate.Location, project bool) (*agentHooks, error) {
	home, err := claudedir.Home(env.LookupEnv)
	if err != nil {
		return nil, err
	}
	a := &agentHooks{agent: agent}
	if project {
		a.project = loc.ProjectRoot
	}
	switch agent {
	case hooks.Codex:
		dir := env.Getenv("CODEX_HOME")
		if dir == "" {
			dir = filepath.Join(home, ".codex")
		} else if !filepath.IsAbs(dir) {
			dir = filepath.Join(env.Cwd, dir)
		}
		a.configPath = filepath.Join(dir, "config.toml")
		a.hooksPath = filepath.Join(dir, "hooks.json")
		if project {
			a.hooksPath = filepath.Join(loc.ProjectRoot, ".codex", "hooks.json")
		}
		// Codex names the file by its real path (checked on 0.169.0
		// with a symlinked CODEX_HOME).
		if a.trustPath, err = realPath(a.hooksPath); err != nil {
			return nil, err
		}
	case hooks.Gemini:
		a.hooksPath = filepath.Join(home, ".gemini", "settings.json")
		if project {
			a.hooksPath = filepath.Join(loc.ProjectRoot, ".gemini", "settings.json")
		}
	}
	return a, nil
}

func (a *agentHooks) paths() []string {
	if a.configPath == "" {
		return []string{a.hooksPath}
	}
	return []string{a.hooksPath, a.configPath}
}

// installHooks is the edit of the hooks file that install makes.
func (a *agentHooks) installHooks(data []byte, entries []hooks.Entry) ([]byte, error) {
	if a.agent == hooks.Gemini {
		out, _, err := hooks.InstallGemini(data, entries)
		return out, err
	}
	out, _, err := hooks.Install(data, entries)
	return out, err
}

// agentChanges is what an install or uninstall did, for its report.
type agentChanges struct {
	hooks    *hooks.Changes
	trust    int // Codex trust records written
	added    []string
	warnings []string
	// restored is true when uninstall put files back byte for byte.
	restored bool
}

// install computes the new files.
func (a *agentHooks) install(files []*agentFile, ch *agentChanges) error {
	hf := files[0]
	var err error
	switch a.agent {
	case hooks.Gemini:
		var gc *hooks.GeminiChanges
		hf.New, gc, err = hooks.InstallGemini(hf.Old, a.entries)
		if err == nil {
			ch.hooks, ch.warnings = gc.Changes, gc.Warnings
			if gc.EnabledAdded {
				ch.added = append(ch.added, "hooksConfig.enabled = true")
			}
			if !gc.Changed() && !gc.EnabledAdded {
				hf.New = hf.Old
			}
		}
	default:
		hf.New, ch.hooks, err = hooks.Install(hf.Old, a.entries)
		if err == nil && !ch.hooks.Changed() {
			hf.New = hf.Old
		}
	}
	if err != nil {
		return fmt.Errorf("%s: %v; memdir leaves it untouched: %w", hf.Path, err, memdir.ErrInvalid)
	}
	if a.agent != hooks.Codex {
		return nil
	}
	records, err := hooks.CodexTrustRecords(a.trustPath, hf.New)
	if err != nil {
		return fmt.Errorf("%s: %v: %w", hf.Path, err, memdir.ErrInvalid)
	}
	cf := files[1]
	out, cc, err := hooks.InstallCodexConfig(cf.Old, a.trustPath, records)
	if err != nil {
		return fmt.Errorf("%s: %v; memdir leaves it untouched: %w", cf.Path, err, memdir.ErrInvalid)
	}
	cf.New, ch.trust = out, len(records)
	if cc.FeatureAdded {
		ch.added = append(ch.added, "[features] hooks = true")
	}
	ch.warnings = append(ch.warnings, cc.Warnings...)
	if len(cc.Replaced) > 0 {
		ch.warnings = append(ch.warnings, fmt.Sprintf("replaced %d trust record(s) of memdir's hooks that were already in %s", len(cc.Replaced), cf.Path))
	}
	return nil
}

// uninstall computes the new files: each put back as it was before the
// install when nothing else changed since (see hooks.Restore), else with
// memdir's handlers removed one by one.
func (a *agentHooks) uninstall(files []*agentFile, ch *agentChanges) error {
	hf := files[0]
	if back, remove, ok := hooks.Restore(hf.Old, hf.Backup, hf.HasBackup, a.installHooks); ok {
		hf.New, hf.Remove, ch.restored = back, remove, true
		ch.hooks = &hooks.Changes{}
		for _, e := range mustInstalled(hf.Old) {
			ch.hooks.Removed = append(ch.hooks.Removed, e.Event)
		}
	} else {
		out, c, err := hooks.Uninstall(hf.Old)
		if err != nil {
			return fmt.Errorf("%s: %v; memdir leaves it untouched: %w", hf.Path, err, memdir.ErrInvalid)
		}
		ch.hooks, hf.New = c, out
		switch {
		case !c.Changed():
			hf.New = hf.Old
		case string(jsonobj.Compact(out)) == "{}" && !hf.HasBackup:
			hf.Remove = true
		case a.agent == hooks.Gemini:
			ch.warnings = append(ch.warnings, "hooksConfig is left as it is (the file changed since the install, so memdir cannot tell whether it set hooksConfig.enabled)")
		}
	}
	if a.agent != hooks.Codex {
		return nil
	}
	cf := files[1]
	out, err := hooks.UninstallCodexConfig(cf.Old, a.trustPath)
	if err != nil {
		return fmt.Errorf("%s: %v; memdir leaves it untouched: %w", cf.Path, err, memdir.ErrInvalid)
	}
	cf.New, cf.Remove = out, len(out) == 0 && cf.Exists && !cf.HasBackup
	return nil
}

func mustInstalled(data []byte) []hooks.Entry {
	es, _ := hooks.Installed(data)
	return es
}

// runAgentHooks is 'memdir hooks install|uninstall --agent codex|gemini'.
func runAgentHooks(ctx context.Context, env *cli.Env, o *hooksOptions, agent hooks.Agent, install bool) error {
	if o.local {
		return cli.Usagef("--local is Claude Code's settings.local.json: %s has user (--user) and project (--project) scopes", agent.Program())
	}
	var lf locationFlags
	d, loc, err := lf.open(env)
	if err != nil {
		return err
	}
	a, err := newAgentHooks(env, agent, loc, o.project)
	if err != nil {
		return err
	}
	verb := "uninstall"
	if install {
		verb = "install"
		bin, err := hookBinary(env, o.binary)
		if err != nil {
			return err
		}
		a.entries = geminiHookEntries(bin, o.noCheckpoint)
		if agent == hooks.Codex {
			a.entries = codexHookEntries(bin, o.noCheckpoint)
		}
	}
	ch := &agentChanges{}
	summary := fmt.Sprintf("hooks %s --agent %s: %s", verb, agent, strings.Join(a.paths(), ", "))
	ed, err := editAgentFiles(ctx, d.Journal(), summary, a.paths(), o.dryRun, func(files []*agentFile) error {
		if install {
			return a.install(files, ch)
		}
		return a.uninstall(files, ch)
	})
	if err != nil {
		return err
	}
	if o.dryRun {
		return a.printDryRun(env, ed)
	}
	a.report(env, ed, ch, install)
	return nil
}

func (a *agentHooks) printDryRun(env *cli.Env, ed *agentFileEdit) error {
	for _, f := range ed.Files {
		switch {
		case !f.changed():
			fmt.Fprintf(env.Stderr, "dry run: %s would not change\n", f.Path)
		case f.Remove:
			fmt.Fprintf(env.Stderr, "dry run: %s would be removed\n", f.Path)
		default:
			fmt.Fprintf(env.Stderr, "dry run: %s would be (not written):\n", f.Path)
			env.Stdout.Write(f.New)
		}
	}
	return nil
}

// report says what changed and what the user must still do.
func (a *agentHooks) report(env *cli.Env, ed *agentFileEdit, ch *agentChanges, install bool) {
	w := env.Stdout
	prog := a.agent.Program()
	scope := ""
	if a.project != "" {
		scope = " --project"
	}
	if len(ed.Runs) == 0 {
		if install {
			fmt.Fprintf(w, "memdir's %s hooks are already installed in %s; nothing changed.\n", prog, a.hooksPath)
		} else {
			fmt.Fprintf(w, "No memdir hooks for %s in %s; nothing changed.\n", prog, a.hooksPath)
		}
	} else {
		verb := "Installed memdir's " + prog + " hooks in"
		if !install {
			verb = "Removed memdir's " + prog + " hooks from"
		}
		fmt.Fprintf(w, "%s %s (%s).\n", verb, a.hooksPath, hookChangesSummary(ch.hooks))
		if install && a.agent == hooks.Codex {
			fmt.Fprintf(w, "Trusted them in %s (%s), so Codex runs them without asking and without --dangerously-bypass-hook-trust.\n", a.configPath, cli.Plural(ch.trust, "trust record", "trust records"))
		}
		if len(ch.added) > 0 {
			fmt.Fprintf(w, "Also set: %s.\n", strings.Join(ch.added, ", "))
		}
		if ch.restored {
			fmt.Fprintln(w, "Nothing else had changed since the install, so the files are back as they were, byte for byte.")
		}
		for _, f := range ed.Files {
			if f.Remove && f.changed() {
				fmt.Fprintf(w, "Removed %s, which the install had created.\n", f.Path)
			}
		}
		if len(ed.Backups) > 0 {
			fmt.Fprintf(w, "The previous files are saved as %s.\n", strings.Join(ed.Backups, ", "))
		}
		for _, run := range ed.Runs {
			fmt.Fprintf(w, "Journal run %s: 'memdir undo %s' reverts it.\n", run.ID, run.ID)
		}
	}
	var todo []string
	for _, d := range ed.Created {
		if a.project == "" {
			todo = append(todo, fmt.Sprintf("%s did not exist, and memdir created it: is %s installed, and is this the directory it uses?", d, prog))
		}
	}
	todo = append(todo, ch.warnings...)
	if install {
		todo = append(todo, a.stillToDo(env)...)
		fmt.Fprintf(w, "Remove them with: memdir hooks uninstall --agent %s%s\n", a.agent, scope)
	}
	if len(todo) > 0 {
		fmt.Fprintln(w, "Still to do:")
		for _, t := range todo {
			fmt.Fprintf(w, "  - %s\n", t)
		}
	}
}

// stillToDo lists what the hooks need that install does not do.
func (a *agentHooks) stillToDo(env *cli.Env) []string {
	var out []string
	if cfg, err := loadConfig(env); err == nil {
		if provider, _ := cfg.ModelName(); provider == "" {
			out = append(out, "configure a model for extraction ('memdir config'): without one the hooks recall memories and take checkpoints, but save nothing at the end of a turn")
		}
	}
	prog := a.agent.Program()
	out = append(out, prog+" reads its hooks when a session starts: sessions already running do not have them")
	switch {
	case a.agent == hooks.Codex && a.project != "":
		out = append(out, fmt.Sprintf("Codex reads %s only in a project it trusts: trust %s in Codex (trust_level = \"trusted\" under [projects.\"%s\"] in %s)", a.hooksPath, a.project, a.project, a.configPath))
	case a.agent == hooks.Codex:
		out = append(out, "editing memdir's handlers in hooks.json (or adding groups before them) voids their trust, and Codex then skips them silently: run this command again afterwards ('memdir hooks status --agent codex' checks)")
	case a.agent == hooks.Gemini && a.project != "":
		out = append(out, fmt.Sprintf("Gemini CLI reads %s only in a folder it trusts", a.hooksPath))
	}
	return out
}

// hookChangesSummary lists the events per kind of change, in the agent's
// own event names.
func hookChangesSummary(c *hooks.Changes) string {
	var parts []string
	for _, p := range []struct {
		what   string
		events []string
	}{{"added", c.Added}, {"updated", c.Updated}, {"unchanged", c.Unchanged}, {"removed", c.Removed}} {
		if len(p.events) > 0 {
			parts = append(parts, p.what+": "+strings.Join(p.events, ", "))
		}
	}
	if len(parts) == 0 {
		return "no memdir hooks"
	}
	return strings.Join(parts, "; ")
}

// hooksStatus is 'memdir hooks status --json': memdir's handlers in one
// agent's configuration.
type hooksStatus struct {
	Agent  string `json:"agent"`
	File   string `json:"file"`
	Exists bool   `json:"exists"`
	// Config is Codex's config.toml, which holds the trust records.
	Config   string       `json:"config,omitempty"`
	Hooks    []hookStatus `json:"hooks"`
	Missing  []string     `json:"missing"`
	Warnings []string     `json:"warnings"`
}

// hookStatus is one installed handler.
type hookStatus struct {
	Event   string `json:"event"`
	Matcher string `json:"matcher,omitempty"`
	Command string `json:"command"`
	Timeout int    `json:"timeout,omitempty"`
	// Trust is Codex's view of the handler: trusted, untrusted (no
	// record: Codex skips it) or modified (a record for another version
	// of it: Codex skips it too).
	Trust string `json:"trust,omitempty"`
}

// wantEvents are the events the agent's install writes.
func wantEvents(agent hooks.Agent) []string {
	var es []hooks.Entry
	switch agent {
	case hooks.Codex:
		es = codexHookEntries(hooks.ProgramName, false)
	case hooks.Gemini:
		es = geminiHookEntries(hooks.ProgramName, false)
	default:
		es = memdirHookEntries(hooks.ProgramName, false, false)
	}
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.Event
	}
	return out
}

// status reads the agent's configuration.
func (a *agentHooks) status() (*hooksStatus, error) {
	st := &hooksStatus{Agent: string(a.agent), File: a.hooksPath, Config: a.configPath, Hooks: []hookStatus{}, Missing: []string{}, Warnings: []string{}}
	data, exists, err := readAgentFile(a.hooksPath)
	if err != nil {
		return nil, err
	}
	st.Exists = exists
	installed, err := hooks.Installed(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %v: %w", a.hooksPath, err, memdir.ErrInvalid)
	}
	for _, e := range installed {
		st.Hooks = append(st.Hooks, hookStatus{Event: e.Event, Matcher: e.Matcher, Command: e.Command, Timeout: e.Timeout})
	}
	for _, ev := range wantEvents(a.agent) {
		if !slices.ContainsFunc(installed, func(e hooks.Entry) bool { return e.Event == ev }) && !(ev == hooks.PreToolUse || ev == "BeforeTool") {
			st.Missing = append(st.Missing, ev)
		}
	}
	switch a.agent {
	case hooks.Codex:
		err = a.codexStatus(st, data)
	case hooks.Gemini:
		var gs *hooks.GeminiStatus
		if gs, err = hooks.ReadGemini(data); err == nil {
			if gs.Enabled != nil && !*gs.Enabled {
				st.Warnings = append(st.Warnings, "hooksConfig.enabled is false: Gemini CLI runs no hooks")
			}
			if gs.Disabled {
				st.Warnings = append(st.Warnings, "hooksConfig.disabled lists memdir: Gemini CLI skips memdir's hooks")
			}
		}
	}
	return st, err
}

// codexStatus checks each handler's trust record and the feature flag.
func (a *agentHooks) codexStatus(st *hooksStatus, hooksData []byte) error {
	cfgData, _, err := readAgentFile(a.configPath)
	if err != nil {
		return err
	}
	cfg, err := hooks.ReadCodexConfig(cfgData)
	if err != nil {
		return fmt.Errorf("%s: %v: %w", a.configPath, err, memdir.ErrInvalid)
	}
	records, err := hooks.CodexTrustRecords(a.trustPath, hooksData)
	if err != nil {
		return err
	}
	for i, r := range records {
		switch got, ok := cfg.Trusted[r.Key]; {
		case !ok:
			st.Hooks[i].Trust = "untrusted"
		case got == r.Hash:
			st.Hooks[i].Trust = "trusted"
		default:
			st.Hooks[i].Trust = "modified"
		}
		if st.Hooks[i].Trust != "trusted" {
			st.Warnings = append(st.Warnings, fmt.Sprintf("Codex skips the %s hook silently (%s): run 'memdir hooks install --agent codex' again, or trust it in Codex", r.Event, st.Hooks[i].Trust))
		}
	}
	if cfg.FeatureHooks != nil && !*cfg.FeatureHooks {
		st.Warnings = append(st.Warnings, "config.toml sets [features] hooks = false: Codex runs no hooks")
	}
	if a.project != "" && cfg.ProjectTrust[a.project] != "trusted" {
		st.Warnings = append(st.Warnings, fmt.Sprintf("Codex does not trust %s, so it ignores its .codex/hooks.json", a.project))
	}
	return nil
}

// runHooksStatus is 'memdir hooks status [--agent A]'.
func runHooksStatus(env *cli.Env, o *hooksOptions, agent hooks.Agent) error {
	var lf locationFlags
	loc, err := lf.locate(env)
	if err != nil {
		return err
	}
	var a *agentHooks
	if agent == hooks.Claude {
		a = &agentHooks{agent: agent, hooksPath: claudeSettingsPath(loc, o)}
	} else {
		if o.local {
			return cli.Usagef("--local is Claude Code's settings.local.json: %s has user (--user) and project (--project) scopes", agent.Program())
		}
		if a, err = newAgentHooks(env, agent, loc, o.project); err != nil {
			return err
		}
	}
	st, err := a.status()
	if err != nil {
		return err
	}
	return cli.Emit(env, o.asJSON, st, func(w io.Writer) error {
		printHooksStatus(w, agent, st)
		return nil
	})
}

func printHooksStatus(w io.Writer, agent hooks.Agent, st *hooksStatus) {
	switch {
	case !st.Exists:
		fmt.Fprintf(w, "%s: %s does not exist: no memdir hooks.\n", agent.Program(), st.File)
	case len(st.Hooks) == 0:
		fmt.Fprintf(w, "%s: no memdir hooks in %s.\n", agent.Program(), st.File)
	default:
		fmt.Fprintf(w, "%s: memdir hooks in %s:\n", agent.Program(), st.File)
		for _, h := range st.Hooks {
			line := "  " + h.Event
			if h.Matcher != "" {
				line += " (" + h.Matcher + ")"
			}
			line += ": " + h.Command
			if h.Trust != "" {
				line += " [" + h.Trust + "]"
			}
			fmt.Fprintln(w, line)
		}
		if len(st.Missing) > 0 {
			fmt.Fprintf(w, "Not installed: %s.\n", strings.Join(st.Missing, ", "))
		}
	}
	for _, warn := range st.Warnings {
		fmt.Fprintf(w, "warning: %s\n", warn)
	}
}

// claudeSettingsPath is the Claude Code settings file the scope flags
// name (see runHooks).
func claudeSettingsPath(loc *locate.Location, o *hooksOptions) string {
	switch {
	case o.local:
		return filepath.Join(loc.ProjectRoot, ".claude", "settings.local.json")
	case o.project:
		return filepath.Join(loc.ProjectRoot, ".claude", "settings.json")
	}
	return locate.UserSettingsPath(loc.ConfigHome)
}
