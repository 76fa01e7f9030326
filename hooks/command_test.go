package hooks

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestIsMemdirHook(t *testing.T) {
	tests := []struct {
		command string
		args    []string
		want    bool
	}{
		{"memdir hook", nil, true},
		{"/usr/local/bin/memdir hook", nil, true},
		{"/usr/local/bin/memdir hook --no-checkpoint --model=anthropic:claude-x", nil, true},
		{"'/opt/my tools/memdir' hook", nil, true},
		{`"/opt/my tools/memdir" hook --inject-index`, nil, true},
		{`/opt/my\ tools/memdir hook`, nil, true},
		{`C:\\Tools\\memdir.exe hook`, nil, true},
		{"MEMDIR_MODEL=none memdir hook", nil, true},
		{"  memdir   hook  ", nil, true},
		{"memdir", []string{"hook", "--no-checkpoint"}, true},
		{"/x/memdir", []string{"hooks"}, false},
		{"memdir hooks install", nil, false},
		{"memdir recall hook", nil, false},
		{"memdir", nil, false},
		{"memdir-dev hook", nil, false},
		{"/x/notmemdir hook", nil, false},
		{"memdir hook | tee /tmp/log", nil, false},
		{"memdir hook > /tmp/out", nil, false},
		{"memdir hook; rm -rf ~", nil, false},
		{"memdir hook && echo ok", nil, false},
		{"$(which memdir) hook", nil, false},
		{"memdir hook 'unterminated", nil, false},
		{"echo memdir hook", nil, false},
		{"/bin/sh -c 'memdir hook'", nil, false},
		{"memdir hook # a comment", nil, false},
		{"memdir hook --tag=a#b", nil, true},
	}
	for _, tt := range tests {
		if got := IsMemdirHook(tt.command, tt.args); got != tt.want {
			t.Errorf("IsMemdirHook(%q, %q) = %t, want %t", tt.command, tt.args, got, tt.want)
		}
	}
}

func TestHookCommand(t *testing.T) {
	tests := []struct {
		binary string
		flags  []string
		want   string
	}{
		{"/usr/local/bin/memdir", nil, "/usr/local/bin/memdir hook"},
		{"memdir", []string{"--no-checkpoint"}, "memdir hook --no-checkpoint"},
		{"/Users/Jo Smith/bin/memdir", nil, "'/Users/Jo Smith/bin/memdir' hook"},
		{"/home/o'brien/memdir", nil, `'/home/o'\''brien/memdir' hook`},
		{"/opt/$HOME/memdir", nil, "'/opt/$HOME/memdir' hook"},
	}
	for _, tt := range tests {
		got := HookCommand(tt.binary, tt.flags...)
		if got != tt.want {
			t.Errorf("HookCommand(%q) = %q, want %q", tt.binary, got, tt.want)
		}
		if !IsMemdirHook(got, nil) {
			t.Errorf("%q is not recognised as memdir's", got)
		}
	}
}

// FuzzShellQuote: a quoted word reads back as itself, so any memdir path
// HookCommand writes is recognised again.
func FuzzShellQuote(f *testing.F) {
	for _, s := range []string{"/usr/bin/memdir", "/a b/memdir", "o'brien", `a"b\c`, "$(x)", "", "\t"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if strings.ContainsAny(s, "\x00") {
			return
		}
		words, ok := shellWords(ShellQuote(s) + " hook --flag")
		if !ok {
			t.Fatalf("shellWords(%q) failed", ShellQuote(s))
		}
		if diff := cmp.Diff([]string{s, "hook", "--flag"}, words); diff != "" {
			t.Fatalf("quoted %q (-want +got):\n%s", ShellQuote(s), diff)
		}
		if IsMemdirHook(HookCommand(s), nil) != IsProgram(s) {
			t.Fatalf("HookCommand(%q) recognised as memdir's: %t, IsProgram: %t", s, !IsProgram(s), IsProgram(s))
		}
	})
}
