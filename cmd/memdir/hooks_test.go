package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/hooks"
	"github.com/memdir/memdir/internal/cli"
)

// testBinary is the memdir the installed hooks run in these tests.
const testBinary = "/opt/memdir/bin/memdir"

func readTestdata(tb testing.TB, name string) []byte {
	tb.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "hooks", name))
	if err != nil {
		tb.Fatal(err)
	}
	return data
}

func compactJSON(tb testing.TB, data []byte) string {
	tb.Helper()
	c, err := hooks.Compact(data)
	if err != nil {
		tb.Fatalf("not JSON: %v\n%s", err, data)
	}
	return string(c)
}

// memdirHandlers lists event: command (timeout) of the memdir handlers of a
// settings file, in order.
func memdirHandlers(tb testing.TB, data []byte) []string {
	tb.Helper()
	var s struct {
		Hooks map[string][]struct {
			Matcher string `json:"matcher"`
			Hooks   []struct {
				Command string `json:"command"`
				Timeout int    `json:"timeout"`
			} `json:"hooks"`
		} `json:"hooks"`
	}
	if err := json.Unmarshal(data, &s); err != nil {
		tb.Fatal(err)
	}
	var out []string
	for _, ev := range []string{"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop", "SessionEnd"} {
		for _, g := range s.Hooks[ev] {
			for _, h := range g.Hooks {
				if hooks.IsMemdirHook(h.Command, nil) {
					m := ""
					if g.Matcher != "" {
						m = " [" + g.Matcher + "]"
					}
					out = append(out, fmt.Sprintf("%s%s: %s (%ds)", ev, m, h.Command, h.Timeout))
				}
			}
		}
	}
	return out
}

func TestHooksInstallKeepsEverythingElse(t *testing.T) {
	w := newMemWorld(t)
	settings := filepath.Join(w.home, ".claude", "settings.json")
	original := readTestdata(t, "settings_with_hooks.json")
	writeFile(t, settings, string(original))
	if err := os.Chmod(settings, 0o640); err != nil {
		t.Fatal(err)
	}

	out := w.ok(t, "hooks", "install", "--binary", testBinary)
	if !strings.Contains(out, "Installed memdir hooks in "+settings+" (added: PreToolUse, UserPromptSubmit, SessionStart, Stop, SessionEnd)") ||
		!strings.Contains(out, "The previous file is saved as "+settings+".bak") {
		t.Errorf("install printed:\n%s", out)
	}
	installed, _ := os.ReadFile(settings)
	want := []string{
		"SessionStart: /opt/memdir/bin/memdir hook (10s)",
		"UserPromptSubmit: /opt/memdir/bin/memdir hook (10s)",
		"PreToolUse [Edit|Write|MultiEdit|NotebookEdit]: /opt/memdir/bin/memdir hook (10s)",
		"Stop: /opt/memdir/bin/memdir hook (10s)",
		"SessionEnd: /opt/memdir/bin/memdir hook (1s)",
	}
	if diff := cmp.Diff(want, memdirHandlers(t, installed)); diff != "" {
		t.Errorf("memdir handlers (-want +got):\n%s", diff)
	}
	// Everything else is as it was, in order: the key order of the file,
	// the user's handlers first in their events, numbers as written.
	for _, s := range []string{`"cleanupPeriodDays": 1e2`, `"RATIO": 1.50`, `"command": "echo \"<now>$(date)</now>\""`, `"statusMessage": "stamping"`} {
		if !strings.Contains(string(installed), s) {
			t.Errorf("installed file lost %s:\n%s", s, installed)
		}
	}
	keys := regexp.MustCompile(`(?m)^  "([^"]+)"`).FindAllStringSubmatch(string(installed), -1)
	var got []string
	for _, k := range keys {
		got = append(got, k[1])
	}
	if diff := cmp.Diff([]string{"$schema", "model", "permissions", "env", "hooks", "cleanupPeriodDays", "autoMemoryEnabled"}, got); diff != "" {
		t.Errorf("top-level keys (-want +got):\n%s", diff)
	}
	if fi, _ := os.Stat(settings); fi.Mode().Perm() != 0o640 {
		t.Errorf("mode %v, want 0640 kept", fi.Mode().Perm())
	}
	if bak, _ := os.ReadFile(settings + ".bak"); string(bak) != string(original) {
		t.Errorf("backup is not the original:\n%s", bak)
	}

	// Idempotent: a second install changes nothing, not even formatting.
	if out := w.ok(t, "hooks", "install", "--binary", testBinary); !strings.Contains(out, "already installed") {
		t.Errorf("second install printed:\n%s", out)
	}
	if again, _ := os.ReadFile(settings); string(again) != string(installed) {
		t.Errorf("second install changed the file:\n%s", again)
	}

	// Uninstall gives the original back, up to formatting.
	out = w.ok(t, "hooks", "uninstall")
	if !strings.Contains(out, "Removed memdir hooks from "+settings) {
		t.Errorf("uninstall printed:\n%s", out)
	}
	after, _ := os.ReadFile(settings)
	if diff := cmp.Diff(compactJSON(t, original), compactJSON(t, after)); diff != "" {
		t.Errorf("after uninstall (-original +got):\n%s", diff)
	}
	if out := w.ok(t, "hooks", "uninstall"); !strings.Contains(out, "No memdir hooks in") {
		t.Errorf("second uninstall printed:\n%s", out)
	}
}

