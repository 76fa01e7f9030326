package sqlite_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/memdirtest"
	"github.com/memdir/memdir/team"
	"github.com/memdir/memdir/team/sqlite"
)

func open(tb testing.TB, path string) *sqlite.Store {
	tb.Helper()
	s, err := sqlite.Open(context.Background(), path, nil)
	if err != nil {
		tb.Fatalf("Open: %v", err)
	}
	tb.Cleanup(func() { s.Close() })
	return s
}

func TestConformance(t *testing.T) {
	memdirtest.TestTeamStore(t, func(tb testing.TB) team.Store {
		return open(tb, filepath.Join(tb.TempDir(), "team.db"))
	})
}

func TestFileModes(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "new", "data")
	path := filepath.Join(dir, "team.db")
	s, err := sqlite.Open(context.Background(), path, &sqlite.Options{CreateDir: true})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	for _, tt := range []struct {
		path string
		want os.FileMode
	}{{dir, 0o700 | os.ModeDir}, {path, 0o600}} {
		fi, err := os.Stat(tt.path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode() != tt.want {
			t.Errorf("%s: mode %v, want %v", tt.path, fi.Mode(), tt.want)
		}
	}
}

// TestConcurrentOpen opens one new database from several goroutines at once,
// as replicas starting together would, and checks every Open succeeds and
// the store works.
func TestConcurrentOpen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "team.db")
	const n = 4
	stores := make([]*sqlite.Store, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { stores[i], errs[i] = sqlite.Open(context.Background(), path, nil) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("Open %d: %v", i, err)
		}
		defer stores[i].Close()
	}
	ctx := context.Background()
	if _, err := stores[0].Put(ctx, "a/b", &team.Update{Entries: map[string]string{"x.md": "x"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := stores[n-1].Get(ctx, "a/b", nil); err != nil {
		t.Fatal(err)
	}
}

func TestBadPath(t *testing.T) {
	for _, p := range []string{"", "/tmp/a?b.db", "/tmp/a#b.db"} {
		if _, err := sqlite.Open(context.Background(), p, nil); err == nil {
			t.Errorf("Open(%q) succeeded", p)
		}
	}
}

func TestDefaultPath(t *testing.T) {
	env := map[string]string{"MEMDIR_DATA_DIR": "/data/memdir"}
	got, err := sqlite.DefaultPath(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join("/data/memdir", "team.db"); got != want {
		t.Errorf("DefaultPath = %q, want %q", got, want)
	}
}

// TestOpenRefusesMissingDir: a database path whose directory does not
// exist is most likely a typo; Open says so, naming the directory, and
// creates nothing, unless asked to create it (the default path).
func TestOpenRefusesMissingDir(t *testing.T) {
	base := t.TempDir()
	missing := filepath.Join(base, "nonexistent", "dir")
	_, err := sqlite.Open(context.Background(), filepath.Join(missing, "team.db"), nil)
	if !errors.Is(err, memdir.ErrInvalid) || !strings.Contains(err.Error(), missing) || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("Open under a missing directory = %v, want an invalid-input error naming %s", err, missing)
	}
	if _, err := os.Stat(filepath.Join(base, "nonexistent")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Open created %s: %v", filepath.Join(base, "nonexistent"), err)
	}
	file := filepath.Join(base, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := sqlite.Open(context.Background(), filepath.Join(file, "team.db"), nil); !errors.Is(err, memdir.ErrInvalid) || !strings.Contains(err.Error(), "not a directory") {
		t.Errorf("Open under a file = %v, want an invalid-input error", err)
	}
	s, err := sqlite.Open(context.Background(), filepath.Join(missing, "team.db"), &sqlite.Options{CreateDir: true})
	if err != nil {
		t.Fatalf("Open with CreateDir: %v", err)
	}
	s.Close()
}
