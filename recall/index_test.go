package recall

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/memdir/memdir/internal/atomicfile"
	"github.com/memdir/memdir/internal/benchcorpus"
)

// corpusDir writes n generated memories, some of them in subdirectories.
func corpusDir(tb testing.TB, n int) string {
	tb.Helper()
	c, err := benchcorpus.Load("../testdata/eval/recall-dev.json")
	if err != nil {
		tb.Fatal(err)
	}
	dir := filepath.Join(tb.TempDir(), "memory")
	if err := c.Write(dir, n); err != nil {
		tb.Fatal(err)
	}
	os.MkdirAll(filepath.Join(dir, "team", "deep"), 0o700)
	for i := range 5 {
		writeMem(tb, dir, fmt.Sprintf("team/deep/t%d.md", i), fmt.Sprintf("team-%d", i), "shared runbook for the ledger replica "+fmt.Sprint(i), "ledger replica failover steps")
	}
	return dir
}

func writeMem(tb testing.TB, dir, rel, name, desc, body string) {
	tb.Helper()
	content := fmt.Sprintf("---\nname: %s\ndescription: %s\ntype: project\n---\n\n%s\n", name, desc, body)
	if err := os.WriteFile(filepath.Join(dir, filepath.FromSlash(rel)), []byte(content), 0o600); err != nil {
		tb.Fatal(err)
	}
}

var indexQueries = []string{
	"TestInvoiceSettlement failed again on CI last night",
	"ledger replica failover",
	"部署流程需要注意什么",
	"kafka consumer lag runbook",
	"zebra crossing at the harbour",
}

// sameAsRebuild checks that idx answers every query as an index built from
// scratch, without a cache, does.
func sameAsRebuild(t *testing.T, dir string, idx *Index) {
	t.Helper()
	ref := NewIndex(dir, nil)
	if _, err := ref.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, q := range indexQueries {
		wh, wantH := ref.Search(q, 30)
		gh, gotH := idx.Search(q, 30)
		if d := cmp.Diff(wh, gh); d != "" {
			t.Fatalf("query %q: hits differ from a rebuild (-rebuild +index):\n%s", q, d)
		}
		if d := cmp.Diff(wantH, gotH); d != "" {
			t.Fatalf("query %q: headers differ from a rebuild:\n%s", q, d)
		}
	}
	if d := cmp.Diff(ref.Headers(), idx.Headers()); d != "" {
		t.Fatalf("Headers differ from a rebuild:\n%s", d)
	}
	if d := cmp.Diff(ref.Entries(), idx.Entries()); d != "" {
		t.Fatalf("Entries differ from a rebuild:\n%s", d)
	}
}

// ageAll moves every file's and directory's modification time an hour
// back, as if the corpus were written long ago (so no entry is racy).
func ageAll(tb testing.TB, dir string) {
	tb.Helper()
	old := time.Now().Add(-time.Hour)
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			os.Chtimes(p, old, old)
		}
		return nil
	})
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err == nil && fi.IsDir() {
			os.Chtimes(p, old, old)
		}
		return nil
	})
}

func TestRecallIndexPersistsAndUpdatesIncrementally(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := corpusDir(t, 300)
	ageAll(t, dir)
	cache := filepath.Join(t.TempDir(), "state", "idx")
	first := NewIndex(dir, &IndexOptions{CachePath: cache})
	st, err := first.Refresh(ctx)
	if err != nil || st.Files != 305 || st.Read != 305 {
		t.Fatalf("first refresh: %+v, %v", st, err)
	}
	// A new process opens the file: nothing is read, no directory listed.
	idx := NewIndex(dir, &IndexOptions{CachePath: cache})
	st, err = idx.Refresh(ctx)
	if err != nil || st.Read != 0 || st.Listed != 0 || st.Files != 305 {
		t.Fatalf("refresh from the persisted index: %+v, %v", st, err)
	}
	sameAsRebuild(t, dir, idx)
	if idx.Len() != 305 {
		t.Fatalf("Len = %d", idx.Len())
	}
	// Entries carry the SHA-256 of each file.
	for _, e := range idx.Entries()[:3] {
		data, _ := os.ReadFile(e.AbsPath)
		if sum := sha256.Sum256(data); e.Hash != hex.EncodeToString(sum[:]) {
			t.Fatalf("%s: hash %s, want %x", e.Path, e.Hash, sum)
		}
	}

	// Edits: one file changed in place with the same size and mtime, one
	// removed, one added in the deepest directory, one renamed.
	p := filepath.Join(dir, "project_mem_000002.md")
	fi, _ := os.Stat(p)
	data, _ := os.ReadFile(p)
	copy(data[len(data)-8:], "zebraXYZ")
	os.WriteFile(p, data, 0o600)
	os.Chtimes(p, fi.ModTime(), fi.ModTime())
	os.Remove(filepath.Join(dir, "user_mem_000004.md"))
	writeMem(t, dir, "team/deep/new.md", "harbour-zebra", "zebra crossing at the harbour", "the zebra crossing at the harbour is closed")
	os.Rename(filepath.Join(dir, "feedback_mem_000001.md"), filepath.Join(dir, "team", "renamed.md"))

	for _, x := range []*Index{NewIndex(dir, &IndexOptions{CachePath: cache}), idx} {
		st, err = x.RefreshAll(ctx)
		if err != nil || st.Read != 3 || st.Removed != 2 || st.Files != 305 {
			t.Fatalf("refresh after edits: %+v, %v", st, err)
		}
		sameAsRebuild(t, dir, x)
	}
	hits, _ := idx.Search("zebra crossing at the harbour", 3)
	if len(hits) == 0 || hits[0].ID != "team/deep/new.md" {
		t.Fatalf("the added memory is not found: %v", hits)
	}
	// And the next new process sees the edits from the file alone.
	x := NewIndex(dir, &IndexOptions{CachePath: cache})
	if st, _ := x.Refresh(ctx); st.Read > 3 {
		t.Errorf("a process after the edits read %d files", st.Read)
	}
	sameAsRebuild(t, dir, x)
}

