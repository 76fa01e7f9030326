package main

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memdir/memdir/internal/cli"
	"github.com/memdir/memdir/memdirtest"
)

func TestLogAppend(t *testing.T) {
	w := newMemWorld(t)
	zone := time.FixedZone("UTC+8", 8*3600)
	// 23:59 on the last day of November in UTC+8, then just past midnight.
	w.now = time.Date(2026, 11, 30, 23, 59, 0, 0, zone)
	out := w.ok(t, "log", "append", "user", "prefers", "tabs")
	first := filepath.Join(w.memDir(t), "logs", "2026", "11", "2026-11-30.md")
	if out != first+"\n" {
		t.Errorf("printed %q, want %q", out, first)
	}
	w.now = w.now.Add(2 * time.Minute)
	w.stdin, w.stdinTerminal = "deploys go through Argo,\nnever kubectl\n", false
	out = w.ok(t, "log", "append", "--json")
	second := filepath.Join(w.memDir(t), "logs", "2026", "12", "2026-12-01.md")
	if want := "{\n  \"path\": \"" + second + "\"\n}\n"; out != want {
		t.Errorf("printed %q, want %q", out, want)
	}
	if got := memdirtest.ReadFile(t, first); got != "- 23:59 user prefers tabs\n" {
		t.Errorf("first log = %q", got)
	}
	if got := memdirtest.ReadFile(t, second); got != "- 00:01 deploys go through Argo, never kubectl\n" {
		t.Errorf("second log = %q", got)
	}
	// Each append is one journal run.
	if n := w.runCount(t); n != 2 {
		t.Errorf("the journal has %d runs after two appends, want 2", n)
	}

	w.stdin, w.stdinTerminal = "", true
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"log", "append"}, cli.ExitUsage, "needs the text"},
		{[]string{"log", "append", " "}, cli.ExitInvalid, "nothing to append"},
		{[]string{"log", "frob"}, cli.ExitUsage, "append TEXT"},
	} {
		_, errOut, code := w.run(t, tc.args...)
		if code != tc.code || !strings.Contains(errOut, tc.want) {
			t.Errorf("memdir %s: exit %d, %q; want %d and %q", strings.Join(tc.args, " "), code, errOut, tc.code, tc.want)
		}
	}
}
