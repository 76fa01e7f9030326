package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/config"
	"github.com/memdir/memdir/doctor"
	"github.com/memdir/memdir/hooks"
	"github.com/memdir/memdir/internal/cli"
	"github.com/memdir/memdir/internal/progress"
	"github.com/memdir/memdir/locate"
	"github.com/memdir/memdir/recall"
	"github.com/memdir/memdir/team"
)

var statusCmd = &cli.Command{
	Name:  "status",
	Args:  "[--project DIR] [--json]",
	Short: "show where memory lives, what it holds, and what is set up (also: memdir alone)",
	Long: `Status is one screen about this project's memory, as 'git status' is about
its files; 'memdir' with no command prints it too:

  - the memory directory and the rule that chose it (all of the reasoning:
    'memdir path --explain'), and whether auto memory is on;
  - how many memories it holds, and how many of them are team memories;
  - MEMORY.md (and team/MEMORY.md) against what Claude Code loads: 200
    lines and 25,000 characters;
  - how many problems 'memdir doctor' would report, and how many
    'memdir doctor --fix' repairs;
  - which agents are wired to the directory: Claude Code's hooks (user,
    project or local settings) and MCP server (~/.claude.json or the
    project's .mcp.json), Codex CLI's and Gemini CLI's hooks;
  - the model, the embedding model and the team server configured, and
    what each would add;
  - the last team sync of each repository, from the sync state.

Everything not set up yet comes with the one command that sets it up.

Status only reads: it writes no file (not even a cache or a lock) and asks
no server or model, so it is safe to run anywhere and costs about what
'memdir list' does.

Which directory: the project's auto-memory directory, found by Claude
Code's rules from the working directory, or from --project DIR.

Examples:
  memdir
  memdir status --project ~/src/shop
  memdir status --json | jq '.agents[] | select(.wired | not) | .setup'`,
	Setup: cli.Setup(runStatus),
}

// statusOptions holds the flag values of memdir status.
type statusOptions struct {
	project string
	asJSON  bool
}

func (o *statusOptions) Declare(fs *flag.FlagSet) {
	fs.StringVar(&o.project, "project", "", "resolve the memory directory from `DIR` instead of the working directory")
	fs.BoolVar(&o.asJSON, "json", false, "print the status as JSON")
}

// statusJSON is 'memdir status --json' (docs/json.md).
type statusJSON struct {
	Dir    string `json:"dir"`
	Exists bool   `json:"exists"`
	// Source is the rule that chose the directory (locate.DirSource);
	// Why says it in a sentence.
	Source            locate.DirSource `json:"source"`
	Why               string           `json:"why"`
	AutoMemory        bool             `json:"auto_memory"`
	AutoMemoryReason  string           `json:"auto_memory_reason"`
	Memories          int              `json:"memories"`
	TeamMemories      int              `json:"team_memories"`
	Unreadable        int              `json:"unreadable"`
	Index             statusIndexJSON  `json:"index"`
	TeamIndex         statusIndexJSON  `json:"team_index"`
	Findings          int              `json:"findings"`
	Fixable           int              `json:"fixable"`
	FindingKinds      []kindCountJSON  `json:"finding_kinds"`
	Agents            []statusAgent    `json:"agents"`
	Model             statusService    `json:"model"`
	Embedder          statusService    `json:"embedder"`
	TeamServer        statusService    `json:"team_server"`
	Syncs             []statusSyncJSON `json:"syncs"`
	Next              []string         `json:"next"`
	ProblemsReadError string           `json:"problems_read_error,omitempty"`
}

// statusIndexJSON is a MEMORY.md against Claude Code's load limits.
type statusIndexJSON struct {
	Path      string `json:"path"`
	Exists    bool   `json:"exists"`
	Lines     int    `json:"lines"`
	MaxLines  int    `json:"max_lines"`
	Chars     int    `json:"chars"`
	MaxChars  int    `json:"max_chars"`
	Truncated bool   `json:"truncated"`
}

