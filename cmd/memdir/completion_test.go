package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
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
	for _, tt := range []struct {
		words []string
		want  string
	}{
		{[]string{"memdir", "sync", ""}, "pull\npush\nstatus\nwatch\nresolve\n"},
		{[]string{"memdir", "sync", "p"}, "pull\npush\n"},
		{[]string{"memdir", "sync", "--url", "http://x", "pu"}, "pull\npush\n"},
		{[]string{"memdir", "checkpoint", "re"}, "rewind\nresume\n"},
		{[]string{"memdir", "hooks", "i"}, "install\n"},
		{[]string{"memdir", "completion", "z"}, "zsh\n"},
		{[]string{"memdir", "save", "--type", ""}, "user\nfeedback\nproject\nreference\n"},
		{[]string{"memdir", "save", "--type", "f"}, "feedback\n"},
		{[]string{"memdir", "list", "-type", "n"}, "none\n"},
		{[]string{"memdir", "list", "--sort", "u"}, "used\nunused\n"},
		{[]string{"memdir", "show", "--scope", "l"}, "local\n"},
		{[]string{"memdir", "hooks", "install", "--agent", "c"}, "claude\ncodex\n"},
	} {
		if got := complete(tt.words...); got != tt.want {
			t.Errorf("%s<TAB> = %q, want %q", strings.Join(tt.words, " "), got, tt.want)
		}
	}

	// Memory names come from 'memdir completion names', run as the
	// command line's own program (a stand-in here, which says what it
	// was asked).
	stub := filepath.Join(t.TempDir(), "memdir")
	if err := os.WriteFile(stub, []byte("#!/bin/sh\necho \"$*\" > \"$0.args\"\nprintf 'feedback_testing\\nteam/oncall\\nuser_role\\n'\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		words    []string
		want     string
		wantArgs string
	}{
		{[]string{stub, "show", ""}, "feedback_testing\nteam/oncall\nuser_role\n", "completion names\n"},
		{[]string{stub, "rm", "--dir", "/tmp/m", "u"}, "user_role\n", "completion names --dir /tmp/m\n"},
		{[]string{stub, "mv", "user_role", "t"}, "team/oncall\n", "completion names\n"},
		{[]string{stub, "edit", "--type", "user", "fe"}, "feedback_testing\n", "completion names\n"},
	} {
		if got := complete(tt.words...); got != tt.want {
			t.Errorf("%s<TAB> = %q, want %q", strings.Join(tt.words[1:], " "), got, tt.want)
		}
		if args, _ := os.ReadFile(stub + ".args"); string(args) != tt.wantArgs {
			t.Errorf("%s<TAB> ran memdir %q, want %q", strings.Join(tt.words[1:], " "), args, tt.wantArgs)
		}
	}
}

// TestCompletionNames checks 'memdir completion names': the memories of
// the directory, as show takes them.
func TestCompletionNames(t *testing.T) {
	w := newMemWorld(t)
	w.ok(t, "save", "--name", "testing policy", "--description", "d", "--type", "feedback", "--body", "B.")
	w.ok(t, "save", "--team", "--name", "oncall", "--description", "d", "--type", "project", "--body", "B.")
	got := strings.Split(strings.TrimSpace(w.ok(t, "completion", "names")), "\n")
	slices.Sort(got)
	if want := []string{"feedback_testing_policy", "team/project_oncall"}; !slices.Equal(got, want) {
		t.Errorf("completion names = %q, want %q", got, want)
	}
	for _, n := range got {
		w.ok(t, "show", n)
	}
	if out := newMemWorld(t).ok(t, "completion", "names"); out != "" {
		t.Errorf("completion names before the first save = %q", out)
	}
}

// TestCompletionSubcommands checks the subcommands completion offers
// against each command's usage line, and that every flag whose values it
// knows exists.
func TestCompletionSubcommands(t *testing.T) {
	for name, subs := range completionSubcommands {
		c, ok := commands[name]
		if !ok {
			t.Errorf("completionSubcommands names %s, which is no command", name)
			continue
		}
		for _, s := range subs {
			if !regexp.MustCompile(`(^|[\s|\[])` + s + `([\s|\]]|$)`).MatchString(c.Args) {
				t.Errorf("%s: subcommand %s is not in the usage %q", name, s, c.Args)
			}
		}
	}
	for _, c := range commandList {
		if first := strings.Fields(c.Args + " x")[0]; strings.Contains(first, "|") && !strings.HasPrefix(first, "[") && !strings.HasPrefix(first, "-") && completionSubcommands[c.Name] == nil {
			t.Errorf("%s takes subcommands (%s) that completion does not offer", c.Name, first)
		}
	}
	declared := map[string]bool{}
	for _, c := range completionSpec() {
		for _, f := range c.flags {
			declared[f.name], declared[c.name+" --"+f.name] = true, true
		}
	}
	for k := range completionValues {
		if !declared[k] {
			t.Errorf("completionValues has values for %s, which no command declares", k)
		}
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
	if !strings.Contains(scripts["zsh"], "'--sort[") || !strings.Contains(scripts["zsh"], ":sort:(new used unused)'") || !strings.Contains(scripts["zsh"], "'*:memory:_memdir_names'") || !strings.Contains(scripts["zsh"], "'1:subcommand:(pull push status watch resolve)'") {
		t.Errorf("zsh completion lacks flag values, memory names or subcommands")
	}
	if !strings.Contains(scripts["fish"], "-l type -r -f -a 'user feedback project reference none'") || !strings.Contains(scripts["fish"], "-a '(__memdir_names)'") || !strings.Contains(scripts["fish"], "-f -a 'pull push status watch resolve'") {
		t.Errorf("fish completion lacks flag values, memory names or subcommands")
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
