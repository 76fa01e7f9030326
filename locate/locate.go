package locate

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"unicode/utf16"

	"golang.org/x/text/unicode/norm"

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/internal/claudedir"
	"github.com/memdir/memdir/internal/gitroot"
)

// Environment variables and settings keys that locate memory, as Claude Code
// names them.
const (
	EnvRemoteMemoryDir = "CLAUDE_CODE_REMOTE_MEMORY_DIR"
	EnvConfigDir       = "CLAUDE_CONFIG_DIR"
	EnvPathOverride    = "CLAUDE_COWORK_MEMORY_PATH_OVERRIDE"
	EnvDisableAutoMem  = "CLAUDE_CODE_DISABLE_AUTO_MEMORY"
	EnvSimple          = "CLAUDE_CODE_SIMPLE"
	EnvRemote          = "CLAUDE_CODE_REMOTE"
)

// LocateOptions says where to look. The zero value uses the process
// environment and working directory.
type LocateOptions struct {
	// LookupEnv reads environment variables; nil means os.LookupEnv.
	LookupEnv memdir.LookupEnvFunc
	// Cwd is the working directory; "" means os.Getwd.
	Cwd string
	// Project, when set, replaces the working directory as the project root
	// (Claude Code's --worktree flag plays this part).
	Project string
	// Runtime selects the hash for sanitised names past 200 characters.
	Runtime HashRuntime
	// DetectRuntime, for a project path whose sanitised name is hashed,
	// looks for the project's directory under both hashes (Bun's, of the
	// native Claude Code build, and Node's djb2, of the npm package) and
	// uses the one that exists when exactly one does; otherwise Runtime
	// decides. Location.Explain says which and why.
	DetectRuntime bool
	// FlagSettings is the path of a settings file given on the command line
	// (Claude Code's --settings), or "".
	FlagSettings string
	// PolicySettings is the path of the managed policy settings file; "" means
	// the platform's standard location.
	PolicySettings string
}

// DirSource names the rule that chose the memory directory.
type DirSource string

// The rules, in the order Claude Code applies them.
const (
	SourceEnvOverride DirSource = "env"     // CLAUDE_COWORK_MEMORY_PATH_OVERRIDE
	SourceSetting     DirSource = "setting" // autoMemoryDirectory in a settings file
	SourceDefault     DirSource = "default" // <base>/projects/<sanitized root>/memory/
)

// Location is where a project's memory lives and why.
type Location struct {
	// Dir is the auto-memory directory. Like Claude Code's, it always ends
	// with a path separator, so prefix checks cannot match a sibling.
	Dir string
	// Source is the rule that chose Dir; SourceDetail names the variable or
	// settings file.
	Source       DirSource
	SourceDetail string

	// Enabled reports whether auto memory is on; EnabledReason says which
	// rule decided.
	Enabled       bool
	EnabledReason string

	ConfigHome  string // CLAUDE_CONFIG_DIR or ~/.claude
	MemoryBase  string // CLAUDE_CODE_REMOTE_MEMORY_DIR or ConfigHome
	ProjectRoot string // realpath of the working directory (or Project)
	GitRoot     string // nearest directory holding .git, "" if none
	// CanonicalRoot identifies the project: the main repository of a
	// worktree, the git root, or the project root outside git.
	CanonicalRoot string
	Runtime       HashRuntime

	// Explain lists, in order, how each part was decided.
	Explain []string
	// Warnings report settings files that could not be read or values
	// that were rejected. They never stop Locate.
	Warnings []string

	remoteDir string
	// settings are the settings files read, highest priority first.
	settings []settingsSource
}

// AutoDreamEnabled resolves the autoDreamEnabled setting as Claude Code
// does: the highest-priority settings file that defines it, else off (the
// server-side default Claude Code ships with). reason names the source.
func (l *Location) AutoDreamEnabled() (enabled bool, reason string) {
	for _, s := range l.settings {
		if s.values.AutoDreamEnabled != nil {
			return *s.values.AutoDreamEnabled, fmt.Sprintf("autoDreamEnabled=%t in %s", *s.values.AutoDreamEnabled, s.path)
		}
	}
	return false, "default (off)"
}

// TeamDir returns the team memory directory, <Dir>team/, with a trailing separator.
func (l *Location) TeamDir() string {
	return norm.NFC.String(filepath.Join(l.Dir, "team") + string(filepath.Separator))
}

// Entrypoint returns the path of the directory's MEMORY.md.
func (l *Location) Entrypoint() string { return filepath.Join(l.Dir, memdir.EntrypointName) }

