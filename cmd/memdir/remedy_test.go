package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/checkpoint"
	"github.com/memdir/memdir/config"
	"github.com/memdir/memdir/config/provider"
	"github.com/memdir/memdir/internal/cli"
	"github.com/memdir/memdir/promote"
	"github.com/memdir/memdir/review"
	"github.com/memdir/memdir/team"
)

// What the CLI prints for the library errors it gives advice on: the
// library's fact, with the command to run where it always was.
func TestErrorRemediesCLIText(t *testing.T) {
	w := newMemWorld(t)
	w.ok(t, "save", "--name", "grafana", "--type", "reference", "--description", "dashboards", "--body", "grafana.internal")
	w.ok(t, "checkpoint", "snapshot", "--session", "s1", "--message", "m1")
	for _, tc := range []struct {
		args   []string
		vars   map[string]string
		code   int
		stderr string
	}{
		{[]string{"show", "nope"}, nil, cli.ExitNotFound,
			"memdir show: memory \"nope\": not found in " + w.memDir(t) + " (see 'memdir list')\n"},
		{[]string{"undo", "20260101T000000.000000-00000000"}, nil, cli.ExitNotFound,
			"memdir undo: run \"20260101T000000.000000-00000000\": not found (see 'memdir log')\n"},
		{[]string{"checkpoint", "diff", "--session", "s1", "--message", "nope"}, nil, cli.ExitNotFound,
			"memdir checkpoint: no snapshot for message \"nope\" in session s1 (it may have been evicted; see 'memdir checkpoint list'): not found\n"},
		{[]string{"recall", "grafana"}, map[string]string{"MEMDIR_MODEL": "anthropic:claude-x"}, cli.ExitInvalid,
			"memdir recall: model anthropic:claude-x (from MEMDIR_MODEL) needs an Anthropic API key, and ANTHROPIC_API_KEY is not set (nor ANTHROPIC_AUTH_TOKEN); set it, or choose another model (see 'memdir config'): invalid\n"},
		{[]string{"sync", "status", "--repo", "acme/widgets"}, map[string]string{"MEMDIR_TEAM_URL": "http://127.0.0.1:9"}, cli.ExitInvalid,
			"memdir sync: no team memory token: pass --token or set MEMDIR_TEAM_TOKEN (create one with 'memdir serve token create'): invalid\n"},
		{[]string{"sync", "resolve", "--ours", "--repo", "acme/widgets", "x.md"}, nil, cli.ExitNotFound,
			"memdir sync: x.md: no open sync conflict on this key (see 'memdir sync status'): not found\n"},
	} {
		for k, v := range tc.vars {
			w.vars[k] = v
		}
		_, errOut, code := w.run(t, tc.args...)
		if code != tc.code || errOut != tc.stderr {
			t.Errorf("memdir %s: exit %d, stderr\n%q\nwant exit %d,\n%q", strings.Join(tc.args, " "), code, errOut, tc.code, tc.stderr)
		}
		for k := range tc.vars {
			delete(w.vars, k)
		}
	}

	// An index agents do not see all of: the warning, then the advice.
	var lines strings.Builder
	for i := range memdir.MaxIndexLines + 5 {
		fmt.Fprintf(&lines, "- [n%d](n%d.md) — note %d\n", i, i, i)
	}
	writeFile(t, filepath.Join(w.memDir(t), memdir.EntrypointName), lines.String())
	_, errOut, _ := w.run(t, "index")
	if want := fmt.Sprintf("warning: MEMORY.md has %d lines; only the first 200 are loaded, so agents do not see the last %d ('memdir doctor --fix --compact' can shorten it)\n", memdir.MaxIndexLines+5, 5); errOut != want {
		t.Errorf("index printed %q, want %q", errOut, want)
	}
	if out, _, _ := w.run(t, "doctor"); !strings.Contains(out, "so agents do not see the last 5 ('memdir doctor --fix --compact' can shorten it)") {
		t.Errorf("doctor does not give the advice:\n%s", out)
	}

	// An unreadable record of an unfinished change no longer stops a
	// write: it is set aside, for doctor to report.
	writeFile(t, filepath.Join(w.memDir(t), memdir.PendingName), "garbage")
	if _, errOut, code := w.run(t, "rm", "grafana"); code != 0 {
		t.Errorf("rm with an unreadable record: exit %d, %q; want it done", code, errOut)
	}
	if _, err := os.Stat(filepath.Join(w.memDir(t), memdir.PendingAsideName)); err != nil {
		t.Errorf("the unreadable record was not set aside: %v", err)
	}
	if out, _, _ := w.run(t, "doctor"); !strings.Contains(out, memdir.PendingAsideName) {
		t.Errorf("doctor does not report the record set aside:\n%s", out)
	}
	os.Remove(filepath.Join(w.memDir(t), memdir.PendingAsideName))

	// promote --apply of an item the last review does not have.
	w.ok(t, "promote")
	if _, errOut, code := w.run(t, "promote", "--apply", "NOPE"); code != cli.ExitNotFound || errOut != "memdir promote: apply: the review has no item \"NOPE\" (see 'memdir promote'): not found\n" {
		t.Errorf("promote --apply NOPE: exit %d, %q", code, errOut)
	}
}

// commandMention is how advice names a memdir command ('memdir list') or
// one of its flags.
var commandMention = regexp.MustCompile(`'memdir|--[a-z]`)

// The libraries' errors state the facts, keep their sentinels, and leave
// memdir's commands to the CLI.
func TestLibraryErrorsStateFacts(t *testing.T) {
	model := config.Setting{Value: "anthropic:claude-x", Source: "MEMDIR_MODEL"}
	st := memdir.MeasureIndex(strings.Repeat("- [a](a.md) — a\n", memdir.MaxIndexLines+1))
	for _, tc := range []struct {
		err      error
		sentinel error
	}{
		{&memdir.MemoryNotFoundError{Ref: "nope", Dir: "/m"}, memdir.ErrNotFound},
		{&memdir.RunNotFoundError{ID: "r1"}, memdir.ErrNotFound},
		{&review.HeldError{ID: "r-1", Path: "a.md"}, review.ErrHeld},
		{&promote.NoItemError{ID: "P1"}, memdir.ErrNotFound},
		{&provider.MissingKeyError{Provider: "anthropic", Model: model}, memdir.ErrInvalid},
		{&provider.MissingKeyError{Provider: "openai", Model: model}, memdir.ErrInvalid},
		{&checkpoint.NoSnapshotError{MessageID: "m", Session: "s"}, memdir.ErrNotFound},
		{team.ErrNoConflict, memdir.ErrNotFound},
		{team.ErrNoToken, memdir.ErrInvalid},
		{errors.New(st.Warning()), nil},
	} {
		msg := tc.err.Error()
		if commandMention.MatchString(msg) {
			t.Errorf("%T %q names a memdir command or flag", tc.err, msg)
		}
		if tc.sentinel != nil && !errors.Is(tc.err, tc.sentinel) {
			t.Errorf("%T %q does not wrap %v", tc.err, msg, tc.sentinel)
		}
		// The advice is added once, wherever the error sits.
		wrapped := fmt.Errorf("outer: %w; after", tc.err)
		if once := advise(wrapped); advise(withAdvice(wrapped)) != once || !strings.HasPrefix(once, "outer: ") || !strings.HasSuffix(once, "; after") {
			t.Errorf("advice on %q: %q, then %q", wrapped, once, advise(withAdvice(wrapped)))
		}
	}
}
