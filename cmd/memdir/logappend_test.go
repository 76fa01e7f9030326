package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memdir/memdir"
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

// log show prints one run: as text, as the run's JSON record, and an
// unknown id is not found.
func TestLogShow(t *testing.T) {
	w := newMemWorld(t)
	w.ok(t, "log", "append", "first")
	var log logJSON
	if err := json.Unmarshal([]byte(w.ok(t, "log", "--json")), &log); err != nil || len(log.Runs) != 1 {
		t.Fatalf("log --json: %v, %d runs", err, len(log.Runs))
	}
	id := log.Runs[0].ID
	out := w.ok(t, "log", "show", id)
	for _, want := range []string{"run      " + id + "\n", "kind     " + log.Runs[0].Kind + "\n", "files:\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("log show does not say %q:\n%s", want, out)
		}
	}
	var run memdir.JournalRun
	if err := json.Unmarshal([]byte(w.ok(t, "log", "show", id, "--json")), &run); err != nil || run.ID != id || len(run.Files) != 1 {
		t.Errorf("log show --json: %v, %+v", err, run)
	}
	_, errOut, code := w.run(t, "log", "show", "20260101T000000.000000-00000000")
	if want := "memdir log: run \"20260101T000000.000000-00000000\": not found (see 'memdir log')\n"; code != cli.ExitNotFound || errOut != want {
		t.Errorf("log show of an unknown run: exit %d, %q; want %d, %q", code, errOut, cli.ExitNotFound, want)
	}
}
