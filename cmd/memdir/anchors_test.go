package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memdir/memdir/internal/cli"
	"github.com/memdir/memdir/memdirtest"
)

func TestAnchorsCommands(t *testing.T) {
	w := newMemWorld(t)
	memdirtest.Git(t, w.project, "init", "-q", "-b", "main")
	tok := filepath.Join(w.project, "internal", "auth", "token.go")
	os.MkdirAll(filepath.Dir(tok), 0o755)
	os.WriteFile(tok, []byte("package auth\n\nfunc RefreshToken() {}\n"), 0o644)
	memdirtest.Git(t, w.project, "add", ".")
	memdirtest.Git(t, w.project, "commit", "-q", "-m", "token")

	w.ok(t, "save", "--name", "token refresh", "--description", "how session tokens are renewed", "--type", "project",
		"--body", "Sessions are renewed by `RefreshToken`; keep the signing key.")
	if out := w.ok(t, "anchors", "check"); !strings.Contains(out, "No memory names code") {
		t.Errorf("check on fresh anchors: %s", out)
	}

	os.WriteFile(tok, []byte("package auth\n\nfunc RefreshToken() {}\n\nfunc rotate() {}\n"), 0o644)
	memdirtest.Git(t, w.project, "commit", "-q", "-am", "rotate")

	var rec struct {
		Memories []struct {
			Header       string `json:"header"`
			StaleAnchors []struct {
				Path    string `json:"path"`
				State   string `json:"state"`
				Commits int    `json:"commits"`
			} `json:"stale_anchors"`
		} `json:"memories"`
	}
	if err := json.Unmarshal([]byte(w.ok(t, "recall", "--json", "session tokens renewed")), &rec); err != nil {
		t.Fatal(err)
	}
	if len(rec.Memories) != 1 || len(rec.Memories[0].StaleAnchors) != 1 || rec.Memories[0].StaleAnchors[0].Commits != 1 ||
		!strings.Contains(rec.Memories[0].Header, "internal/auth/token.go (1 commit)") {
		t.Fatalf("recall --json: %+v", rec)
	}
	out, _, code := w.run(t, "doctor")
	if code != cli.ExitProblems || !strings.Contains(out, "stale-anchor") || !strings.Contains(out, "internal/auth/token.go") {
		t.Errorf("doctor: exit %d\n%s", code, out)
	}
	out, _, code = w.run(t, "anchors", "check")
	if code != cli.ExitProblems || !strings.Contains(out, "+2 -0 lines in 1 commit(s)") {
		t.Errorf("anchors check: exit %d\n%s", code, out)
	}

	memdirtest.Git(t, w.project, "rm", "-q", "internal/auth/token.go")
	memdirtest.Git(t, w.project, "commit", "-q", "-m", "drop")
	if out, _, _ := w.run(t, "doctor"); !strings.Contains(out, "anchor-gone") {
		t.Errorf("doctor after delete:\n%s", out)
	}
	out = w.ok(t, "anchors", "refresh", "token refresh")
	if !strings.Contains(out, "0 anchor(s) recorded") || !strings.Contains(out, "memdir undo") {
		t.Errorf("refresh: %s", out)
	}
	if out, _, code := w.run(t, "doctor"); strings.Contains(out, "anchor") {
		t.Errorf("doctor after refresh: exit %d\n%s", code, out)
	}
	if _, _, code := w.run(t, "anchors", "refresh", "no such memory"); code != cli.ExitNotFound {
		t.Errorf("refresh of a missing memory: exit %d", code)
	}
}
