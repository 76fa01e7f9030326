package checkpoint

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// env is one test's world: a config home and a project directory.
type env struct {
	config, cwd string
}

func newEnv(tb testing.TB) env {
	tb.Helper()
	root := tb.TempDir()
	e := env{config: filepath.Join(root, "config"), cwd: filepath.Join(root, "project")}
	if err := os.MkdirAll(e.cwd, 0o755); err != nil {
		tb.Fatal(err)
	}
	return e
}

func (e env) history(tb testing.TB, session string) *History {
	tb.Helper()
	h, err := New(e.config, session, &Options{Cwd: e.cwd})
	if err != nil {
		tb.Fatal(err)
	}
	return h
}

func (e env) path(name string) string { return filepath.Join(e.cwd, name) }

func (e env) write(tb testing.TB, name, content string) {
	tb.Helper()
	p := e.path(name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		tb.Fatal(err)
	}
}

func (e env) remove(tb testing.TB, name string) {
	tb.Helper()
	if err := os.Remove(e.path(name)); err != nil {
		tb.Fatal(err)
	}
}

// files returns the content of the named files, with absent ones missing
// from the map.
func (e env) files(tb testing.TB, names ...string) map[string]string {
	tb.Helper()
	out := map[string]string{}
	for _, n := range names {
		b, err := os.ReadFile(e.path(n))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			tb.Fatal(err)
		}
		out[n] = string(b)
	}
	return out
}

func track(tb testing.TB, h *History, path, msg string) *TrackResult {
	tb.Helper()
	r, err := h.Track(context.Background(), path, msg)
	if err != nil {
		tb.Fatalf("Track(%s, %s): %v", path, msg, err)
	}
	return r
}

func snapshot(tb testing.TB, h *History, msg string) *SnapshotResult {
	tb.Helper()
	r, err := h.Snapshot(context.Background(), msg)
	if err != nil {
		tb.Fatalf("Snapshot(%s): %v", msg, err)
	}
	if len(r.Problems) > 0 {
		tb.Fatalf("Snapshot(%s) problems: %v", msg, r.Err())
	}
	return r
}

func rewind(tb testing.TB, h *History, msg string, dry bool) *RewindReport {
	tb.Helper()
	r, err := h.Rewind(context.Background(), msg, &RewindOptions{DryRun: dry})
	if err != nil {
		tb.Fatalf("Rewind(%s, dry=%v): %v", msg, dry, err)
	}
	return r
}

func snapshots(tb testing.TB, h *History) []Snapshot {
	tb.Helper()
	s, err := h.Snapshots(context.Background())
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

// entries returns the latest snapshot's files with times dropped, for
// comparison.
func entries(tb testing.TB, h *History) map[string]Backup {
	tb.Helper()
	all := snapshots(tb, h)
	if len(all) == 0 {
		return nil
	}
	out := map[string]Backup{}
	for k, b := range all[len(all)-1].Files {
		out[k] = Backup{Name: b.Name, Version: b.Version}
	}
	return out
}

// begin writes file with content, starts a snapshot for msg and tracks the
// file in it: the first steps of most scenarios.
func begin(tb testing.TB, e env, h *History, file, content, msg string) *TrackResult {
	tb.Helper()
	e.write(tb, file, content)
	snapshot(tb, h, msg)
	return track(tb, h, file, msg)
}

// loseBackup deletes version v of file's backup, as a user or a disk might.
func loseBackup(tb testing.TB, e env, h *History, file string, v int) {
	tb.Helper()
	if err := os.Remove(filepath.Join(h.Dir(), BackupName(e.path(file), v))); err != nil {
		tb.Fatal(err)
	}
}
