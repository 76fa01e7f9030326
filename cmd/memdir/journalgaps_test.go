package main

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// treeState lists every regular file below dir with its mode and content,
// and every directory with its mode, so a comparison is byte for byte.
func treeState(tb testing.TB, dir string, dirs bool) []string {
	tb.Helper()
	var out []string
	filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		fi, _ := e.Info()
		rel, _ := filepath.Rel(dir, p)
		switch {
		case e.IsDir() && dirs:
			out = append(out, fmt.Sprintf("%s/ %04o", rel, fi.Mode().Perm()))
		case fi.Mode().IsRegular():
			data, _ := os.ReadFile(p)
			out = append(out, fmt.Sprintf("%s %04o %q", rel, fi.Mode().Perm(), data))
		}
		return nil
	})
	sort.Strings(out)
	return out
}

func (w *memWorld) runCount(tb testing.TB) int {
	tb.Helper()
	var log struct {
		Runs []json.RawMessage `json:"runs"`
	}
	if err := json.Unmarshal([]byte(w.ok(tb, "log", "--json")), &log); err != nil {
		tb.Fatal(err)
	}
	return len(log.Runs)
}

// TestJournalGaps: doctor's permission fixes, log append and promote
// --apply with several items are each one run of the journal, and one
// 'memdir undo' restores every file (and mode) they changed.
func TestJournalGaps(t *testing.T) {
	t.Run("doctor permissions", func(t *testing.T) {
		w := newMemWorld(t)
		w.ok(t, "save", "--name", "tabs", "--type", "user", "--description", "prefers tabs", "--body", "Tabs.")
		dir := w.memDir(t)
		os.Chmod(filepath.Join(dir, "user_tabs.md"), 0o644)
		os.Chmod(filepath.Join(dir, "MEMORY.md"), 0o640)
		os.Chmod(dir, 0o755)
		before := treeState(t, dir, true)
		runs := w.runCount(t)
		w.run(t, "doctor", "--fix")
		if st := treeState(t, dir, true); cmp.Equal(st, before) {
			t.Fatalf("doctor --fix changed no mode: %q", st)
		}
		if n := w.runCount(t) - runs; n != 1 {
			t.Fatalf("doctor --fix made %d runs, want 1", n)
		}
		w.ok(t, "undo")
		if diff := cmp.Diff(before, treeState(t, dir, true)); diff != "" {
			t.Errorf("undo did not restore the modes (-want +got):\n%s", diff)
		}
	})
	t.Run("log append", func(t *testing.T) {
		w := newMemWorld(t)
		w.ok(t, "log", "append", "first")
		dir := w.memDir(t)
		before := treeState(t, dir, false)
		runs := w.runCount(t)
		w.ok(t, "log", "append", "second")
		if n := w.runCount(t) - runs; n != 1 {
			t.Fatalf("log append made %d runs, want 1", n)
		}
		w.ok(t, "undo")
		if diff := cmp.Diff(before, treeState(t, dir, false)); diff != "" {
			t.Errorf("undo did not restore the log (-want +got):\n%s", diff)
		}
	})
	t.Run("promote apply", func(t *testing.T) {
		w := promoteWorld(t)
		dir := w.memDir(t)
		w.ok(t, "promote")
		before := append(treeState(t, dir, false), treeState(t, w.project, false)...)
		runs := w.runCount(t)
		out := w.ok(t, "promote", "--apply", "P1", "C1")
		if n := w.runCount(t) - runs; n != 1 {
			t.Fatalf("promote --apply P1 C1 made %d runs, want 1:\n%s", n, out)
		}
		if strings.Count(out, "Undo with: memdir undo") != 1 {
			t.Errorf("apply should name its one run once:\n%s", out)
		}
		w.ok(t, "undo")
		if diff := cmp.Diff(before, append(treeState(t, dir, false), treeState(t, w.project, false)...)); diff != "" {
			t.Errorf("undo did not restore everything (-want +got):\n%s", diff)
		}
	})
}