// kindCountJSON is how many findings of one kind doctor would report.
type kindCountJSON struct {
	Kind  string `json:"kind"`
	Count int    `json:"count"`
}

// statusAgent is one way an agent reaches the memory directory.
type statusAgent struct {
	// Agent is claude, codex or gemini; Program its name for people;
	// Via is "hooks" or "mcp".
	Agent   string `json:"agent"`
	Program string `json:"program"`
	Via     string `json:"via"`
	Wired   bool   `json:"wired"`
	// Files are the configuration files that wire it.
	Files    []string `json:"files"`
	Adds     string   `json:"adds"`
	Setup    string   `json:"setup"`
	Warnings []string `json:"warnings"`
}

// statusService is an optional service: the model, the embedder, the
// team server.
type statusService struct {
	Configured bool   `json:"configured"`
	Value      string `json:"value"`
	Source     string `json:"source"`
	Adds       string `json:"adds"`
	Setup      string `json:"setup"`
}

// statusSyncJSON is the last sync with one repository.
type statusSyncJSON struct {
	Repo      string    `json:"repo"`
	At        time.Time `json:"at"`
	Keys      int       `json:"keys"`
	Conflicts int       `json:"conflicts"`
}

// The commands status suggests.
const (
	setupClaudeHooks = "memdir hooks install"
	setupClaudeMCP   = "claude mcp add --transport stdio memdir -- memdir mcp"
	setupSave        = `memdir save --name first-note --type user --description "what this memory is about" --body "..."`
	setupModel       = "export MEMDIR_MODEL=anthropic:claude-haiku-4-5 ANTHROPIC_API_KEY=..."
	setupEmbedder    = "export MEMDIR_EMBED_MODEL=openai:text-embedding-3-small OPENAI_API_KEY=... && memdir embed"
	setupTeam        = "export MEMDIR_TEAM_URL=https://... MEMDIR_TEAM_TOKEN=mdt_... && memdir sync pull"
)

func runStatus(ctx context.Context, env *cli.Env, o *statusOptions, args []string) error {
	if len(args) > 0 {
		return cli.Usagef("status takes no arguments (the project is --project DIR)")
	}
	lf := locationFlags{project: o.project}
	p, loc, err := lf.path(env)
	if err != nil {
		return err
	}
	st := &statusJSON{Dir: p + string(filepath.Separator), Source: loc.Source, Why: locationWhy(loc), AutoMemory: loc.Enabled, AutoMemoryReason: loc.EnabledReason,
		FindingKinds: []kindCountJSON{}, Syncs: []statusSyncJSON{}, Next: []string{}}
	d, err := memdir.Open(p, &memdir.Options{Now: env.Now, LookupEnv: env.LookupEnv})
	if err != nil {
		return err
	}
	st.Exists = d.Exists()
	if err := st.memories(ctx, env, d); err != nil {
		return err
	}
	st.agents(env, loc)
	if err := st.services(env); err != nil {
		return err
	}
	st.next()
	return cli.Emit(env, o.asJSON, st, func(w io.Writer) error {
		st.print(w, env.Now())
		return nil
	})
}

// locationWhy is the rule that chose the directory, in one line.
func locationWhy(loc *locate.Location) string {
	project := loc.CanonicalRoot
	if project == "" {
		project = loc.ProjectRoot
	}
	switch loc.Source {
	case locate.SourceEnvOverride:
		return "set by " + loc.SourceDetail
	case locate.SourceSetting:
		return "autoMemoryDirectory in " + loc.SourceDetail
	}
	if loc.GitRoot != "" {
		return "Claude Code's directory for the git repository " + project
	}
	return "Claude Code's directory for " + project + " (not a git repository)"
}