func TestHooksInstallUpdatesOldEntries(t *testing.T) {
	w := newMemWorld(t)
	settings := filepath.Join(w.project, ".claude", "settings.local.json")
	writeFile(t, settings, string(readTestdata(t, "settings_with_old_memdir.json")))
	w.ok(t, "hooks", "install", "--local", "--no-checkpoint", "--binary", "/opt/memdir tools/memdir")
	got, _ := os.ReadFile(settings)
	if diff := cmp.Diff(compactJSON(t, readTestdata(t, "settings_with_old_memdir.installed.json")), compactJSON(t, got)); diff != "" {
		t.Errorf("installed (-want +got):\n%s", diff)
	}
	// Switching checkpoints back on adds PreToolUse and drops the flag.
	w.ok(t, "hooks", "install", "--local", "--binary", "/opt/memdir tools/memdir")
	got, _ = os.ReadFile(settings)
	want := []string{
		"SessionStart: '/opt/memdir tools/memdir' hook (10s)",
		"UserPromptSubmit: '/opt/memdir tools/memdir' hook (10s)",
		"PreToolUse [Edit|Write|MultiEdit|NotebookEdit]: '/opt/memdir tools/memdir' hook (10s)",
		"Stop: '/opt/memdir tools/memdir' hook (10s)",
		"SessionEnd: '/opt/memdir tools/memdir' hook (1s)",
	}
	if diff := cmp.Diff(want, memdirHandlers(t, got)); diff != "" {
		t.Errorf("memdir handlers (-want +got):\n%s", diff)
	}
	// Uninstall keeps the user's handler and key, and the group they share.
	w.ok(t, "hooks", "uninstall", "--local")
	got, _ = os.ReadFile(settings)
	if diff := cmp.Diff(`{"hooks":{"UserPromptSubmit":[{"hooks":[{"type":"command","command":"echo hi"}]}]},"theme":"dark"}`, compactJSON(t, got)); diff != "" {
		t.Errorf("after uninstall (-want +got):\n%s", diff)
	}
}

func TestHooksInstallScopesAndDryRun(t *testing.T) {
	w := newMemWorld(t)
	// --dry-run prints the file and writes nothing.
	out := w.ok(t, "hooks", "install", "--project", "--binary", "memdir", "--inject-index", "--dry-run")
	want := `{
  "hooks": {
    "SessionStart": [
      {
        "hooks": [
          {
            "type": "command",
            "command": "memdir hook --inject-index",
            "timeout": 10
          }
        ]
      }
    ],
    "UserPromptSubmit": [
      {
        "hooks": [
          {
            "type": "command",
            "command": "memdir hook",
            "timeout": 10
          }
        ]
      }
    ],
    "PreToolUse": [
      {
        "matcher": "Edit|Write|MultiEdit|NotebookEdit",
        "hooks": [
          {
            "type": "command",
            "command": "memdir hook",
            "timeout": 10
          }
        ]
      }
    ],
    "Stop": [
      {
        "hooks": [
          {
            "type": "command",
            "command": "memdir hook",
            "timeout": 10
          }
        ]
      }
    ],
    "SessionEnd": [
      {
        "hooks": [
          {
            "type": "command",
            "command": "memdir hook",
            "timeout": 1
          }
        ]
      }
    ]
  }
}
`
	if diff := cmp.Diff(want, out); diff != "" {
		t.Errorf("dry run (-want +got):\n%s", diff)
	}
	if _, err := os.Stat(filepath.Join(w.project, ".claude")); !os.IsNotExist(err) {
		t.Errorf("dry run created .claude: %v", err)
	}

	// A new file is created 0600, with no backup.
	w.ok(t, "hooks", "install", "--project", "--binary", "memdir")
	p := filepath.Join(w.project, ".claude", "settings.json")
	if data, _ := os.ReadFile(p); strings.Count(string(data), `"command": "memdir hook"`) != 5 {
		t.Errorf("project settings:\n%s", data)
	}
	if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("new settings file: %v %v", fi, err)
	}
	if _, err := os.Stat(p + ".bak"); !os.IsNotExist(err) {
		t.Errorf("backup of a file that did not exist: %v", err)
	}
	// The user's settings were not touched.
	if _, err := os.Stat(filepath.Join(w.home, ".claude", "settings.json")); !os.IsNotExist(err) {
		t.Errorf("user settings written: %v", err)
	}
}