// TranscriptDir returns the directory holding this project's session
// transcripts (<session>.jsonl). Claude Code keys it on the working directory,
// not on the git root.
func (l *Location) TranscriptDir() string {
	return filepath.Join(l.ConfigHome, "projects", SanitizePath(l.ProjectRoot, l.Runtime))
}

// AgentScope is where an agent's memory lives.
type AgentScope string

// Agent memory scopes (an agent definition's "memory:" field).
const (
	ScopeUser    AgentScope = "user"    // <base>/agent-memory/<agent>/
	ScopeProject AgentScope = "project" // <project>/.claude/agent-memory/<agent>/, checked in
	ScopeLocal   AgentScope = "local"   // <project>/.claude/agent-memory-local/<agent>/, not checked in
)

// ParseAgentScope parses "user", "project" or "local".
func ParseAgentScope(s string) (AgentScope, error) {
	switch AgentScope(s) {
	case ScopeUser, ScopeProject, ScopeLocal:
		return AgentScope(s), nil
	}
	return "", fmt.Errorf("agent memory scope %q: want user, project or local: %w", s, memdir.ErrInvalid)
}

// AgentDir returns the memory directory of an agent type in a scope, with a
// trailing separator. The directory name is the agent type with ':' replaced
// by '-'.
func (l *Location) AgentDir(agentType string, scope AgentScope) (string, error) {
	name := strings.ReplaceAll(agentType, ":", "-")
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, "/\\\x00") {
		return "", fmt.Errorf("agent type %q cannot name a directory: %w", agentType, memdir.ErrInvalid)
	}
	var dir string
	switch scope {
	case ScopeUser:
		dir = filepath.Join(l.MemoryBase, "agent-memory", name)
	case ScopeProject:
		dir = filepath.Join(l.ProjectRoot, ".claude", "agent-memory", name)
	case ScopeLocal:
		if l.remoteDir != "" {
			dir = filepath.Join(l.remoteDir, "projects", SanitizePath(l.CanonicalRoot, l.Runtime), "agent-memory-local", name)
		} else {
			dir = filepath.Join(l.ProjectRoot, ".claude", "agent-memory-local", name)
		}
	default:
		_, err := ParseAgentScope(string(scope))
		return "", err
	}
	return norm.NFC.String(dir + string(filepath.Separator)), nil
}

// Contains reports whether path lies inside the memory directory (Claude
// Code's isAutoMemPath: a lexical prefix check against Dir).
func (l *Location) Contains(path string) bool {
	return strings.HasPrefix(filepath.Clean(path)+string(filepath.Separator), l.Dir)
}

