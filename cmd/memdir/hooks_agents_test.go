package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/memdir/memdir/hooks"
	"github.com/memdir/memdir/internal/cli"
)

// Configurations as users have them: other keys, their own hooks, their
// own formatting (four spaces, which memdir does not write).
const (
	userCodexConfig = "model = \"gpt-5.5\"\n# my provider\n[model_providers.local]\nbase_url = \"http://127.0.0.1:8080/v1\"\n\n[features]\nplugins = false\n"
	userCodexHooks  = "{\n    \"hooks\": {\n        \"Stop\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"notify-send done\", \"timeout\": 5}]}]\n    }\n}\n"
	userGemini      = "{\n    \"theme\": \"GitHub\",\n    \"general\": {\"enableAutoUpdate\": false},\n    \"hooks\": {\"BeforeAgent\": [{\"hooks\": [{\"name\": \"mine\", \"type\": \"command\", \"command\": \"./mine.sh\"}]}]}\n}\n"
)

// agentFiles returns the files of the agent's configuration in w's home,
// and writes the given contents first ("" leaves a file out).
func agentFiles(t *testing.T, w *memWorld, agent string, contents ...string) []string {
	t.Helper()
	var paths []string
	switch agent {
	case "codex":
		dir := filepath.Join(w.home, "codex-home")
		w.vars["CODEX_HOME"] = dir
		paths = []string{filepath.Join(dir, "hooks.json"), filepath.Join(dir, "config.toml")}
	case "gemini":
		paths = []string{filepath.Join(w.home, ".gemini", "settings.json")}
	}
	for i, c := range contents {
		if c != "" {
			writeFile(t, paths[i], c)
		}
	}
	return paths
}

// snapshotFiles returns each file's content, "(absent)" for a missing one.
func snapshotFiles(paths []string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		b, err := os.ReadFile(p)
		out[i] = string(b)
		if err != nil {
			out[i] = "(absent)"
		}
	}
	return out
}

// TestHooksAgentInstallUninstallByteIdentical: install then uninstall
// leaves each program's configuration as it was, byte for byte, whether
// it was missing or held other keys and hooks; install twice changes
// nothing the second time.
func TestHooksAgentInstallUninstallByteIdentical(t *testing.T) {
	for _, tt := range []struct {
		name, agent string
		contents    []string
	}{
		{"codex, no files", "codex", nil},
		{"codex, config only", "codex", []string{"", userCodexConfig}},
		{"codex, both", "codex", []string{userCodexHooks, userCodexConfig}},
		{"gemini, no file", "gemini", nil},
		{"gemini, other keys and hooks", "gemini", []string{userGemini}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w := newMemWorld(t)
			paths := agentFiles(t, w, tt.agent, tt.contents...)
			before := snapshotFiles(paths)
			out := w.ok(t, "hooks", "install", "--agent", tt.agent, "--binary", testBinary)
			if !strings.Contains(out, "Installed memdir's") || !strings.Contains(out, "Journal run ") {
				t.Errorf("install said:\n%s", out)
			}
			installed := snapshotFiles(paths)
			if again := w.ok(t, "hooks", "install", "--agent", tt.agent, "--binary", testBinary); !strings.Contains(again, "already installed") {
				t.Errorf("second install said:\n%s", again)
			}
			if diff := cmp.Diff(installed, snapshotFiles(paths)); diff != "" {
				t.Errorf("the second install changed the files (-first +second):\n%s", diff)
			}
			out = w.ok(t, "hooks", "uninstall", "--agent", tt.agent)
			if !strings.Contains(out, "byte for byte") {
				t.Errorf("uninstall said:\n%s", out)
			}
			if diff := cmp.Diff(before, snapshotFiles(paths)); diff != "" {
				t.Errorf("after install and uninstall (-before +after):\n%s", diff)
			}
		})
	}
}