func TestRecallIndexRebuildsDamagedOrForeignFiles(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := corpusDir(t, 120)
	ageAll(t, dir)
	cache := filepath.Join(t.TempDir(), "idx")
	if _, err := NewIndex(dir, &IndexOptions{CachePath: cache}).Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	good, err := os.ReadFile(cache)
	if err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(t.TempDir(), "other")
	os.MkdirAll(other, 0o700)
	writeMem(t, other, "a.md", "a", "something else", "body")
	cases := map[string]func() []byte{
		"empty":     func() []byte { return nil },
		"truncated": func() []byte { return good[:len(good)/2] },
		"garbage":   func() []byte { return []byte("not an index at all, just text") },
		"version": func() []byte {
			b := append([]byte{}, good...)
			b[12]++
			return b
		},
	}
	for i := range 40 {
		cases[fmt.Sprintf("flipped-%d", i)] = func() []byte {
			b := append([]byte{}, good...)
			for j := range 4 {
				b[(i*7919+j*104729)%len(b)] ^= 0x5a
			}
			return b
		}
	}
	for name, data := range cases {
		t.Run(name, func(t *testing.T) {
			os.WriteFile(cache, data(), 0o600)
			idx := NewIndex(dir, &IndexOptions{CachePath: cache})
			if _, err := idx.Refresh(ctx); err != nil {
				t.Fatalf("refresh over a %s index: %v", name, err)
			}
			sameAsRebuild(t, dir, idx)
		})
	}
	// The index of another directory at the same path is not used.
	os.WriteFile(cache, good, 0o600)
	idx := NewIndex(other, &IndexOptions{CachePath: cache})
	if st, err := idx.Refresh(ctx); err != nil || st.Files != 1 || st.Read != 1 {
		t.Fatalf("another directory's index: %+v, %v", st, err)
	}
}

