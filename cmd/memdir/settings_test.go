package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/memdir/memdir/internal/cli"
	"github.com/memdir/memdir/locate"
	"github.com/memdir/memdir/memdirtest"
)

func TestSettingsCommand(t *testing.T) {
	w := newMemWorld(t)
	user := filepath.Join(w.home, ".claude", "settings.json")
	projectFile := filepath.Join(w.project, ".claude", "settings.json")

	out := w.ok(t, "settings")
	for _, want := range []string{
		"autoMemoryEnabled  true   default: no environment variable or settings file decides",
		"autoDreamEnabled   false  default: not set in any settings file",
		"'memdir settings set' writes to " + user,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("settings lacks %q:\n%s", want, out)
		}
	}

	original := `{"model":"opus","permissions":{"allow":["Read"]},"cleanupPeriodDays":30}`
	memdirtest.WriteFiles(t, filepath.Dir(user), map[string]string{"settings.json": original})
	out = w.ok(t, "settings", "set", "autoMemoryEnabled=false", "AUTODREAMENABLED=on")
	if !strings.Contains(out, "Updated "+user) || !strings.Contains(out, "Undo with: memdir undo ") {
		t.Errorf("set printed %q", out)
	}
	want := "{\n  \"model\": \"opus\",\n  \"permissions\": {\n    \"allow\": [\n      \"Read\"\n    ]\n  },\n  \"cleanupPeriodDays\": 30,\n  \"autoMemoryEnabled\": false,\n  \"autoDreamEnabled\": true\n}\n"
	if diff := cmp.Diff(want, memdirtest.ReadFile(t, user)); diff != "" {
		t.Errorf("settings.json (-want +got):\n%s", diff)
	}
	if _, err := os.Stat(projectFile); !os.IsNotExist(err) {
		t.Errorf("set touched the project's settings: %v", err)
	}
	var ms locate.MemorySettings
	if err := json.Unmarshal([]byte(w.ok(t, "settings", "--json")), &ms); err != nil {
		t.Fatal(err)
	}
	if ms.AutoMemoryEnabled.Value || ms.AutoMemoryEnabled.Source != "user" || !ms.AutoDreamEnabled.Value || ms.AutoDreamEnabled.Path != user {
		t.Errorf("settings --json = %+v", ms)
	}
	// The change is a journal run of the project's memory directory.
	if log := w.ok(t, "log"); !strings.Contains(log, "settings: autoMemoryEnabled, autoDreamEnabled") {
		t.Errorf("log lacks the settings run:\n%s", log)
	}
	if out := w.ok(t, "settings", "set", "autoMemoryEnabled=false"); !strings.Contains(out, "nothing changed") {
		t.Errorf("a second identical set printed %q", out)
	}

	// A higher-priority source keeps deciding: set says so.
	memdirtest.WriteFiles(t, filepath.Dir(projectFile), map[string]string{"settings.json": `{"autoMemoryEnabled": false}`})
	_, errOut, code := w.run(t, "settings", "set", "autoMemoryEnabled=true")
	if code != 0 || !strings.Contains(errOut, "note: autoMemoryEnabled is still false: project settings "+projectFile) {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
	if got := memdirtest.ReadFile(t, projectFile); got != `{"autoMemoryEnabled": false}` {
		t.Errorf("the project's file changed: %q", got)
	}
	w.ok(t, "settings", "set", "autoDreamEnabled=unset")
	if got := memdirtest.ReadFile(t, user); strings.Contains(got, "autoDreamEnabled") {
		t.Errorf("unset left the key: %s", got)
	}

	// A broken user file is named and left alone.
	broken := "{\n  \"model\": \"opus\",\n}\n"
	memdirtest.WriteFiles(t, filepath.Dir(user), map[string]string{"settings.json": broken})
	_, errOut, code = w.run(t, "settings", "set", "autoDreamEnabled=true")
	if code != cli.ExitInvalid || !strings.Contains(errOut, user) || !strings.Contains(errOut, "not valid JSON") {
		t.Errorf("broken file: exit %d, %q", code, errOut)
	}
	if got := memdirtest.ReadFile(t, user); got != broken {
		t.Errorf("the broken file changed: %q", got)
	}
	if _, errOut, _ := w.run(t, "settings"); !strings.Contains(errOut, "warning: the user settings are ignored") {
		t.Errorf("settings does not warn about the broken file: %q", errOut)
	}

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"settings", "set"}, "needs KEY=VALUE"},
		{[]string{"settings", "set", "autoMemoryEnabled"}, "is not KEY=VALUE"},
		{[]string{"settings", "set", "model=opus"}, "memdir sets only autoMemoryEnabled and autoDreamEnabled"},
		{[]string{"settings", "set", "autoMemoryEnabled=maybe"}, "want true, false or unset"},
		{[]string{"settings", "set", "autoMemoryEnabled=1", "autoMemoryEnabled=0"}, "given twice"},
		{[]string{"settings", "frob"}, "set KEY=VALUE"},
	} {
		_, errOut, code := w.run(t, tc.args...)
		if code != cli.ExitUsage || !strings.Contains(errOut, tc.want) {
			t.Errorf("memdir %s: exit %d, %q; want usage error %q", strings.Join(tc.args, " "), code, errOut, tc.want)
		}
	}
}

func TestSettingsCommandEnvironment(t *testing.T) {
	w := newMemWorld(t)
	w.vars["CLAUDE_CONFIG_DIR"] = filepath.Join(w.home, "cfg")
	w.vars["CLAUDE_CODE_SIMPLE"] = "1"
	_, errOut, code := w.run(t, "settings", "set", "autoMemoryEnabled=true")
	if code != 0 || !strings.Contains(errOut, "autoMemoryEnabled is still false: environment: CLAUDE_CODE_SIMPLE") {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
	if got := memdirtest.ReadFile(t, filepath.Join(w.home, "cfg", "settings.json")); got != "{\n  \"autoMemoryEnabled\": true\n}\n" {
		t.Errorf("CLAUDE_CONFIG_DIR settings = %q", got)
	}
}
