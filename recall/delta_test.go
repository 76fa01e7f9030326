package recall

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// fileID is what tells a file replaced by rename from one left alone.
type fileID struct {
	ino   uint64
	mtime time.Time
	size  int64
}

func idOf(tb testing.TB, p string) (fileID, bool) {
	tb.Helper()
	fi, err := os.Stat(p)
	if err != nil {
		return fileID{}, false
	}
	return fileID{inodeOf(fi), fi.ModTime(), fi.Size()}, true
}

// A refresh that finds nothing new writes nothing; one that finds a few
// files changed writes only the delta beside the base, and a new process
// that replays it ranks exactly as a full rebuild, for adds, in-place
// edits and removals. Past its bound the delta is merged into a new base.
func TestDeltaRefresh(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := corpusDir(t, 700) // over the stat budget: the cursor turns
	ageAll(t, dir)
	cache := filepath.Join(t.TempDir(), "state", "idx")
	later := func() time.Time { return time.Now().Add(racyWindow + time.Second) }
	open := func() *Index { return NewIndex(dir, &IndexOptions{CachePath: cache, Now: later}) }
	fresh := func() *Index {
		x := open()
		if _, err := x.Refresh(ctx); err != nil {
			t.Fatal(err)
		}
		return x
	}
	if _, err := open().Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	base, _ := idOf(t, cache)
	open().Refresh(ctx) // creates the cursor if the first did not
	cursor, ok := idOf(t, cache+".cursor")
	if !ok {
		t.Fatal("no cursor file")
	}
	unchanged := func(step string, delta fileID, hasDelta bool) {
		t.Helper()
		if got, _ := idOf(t, cache); got != base {
			t.Fatalf("%s: the base was rewritten", step)
		}
		if got, ok := idOf(t, cache+".delta"); ok != hasDelta || got != delta {
			t.Fatalf("%s: delta %v (exists %v), want %v (exists %v)", step, got, ok, delta, hasDelta)
		}
		if got, _ := idOf(t, cache+".cursor"); got.ino != cursor.ino {
			t.Fatalf("%s: the cursor file was replaced", step)
		}
	}
	for i := range 3 {
		x := open()
		if _, err := x.Refresh(ctx); err != nil {
			t.Fatal(err)
		}
		unchanged(fmt.Sprintf("refresh %d with nothing new", i), fileID{}, false)
	}

	// Changes: an in-place edit, an addition, a removal.
	writeMem(t, dir, "project_mem_000002.md", "zebra-edit", "edited in place", "the zebra crossing at the harbour is closed")
	writeMem(t, dir, "team/deep/new.md", "harbour-zebra", "zebra crossing", "kafka consumer lag runbook for the zebra")
	os.Remove(filepath.Join(dir, "user_mem_000004.md"))
	x := open()
	if _, err := x.RefreshAll(ctx); err != nil {
		t.Fatal(err)
	}
	delta, ok := idOf(t, cache+".delta")
	if !ok {
		t.Fatal("no delta written")
	}
	unchanged("after three changes", delta, true)
	sameAsRebuild(t, dir, x)
	y := open()
	st, err := y.RefreshAll(ctx)
	if err != nil || st.Read != 0 || st.Removed != 0 {
		t.Fatalf("a new process over base and delta: %+v, %v", st, err)
	}
	unchanged("a refresh over the delta with nothing new", delta, true)
	sameAsRebuild(t, dir, y)
	if hits, _ := y.Search("zebra harbour", 2); len(hits) != 2 {
		t.Fatalf("the changed memories are not found: %v", hits)
	}

	// A second change extends the delta; removing an added file too.
	os.Remove(filepath.Join(dir, "team/deep/new.md"))
	writeMem(t, dir, "feedback_mem_000001.md", "zebra-two", "edited again", "nothing but zebras")
	if _, err := open().RefreshAll(ctx); err != nil {
		t.Fatal(err)
	}
	if got, _ := idOf(t, cache); got != base {
		t.Fatal("the base was rewritten for two changes")
	}
	sameAsRebuild(t, dir, fresh())

	// Damaged or truncated, the delta is not trusted: the index is rebuilt.
	good, err := os.ReadFile(cache + ".delta")
	if err != nil {
		t.Fatal(err)
	}
	for name, bad := range map[string][]byte{
		"truncated": good[:len(good)-9],
		"flipped":   flip(good, len(good)/2),
		"header":    flip(good, 20),
		"empty":     {},
	} {
		os.WriteFile(cache+".delta", bad, 0o600)
		x := open()
		if st, err := x.Refresh(ctx); err != nil {
			t.Fatal(err)
		} else {
			t.Logf("%s: %+v", name, st)
		}
		sameAsRebuild(t, dir, x)
		if _, ok := idOf(t, cache+".delta"); ok {
			t.Fatalf("%s delta: still there after the rebuild", name)
		}
		sameAsRebuild(t, dir, fresh())
		base, _ = idOf(t, cache)
	}

	// Many changes: merged into a new base, the delta removed.
	for i := range 120 {
		writeMem(t, dir, fmt.Sprintf("team/deep/bulk%03d.md", i), fmt.Sprintf("bulk-%d", i), "a bulk memory", fmt.Sprintf("ledger replica note %d", i))
	}
	if _, err := open().RefreshAll(ctx); err != nil {
		t.Fatal(err)
	}
	if got, _ := idOf(t, cache); got == base {
		t.Fatal("120 new files did not make a new base")
	}
	if _, ok := idOf(t, cache+".delta"); ok {
		t.Fatal("the delta is still there after the merge")
	}
	sameAsRebuild(t, dir, fresh())
}

func flip(b []byte, i int) []byte {
	c := append([]byte{}, b...)
	c[i] ^= 0x5a
	return c
}
