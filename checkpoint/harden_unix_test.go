//go:build unix

package checkpoint

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/memdir/memdir"
)

// The hardening against links relies on lstat, O_NOFOLLOW and link counts,
// which these tests exercise where they exist.

func TestRefusals(t *testing.T) {
	e := newEnv(t)
	h := e.history(t, "refuse")
	e.write(t, "target", "secret\n")
	if err := os.Symlink(e.path("target"), e.path("link")); err != nil {
		t.Fatal(err)
	}
	e.write(t, "hard", "shared\n")
	if err := os.Link(e.path("hard"), e.path("hard2")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(e.path("dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(e.path("fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	outside := t.TempDir()
	if err := os.Symlink(outside, e.path("escape")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ path, want string }{
		{"link", "symbolic link"},
		{"hard", "2 hard links"},
		{"dir", "directory"},
		{"fifo", "not a regular file"},
		{"escape/new.txt", "outside"},
		{"", "empty"},
		{"a\x00b", "NUL"},
		{h.Dir() + "/x@v1", "inside the checkpoint directory"},
	} {
		_, err := h.Track(context.Background(), tc.path, "m1")
		if err == nil || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, memdir.ErrInvalid) {
			t.Errorf("Track(%q) = %v, want an ErrInvalid error mentioning %q", tc.path, err, tc.want)
			continue
		}
		if tc.path != "" && !strings.Contains(tc.path, "\x00") && !strings.Contains(err.Error(), filepath.Base(tc.path)) {
			t.Errorf("Track(%q) error does not name the file: %v", tc.path, err)
		}
	}
	if _, err := os.Lstat(filepath.Join(outside, "new.txt")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("something was written outside the project: %v", err)
	}
}

func TestTrackedFileBecomesLink(t *testing.T) {
	e := newEnv(t)
	h := e.history(t, "becomes")
	e.write(t, "victim", "do not touch\n")
	begin(t, e, h, "f", "mine\n", "m1")
	e.remove(t, "f")
	if err := os.Symlink(e.path("victim"), e.path("f")); err != nil {
		t.Fatal(err)
	}
	r, err := h.Snapshot(context.Background(), "m2")
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Problems) != 1 || !strings.Contains(r.Problems[0].Error(), "symbolic link") {
		t.Errorf("snapshot problems = %v, want the symlink refused", r.Problems)
	}
	if got := r.Snapshot.Files["f"]; got.Version != 1 {
		t.Errorf("refused file's entry %+v, want the previous v1 kept", got)
	}
	rep, err := h.Rewind(context.Background(), "m1", nil)
	if err == nil || len(rep.Skipped) != 1 || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("rewind over a symlink: report %+v, err %v", rep, err)
	}
	if got := e.files(t, "victim")["victim"]; got != "do not touch\n" {
		t.Errorf("rewind wrote through the link: %q", got)
	}
	// A hard link made later is refused too.
	e.remove(t, "f")
	e.write(t, "f", "mine again\n")
	if err := os.Link(e.path("f"), e.path("f2")); err != nil {
		t.Fatal(err)
	}
	rep, err = h.Rewind(context.Background(), "m1", nil)
	if err == nil || len(rep.Skipped) != 1 || !strings.Contains(err.Error(), "hard links") {
		t.Errorf("rewind over a hard link: report %+v, err %v", rep, err)
	}
	if got := e.files(t, "f2")["f2"]; got != "mine again\n" {
		t.Errorf("rewind changed the other name: %q", got)
	}
}

func TestRewindRefusesDirectoryTurnedIntoEscapingLink(t *testing.T) {
	e := newEnv(t)
	h := e.history(t, "escape")
	begin(t, e, h, "sub/f", "inside\n", "m1")
	e.write(t, "sub/f", "edited\n")
	// The directory is swapped for a link to somewhere outside the project
	// holding a file of the same name.
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "f"), []byte("outside\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(e.path("sub")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, e.path("sub")); err != nil {
		t.Fatal(err)
	}
	rep, err := h.Rewind(context.Background(), "m1", nil)
	if err == nil || rep != nil || !strings.Contains(err.Error(), "outside") || !strings.Contains(err.Error(), "nothing was changed") {
		t.Fatalf("rewind through an escaping link: report %+v, err %v", rep, err)
	}
	if got, _ := os.ReadFile(filepath.Join(outside, "f")); string(got) != "outside\n" {
		t.Errorf("the file outside the project was changed: %q", got)
	}
}
