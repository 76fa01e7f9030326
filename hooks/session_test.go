package hooks

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/memdir/memdir"
)

func TestSessionStore(t *testing.T) {
	ctx := context.Background()
	s := NewSessionStore(filepath.Join(t.TempDir(), "sessions"))
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

	sess, err := s.Load("s1")
	if err != nil || sess.Bytes != 0 || len(sess.Surfaced) != 0 {
		t.Fatalf("new session: %+v, %v", sess, err)
	}
	if _, err := s.Add(ctx, "s1", []string{"/m/a.md", "/m/b.md"}, 300, now); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Add(ctx, "s1", []string{"/m/b.md", "/m/c.md"}, 200, now.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Add(ctx, "s1", nil, 0, now.Add(2*time.Minute)); err != nil {
		t.Fatal(err)
	}
	got, err := s.Load("s1")
	if err != nil {
		t.Fatal(err)
	}
	want := &Session{ID: "s1", Surfaced: []string{"/m/a.md", "/m/b.md", "/m/c.md"}, Bytes: 500, Prompts: 2, Updated: now.Add(2 * time.Minute)}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if fi, err := os.Stat(s.Path("s1")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("state file: %v %v", fi, err)
	}
	if other, _ := s.Load("s2"); len(other.Surfaced) != 0 {
		t.Errorf("sessions share state: %+v", other)
	}
	if _, err := s.Load("../x"); !errors.Is(err, memdir.ErrInvalid) {
		t.Errorf("Load(../x) = %v", err)
	}
	if _, err := s.Add(ctx, "a/b", nil, 0, now); !errors.Is(err, memdir.ErrInvalid) {
		t.Errorf("Add(a/b) = %v", err)
	}
}

func TestSessionStoreCorrupt(t *testing.T) {
	ctx := context.Background()
	s := NewSessionStore(t.TempDir())
	// An empty file and a NUL-filled one are what a power failure can
	// leave of a state replaced without fsync (see Add).
	for _, content := range []string{"{not json", `{"session_id":"other","surfaced":[]}`, "", "\x00\x00\x00\x00"} {
		if err := os.WriteFile(s.Path("s1"), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Load("s1"); err == nil || !errors.Is(err, memdir.ErrInvalid) || !strings.Contains(err.Error(), s.Path("s1")) {
			t.Errorf("Load of %q: %v", content, err)
		}
		sess, err := s.Add(ctx, "s1", []string{"/m/a.md"}, 10, time.Now())
		if err != nil || sess.Bytes != 10 {
			t.Fatalf("Add over a corrupt file: %+v, %v", sess, err)
		}
		if kept, _ := os.ReadFile(s.Path("s1") + ".corrupt"); string(kept) != content {
			t.Errorf("corrupt file not kept aside: %q", kept)
		}
	}
}

// TestSessionStoreConcurrentAdds: hooks of one session in parallel lose no
// surfaced memory and no byte.
func TestSessionStoreConcurrentAdds(t *testing.T) {
	s := NewSessionStore(t.TempDir())
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Go(func() {
			if _, err := s.Add(context.Background(), "s", []string{fmt.Sprintf("/m/%d.md", i)}, 1, time.Now()); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	sess, err := s.Load("s")
	if err != nil || len(sess.Surfaced) != 20 || sess.Bytes != 20 {
		t.Errorf("after 20 concurrent adds: %d surfaced, %d bytes, %v", len(sess.Surfaced), sess.Bytes, err)
	}
}

func TestPrune(t *testing.T) {
	dir := t.TempDir()
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	for name, age := range map[string]time.Duration{"old.json": 40 * 24 * time.Hour, "new.json": time.Hour, "old.txt": 40 * 24 * time.Hour} {
		p := filepath.Join(dir, name)
		os.WriteFile(p, nil, 0o600)
		os.Chtimes(p, now.Add(-age), now.Add(-age))
	}
	os.Mkdir(filepath.Join(dir, "old.json.d"), 0o700)
	n, err := Prune(dir, now.Add(-30*24*time.Hour), ".json")
	if err != nil || n != 1 {
		t.Errorf("Prune = %d, %v; want 1", n, err)
	}
	left, _ := os.ReadDir(dir)
	var names []string
	for _, e := range left {
		names = append(names, e.Name())
	}
	if diff := cmp.Diff([]string{"new.json", "old.json.d", "old.txt"}, names); diff != "" {
		t.Errorf("left (-want +got):\n%s", diff)
	}
	if n, err := Prune(filepath.Join(dir, "missing"), now, ".json"); n != 0 || err != nil {
		t.Errorf("Prune of a missing directory = %d, %v", n, err)
	}
}