// memories counts the memories, measures the indexes and counts what
// doctor would report, all read-only.
func (st *statusJSON) memories(ctx context.Context, env *cli.Env, d *memdir.Dir) error {
	st.Index = statusIndexJSON{Path: memdir.EntrypointName, MaxLines: memdir.MaxIndexLines, MaxChars: memdir.MaxIndexChars}
	st.TeamIndex = statusIndexJSON{Path: memdir.TeamDirName + "/" + memdir.EntrypointName, MaxLines: memdir.MaxIndexLines, MaxChars: memdir.MaxIndexChars}
	syncs, err := team.SyncRecords(filepath.Join(d.Path(), memdir.TeamDirName), env.LookupEnv)
	if err != nil {
		return err
	}
	conflicts := 0
	for _, s := range syncs {
		st.Syncs = append(st.Syncs, statusSyncJSON{Repo: s.Repo, At: s.At, Keys: s.Keys, Conflicts: s.Conflicts})
		conflicts += s.Conflicts
	}
	if !d.Exists() {
		return nil
	}
	rep, err := doctor.Check(ctx, d)
	if err != nil {
		return err
	}
	st.Memories = rep.Memories
	for _, f := range rep.Findings {
		st.countFinding(string(f.Kind), f.Fix != "" && !f.CompactOnly)
		if f.Kind == doctor.FindUnreadable {
			st.Unreadable++
		}
	}
	for range conflicts {
		st.countFinding("sync-conflict", false)
	}
	if left, err := recall.Leftovers(d.Path(), env.LookupEnv, false); err == nil {
		for range left {
			st.countFinding(string(doctor.FindTempFile), true)
		}
	}
	if st.TeamMemories, err = countTeam(d); err != nil {
		return err
	}
	for _, ix := range []*statusIndexJSON{&st.Index, &st.TeamIndex} {
		li, err := d.LoadIndex(ix == &st.TeamIndex)
		if err != nil {
			return err
		}
		ix.Exists, ix.Lines, ix.Chars, ix.Truncated = li.Exists, li.Status.Lines, li.Status.Chars, li.Status.Truncated()
	}
	return nil
}

func (st *statusJSON) countFinding(kind string, fixable bool) {
	st.Findings++
	if fixable {
		st.Fixable++
	}
	for i := range st.FindingKinds {
		if st.FindingKinds[i].Kind == kind {
			st.FindingKinds[i].Count++
			return
		}
	}
	st.FindingKinds = append(st.FindingKinds, kindCountJSON{Kind: kind, Count: 1})
}

// countTeam counts the memory files under team/ (as Scan counts them: *.md
// but MEMORY.md, at any depth), without reading them.
func countTeam(d *memdir.Dir) (int, error) {
	root := d.Abs(memdir.TeamDirName)
	n := 0
	err := filepath.WalkDir(root, func(p string, e os.DirEntry, err error) error {
		switch {
		case err != nil && p == root:
			return filepath.SkipAll // no team/
		case err != nil:
			return nil
		case e.IsDir() && p != root && strings.HasPrefix(e.Name(), "."):
			return filepath.SkipDir
		case e.Type().IsRegular() && strings.HasSuffix(e.Name(), ".md") && e.Name() != memdir.EntrypointName:
			n++
		}
		return nil
	})
	return n, err
}