func TestHooksInstallIsJournaled(t *testing.T) {
	w := newMemWorld(t)
	settings := filepath.Join(w.home, ".claude", "settings.json")
	writeFile(t, settings, `{"theme": "light"}`)
	out := w.ok(t, "hooks", "install", "--binary", testBinary)
	m := regexp.MustCompile(`Journal run (\S+)\. Remove them with: memdir hooks uninstall\n`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no journal run in:\n%s", out)
	}
	d, err := memdir.Open(w.memDir(t), &memdir.Options{LookupEnv: func(k string) (string, bool) { v, ok := w.vars[k]; return v, ok }})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Undo(context.Background(), m[1], nil); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(settings); string(data) != `{"theme": "light"}` {
		t.Errorf("after undo: %s", data)
	}
}

func TestHooksInstallRefuses(t *testing.T) {
	w := newMemWorld(t)
	settings := filepath.Join(w.home, ".claude", "settings.json")
	invalid := readTestdata(t, "settings_invalid.json")
	tests := []struct {
		name    string
		content string
		args    []string
		code    int
		want    string
	}{
		{"invalid JSON", string(invalid), []string{"install", "--binary", testBinary}, cli.ExitInvalid, "settings file " + settings + ": not valid JSON: line 5"},
		{"invalid JSON, uninstall", string(invalid), []string{"uninstall"}, cli.ExitInvalid, "memdir leaves it untouched"},
		{"invalid JSON, dry run", string(invalid), []string{"install", "--binary", testBinary, "--dry-run"}, cli.ExitInvalid, "not valid JSON"},
		{"not an object", `["hooks"]`, []string{"install", "--binary", testBinary}, cli.ExitInvalid, "not a JSON object (it is an array)"},
		{"hooks not an object", `{"hooks": []}`, []string{"install", "--binary", testBinary}, cli.ExitInvalid, "key hooks: not a JSON object"},
		{"event not an array", `{"hooks": {"Stop": {}}}`, []string{"uninstall"}, cli.ExitInvalid, "key hooks.Stop: not a JSON array"},
		{"hooks twice", `{"hooks": {}, "hooks": {}}`, []string{"install", "--binary", testBinary}, cli.ExitInvalid, "key hooks appears twice"},
		{"binary not named memdir", `{}`, []string{"install", "--binary", "/usr/bin/md"}, cli.ExitInvalid, "is not named memdir"},
		{"two scopes", `{}`, []string{"install", "--user", "--local"}, cli.ExitUsage, "choose one of"},
		{"install flag on uninstall", `{}`, []string{"uninstall", "--no-checkpoint"}, cli.ExitUsage, "apply to install only"},
		{"no action", `{}`, nil, cli.ExitUsage, "hooks needs one of install, uninstall"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			writeFile(t, settings, tt.content)
			out, errOut, code := w.run(t, append([]string{"hooks"}, tt.args...)...)
			if code != tt.code || !strings.Contains(errOut, tt.want) {
				t.Errorf("exit %d, stderr %q; want exit %d and %q (stdout %q)", code, errOut, tt.code, tt.want, out)
			}
			if data, _ := os.ReadFile(settings); string(data) != tt.content {
				t.Errorf("the file was changed:\n%s", data)
			}
			if _, err := os.Stat(settings + ".bak"); !os.IsNotExist(err) {
				t.Errorf("a backup was written: %v", err)
			}
		})
	}
}