// Several processes (here, indexes sharing one file) refreshing at once
// while memories change: no error, and every one ends up right.
func TestRecallIndexConcurrentRefresh(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := corpusDir(t, 150)
	cache := filepath.Join(t.TempDir(), "idx")
	var wg sync.WaitGroup
	errs := make(chan error, 100)
	for w := range 4 {
		wg.Go(func() {
			for i := range 5 {
				if w == 0 {
					writeMem(t, dir, fmt.Sprintf("team/c%d.md", i), fmt.Sprintf("c%d", i), "concurrently written memory", "written while others refresh")
				}
				if _, err := NewIndex(dir, &IndexOptions{CachePath: cache}).Refresh(ctx); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	idx := NewIndex(dir, &IndexOptions{CachePath: cache})
	if _, err := idx.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	sameAsRebuild(t, dir, idx)
}

func TestRecallIndexWatch(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := corpusDir(t, 50)
	ageAll(t, dir)
	idx := NewIndex(dir, nil)
	if err := idx.Watch(); err != nil {
		t.Skipf("no file-system notifications here: %v", err)
	}
	defer idx.Close()
	if st, err := idx.Refresh(ctx); err != nil || st.Read != 55 {
		t.Fatalf("first refresh: %+v, %v", st, err)
	}
	// Nothing changed: Refresh does no work at all.
	if st, _ := idx.Refresh(ctx); st.Read != 0 || st.Listed != 0 {
		t.Fatalf("refresh without changes: %+v", st)
	}
	os.MkdirAll(filepath.Join(dir, "fresh"), 0o700)
	writeMem(t, dir, "fresh/w.md", "watched", "seen through notifications", "walrus in the watched directory")
	deadline := time.Now().Add(20 * time.Second)
	for {
		idx.Refresh(ctx)
		if hits, _ := idx.Search("walrus watched directory", 1); len(hits) == 1 && hits[0].ID == "fresh/w.md" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the new memory never showed up")
		}
		time.Sleep(10 * time.Millisecond)
	}
	sameAsRebuild(t, dir, idx)
}

// In a directory too large to stat every file per refresh, an in-place
// edit (no rename, so no directory changes) is seen by Search at once when
// the memory is among its results, and by Refresh within ⌈files/512⌉
// refreshes otherwise.
func TestRecallIndexSeesInPlaceEdits(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := corpusDir(t, 2200)
	ageAll(t, dir)
	cache := filepath.Join(t.TempDir(), "idx")
	first, err := NewIndex(dir, &IndexOptions{CachePath: cache}).Refresh(ctx)
	if err != nil {
		t.Fatal(err)
	}
	edit := func(rel, word string) {
		p := filepath.Join(dir, rel)
		fi, _ := os.Stat(p)
		data, _ := os.ReadFile(p)
		copy(data[len(data)-len(word)-1:], word)
		os.WriteFile(p, data, 0o600)
		os.Chtimes(p, fi.ModTime(), fi.ModTime())
	}
	// A memory the query finds, edited to no longer match it.
	idx := NewIndex(dir, &IndexOptions{CachePath: cache})
	idx.Refresh(ctx)
	hits, _ := idx.Search("ledger replica failover", 1)
	if len(hits) != 1 {
		t.Fatal("no hit")
	}
	top := hits[0].ID
	p := filepath.Join(dir, filepath.FromSlash(top))
	fi, _ := os.Stat(p)
	os.WriteFile(p, fmt.Appendf(nil, "---\nname: gone\ndescription: nothing about it now\ntype: project\n---\n\n%*s\n", int(fi.Size())-70, "x"), 0o600)
	os.Chtimes(p, fi.ModTime(), fi.ModTime())
	idx = NewIndex(dir, &IndexOptions{CachePath: cache})
	idx.Refresh(ctx)
	if hits, _ := idx.Search("ledger replica failover", 1); len(hits) == 1 && hits[0].ID == top {
		t.Fatalf("Search returned %s as it was before it was edited", top)
	}
	// A memory no query has found yet, edited to match one.
	edit("project_mem_002002.md", " okapiquux ")
	// The rotation reaches every file within ⌈files/budget⌉ refreshes.
	rounds := (first.Files + recallStatBudget - 1) / recallStatBudget
	seen := false
	for i := 0; i < rounds && !seen; i++ {
		x := NewIndex(dir, &IndexOptions{CachePath: cache})
		if _, err := x.Refresh(ctx); err != nil {
			t.Fatal(err)
		}
		hits, _ := x.Search("okapiquux", 1)
		seen = len(hits) == 1
	}
	if !seen {
		t.Fatalf("an in-place edit was not seen within %d refreshes of %d files", rounds, first.Files)
	}
	x := NewIndex(dir, &IndexOptions{CachePath: cache})
	x.RefreshAll(ctx)
	sameAsRebuild(t, dir, x)
}

// Newest checks the strings of the entries it returns (not every entry's,
// which would cost a pass over the directory each prompt): one damaged in
// the file is found, the index rebuilt, and the right header returned.
func TestRecallIndexNewestChecksWhatItReturns(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "memory")
	os.MkdirAll(dir, 0o700)
	old := time.Now().Add(-time.Hour)
	for i := range 20 {
		rel := fmt.Sprintf("m%02d.md", i)
		writeMem(t, dir, rel, fmt.Sprintf("m%02d", i), fmt.Sprintf("description number %02d of the set", i), "body")
		mt := old.Add(time.Duration(i) * time.Minute)
		os.Chtimes(filepath.Join(dir, rel), mt, mt)
	}
	// Files changed within two seconds are re-read by every refresh, which
	// would mend the damage before Newest is asked: the index's clock is
	// moved past that window.
	later := func() time.Time { return time.Now().Add(racyWindow + time.Second) }
	cache := filepath.Join(t.TempDir(), "idx")
	if _, err := NewIndex(dir, &IndexOptions{CachePath: cache, Now: later}).Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(cache)
	if err != nil {
		t.Fatal(err)
	}
	// Damage the newest memory's description where the index keeps it.
	i := bytes.Index(data, []byte("description number 19"))
	if i < 0 {
		t.Fatal("the description is not in the index file")
	}
	data[i] = 'D'
	os.WriteFile(cache, data, 0o600)
	idx := NewIndex(dir, &IndexOptions{CachePath: cache, Now: later})
	if _, err := idx.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	hs, total := idx.Newest(3, nil)
	if total != 20 || len(hs) != 3 || hs[0].Path != "m19.md" || hs[0].Description != "description number 19 of the set" {
		t.Fatalf("Newest after damage: %d total, %+v", total, hs)
	}
}

// plantTemps leaves, beside each of files, a temporary file as a write
// killed an hour ago would, and one as a write still in progress would.
func plantTemps(tb testing.TB, files ...string) (old, young []string) {
	tb.Helper()
	hour := time.Now().Add(-time.Hour)
	for _, f := range files {
		if err := os.MkdirAll(filepath.Dir(f), 0o700); err != nil {
			tb.Fatal(err)
		}
		prefix := atomicfile.TempPrefix(f)
		o, y := prefix+"123456", prefix+"654321"
		for _, p := range []string{o, y} {
			if err := os.WriteFile(p, []byte("a torn copy"), 0o600); err != nil {
				tb.Fatal(err)
			}
		}
		os.Chtimes(o, hour, hour)
		old, young = append(old, o), append(young, y)
	}
	return old, young
}

func TestIndexWriteRemovesLeftTemporaryFiles(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := corpusDir(t, 20)
	state := t.TempDir()
	lookup := func(k string) (string, bool) {
		if k == "MEMDIR_STATE_DIR" {
			return state, true
		}
		return "", false
	}
	cache, err := DefaultIndexPath(dir, lookup)
	if err != nil {
		t.Fatal(err)
	}
	old, young := plantTemps(t, cache, cache+".cursor", cache+".recent", cache+".hint")
	found, err := Leftovers(dir, lookup, false)
	if err != nil || !cmp.Equal(sorted(found), sorted(old)) {
		t.Fatalf("Leftovers = %v, %v; want %v", found, err, old)
	}
	if _, err := NewIndex(dir, &IndexOptions{CachePath: cache}).Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	for _, p := range old {
		if _, err := os.Stat(p); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s is still there after the index was written (%v)", filepath.Base(p), err)
		}
	}
	for _, p := range young {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s, young enough to be another process's write, was removed", filepath.Base(p))
		}
	}
	// doctor --fix removes them without a write.
	old, _ = plantTemps(t, cache)
	if removed, err := Leftovers(dir, lookup, true); err != nil || !cmp.Equal(removed, old) {
		t.Errorf("Leftovers(remove) = %v, %v; want %v", removed, err, old)
	}
	if found, _ := Leftovers(dir, lookup, false); len(found) != 0 {
		t.Errorf("after removal Leftovers = %v", found)
	}
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

// TestOwnedTableMergesAddedFiles covers a table the process owns (an index
// without a cache file, as a long-lived process keeps it): files added
// before, between and after the known ones, and one removed, are merged
// into path order, as a rebuild orders them.
func TestOwnedTableMergesAddedFiles(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := corpusDir(t, 40)
	idx := NewIndex(dir, nil)
	if _, err := idx.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	writeMem(t, dir, "aaa_first.md", "aaa", "sorts before every memory", "zebra crossing at the harbour")
	writeMem(t, dir, "project_mem_000002a.md", "between", "sorts between two memories", "ledger replica")
	writeMem(t, dir, "zzz_last.md", "zzz", "sorts after every memory", "kafka consumer lag")
	writeMem(t, dir, "team/deep/t2a.md", "deep", "between two in a subdirectory", "ledger replica failover")
	os.Remove(filepath.Join(dir, "user_mem_000004.md"))
	st, err := idx.RefreshAll(ctx)
	if err != nil || st.Read != 4 || st.Removed != 1 {
		t.Fatalf("refresh: %+v, %v", st, err)
	}
	if !slices.IsSortedFunc(idx.files, func(a, b recallFile) int { return strings.Compare(a.path, b.path) }) {
		t.Fatal("the file table is out of path order")
	}
	sameAsRebuild(t, dir, idx)
}

func TestSortedByPath(t *testing.T) {
	t.Parallel()
	files := []recallFile{{path: "b.md", name: "b"}, {path: "a/z.md", name: "z"}, {path: "c.md", name: "c"}, {path: "a.md", name: "a"}}
	got := sortedByPath(files)
	var paths, names []string
	for _, f := range got {
		paths, names = append(paths, f.path), append(names, f.name)
	}
	if want := []string{"a.md", "a/z.md", "b.md", "c.md"}; !slices.Equal(paths, want) || !slices.Equal(names, []string{"a", "z", "b", "c"}) {
		t.Fatalf("sortedByPath: %v %v", paths, names)
	}
	if again := sortedByPath(got); &again[0] != &got[0] {
		t.Fatal("a sorted table was copied")
	}
}
