package locate

import (
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/memdir/memdir"
)

// envMap makes a LookupEnvFunc from a map.
func envMap(m map[string]string) memdir.LookupEnvFunc {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func TestValidateMemoryDir(t *testing.T) {
	t.Parallel()
	home := "/home/u"
	for _, tc := range []struct {
		raw        string
		tilde      bool
		want       string // "" means rejected
		wantReason string
	}{
		{raw: "/srv/memory", want: "/srv/memory/"},
		{raw: "/srv/memory///", want: "/srv/memory/"},
		{raw: "/srv/./a/../memory", want: "/srv/memory/"},
		{raw: "~/notes", tilde: true, want: "/home/u/notes/"},
		{raw: `~\notes`, tilde: true, want: "/home/u/notes/"},
		{raw: "~/notes", tilde: false, wantReason: "not an absolute path"},
		{raw: "~/", tilde: true, wantReason: "below the home directory"},
		{raw: "~/.", tilde: true, wantReason: "below the home directory"},
		{raw: "~/..", tilde: true, wantReason: "below the home directory"},
		{raw: "~/foo/..", tilde: true, wantReason: "below the home directory"},
		{raw: "~", tilde: true, wantReason: "not an absolute path"},
		{raw: "relative/dir", wantReason: "not an absolute path"},
		{raw: "/", wantReason: "not an absolute path"}, // "/" strips to ""
		{raw: "/a", wantReason: "too short"},
		{raw: "/ab", want: "/ab/"},
		{raw: "C:", wantReason: "not an absolute path"},
		{raw: `\\server\share`, wantReason: "UNC"},
		{raw: "//server/share", wantReason: "UNC"},
		{raw: "/srv/me\x00mory", wantReason: "NUL"},
		{raw: "", wantReason: "empty"},
		{raw: "/srv/cafe\u0301", want: "/srv/caf\u00e9/"}, // NFC
	} {
		got, reason := ValidateMemoryDir(tc.raw, tc.tilde, home)
		if got != tc.want {
			t.Errorf("ValidateMemoryDir(%q, %v) = %q (%s), want %q", tc.raw, tc.tilde, got, reason, tc.want)
		}
		if tc.wantReason != "" && !strings.Contains(reason, tc.wantReason) {
			t.Errorf("ValidateMemoryDir(%q) reason = %q, want it to mention %q", tc.raw, reason, tc.wantReason)
		}
	}
}

func writeJSON(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestLocateDefaultAndOverrides(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	proj := t.TempDir()
	proj, _ = filepath.EvalSymlinks(proj)
	policy := filepath.Join(t.TempDir(), "managed.json")
	base := func() map[string]string { return map[string]string{"HOME": home} }
	locate := func(env map[string]string) *Location {
		t.Helper()
		l, err := Locate(&LocateOptions{LookupEnv: envMap(env), Cwd: proj, PolicySettings: policy})
		if err != nil {
			t.Fatal(err)
		}
		return l
	}

	l := locate(base())
	want := filepath.Join(home, ".claude", "projects", SanitizePath(proj, HashBun), "memory") + "/"
	if l.Dir != want || l.Source != SourceDefault {
		t.Fatalf("default Dir = %q (%s), want %q", l.Dir, l.Source, want)
	}
	if l.TeamDir() != want+"team/" {
		t.Errorf("TeamDir = %q", l.TeamDir())
	}

	env := base()
	env["CLAUDE_CONFIG_DIR"] = filepath.Join(home, "cfg")
	if got := locate(env).Dir; !strings.HasPrefix(got, filepath.Join(home, "cfg", "projects")) {
		t.Errorf("with CLAUDE_CONFIG_DIR, Dir = %q", got)
	}
	env["CLAUDE_CODE_REMOTE_MEMORY_DIR"] = "/remote/mem"
	if got := locate(env).Dir; !strings.HasPrefix(got, "/remote/mem/projects/") {
		t.Errorf("with the remote memory dir, Dir = %q", got)
	}

	// The project's checked-in settings may not redirect memory.
	writeJSON(t, filepath.Join(proj, ".claude", "settings.json"), `{"autoMemoryDirectory": "/tmp/evil"}`)
	if l := locate(base()); l.Source != SourceDefault {
		t.Errorf("project settings redirected memory to %q", l.Dir)
	}
	// The user's settings may.
	writeJSON(t, filepath.Join(home, ".claude", "settings.json"), `{"autoMemoryDirectory": "~/my-memory"}`)
	if l := locate(base()); l.Dir != filepath.Join(home, "my-memory")+"/" || l.Source != SourceSetting {
		t.Errorf("user setting: Dir = %q (%s)", l.Dir, l.Source)
	}
	// Local settings beat the user's.
	writeJSON(t, filepath.Join(proj, ".claude", "settings.local.json"), `{"autoMemoryDirectory": "/srv/local-mem"}`)
	if l := locate(base()); l.Dir != "/srv/local-mem/" {
		t.Errorf("local setting: Dir = %q", l.Dir)
	}
	// An invalid first-defined value falls back to the default, not to the
	// next source, as in Claude Code.
	writeJSON(t, filepath.Join(proj, ".claude", "settings.local.json"), `{"autoMemoryDirectory": "~/"}`)
	if l := locate(base()); l.Source != SourceDefault || len(l.Warnings) == 0 {
		t.Errorf("invalid local setting: Dir = %q (%s), warnings %q", l.Dir, l.Source, l.Warnings)
	}
	// The policy file wins over everything but the environment.
	writeJSON(t, policy, `{"autoMemoryDirectory": "/srv/policy-mem"}`)
	if l := locate(base()); l.Dir != "/srv/policy-mem/" {
		t.Errorf("policy setting: Dir = %q", l.Dir)
	}
	env = base()
	env["CLAUDE_COWORK_MEMORY_PATH_OVERRIDE"] = "/srv/cowork"
	if l := locate(env); l.Dir != "/srv/cowork/" || l.Source != SourceEnvOverride {
		t.Errorf("env override: Dir = %q (%s)", l.Dir, l.Source)
	}
	// The env override does not expand a tilde; invalid → next rule.
	env["CLAUDE_COWORK_MEMORY_PATH_OVERRIDE"] = "~/cowork"
	if l := locate(env); l.Dir != "/srv/policy-mem/" {
		t.Errorf("invalid env override: Dir = %q", l.Dir)
	}
	// A broken settings file is a warning naming the file, never a failure.
	writeJSON(t, policy, `{"autoMemoryDirectory": `)
	l = locate(base())
	if len(l.Warnings) == 0 || !strings.Contains(strings.Join(l.Warnings, "\n"), policy) {
		t.Errorf("broken policy file: warnings %q do not name it", l.Warnings)
	}
}

func TestEnableChain(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	proj := t.TempDir()
	policy := filepath.Join(t.TempDir(), "none.json")
	for _, tc := range []struct {
		name    string
		env     map[string]string
		project string // .claude/settings.json content
		user    string
		want    bool
		wantWhy string
	}{
		{name: "default", want: true, wantWhy: "default"},
		{name: "disable truthy", env: map[string]string{"CLAUDE_CODE_DISABLE_AUTO_MEMORY": " Yes "}, want: false},
		{name: "disable 1", env: map[string]string{"CLAUDE_CODE_DISABLE_AUTO_MEMORY": "1"}, want: false},
		{name: "disable falsy beats settings", env: map[string]string{"CLAUDE_CODE_DISABLE_AUTO_MEMORY": "off"}, user: `{"autoMemoryEnabled": false}`, want: true},
		{name: "disable other word is ignored", env: map[string]string{"CLAUDE_CODE_DISABLE_AUTO_MEMORY": "maybe"}, want: true, wantWhy: "default"},
		{name: "simple", env: map[string]string{"CLAUDE_CODE_SIMPLE": "true"}, want: false},
		{name: "remote without dir", env: map[string]string{"CLAUDE_CODE_REMOTE": "1"}, want: false},
		{name: "remote with dir", env: map[string]string{"CLAUDE_CODE_REMOTE": "1", "CLAUDE_CODE_REMOTE_MEMORY_DIR": "/r/m"}, want: true},
		{name: "user setting off", user: `{"autoMemoryEnabled": false}`, want: false},
		{name: "project may opt out", project: `{"autoMemoryEnabled": false}`, user: `{"autoMemoryEnabled": true}`, want: false},
		{name: "setting on", user: `{"autoMemoryEnabled": true}`, want: true, wantWhy: "autoMemoryEnabled=true"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := map[string]string{"HOME": home, "CLAUDE_CONFIG_DIR": filepath.Join(home, tc.name)}
			maps.Copy(env, tc.env)
			p := filepath.Join(proj, tc.name)
			if tc.project != "" {
				writeJSON(t, filepath.Join(p, ".claude", "settings.json"), tc.project)
			} else {
				os.MkdirAll(p, 0o700)
			}
			if tc.user != "" {
				writeJSON(t, filepath.Join(env["CLAUDE_CONFIG_DIR"], "settings.json"), tc.user)
			}
			l, err := Locate(&LocateOptions{LookupEnv: envMap(env), Cwd: p, PolicySettings: policy})
			if err != nil {
				t.Fatal(err)
			}
			if l.Enabled != tc.want {
				t.Errorf("Enabled = %v (%s), want %v", l.Enabled, l.EnabledReason, tc.want)
			}
			if tc.wantWhy != "" && !strings.Contains(l.EnabledReason, tc.wantWhy) {
				t.Errorf("EnabledReason = %q, want it to mention %q", l.EnabledReason, tc.wantWhy)
			}
		})
	}
}

func git(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_SYSTEM=/dev/null",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

func TestCanonicalGitRoot(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	tmp, _ := filepath.EvalSymlinks(t.TempDir())
	main := filepath.Join(tmp, "main")
	os.Mkdir(main, 0o700)
	git(t, main, "init", "-q", "-b", "main")
	git(t, main, "commit", "-q", "--allow-empty", "-m", "init")
	os.MkdirAll(filepath.Join(main, "sub", "deeper"), 0o700)
	wt := filepath.Join(tmp, "wt")
	git(t, main, "worktree", "add", "-q", wt)

	bare := filepath.Join(tmp, "bare.git")
	git(t, tmp, "clone", "-q", "--bare", main, bare)
	bareWt := filepath.Join(tmp, "bare-wt")
	git(t, bare, "worktree", "add", "-q", bareWt)

	// A submodule: its .git file has no commondir.
	sub := filepath.Join(tmp, "submod")
	os.Mkdir(sub, 0o700)
	git(t, sub, "init", "-q", "-b", "main")
	git(t, sub, "commit", "-q", "--allow-empty", "-m", "s")
	git(t, main, "-c", "protocol.file.allow=always", "submodule", "add", "-q", sub, "vendored")

	// A crafted checkout whose .git file points at the main repository's
	// worktree metadata, which does not point back at it.
	forged := filepath.Join(tmp, "forged")
	os.Mkdir(forged, 0o700)
	os.WriteFile(filepath.Join(forged, ".git"), []byte("gitdir: "+filepath.Join(main, ".git", "worktrees", "wt")+"\n"), 0o600)

	for _, tc := range []struct{ name, start, want string }{
		{"main repo", main, main},
		{"subdirectory", filepath.Join(main, "sub", "deeper"), main},
		{"worktree", wt, main},
		{"bare repo worktree", bareWt, bare},
		{"submodule stays itself", filepath.Join(main, "vendored"), filepath.Join(main, "vendored")},
		{"forged gitdir fails the back-link check", forged, forged},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gr, ok := FindGitRoot(tc.start)
			if !ok {
				t.Fatalf("FindGitRoot(%s) found nothing", tc.start)
			}
			if got := CanonicalGitRoot(gr); got != tc.want {
				t.Errorf("CanonicalGitRoot(%s) = %s, want %s", gr, got, tc.want)
			}
		})
	}

	// All worktrees of one repository share one memory directory.
	env := envMap(map[string]string{"HOME": tmp})
	var dirs []string
	for _, start := range []string{main, wt, filepath.Join(main, "sub")} {
		l, err := Locate(&LocateOptions{LookupEnv: env, Cwd: start, PolicySettings: filepath.Join(tmp, "none")})
		if err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, l.Dir)
	}
	if diff := cmp.Diff([]string{dirs[0], dirs[0], dirs[0]}, dirs); diff != "" {
		t.Errorf("worktrees do not share a memory dir (-want +got):\n%s", diff)
	}
}