// agents finds which agents are wired to the directory: their hooks in
// every file memdir's install writes, and Claude Code's MCP servers.
func (st *statusJSON) agents(env *cli.Env, loc *locate.Location) {
	claude := statusAgent{Agent: string(hooks.Claude), Program: hooks.Claude.Program(), Via: "hooks", Setup: setupClaudeHooks,
		Adds: "recall into every prompt, checkpoints of edited files, memories extracted when a session ends"}
	for _, o := range []*hooksOptions{{}, {project: true}, {local: true}} {
		a := &agentHooks{agent: hooks.Claude, hooksPath: claudeSettingsPath(loc, o)}
		claude.addHooks(a)
	}
	mcp := statusAgent{Agent: string(hooks.Claude), Program: hooks.Claude.Program(), Via: "mcp", Setup: setupClaudeMCP,
		Adds: "the memory, recall, save and forget tools in every session"}
	for _, f := range claudeMCPFiles(env, loc) {
		wired, err := f.hasMemdir()
		switch {
		case err != nil:
			mcp.Warnings = append(mcp.Warnings, err.Error())
		case wired:
			mcp.Wired = true
			mcp.Files = append(mcp.Files, f.path)
		}
	}
	st.Agents = append(st.Agents, claude, mcp)
	for _, agent := range []hooks.Agent{hooks.Codex, hooks.Gemini} {
		sa := statusAgent{Agent: string(agent), Program: agent.Program(), Via: "hooks", Setup: "memdir hooks install --agent " + string(agent),
			Adds: "this same memory: MEMORY.md at session start and recall into every prompt"}
		for _, project := range []bool{false, true} {
			a, err := newAgentHooks(env, agent, loc, project)
			if err != nil {
				sa.Warnings = append(sa.Warnings, err.Error())
				continue
			}
			sa.addHooks(a)
		}
		st.Agents = append(st.Agents, sa)
	}
	for i := range st.Agents {
		a := &st.Agents[i]
		if a.Files == nil {
			a.Files = []string{}
		}
		if a.Warnings == nil {
			a.Warnings = []string{}
		}
	}
}

// addHooks adds what one hooks file says: wired when it holds memdir's
// handlers and nothing stops them from running (Codex's trust, Gemini's
// switches).
func (sa *statusAgent) addHooks(a *agentHooks) {
	hs, err := a.status()
	if err != nil {
		sa.Warnings = append(sa.Warnings, err.Error())
		return
	}
	if len(hs.Hooks) == 0 {
		return
	}
	sa.Warnings = append(sa.Warnings, hs.Warnings...)
	for _, h := range hs.Hooks {
		if h.Trust != "" && h.Trust != "trusted" {
			sa.Warnings = append(sa.Warnings, fmt.Sprintf("%s: the %s handler is %s, so %s skips it; run %s again", hs.File, h.Event, h.Trust, sa.Program, sa.Setup))
			return
		}
	}
	if len(hs.Warnings) == 0 {
		sa.Wired = true
	}
	sa.Files = append(sa.Files, hs.File)
}

// mcpFile is a file where Claude Code finds MCP servers: ~/.claude.json
// (user servers at the top, local ones under the project's path) or the
// project's .mcp.json.
type mcpFile struct {
	path    string
	project string // in ~/.claude.json, the project whose servers count too
}

// claudeMCPFiles are the files Claude Code reads MCP servers from for the
// project: .claude.json in CLAUDE_CONFIG_DIR when set, else in the home
// directory, and .mcp.json at the project root.
func claudeMCPFiles(env *cli.Env, loc *locate.Location) []mcpFile {
	var files []mcpFile
	user := ""
	if env.Getenv("CLAUDE_CONFIG_DIR") != "" {
		user = filepath.Join(loc.ConfigHome, ".claude.json")
	} else if home := env.Getenv("HOME"); home != "" {
		user = filepath.Join(home, ".claude.json")
	}
	if user != "" {
		files = append(files, mcpFile{path: user, project: loc.ProjectRoot})
	}
	return append(files, mcpFile{path: filepath.Join(loc.ProjectRoot, ".mcp.json")})
}

// maxClaudeJSON bounds the read of ~/.claude.json, which Claude Code fills
// with per-project history.
const maxClaudeJSON = 64 << 20