// TestHooksCodexInstallWritesTrust: hooks.json gets memdir's handlers
// after the user's, and config.toml a record per handler with the hash
// Codex computes, keyed by the real path of hooks.json.
func TestHooksCodexInstallWritesTrust(t *testing.T) {
	w := newMemWorld(t)
	paths := agentFiles(t, w, "codex", userCodexHooks, userCodexConfig)
	w.ok(t, "hooks", "install", "--agent", "codex", "--binary", testBinary)
	data := snapshotFiles(paths)
	entries, err := hooks.Installed([]byte(data[0]))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Event+" "+e.Matcher+" "+e.Command)
	}
	cmd := testBinary + " hook --agent codex"
	want := []string{"Stop  " + cmd, "SessionStart  " + cmd + " --inject-index", "UserPromptSubmit  " + cmd, "PreToolUse apply_patch " + cmd, "SessionEnd  " + cmd}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("handlers (-want +got):\n%s", diff)
	}
	if !strings.Contains(data[0], `"command": "notify-send done"`) {
		t.Errorf("the user's hook is gone:\n%s", data[0])
	}
	real, _ := filepath.EvalSymlinks(paths[0])
	records, err := hooks.CodexTrustRecords(real, []byte(data[0]))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := hooks.ReadCodexConfig([]byte(data[1]))
	if err != nil {
		t.Fatal(err)
	}
	if len(records) != 5 || records[0].Key != real+":stop:1:0" {
		t.Errorf("records %+v", records)
	}
	for _, r := range records {
		if cfg.Trusted[r.Key] != r.Hash {
			t.Errorf("%s: trusted_hash %q, want %q", r.Key, cfg.Trusted[r.Key], r.Hash)
		}
	}
	if !strings.Contains(data[1], "[features]\nhooks = true # memdir hooks install\nplugins = false\n") || cfg.FeatureHooks == nil || !*cfg.FeatureHooks {
		t.Errorf("config.toml:\n%s", data[1])
	}
	var st hooksStatus
	if err := json.Unmarshal([]byte(w.ok(t, "hooks", "status", "--agent", "codex", "--json")), &st); err != nil {
		t.Fatal(err)
	}
	for _, h := range st.Hooks {
		if h.Trust != "trusted" {
			t.Errorf("status of %s: %q", h.Event, h.Trust)
		}
	}
	// Editing memdir's handler voids its trust: status says so.
	writeFile(t, paths[0], strings.Replace(data[0], `"timeout": 3`, `"timeout": 2`, 1))
	out := w.ok(t, "hooks", "status", "--agent", "codex")
	if !strings.Contains(out, "SessionEnd: "+cmd+" [modified]") || !strings.Contains(out, "warning: Codex skips the SessionEnd hook silently (modified)") {
		t.Errorf("status after an edit:\n%s", out)
	}
	// Install again trusts it again; uninstall then cannot restore bytes
	// (the file changed since), so it removes memdir's parts one by one.
	w.ok(t, "hooks", "install", "--agent", "codex", "--binary", testBinary)
	if out := w.ok(t, "hooks", "uninstall", "--agent", "codex"); strings.Contains(out, "byte for byte") {
		t.Errorf("uninstall claims a restore:\n%s", out)
	}
	after := snapshotFiles(paths)
	if after[1] != userCodexConfig {
		t.Errorf("config.toml after uninstall:\n%s", after[1])
	}
	if es, _ := hooks.Installed([]byte(after[0])); len(es) != 0 || !strings.Contains(after[0], "notify-send done") {
		t.Errorf("hooks.json after uninstall:\n%s", after[0])
	}
}

// TestHooksAgentInstallIsJournaled: 'memdir undo' reverts an install.
func TestHooksAgentInstallIsJournaled(t *testing.T) {
	for agent, contents := range map[string][]string{"codex": {userCodexHooks, userCodexConfig}, "gemini": {userGemini}} {
		t.Run(agent, func(t *testing.T) {
			w := newMemWorld(t)
			paths := agentFiles(t, w, agent, contents...)
			before := snapshotFiles(paths)
			out := w.ok(t, "hooks", "install", "--agent", agent, "--binary", testBinary)
			m := regexp.MustCompile(`Journal run (\S+): 'memdir undo`).FindStringSubmatch(out)
			if m == nil {
				t.Fatalf("no journal run in:\n%s", out)
			}
			if _, errOut, code := w.run(t, "undo", m[1]); code != 0 {
				t.Fatalf("undo: exit %d: %s", code, errOut)
			}
			if diff := cmp.Diff(before, snapshotFiles(paths)); diff != "" {
				t.Errorf("after undo (-before +after):\n%s", diff)
			}
		})
	}
}