func TestAgentDirsAndDailyLog(t *testing.T) {
	t.Parallel()
	home := "/home/u"
	proj := t.TempDir()
	proj, _ = filepath.EvalSymlinks(proj)
	l, err := Locate(&LocateOptions{LookupEnv: envMap(map[string]string{"HOME": home}), Cwd: proj, PolicySettings: "/nonexistent"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		agent string
		scope AgentScope
		want  string
	}{
		{"reviewer", ScopeUser, "/home/u/.claude/agent-memory/reviewer/"},
		{"plugin:reviewer", ScopeProject, proj + "/.claude/agent-memory/plugin-reviewer/"},
		{"reviewer", ScopeLocal, proj + "/.claude/agent-memory-local/reviewer/"},
	} {
		got, err := l.AgentDir(tc.agent, tc.scope)
		if err != nil || got != tc.want {
			t.Errorf("AgentDir(%q, %s) = %q, %v; want %q", tc.agent, tc.scope, got, err, tc.want)
		}
	}
	if _, err := l.AgentDir("../evil", ScopeUser); err == nil {
		t.Error("AgentDir accepted a traversal")
	}
	remote, _ := Locate(&LocateOptions{LookupEnv: envMap(map[string]string{"HOME": home, "CLAUDE_CODE_REMOTE_MEMORY_DIR": "/r"}), Cwd: proj, PolicySettings: "/nonexistent"})
	if got, _ := remote.AgentDir("a", ScopeLocal); got != "/r/projects/"+SanitizePath(proj, HashBun)+"/agent-memory-local/a/" {
		t.Errorf("remote local agent dir = %q", got)
	}
}

func TestAutoDreamEnabled(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	proj := t.TempDir()
	env := envMap(map[string]string{"HOME": home})
	opts := &LocateOptions{LookupEnv: env, Cwd: proj, PolicySettings: filepath.Join(t.TempDir(), "none")}
	l, _ := Locate(opts)
	if on, why := l.AutoDreamEnabled(); on || why != "default (off)" {
		t.Errorf("no settings: %v, %q", on, why)
	}
	writeJSON(t, filepath.Join(home, ".claude", "settings.json"), `{"autoDreamEnabled": true}`)
	l, _ = Locate(opts)
	if on, why := l.AutoDreamEnabled(); !on || !strings.Contains(why, "settings.json") {
		t.Errorf("user setting: %v, %q", on, why)
	}
	writeJSON(t, filepath.Join(proj, ".claude", "settings.local.json"), `{"autoDreamEnabled": false}`)
	l, _ = Locate(opts)
	if on, _ := l.AutoDreamEnabled(); on {
		t.Error("the local setting should win over the user's")
	}
}

// TestLocateDetectsTheHashRuntime puts a project under a path longer than 200
// characters and creates its project directory under Bun's hash, Node's, both
// or neither: with DetectRuntime, the one that exists alone wins, otherwise
// Bun's, and Explain says why.
func TestLocateDetectsTheHashRuntime(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	home := filepath.Join(tmp, "home")
	proj := filepath.Join(tmp, strings.Repeat("a-very-long-directory-name/", 9), "proj")
	if err := os.MkdirAll(proj, 0o700); err != nil {
		t.Fatal(err)
	}
	proj, _ = filepath.EvalSymlinks(proj)
	base := filepath.Join(home, ".claude", "projects")
	bunDir := filepath.Join(base, SanitizePath(proj, HashBun))
	nodeDir := filepath.Join(base, SanitizePath(proj, HashNode))
	if bunDir == nodeDir {
		t.Fatal("the project path is too short to be hashed")
	}
	for _, tc := range []struct {
		name        string
		exist       []string
		want        string
		wantExplain string
	}{
		{"neither", nil, bunDir, "neither the Bun nor the Node variant exists"},
		{"node only", []string{nodeDir}, nodeDir, "Node's djb2 hash, Claude Code installed from npm"},
		{"bun only", []string{bunDir}, bunDir, "Bun's hash, the native Claude Code build"},
		{"both", []string{bunDir, nodeDir}, bunDir, "directories exist under both hashes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			os.RemoveAll(base)
			for _, d := range tc.exist {
				if err := os.MkdirAll(d, 0o700); err != nil {
					t.Fatal(err)
				}
			}
			l, err := Locate(&LocateOptions{LookupEnv: envMap(map[string]string{"HOME": home}), Cwd: proj, PolicySettings: "/nonexistent", DetectRuntime: true})
			if err != nil {
				t.Fatal(err)
			}
			if want := filepath.Join(tc.want, "memory") + string(filepath.Separator); l.Dir != want {
				t.Errorf("Dir = %s, want %s", l.Dir, want)
			}
			if got := l.TranscriptDir(); got != tc.want {
				t.Errorf("TranscriptDir = %s, want %s", got, tc.want)
			}
			if explain := strings.Join(l.Explain, "\n"); !strings.Contains(explain, tc.wantExplain) {
				t.Errorf("Explain does not say %q:\n%s", tc.wantExplain, explain)
			}
		})
	}
}
