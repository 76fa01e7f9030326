package memtool

import (
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// mustTool returns a Tool on a fresh directory "mem" inside a temp dir, and
// that directory's path. The temp dir also holds "outside", a sibling that
// symlink tests point at.
func mustTool(tb testing.TB, opts *Options) (*Tool, string) {
	tb.Helper()
	base := tb.TempDir()
	root := filepath.Join(base, "mem")
	if err := os.Mkdir(root, 0o700); err != nil {
		tb.Fatal(err)
	}
	t, err := New(root, opts)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { t.Close() })
	return t, root
}

// mustWrite creates files under dir from name → content, making parents.
func mustWrite(tb testing.TB, dir string, files map[string]string) {
	tb.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			tb.Fatal(err)
		}
	}
}

// mustSymlink creates a symbolic link at dir/name pointing to target.
func mustSymlink(tb testing.TB, target, dir, name string) {
	tb.Helper()
	if err := os.Symlink(target, filepath.Join(dir, filepath.FromSlash(name))); err != nil {
		tb.Skipf("symlinks unavailable: %v", err)
	}
}

// run executes one command given as JSON and returns the text the model
// would see and whether it is an error.
func run(tb testing.TB, t *Tool, input string) (string, bool) {
	tb.Helper()
	out, err := t.Execute(context.Background(), json.RawMessage(input))
	if err != nil {
		if out != "" {
			tb.Errorf("%s: both output %q and error %q", input, out, err)
		}
		return err.Error(), true
	}
	return out, false
}

// mustRun runs a command that must succeed.
func mustRun(tb testing.TB, t *Tool, input string) string {
	tb.Helper()
	out, isErr := run(tb, t, input)
	if isErr {
		tb.Fatalf("%s: %s", input, out)
	}
	return out
}

// cmdJSON builds a command input from key/value pairs.
func cmdJSON(tb testing.TB, kv ...any) string {
	tb.Helper()
	m := map[string]any{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1]
	}
	b, err := json.Marshal(m)
	if err != nil {
		tb.Fatal(err)
	}
	return string(b)
}

// entry is what snapshot records for one path.
type entry struct {
	Mode    fs.FileMode
	Content string // file content or link target
}

// snapshot records every path under dir (hidden ones included) with its
// type, permissions and content, for before/after comparisons.
func snapshot(tb testing.TB, dir string) map[string]entry {
	tb.Helper()
	out := map[string]entry{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		e := entry{Mode: fi.Mode()}
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			e.Content, err = os.Readlink(p)
		case fi.Mode().IsRegular():
			var b []byte
			b, err = os.ReadFile(p)
			e.Content = string(b)
		}
		out[filepath.ToSlash(rel)] = e
		return err
	})
	if err != nil {
		tb.Fatal(err)
	}
	return out
}

// checkNoTemp fails if any of the tool's temporary files or tombstones is
// left under dir.
func checkNoTemp(tb testing.TB, dir string) {
	tb.Helper()
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasPrefix(d.Name(), tempPrefix) {
			tb.Errorf("temporary file left behind: %s", p)
		}
		return nil
	})
}