// Locate finds a project's memory directory by Claude Code's rules:
//
//  1. CLAUDE_COWORK_MEMORY_PATH_OVERRIDE, if it is a valid path;
//  2. autoMemoryDirectory from the policy, flag, local or user settings (first
//     defined wins; never the project's checked-in .claude/settings.json, so a
//     cloned repository cannot redirect writes), if valid;
//  3. <base>/projects/<SanitizePath(canonical root)>/memory/.
//
// It also evaluates whether auto memory is enabled. Locate creates nothing.
func Locate(opts *LocateOptions) (*Location, error) {
	if opts == nil {
		opts = &LocateOptions{}
	}
	lookup := opts.LookupEnv
	if lookup == nil {
		lookup = os.LookupEnv
	}
	l := &Location{Runtime: opts.Runtime}
	var err error
	if l.ConfigHome, err = ConfigHome(lookup); err != nil {
		return nil, err
	}
	l.remoteDir = getenv(lookup, EnvRemoteMemoryDir)
	if l.MemoryBase, err = MemoryBase(lookup); err != nil {
		return nil, err
	}
	if l.remoteDir != "" {
		l.explainf("memory base: %s (from %s)", l.MemoryBase, EnvRemoteMemoryDir)
	} else if getenv(lookup, EnvConfigDir) != "" {
		l.explainf("memory base: %s (from %s)", l.MemoryBase, EnvConfigDir)
	} else {
		l.explainf("memory base: %s (~/.claude; %s and %s are unset)", l.MemoryBase, EnvConfigDir, EnvRemoteMemoryDir)
	}

	start := opts.Project
	how := "the --project directory"
	if start == "" {
		start = opts.Cwd
		how = "the working directory"
		if start == "" {
			if start, err = os.Getwd(); err != nil {
				return nil, fmt.Errorf("locate memory: working directory: %w", err)
			}
		}
	}
	abs, err := filepath.Abs(start)
	if err != nil {
		return nil, fmt.Errorf("locate memory: %s: %w", start, err)
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		l.ProjectRoot = norm.NFC.String(real)
		l.explainf("project root: %s (realpath of %s)", l.ProjectRoot, how)
	} else {
		l.ProjectRoot = norm.NFC.String(abs)
		l.explainf("project root: %s (%s; realpath failed: %v)", l.ProjectRoot, how, err)
	}

	l.CanonicalRoot = l.ProjectRoot
	if gr, ok := FindGitRoot(l.ProjectRoot); ok {
		l.GitRoot = gr
		canon, why := gitroot.Explain(gr)
		l.CanonicalRoot = canon
		l.explainf("git root: %s; canonical root: %s (%s)", gr, canon, why)
	} else {
		l.explainf("not inside a git repository: the project root identifies the project")
	}
	if opts.DetectRuntime {
		l.detectRuntime()
	} else if SanitizePath(l.CanonicalRoot, HashBun) != SanitizePath(l.CanonicalRoot, HashNode) {
		l.explainf("long project path: its name is hashed with %s's hash, as asked", l.Runtime)
	}

	home, _ := claudedir.Home(lookup)
	settings := l.loadSettings(opts, home)
	l.settings = settings

	if raw := getenv(lookup, EnvPathOverride); raw != "" {
		if dir, reason := ValidateMemoryDir(raw, false, home); reason == "" {
			l.Dir, l.Source, l.SourceDetail = dir, SourceEnvOverride, EnvPathOverride
			l.explainf("directory: %s (from %s)", dir, EnvPathOverride)
		} else {
			l.warnf("%s=%q ignored: %s", EnvPathOverride, raw, reason)
		}
	}
	if l.Dir == "" {
		for _, s := range settings {
			if s.source == "project" || s.values.AutoMemoryDirectory == nil {
				continue
			}
			raw := *s.values.AutoMemoryDirectory
			// Claude Code takes the first source that defines the key and
			// validates only that one: an invalid value falls through to
			// the default, not to the next source.
			if dir, reason := ValidateMemoryDir(raw, true, home); reason == "" {
				l.Dir, l.Source, l.SourceDetail = dir, SourceSetting, s.path
				l.explainf("directory: %s (autoMemoryDirectory in %s settings %s)", dir, s.source, s.path)
			} else {
				l.warnf("autoMemoryDirectory %q in %s ignored: %s", raw, s.path, reason)
			}
			break
		}
		for _, s := range settings {
			if s.source == "project" && s.values.AutoMemoryDirectory != nil {
				l.explainf("autoMemoryDirectory in the project's checked-in %s is ignored by design (a repository must not redirect memory writes)", s.path)
			}
		}
	}
	if l.Dir == "" {
		l.Dir = norm.NFC.String(filepath.Join(l.MemoryBase, "projects", SanitizePath(l.CanonicalRoot, l.Runtime), "memory") + string(filepath.Separator))
		l.Source = SourceDefault
		l.explainf("directory: %s (default: <base>/projects/<sanitized canonical root>/memory/)", l.Dir)
	}

	l.Enabled, l.EnabledReason = autoMemoryEnabled(lookup, settings)
	if l.Enabled {
		l.explainf("auto memory: enabled (%s)", l.EnabledReason)
	} else {
		l.explainf("auto memory: disabled (%s)", l.EnabledReason)
	}
	return l, nil
}

func (l *Location) explainf(format string, args ...any) {
	l.Explain = append(l.Explain, fmt.Sprintf(format, args...))
}

func (l *Location) warnf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	l.Warnings = append(l.Warnings, msg)
	l.Explain = append(l.Explain, "warning: "+msg)
}

