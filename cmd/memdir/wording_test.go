package main

import (
	"strings"
	"testing"

	"github.com/memdir/memdir/internal/cli"
)

// TestErrorWording checks messages that once leaked a sentinel's or a
// command's label, or left the user to guess what was missing.
func TestErrorWording(t *testing.T) {
	w := newMemWorld(t)
	w.ok(t, "save", "--name", "a", "--description", "first", "--type", "user", "--body", "A.")
	w.ok(t, "save", "--name", "b", "--description", "second", "--type", "user", "--body", "B.")
	for _, tt := range []struct {
		args     []string
		code     int
		want     string
		unwanted string
	}{
		{[]string{"log", "show", "2"}, cli.ExitInvalid, `run id "2" is ambiguous: it starts 2 runs (`, ": invalid"},
		{[]string{"completion", "tcsh"}, cli.ExitUsage, `memdir completion: unknown shell "tcsh": want bash, zsh or fish`, "completion: completion:"},
		{[]string{"save", "--name", "x"}, cli.ExitUsage, "save needs --description and --type", ""},
		{[]string{"save", "--name", "x", "--type", "user"}, cli.ExitUsage, "save needs --description (", ""},
		{[]string{"save", "--description", "d"}, cli.ExitUsage, "save needs --name and --type", ""},
	} {
		_, errOut, code := w.run(t, tt.args...)
		if code != tt.code || !strings.Contains(errOut, tt.want) || tt.unwanted != "" && strings.Contains(errOut, tt.unwanted) {
			t.Errorf("memdir %s: exit %d, printed:\n%s\nwant exit %d and %q", strings.Join(tt.args, " "), code, errOut, tt.code, tt.want)
		}
	}
}

// TestDoctorIndexOverLimitWording checks that the finding does not name
// MEMORY.md twice ("MEMORY.md: MEMORY.md has …").
func TestDoctorIndexOverLimitWording(t *testing.T) {
	w := newMemWorld(t)
	w.ok(t, "save", "--name", "a", "--description", "first", "--type", "user", "--body", "A.")
	dir := w.memDir(t)
	var b strings.Builder
	for range 205 {
		b.WriteString("- [a](a.md) — first\n")
	}
	writeFile(t, dir+"/MEMORY.md", b.String())
	out, _, _ := w.run(t, "doctor")
	if strings.Contains(out, "MEMORY.md: MEMORY.md") || !strings.Contains(out, "MEMORY.md: the index has 205 lines; only the first 200 are loaded") {
		t.Errorf("doctor printed:\n%s", out)
	}
}

// TestHookBadStdinNotEchoed checks that a hook input of bad bytes is
// described by escapes, never printed raw (nor as the Latin-1 character
// encoding/json shows for a byte).
func TestHookBadStdinNotEchoed(t *testing.T) {
	w := newMemWorld(t)
	for _, in := range []string{"\x1b[2J\xff\x01garbage", "{\"a\": \xff\x1b[31m}", "{\"a\": \x1b}"} {
		w.stdin = in
		_, errOut, code := w.run(t, "hook")
		if code != cli.ExitFailure || strings.ContainsAny(errOut, "\x1b\x01ÿ") || strings.Contains(errOut, "\xff") || !strings.Contains(errOut, `\x`) {
			t.Errorf("hook < %q: exit %d, printed %q", in, code, errOut)
		}
	}
}
