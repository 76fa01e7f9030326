package recall

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/memdir/memdir"
)

// A process that only refreshes and searches reads the file table in
// place, over a base and a delta alike, and every answer it gives is a
// rebuild's: positions, paths, stamps, headers, lookups by path (found
// and missing), the newest memories and the vector keys. Owning the table
// gives a rebuild's records.
func TestWarmIndexReadsTheTableInPlace(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := corpusDir(t, 700) // past the stat budget: a refresh stats a share
	ageAll(t, dir)
	// Times with ties, for the newest memories' order.
	ents, _ := os.ReadDir(dir)
	for i, e := range ents {
		tm := time.Now().Add(-time.Hour - time.Duration(i*7919%97)*time.Minute)
		os.Chtimes(filepath.Join(dir, e.Name()), tm, tm)
	}
	cache := filepath.Join(t.TempDir(), "state", "idx")
	later := func() time.Time { return time.Now().Add(racyWindow + time.Second) }
	open := func() *Index { return NewIndex(dir, &IndexOptions{CachePath: cache, Now: later}) }
	if _, err := open().Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	check := func(step string, x *Index) {
		t.Helper()
		ref := NewIndex(dir, &IndexOptions{Now: later})
		if _, err := ref.RefreshAll(ctx); err != nil {
			t.Fatal(err)
		}
		if x == nil {
			x = open()
		}
		if _, err := x.RefreshAll(ctx); err != nil {
			t.Fatal(err)
		}
		for _, q := range indexQueries {
			x.Search(q, 30)
		}
		newest, total := x.Newest(40, nil)
		wantNewest, wantTotal := ref.Newest(40, nil)
		paths, keys, at := x.vectorKeys(map[string]bool{ref.files[3].path: true})
		wantPaths, wantKeys, wantAt := ref.vectorKeys(map[string]bool{ref.files[3].path: true})
		if x.view == nil {
			t.Fatalf("%s: refreshing and searching made the table records", step)
		}
		if x.nfiles() != len(ref.files) {
			t.Fatalf("%s: %d files, a rebuild has %d", step, x.nfiles(), len(ref.files))
		}
		for i := range ref.files {
			f := &ref.files[i]
			s, fl := x.metaAt(i)
			if _, want := f.meta(); x.pathAt(i) != f.path || *s != f.stamp || fl != want {
				t.Fatalf("%s: file %d is %s %v %b, a rebuild's %s %v %b", step, i, x.pathAt(i), *s, fl, f.path, f.stamp, want)
			}
			if d := cmp.Diff(f.header(dir), x.headerAt(i)); d != "" {
				t.Fatalf("%s: header %d differs:\n%s", step, i, d)
			}
			if j, ok := x.find(f.path); !ok || j != i {
				t.Fatalf("%s: find(%s) = %d, %v; want %d", step, f.path, j, ok, i)
			}
		}
		if all := ref.Headers(); len(all) < 40 || cmp.Diff(all[:40], wantNewest) != "" {
			t.Fatalf("%s: a rebuild's Newest is not the head of its Headers", step)
		}
		if d := cmp.Diff([]any{wantNewest, wantTotal, wantPaths, wantKeys, wantAt}, []any{newest, total, paths, keys, at}); d != "" {
			t.Fatalf("%s: newest or vector keys differ from a rebuild:\n%s", step, d)
		}
		// The headers by the positions vectorKeys gave, and by wrong ones
		// (each path's neighbour's), which must fall back to a search.
		wantHeads := ref.headersOf(wantPaths)
		wrong := make([]int32, len(at))
		for k := range at {
			wrong[k] = (at[k] + 1) % int32(x.nfiles())
		}
		for _, pos := range [][]int32{at, wrong, nil} {
			if d := cmp.Diff(wantHeads, x.headersAt(paths, pos)); d != "" {
				t.Fatalf("%s: headers of the vector keys differ from a rebuild's:\n%s", step, d)
			}
		}
		// Memories by the span of their modification time, as the day
		// factor counts them: two spans that split the directory.
		lo, hi := ref.files[0].stamp.MTime, ref.files[0].stamp.MTime
		for i := range ref.files {
			lo, hi = min(lo, ref.files[i].stamp.MTime), max(hi, ref.files[i].stamp.MTime)
		}
		mid := lo + (hi-lo)/2
		spans := [][2]int64{{mid, hi + 1}, {lo, mid}}
		if got, want := x.countModified(spans), ref.countModified(spans); !slices.Equal(got, want) || want[0]+want[1] != ref.searchable() {
			t.Fatalf("%s: memories by time span %v, a rebuild's %v of %d", step, got, want, ref.searchable())
		}
		// A session's surfaced memories left out: found by position in
		// the view, or, when one is no longer indexed, by the set.
		all := ref.Headers()
		for _, skip := range []map[string]bool{
			{all[0].Path: true, all[5].Path: true, ref.files[3].path: true},
			{all[1].Path: true, "no/such/surfaced.md": true},
		} {
			var want []memdir.Header
			for _, h := range all {
				if !skip[h.Path] {
					want = append(want, h)
				}
			}
			got, gotTotal := x.Newest(40, skip)
			if d := cmp.Diff(want[:40], got); d != "" || gotTotal != len(want) {
				t.Fatalf("%s: newest without %v: %d total, want %d:\n%s", step, skip, gotTotal, len(want), d)
			}
		}
		if x.view == nil {
			t.Fatalf("%s: the lookups made the table records", step)
		}
		if _, ok := x.find("no/such/memory.md"); ok || x.view != nil || x.damaged {
			t.Fatalf("%s: a missing path: found %v, view kept %v, damaged %v; want it owned, checked and missing", step, ok, x.view != nil, x.damaged)
		}
		for i := range x.files {
			x.files[i].checked, ref.files[i].checked = false, false
			x.files[i].crc, ref.files[i].crc = 0, 0 // a checksum is kept only of what was loaded
		}
		if d := cmp.Diff(ref.files, x.files, cmp.AllowUnexported(recallFile{}, fileStamp{})); d != "" {
			t.Fatalf("%s: owned records differ from a rebuild's:\n%s", step, d)
		}
	}
	check("a base", nil)
	// A delta of an in-place edit, an addition in a new directory (first
	// in path order), one at the end, and a removal.
	os.MkdirAll(filepath.Join(dir, "aaa"), 0o700)
	writeMem(t, dir, "aaa/first.md", "first", "sorts first", "kafka consumer lag at the harbour")
	writeMem(t, dir, "zzz_last.md", "last", "sorts last", "the zebra crossing")
	writeMem(t, dir, "project_mem_000002.md", "zebra-edit", "edited in place", "the zebra crossing at the harbour is closed")
	os.Remove(filepath.Join(dir, "user_mem_000004.md"))
	if _, err := open().RefreshAll(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(cache + ".delta"); err != nil {
		t.Fatalf("no delta written: %v", err)
	}
	check("a base and a delta", nil)

	// A process with the table in view refreshes over changes of every
	// kind, in place and by rename, and keeps it in view.
	x := open()
	if _, err := x.Refresh(ctx); err != nil || x.view == nil {
		t.Fatalf("opening: %v, view %v", err, x.view != nil)
	}
	var names []string
	ents, _ = os.ReadDir(dir)
	for _, e := range ents {
		if !e.IsDir() && e.Name() != "MEMORY.md" {
			names = append(names, e.Name())
		}
	}
	writeMem(t, dir, "aaa/0-before-first.md", "before", "sorts before all", "the harbour crane schedule")
	writeMem(t, dir, names[200]+"-between.md", "between", "sorts between two", "a zebra at the crane")
	writeMem(t, dir, "zzz_last.md", "last-again", "rewritten in place", "the zebra crossing again")
	tmp := filepath.Join(dir, names[100]+".tmp")
	if err := os.WriteFile(tmp, []byte("---\nname: renamed-in\ndescription: by rename\ntype: project\n---\n\nthe crane by rename\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, err := range []error{
		os.Rename(tmp, filepath.Join(dir, names[100])),
		os.Remove(filepath.Join(dir, "aaa/first.md")),
		os.Remove(filepath.Join(dir, names[10])),
		os.WriteFile(filepath.Join(dir, names[11]), []byte("\x00\x01 not a memory"), 0o600),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	check("changes refreshed in view", x)
	check("the file those changes left", nil)
}

// A path damaged in the cache file so that the table is out of order (the
// table's checksum does not cover the strings; each record's does, and
// owning the table checks the order too) is caught, and the index is
// rebuilt: it answers as a rebuild does.
func TestViewedTableOutOfOrderIsRebuilt(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := corpusDir(t, 300)
	ageAll(t, dir)
	cache := filepath.Join(t.TempDir(), "idx")
	later := func() time.Time { return time.Now().Add(racyWindow + time.Second) }
	x := NewIndex(dir, &IndexOptions{CachePath: cache, Now: later})
	if _, err := x.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(cache)
	if err != nil {
		t.Fatal(err)
	}
	// The first path, made to sort last.
	first := []byte(x.pathAt(0))
	i := bytes.Index(data, first)
	if i < 0 {
		t.Fatal("the first path is not in the cache file")
	}
	data[i] = '~'
	if err := os.WriteFile(cache, data, 0o600); err != nil {
		t.Fatal(err)
	}
	y := NewIndex(dir, &IndexOptions{CachePath: cache, Now: later})
	if _, err := y.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	sameAsRebuild(t, dir, y)
	if y.damaged {
		t.Fatal("still marked damaged after the rebuild")
	}
}