// ValidateMemoryDir checks a configured memory directory the way Claude Code's
// validateMemoryPath does. It returns the normalised directory with a trailing
// separator, or a reason the value was rejected. With expandTilde, "~/x" is
// taken relative to home; "~/", "~/." and "~/.." (which would name home itself
// or its parent) are rejected, and a bare "~" is never expanded.
func ValidateMemoryDir(raw string, expandTilde bool, home string) (dir string, reason string) {
	if raw == "" {
		return "", "empty"
	}
	candidate := raw
	if expandTilde && (strings.HasPrefix(raw, "~/") || strings.HasPrefix(raw, `~\`)) {
		rest := raw[2:]
		if r := filepath.Clean(strings.ReplaceAll(rest, `\`, "/")); r == "." || r == ".." {
			return "", "a ~/ path must name a directory below the home directory"
		}
		if home == "" {
			return "", "cannot expand ~: the home directory is unknown"
		}
		candidate = filepath.Join(home, rest)
	}
	if strings.ContainsRune(candidate, 0) {
		return "", "contains a NUL byte"
	}
	if strings.HasPrefix(candidate, `\\`) || strings.HasPrefix(candidate, "//") {
		return "", "UNC paths are not allowed"
	}
	normalized := strings.TrimRight(filepath.Clean(candidate), `/\`)
	switch {
	case !filepath.IsAbs(normalized) && !isWindowsAbs(normalized):
		return "", "not an absolute path"
	case len(utf16.Encode([]rune(normalized))) < 3:
		return "", "too short (a filesystem root or a top-level directory)"
	case isDriveRoot(normalized):
		return "", "a drive root is not allowed"
	}
	return norm.NFC.String(normalized + string(filepath.Separator)), ""
}

func isDriveRoot(s string) bool {
	return len(s) == 2 && s[1] == ':' && (s[0] >= 'a' && s[0] <= 'z' || s[0] >= 'A' && s[0] <= 'Z')
}

func isWindowsAbs(s string) bool {
	return runtime.GOOS == "windows" && len(s) >= 3 && s[1] == ':' && (s[2] == '\\' || s[2] == '/')
}

// truthy and falsy mirror Claude Code's isEnvTruthy / isEnvDefinedFalsy.
func truthy(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "1", "true", "yes", "on":
		return true
	}
	return false
}

func falsy(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "0", "false", "no", "off":
		return true
	}
	return false
}

func autoMemoryEnabled(lookup memdir.LookupEnvFunc, settings []settingsSource) (bool, string) {
	if v, ok := lookup(EnvDisableAutoMem); ok {
		if truthy(v) {
			return false, EnvDisableAutoMem + "=" + v
		}
		if falsy(v) {
			return true, EnvDisableAutoMem + "=" + v
		}
	}
	if truthy(getenv(lookup, EnvSimple)) {
		return false, EnvSimple + " is set (bare mode)"
	}
	if truthy(getenv(lookup, EnvRemote)) && getenv(lookup, EnvRemoteMemoryDir) == "" {
		return false, EnvRemote + " is set without " + EnvRemoteMemoryDir
	}
	// Settings merge with policy highest, then flag, local, project, user:
	// unlike the directory, the project's settings may opt out.
	for _, s := range settings {
		if s.values.AutoMemoryEnabled != nil {
			return *s.values.AutoMemoryEnabled, fmt.Sprintf("autoMemoryEnabled=%t in %s", *s.values.AutoMemoryEnabled, s.path)
		}
	}
	return true, "default"
}

// Settings are the memory-related keys of a Claude Code settings file.
type Settings struct {
	AutoMemoryEnabled   *bool   `json:"autoMemoryEnabled,omitempty"`
	AutoMemoryDirectory *string `json:"autoMemoryDirectory,omitempty"`
	AutoDreamEnabled    *bool   `json:"autoDreamEnabled,omitempty"`
}

type settingsSource struct {
	source string // policy, flag, local, project, user
	path   string
	values Settings
}

// SettingsPaths returns the settings files Claude Code reads, highest
// priority first: policy, flag, local, project, user. Missing files are
// included; a flag file only when given.
func (l *Location) SettingsPaths(opts *LocateOptions) []struct{ Source, Path string } {
	var out []struct{ Source, Path string }
	add := func(src, p string) { out = append(out, struct{ Source, Path string }{src, p}) }
	policy := ""
	if opts != nil {
		policy = opts.PolicySettings
	}
	if policy == "" {
		policy = defaultPolicySettingsPath()
	}
	add("policy", policy)
	if opts != nil && opts.FlagSettings != "" {
		add("flag", opts.FlagSettings)
	}
	add("local", filepath.Join(l.ProjectRoot, ".claude", "settings.local.json"))
	add("project", filepath.Join(l.ProjectRoot, ".claude", "settings.json"))
	add("user", UserSettingsPath(l.ConfigHome))
	return out
}

// UserSettingsPath returns the user's Claude Code settings file.
func UserSettingsPath(configHome string) string { return filepath.Join(configHome, "settings.json") }

func defaultPolicySettingsPath() string {
	switch runtime.GOOS {
	case "darwin":
		return "/Library/Application Support/ClaudeCode/managed-settings.json"
	case "windows":
		return `C:\Program Files\ClaudeCode\managed-settings.json`
	default:
		return "/etc/claude-code/managed-settings.json"
	}
}

func (l *Location) loadSettings(opts *LocateOptions, home string) []settingsSource {
	var out []settingsSource
	for _, sp := range l.SettingsPaths(opts) {
		s, err := ReadSettings(sp.Path)
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				l.warnf("%s settings ignored: %v", sp.Source, err)
			}
			continue
		}
		out = append(out, settingsSource{source: sp.Source, path: sp.Path, values: s})
	}
	return out
}

// ReadSettings reads the memory-related keys of a settings file. A value of
// the wrong type is an error naming the key and file.
func ReadSettings(path string) (Settings, error) {
	var s Settings
	data, err := os.ReadFile(path)
	if err != nil {
		return s, err
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return s, fmt.Errorf("%s: not valid JSON: %v", path, err)
	}
	for key, dst := range map[string]any{
		"autoMemoryEnabled":   &s.AutoMemoryEnabled,
		"autoMemoryDirectory": &s.AutoMemoryDirectory,
		"autoDreamEnabled":    &s.AutoDreamEnabled,
	} {
		v, ok := raw[key]
		if !ok || string(v) == "null" {
			continue
		}
		if err := json.Unmarshal(v, dst); err != nil {
			return Settings{}, fmt.Errorf("%s: key %q has the wrong type: %v", path, key, err)
		}
	}
	return s, nil
}

// FindGitRoot walks up from start looking for a .git directory or file, as
// Claude Code's findGitRoot does (the filesystem root included).
func FindGitRoot(start string) (string, bool) { return gitroot.Find(start) }

// CanonicalGitRoot resolves a worktree to its main repository, so that all
// worktrees of one repository share one memory directory. Submodules and
// ordinary repositories resolve to themselves; a worktree of a bare repository
// resolves to the bare repository's directory.
func CanonicalGitRoot(gitRoot string) string { return gitroot.Canonical(gitRoot) }

// detectRuntime picks the hash of long project names by which of the two
// candidate project directories exists (see LocateOptions.DetectRuntime):
// Claude Code installed from npm runs on Node and names them with djb2, the
// native build with Bun's wyhash. A project directory holds the memory
// directory and the session transcripts, so either shows which one ran.
func (l *Location) detectRuntime() {
	candidates := func(rt HashRuntime) []string {
		return []string{
			filepath.Join(l.MemoryBase, "projects", SanitizePath(l.CanonicalRoot, rt)),
			filepath.Join(l.ConfigHome, "projects", SanitizePath(l.ProjectRoot, rt)),
		}
	}
	bun, node := candidates(HashBun), candidates(HashNode)
	if bun[0] == node[0] && bun[1] == node[1] {
		return // short enough that nothing is hashed
	}
	found := func(dirs []string) string {
		for _, d := range dirs {
			if fi, err := os.Stat(d); err == nil && fi.IsDir() {
				return d
			}
		}
		return ""
	}
	fb, fn := found(bun), found(node)
	switch {
	case fb != "" && fn == "":
		l.Runtime = HashBun
		l.explainf("long project path: its name is hashed; %s exists (Bun's hash, the native Claude Code build) and the Node variant does not, so memdir uses it", fb)
	case fn != "" && fb == "":
		l.Runtime = HashNode
		l.explainf("long project path: its name is hashed; %s exists (Node's djb2 hash, Claude Code installed from npm) and the Bun variant does not, so memdir uses it", fn)
	case fb != "":
		l.explainf("long project path: its name is hashed, and directories exist under both hashes (%s for Bun, %s for Node); using %s's (set MEMDIR_HASH_RUNTIME to choose)", fb, fn, l.Runtime)
	default:
		l.explainf("long project path: its name is hashed, and neither the Bun nor the Node variant exists yet; using %s's (the native build; set MEMDIR_HASH_RUNTIME=node for Claude Code installed from npm)", l.Runtime)
	}
}

// ProjectDirs lists the directories from the git root (or the project root
// outside git) down to the project root, outermost first: where CLAUDE.md
// files and agent definitions of the project are looked for.
func (l *Location) ProjectDirs() []string {
	dirs := []string{l.ProjectRoot}
	if l.GitRoot == "" {
		return dirs
	}
	for d := l.ProjectRoot; d != l.GitRoot; {
		parent := filepath.Dir(d)
		if parent == d || !strings.HasPrefix(d, l.GitRoot) {
			break
		}
		dirs = append(dirs, parent)
		d = parent
	}
	for i, j := 0, len(dirs)-1; i < j; i, j = i+1, j-1 {
		dirs[i], dirs[j] = dirs[j], dirs[i]
	}
	return dirs
}
