package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memdir/memdir/internal/cli"
)

// TestAutoMemoryOffIsHonoured turns auto memory off both ways Claude Code
// knows and checks that save, recall and mcp refuse with exit 8 naming the
// setting, write nothing, and still work on an explicit --dir.
func TestAutoMemoryOffIsHonoured(t *testing.T) {
	save := []string{"save", "--name", "n", "--type", "user", "--description", "d", "--body", "b"}
	commands := map[string][]string{
		"save":   save,
		"recall": {"recall", "--no-model", "what is n?"},
		"mcp":    {"mcp", "--no-model"},
	}
	for _, how := range []string{"env", "settings"} {
		for name, args := range commands {
			t.Run(how+"/"+name, func(t *testing.T) {
				w := newMemWorld(t)
				want := "CLAUDE_CODE_DISABLE_AUTO_MEMORY=1"
				if how == "env" {
					w.vars["CLAUDE_CODE_DISABLE_AUTO_MEMORY"] = "1"
				} else {
					settings := filepath.Join(w.home, ".claude", "settings.json")
					if err := os.MkdirAll(filepath.Dir(settings), 0o700); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(settings, []byte(`{"autoMemoryEnabled": false}`), 0o600); err != nil {
						t.Fatal(err)
					}
					want = "autoMemoryEnabled=false in " + settings
				}
				out, errOut, code := w.run(t, args...)
				if code != cli.ExitDisabled {
					t.Errorf("exit %d, want %d\nstdout: %s\nstderr: %s", code, cli.ExitDisabled, out, errOut)
				}
				if !strings.Contains(errOut, want) || !strings.Contains(errOut, "--dir") {
					t.Errorf("stderr does not name %q and --dir: %s", want, errOut)
				}
				if _, err := os.Stat(w.memDir(t)); !os.IsNotExist(err) {
					t.Errorf("the memory directory was created: %v", err)
				}
				// An explicit directory is the user's choice.
				dir := filepath.Join(t.TempDir(), "mine")
				if name != "save" {
					w.ok(t, append(save, "--dir", dir)...)
				}
				w.ok(t, append(args, "--dir", dir)...)
			})
		}
	}
}