// hasMemdir reports whether the file registers memdir's MCP server: a
// server whose command is the memdir program and whose first argument is
// "mcp". A missing file registers nothing.
func (f mcpFile) hasMemdir() (bool, error) {
	fi, err := os.Stat(f.path)
	if err != nil || !fi.Mode().IsRegular() {
		return false, nil
	}
	if fi.Size() > maxClaudeJSON {
		return false, fmt.Errorf("%s is %s, too large to read for MCP servers", f.path, memdir.FormatFileSize(int(fi.Size())))
	}
	data, err := os.ReadFile(f.path)
	if err != nil {
		return false, err
	}
	type server struct {
		Command string   `json:"command"`
		Args    []string `json:"args"`
	}
	var doc struct {
		MCPServers map[string]server `json:"mcpServers"`
		Projects   map[string]struct {
			MCPServers map[string]server `json:"mcpServers"`
		} `json:"projects"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return false, fmt.Errorf("%s is not valid JSON (%v): its MCP servers are unknown", f.path, err)
	}
	servers := []map[string]server{doc.MCPServers}
	if f.project != "" {
		servers = append(servers, doc.Projects[f.project].MCPServers)
	}
	for _, m := range servers {
		for _, s := range m {
			if hooks.IsProgram(s.Command) && len(s.Args) > 0 && s.Args[0] == "mcp" {
				return true, nil
			}
			// "memdir mcp" as one command string.
			if fs := strings.Fields(s.Command); len(fs) >= 2 && hooks.IsProgram(fs[0]) && fs[1] == "mcp" {
				return true, nil
			}
		}
	}
	return false, nil
}

// services reads the configuration (the file and the environment; no
// model or server is asked anything).
func (st *statusJSON) services(env *cli.Env) error {
	cfg, err := loadConfig(env)
	if err != nil {
		return err
	}
	set := func(s config.Setting, adds, setup string) statusService {
		v := statusService{Adds: adds, Setup: setup}
		if s.Set() && !strings.EqualFold(s.Value, "none") {
			v.Configured, v.Value, v.Source = true, redactURL(s.Value), s.Source
		}
		return v
	}
	st.Model = set(cfg.Model, "let recall ask a model which memories help (it ranks by words alone now) and let extract and dream write memories from sessions", setupModel)
	st.Embedder = set(cfg.Embed.Model, "let recall rank by meaning as well as by words (semantic search)", setupEmbedder)
	st.TeamServer = set(cfg.Team.URL, "share team/ memories with teammates through 'memdir sync'", setupTeam)
	return nil
}

// next lists the commands for what is not set up yet, most useful first.
func (st *statusJSON) next() {
	if st.Memories == 0 {
		st.Next = append(st.Next, setupSave)
	}
	if !st.anyWired(string(hooks.Claude)) {
		st.Next = append(st.Next, setupClaudeHooks)
	}
	if st.Findings > 0 {
		if st.Fixable > 0 {
			st.Next = append(st.Next, "memdir doctor --fix")
		} else {
			st.Next = append(st.Next, "memdir doctor")
		}
	}
}

func (st *statusJSON) anyWired(agent string) bool {
	for _, a := range st.Agents {
		if a.Wired && (agent == "" || a.Agent == agent) {
			return true
		}
	}
	return false
}

func (st *statusJSON) print(w io.Writer, now time.Time) {
	fmt.Fprintf(w, "Memory directory: %s\n", st.Dir)
	fmt.Fprintf(w, "  %s ('memdir path --explain' says why)\n", st.Why)
	if !st.AutoMemory {
		fmt.Fprintf(w, "  auto memory is OFF (%s): Claude Code neither loads nor saves it\n", st.AutoMemoryReason)
	}
	switch {
	case !st.Exists:
		fmt.Fprintf(w, "Memories: none yet; the directory does not exist, and the first save creates it:\n    %s\n", setupSave)
	case st.Memories == 0:
		fmt.Fprintf(w, "Memories: none yet; save one:\n    %s\n", setupSave)
	default:
		fmt.Fprintf(w, "Memories: %s", progress.Count(st.Memories))
		if st.TeamMemories > 0 {
			fmt.Fprintf(w, ", of which %s in team/", progress.Count(st.TeamMemories))
		}
		fmt.Fprintln(w)
	}
	for _, ix := range []statusIndexJSON{st.Index, st.TeamIndex} {
		if !ix.Exists {
			continue
		}
		fmt.Fprintf(w, "%s: %s of %d lines, %s of %s characters", ix.Path, progress.Count(ix.Lines), ix.MaxLines, progress.Count(ix.Chars), progress.Count(ix.MaxChars))
		if ix.Truncated {
			fmt.Fprint(w, ": OVER THE LIMIT, agents do not see all of it (memdir doctor --fix --compact)")
		}
		fmt.Fprintln(w)
	}
	switch {
	case !st.Exists:
	case st.Findings == 0:
		fmt.Fprintln(w, "Doctor: no problems found")
	default:
		var kinds []string
		for _, k := range st.FindingKinds {
			kinds = append(kinds, fmt.Sprintf("%d %s", k.Count, k.Kind))
		}
		fmt.Fprintf(w, "Doctor: %s (%s): memdir doctor", cli.Plural(st.Findings, "problem", "problems"), strings.Join(kinds, ", "))
		if st.Fixable > 0 {
			fmt.Fprintf(w, "; memdir doctor --fix repairs %d", st.Fixable)
		}
		fmt.Fprintln(w)
	}

	fmt.Fprintln(w, "\nAgents:")
	for _, a := range st.Agents {
		name := a.Program + " " + a.Via
		if a.Via == "mcp" {
			name = a.Program + " MCP"
		}
		if a.Wired {
			fmt.Fprintf(w, "  %-18s wired (%s)\n", name, strings.Join(a.Files, ", "))
		} else {
			fmt.Fprintf(w, "  %-18s not wired: %s\n", name, a.Setup)
		}
		for _, warn := range a.Warnings {
			fmt.Fprintf(w, "  %-18s warning: %s\n", "", warn)
		}
	}
	if !st.anyWired("") {
		fmt.Fprintf(w, "  No agent is wired to this directory yet. To wire Claude Code:\n    %s\n    %s\n", setupClaudeHooks, setupClaudeMCP)
	}

	fmt.Fprintln(w)
	for _, s := range []struct {
		name string
		v    statusService
	}{{"Model", st.Model}, {"Embedder", st.Embedder}, {"Team server", st.TeamServer}} {
		if s.v.Configured {
			fmt.Fprintf(w, "%-12s %s (from %s)\n", s.name+":", s.v.Value, s.v.Source)
		} else {
			fmt.Fprintf(w, "%-12s none; one would %s:\n%-12s   %s\n", s.name+":", s.v.Adds, "", s.v.Setup)
		}
	}
	if len(st.Syncs) == 0 {
		fmt.Fprintln(w, "Last sync:   never")
	}
	for _, s := range st.Syncs {
		fmt.Fprintf(w, "Last sync:   %s %s (%s", s.Repo, syncAge(s.At, now), cli.Plural(s.Keys, "key", "keys"))
		if s.Conflicts > 0 {
			fmt.Fprintf(w, ", %s: memdir sync status", cli.Plural(s.Conflicts, "conflict", "conflicts"))
		}
		fmt.Fprintln(w, ")")
	}
	if len(st.Next) > 0 {
		fmt.Fprintln(w, "\nNext:")
		for _, c := range st.Next {
			fmt.Fprintf(w, "  %s\n", c)
		}
	}
}

// syncAge says how long ago t was, to the minute.
func syncAge(t, now time.Time) string {
	d := now.Sub(t)
	switch {
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return cli.Plural(int(d/time.Minute), "minute", "minutes") + " ago"
	case d < 48*time.Hour:
		return cli.Plural(int(d/time.Hour), "hour", "hours") + " ago"
	}
	return cli.Plural(int(d/(24*time.Hour)), "day", "days") + " ago"
}