func TestHooksAgentScopesAndDryRun(t *testing.T) {
	w := newMemWorld(t)
	w.vars["CODEX_HOME"] = filepath.Join(w.home, "cx")
	out, errOut, code := w.run(t, "hooks", "install", "--agent", "gemini", "--project", "--binary", "memdir", "--dry-run")
	if code != 0 || !strings.Contains(out, `"command": "memdir hook --agent gemini --inject-index"`) || !strings.Contains(errOut, filepath.Join(w.project, ".gemini", "settings.json")+" would be") {
		t.Errorf("dry run: exit %d\n%s\n%s", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(w.project, ".gemini")); !os.IsNotExist(err) {
		t.Errorf("the dry run wrote: %v", err)
	}
	out = w.ok(t, "hooks", "install", "--agent", "codex", "--project", "--binary", testBinary)
	projHooks := filepath.Join(w.project, ".codex", "hooks.json")
	if !strings.Contains(out, "in "+projHooks) || !strings.Contains(out, "Codex reads "+projHooks+" only in a project it trusts") {
		t.Errorf("project install said:\n%s", out)
	}
	cfg, _ := os.ReadFile(filepath.Join(w.home, "cx", "config.toml"))
	if !strings.Contains(string(cfg), projHooks+":session_start:0:0") {
		t.Errorf("no trust record for the project's hooks.json:\n%s", cfg)
	}
	if out := w.ok(t, "hooks", "status", "--agent", "codex", "--project"); !strings.Contains(out, "Codex does not trust "+w.project) {
		t.Errorf("status:\n%s", out)
	}
	w.ok(t, "hooks", "uninstall", "--agent", "codex", "--project")
	if _, err := os.Stat(projHooks); !os.IsNotExist(err) {
		t.Errorf("the project's hooks.json is still there: %v", err)
	}
}

func TestHooksAgentRefuses(t *testing.T) {
	w := newMemWorld(t)
	paths := agentFiles(t, w, "codex")
	tests := []struct {
		name    string
		files   []string // hooks file, Codex config
		args    []string
		code    int
		want    string
		touched bool
	}{
		{"local scope", nil, []string{"install", "--agent", "codex", "--local"}, cli.ExitUsage, "--local is Claude Code's settings.local.json", false},
		{"unknown agent", nil, []string{"install", "--agent", "cursor"}, cli.ExitUsage, "want claude, codex or gemini", false},
		{"invalid TOML", []string{"", "model = \n"}, []string{"install", "--agent", "codex", "--binary", testBinary}, cli.ExitInvalid, "config.toml: not valid TOML", false},
		{"invalid hooks.json", []string{"{\"hooks\": [", ""}, []string{"install", "--agent", "codex", "--binary", testBinary}, cli.ExitInvalid, "hooks.json: not valid JSON", false},
		{"block without its end", []string{"", "# >>> memdir hooks: written by 'memdir hooks install --agent codex'; 'memdir hooks uninstall --agent codex' removes it\n"}, []string{"uninstall", "--agent", "codex"}, cli.ExitInvalid, "has no end line", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, p := range paths {
				os.Remove(p)
			}
			for i, c := range tt.files {
				if c != "" {
					writeFile(t, paths[i], c)
				}
			}
			before := snapshotFiles(paths)
			_, errOut, code := w.run(t, append([]string{"hooks"}, tt.args...)...)
			if code != tt.code || !strings.Contains(errOut, tt.want) {
				t.Errorf("exit %d, %q; want %d and %q", code, errOut, tt.code, tt.want)
			}
			if diff := cmp.Diff(before, snapshotFiles(paths)); diff != "" {
				t.Errorf("files changed (-before +after):\n%s", diff)
			}
		})
	}
}

// TestHooksClaudeStatus: status works for Claude Code's settings too.
func TestHooksClaudeStatus(t *testing.T) {
	w := newMemWorld(t)
	if out := w.ok(t, "hooks", "status"); !strings.Contains(out, "does not exist: no memdir hooks") {
		t.Errorf("status before install:\n%s", out)
	}
	w.ok(t, "hooks", "install", "--binary", testBinary, "--no-checkpoint")
	out := w.ok(t, "hooks", "status")
	if !strings.Contains(out, "UserPromptSubmit: "+testBinary+" hook --no-checkpoint") || strings.Contains(out, "Not installed") {
		t.Errorf("status:\n%s", out)
	}
}

// TestHooksAgentNoProgram: uninstall where the program never was creates
// nothing; install says it made the program's directory.
func TestHooksAgentNoProgram(t *testing.T) {
	w := newMemWorld(t)
	paths := agentFiles(t, w, "codex")
	if out := w.ok(t, "hooks", "uninstall", "--agent", "codex"); !strings.Contains(out, "nothing changed") {
		t.Errorf("uninstall said:\n%s", out)
	}
	if _, err := os.Stat(filepath.Dir(paths[0])); !os.IsNotExist(err) {
		t.Errorf("uninstall created %s: %v", filepath.Dir(paths[0]), err)
	}
	if _, errOut, code := w.run(t, "hooks", "install", "--agent", "codex", "--json"); code != cli.ExitUsage || !strings.Contains(errOut, "--json applies to status only") {
		t.Errorf("install --json: exit %d, %q", code, errOut)
	}
	out := w.ok(t, "hooks", "install", "--agent", "gemini", "--binary", testBinary)
	if !strings.Contains(out, filepath.Join(w.home, ".gemini")+" did not exist, and memdir created it: is Gemini CLI installed") {
		t.Errorf("install said:\n%s", out)
	}
}
