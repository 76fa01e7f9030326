package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memdir/memdir/locate"
)

// TestPathPicksTheExistingHashVariant runs 'memdir path' in a project whose
// path is over 200 characters and whose directory Claude Code (from npm, on
// Node) created: memdir finds it without MEMDIR_HASH_RUNTIME, says why, and
// the variable still forces Bun's.
func TestPathPicksTheExistingHashVariant(t *testing.T) {
	w := newMemWorld(t)
	w.project = filepath.Join(w.project, strings.Repeat("quite-a-long-folder-name/", 9))
	if err := os.MkdirAll(w.project, 0o700); err != nil {
		t.Fatal(err)
	}
	nodeDir := filepath.Join(w.home, ".claude", "projects", locate.SanitizePath(w.project, locate.HashNode))
	if err := os.MkdirAll(nodeDir, 0o700); err != nil {
		t.Fatal(err)
	}
	if got, want := w.ok(t, "path"), nodeDir+"/memory/\n"; got != want {
		t.Errorf("path = %q, want %q", got, want)
	}
	if out := w.ok(t, "path", "--explain"); !strings.Contains(out, "Node's djb2 hash, Claude Code installed from npm") {
		t.Errorf("path --explain does not say why:\n%s", out)
	}
	w.vars["MEMDIR_HASH_RUNTIME"] = "bun"
	if got, want := w.ok(t, "path"), w.memDir(t)+"/\n"; got != want {
		t.Errorf("MEMDIR_HASH_RUNTIME=bun: path = %q, want %q", got, want)
	}
}
