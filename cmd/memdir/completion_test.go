package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memdir/memdir/internal/cli"
)

// TestCompletionBash loads the generated bash script into a real bash and
// asks it to complete commands and flags.
func TestCompletionBash(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Fatalf("bash is needed to test the bash completion: %v", err)
	}
	w := newMemWorld(t)
	script := filepath.Join(t.TempDir(), "memdir.bash")
	if err := os.WriteFile(script, []byte(w.ok(t, "completion", "bash")), 0o600); err != nil {
		t.Fatal(err)
	}
	complete := func(words ...string) string {
		t.Helper()
		prog := `source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(( $# - 1 )); _memdir; printf '%s\n' "${COMPREPLY[@]}"`
		out, err := exec.Command(bash, append([]string{"-c", prog, "bash", script}, words...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("bash: %v\n%s", err, out)
		}
		return string(out)
	}
	if got := complete("memdir", "sa"); got != "save\n" {
		t.Errorf("memdir sa<TAB> = %q, want save", got)
	}
	if got := complete("memdir", "comp"); got != "completion\n" {
		t.Errorf("memdir comp<TAB> = %q", got)
	}
	if got := complete("memdir", "save", "--desc"); got != "--description\n" {
		t.Errorf("memdir save --desc<TAB> = %q, want --description", got)
	}
	if got := complete("memdir", "doctor", "--"); !strings.Contains(got, "--fix\n") || !strings.Contains(got, "--compact\n") || strings.Contains(got, "--description") {
		t.Errorf("memdir doctor --<TAB> = %q", got)
	}
}

// TestCompletionScripts checks that every shell's script names every command
// and each command's flags, as the command table has them.
func TestCompletionScripts(t *testing.T) {
	w := newMemWorld(t)
	scripts := map[string]string{}
	for _, sh := range []string{"bash", "zsh", "fish"} {
		scripts[sh] = w.ok(t, "completion", sh)
	}
	for _, c := range completionSpec() {
		for sh, s := range scripts {
			if !strings.Contains(s, c.name) {
				t.Errorf("%s completion lacks the command %s", sh, c.name)
			}
		}
		for _, f := range c.flags {
			if !strings.Contains(scripts["zsh"], "'--"+f.name+"[") {
				t.Errorf("zsh completion lacks %s --%s", c.name, f.name)
			}
			if !strings.Contains(scripts["fish"], "'__fish_seen_subcommand_from "+c.name+"' -l "+f.name+" ") {
				t.Errorf("fish completion lacks %s --%s", c.name, f.name)
			}
		}
	}
	if !strings.Contains(scripts["zsh"], "'--description[one line that says when the memory is relevant (required)]:description:_files'") {
		t.Errorf("zsh completion does not describe save --description as taking a value")
	}
	if !strings.Contains(scripts["fish"], "-l fix -d ") || strings.Contains(scripts["fish"], "-l fix -r") {
		t.Errorf("fish completion treats doctor --fix as taking a value")
	}
	for _, sh := range []string{"zsh", "fish"} {
		if path, err := exec.LookPath(sh); err == nil {
			f := filepath.Join(t.TempDir(), "script")
			os.WriteFile(f, []byte(scripts[sh]), 0o600)
			if out, err := exec.Command(path, "-n", f).CombinedOutput(); err != nil {
				t.Errorf("%s -n: %v\n%s", sh, err, out)
			}
		} else {
			t.Logf("%s is not installed: its script is checked by content only", sh)
		}
	}
	if _, _, code := w.run(t, "completion", "powershell"); code != cli.ExitUsage {
		t.Errorf("unknown shell: exit %d, want %d", code, cli.ExitUsage)
	}
}
