package recall

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestRefreshEditHint edits files in place (the directory's time does not
// move) in a directory larger than one refresh's stat budget: without a
// hint a refresh sees only its rotating share of them, with NoteEdit's
// hint it sees them all at once.
func TestRefreshEditHint(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("waits out the racy window")
	}
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "memory")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	k := 4
	n := k*recallStatBudget - 7
	path := func(i int) string { return filepath.Join(dir, fmt.Sprintf("m%05d.md", i)) }
	body := func(i int, word string) string {
		return fmt.Sprintf("---\nname: memory %d\ndescription: note number %d\ntype: project\n---\nplain text %s\n", i, i, word)
	}
	for i := range n {
		if err := os.WriteFile(path(i), []byte(body(i, "common")), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// The index's clock is past the racy window, so that it trusts the
	// stamps.
	later := func() time.Time { return time.Now().Add(racyWindow + time.Second) }
	cache := filepath.Join(t.TempDir(), "state", "idx")
	if st, err := NewIndex(dir, &IndexOptions{CachePath: cache, Now: later}).Refresh(ctx); err != nil || st.Read != n {
		t.Fatalf("first refresh: %+v, %v; want %d read", st, err, n)
	}
	// One edited file in each residue of the rotation: a refresh without
	// hints stats exactly one of them.
	edit := func(i int) {
		t.Helper()
		if err := os.WriteFile(path(i), []byte(body(i, word(i))), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	picked := make([]int, k)
	seen := map[int]bool{}
	loaded := NewIndex(dir, &IndexOptions{CachePath: cache, Now: later})
	loaded.Refresh(ctx)
	for i := range loaded.nfiles() {
		r := int(loaded.rotationKey(i) % uint64(k))
		if !seen[r] {
			seen[r] = true
			fmt.Sscanf(filepath.Base(loaded.pathAt(i)), "m%05d.md", &picked[r])
		}
	}
	if len(seen) != k {
		t.Fatalf("the files fall in %d of the %d residues of the rotation", len(seen), k)
	}
	for _, i := range picked {
		edit(i)
	}
	st, err := NewIndex(dir, &IndexOptions{CachePath: cache, Now: later}).Refresh(ctx)
	if err != nil || st.Read != 1 {
		t.Fatalf("refresh without hints: %+v, %v; want 1 of the %d edited files read", st, err, k)
	}
	for _, i := range picked {
		ok, err := NewIndex(dir, &IndexOptions{CachePath: cache, Now: later}).NoteEdit(path(i))
		if !ok || err != nil {
			t.Fatalf("NoteEdit(%s) = %v, %v", path(i), ok, err)
		}
	}
	st, err = NewIndex(dir, &IndexOptions{CachePath: cache, Now: later}).Refresh(ctx)
	if err != nil || st.Read != k-1 {
		t.Fatalf("refresh with hints: %+v, %v; want the other %d edited files read", st, err, k-1)
	}
	x := NewIndex(dir, &IndexOptions{CachePath: cache, Now: later})
	if _, err := x.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	for _, i := range picked {
		hits, _ := x.Search(word(i), 5)
		if len(hits) == 0 || !strings.HasSuffix(hits[0].ID, fmt.Sprintf("m%05d.md", i)) {
			t.Fatalf("search for file %d's new word: %v", i, hits)
		}
	}

	// What is not a memory file of the directory is not recorded.
	for _, p := range []string{filepath.Join(filepath.Dir(dir), "other.md"), filepath.Join(dir, "notes.txt"), "relative.md", dir} {
		if ok, err := x.NoteEdit(p); ok || err != nil {
			t.Errorf("NoteEdit(%q) = %v, %v; want false, nil", p, ok, err)
		}
	}
	if ok, _ := NewIndex(dir, nil).NoteEdit(path(0)); ok {
		t.Error("NoteEdit without a cache file recorded a hint")
	}
}

// TestEditHintsExpire checks that hints older than hintTTL, torn lines and
// garbage are ignored, and that a file with no live hint is removed.
func TestEditHintsExpire(t *testing.T) {
	t.Parallel()
	now := time.Now()
	data := fmt.Sprintf("%d\told.md\nnonsense\n\tempty.md\n%d\tlive.md\n%d\tfuture.md\n%d\ttorn.md",
		now.Add(-2*hintTTL).UnixNano(), now.Add(-time.Minute).UnixNano(), now.Add(time.Hour).UnixNano(), now.UnixNano())
	live := liveHints([]byte(data), now)
	if len(live) != 1 || live[0].rel != "live.md" {
		t.Fatalf("live hints = %+v; want only live.md", live)
	}

	cache := filepath.Join(t.TempDir(), "idx")
	x := NewIndex(t.TempDir(), &IndexOptions{CachePath: cache})
	old := fmt.Sprintf("%d\told.md\n", now.Add(-2*hintTTL).UnixNano())
	if err := os.WriteFile(cache+".hint", []byte(old), 0o600); err != nil {
		t.Fatal(err)
	}
	if set := x.editHints(); len(set) != 0 {
		t.Errorf("editHints = %v; want none", set)
	}
	if _, err := os.Stat(cache + ".hint"); !os.IsNotExist(err) {
		t.Errorf("the hint file with only expired hints is still there: %v", err)
	}
}

// TestEditHintsBounded fills the hint file past its bound: it is rewritten
// with the newest hints and stays under the bound.
func TestEditHintsBounded(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cache := filepath.Join(t.TempDir(), "idx")
	x := NewIndex(dir, &IndexOptions{CachePath: cache})
	long := strings.Repeat("d", 200)
	for i := range 1000 {
		p := filepath.Join(dir, long, fmt.Sprintf("m%04d.md", i))
		if ok, err := x.NoteEdit(p); !ok || err != nil {
			t.Fatalf("NoteEdit %d: %v, %v", i, ok, err)
		}
	}
	fi, err := os.Stat(cache + ".hint")
	if err != nil || fi.Size() > hintMaxBytes {
		t.Fatalf("hint file: %v, %v; want at most %d bytes", fi.Size(), err, hintMaxBytes)
	}
	set := x.editHints()
	if !set[long+"/m0999.md"] {
		t.Error("the newest hint was dropped")
	}
	if set[long+"/m0000.md"] {
		t.Error("the oldest hint survived a rewrite")
	}
}
