package recall

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memdir/memdir"
)

// bumpMTime moves a directory's modification time a second on, as a change
// in a later clock tick would.
func bumpMTime(tb testing.TB, dir string) {
	tb.Helper()
	fi, err := os.Stat(dir)
	if err != nil {
		tb.Fatal(err)
	}
	t := fi.ModTime().Add(time.Second + 1234)
	if err := os.Chtimes(dir, t, t); err != nil {
		tb.Fatal(err)
	}
}

// openIndexedDir opens a new memory directory with its own journal and
// recall index file, whose path it returns.
func openIndexedDir(tb testing.TB) (*memdir.Dir, string) {
	tb.Helper()
	base := tb.TempDir()
	cache := filepath.Join(base, "state", "idx")
	d, err := memdir.Open(filepath.Join(base, "memory"), &memdir.Options{Journal: memdir.NewJournal(filepath.Join(base, "journal"), nil), Names: NewNames(filepath.Join(base, "memory"), cache)})
	if err != nil {
		tb.Fatal(err)
	}
	return d, cache
}

// A save records what it added, so that the next save's lookup need not
// list the directory; anything else that changed the directory, or a new
// index file, sends the lookup back to listing.
func TestSaveRecordsRecentSaves(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d, cache := openIndexedDir(t)
	for _, n := range []string{"one", "two", "three"} {
		mustSave(t, d, &memdir.Memory{Name: n, Description: "filler", Type: memdir.TypeUser, Body: "x"}, nil)
	}
	idx := NewIndex(d.Path(), &IndexOptions{CachePath: cache})
	lookup := func(name string) ([]string, bool) {
		t.Helper()
		paths, _, ok := NewIndex(d.Path(), &IndexOptions{CachePath: cache}).lookupRecent(name)
		slices.Sort(paths)
		return paths, ok
	}
	// The second save's lookup built the index (holding user_one.md); the
	// third memory is known through the record only.
	if paths, ok := lookup("three"); !ok || !slices.Equal(paths, []string{"user_three.md"}) {
		t.Fatalf("lookup through the record = %v, %v; want [user_three.md]", paths, ok)
	}
	res := mustSave(t, d, &memdir.Memory{Name: "two", Description: "updated", Type: memdir.TypeUser, Body: "y"}, nil)
	if res.Created || res.Path != "user_two.md" {
		t.Fatalf("save by a recorded name = %+v, want an update of user_two.md", res)
	}

	// Another program adds a memory of that name: the directory changed,
	// the record is not used, and the save sees both files.
	os.WriteFile(d.Abs("elsewhere.md"), []byte("---\nname: two\ndescription: b\ntype: user\n---\nx\n"), 0o600)
	bumpMTime(t, d.Path())
	if _, ok := lookup("two"); ok {
		t.Fatal("the record was used after another program changed the directory")
	}
	if _, err := d.Save(ctx, &memdir.Memory{Name: "two", Description: "c", Type: memdir.TypeUser, Body: "z"}, nil); err == nil {
		t.Fatal("save by a name two files hold succeeded")
	}
	os.Remove(d.Abs("elsewhere.md"))
	bumpMTime(t, d.Path())
	// A save after listing records again, with what the listing found.
	mustSave(t, d, &memdir.Memory{Name: "four", Description: "filler", Type: memdir.TypeUser, Body: "x"}, nil)
	if paths, ok := lookup("one"); !ok || !slices.Equal(paths, []string{"user_one.md"}) {
		t.Fatalf("lookup after a listed save = %v, %v; want [user_one.md]", paths, ok)
	}

	// A refresh rewrites the index: the record extends the old one and is
	// no longer used; the index now knows the names.
	if _, err := idx.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if _, ok := lookup("one"); ok {
		t.Fatal("the record was used with another index file")
	}
	if paths, err := NewIndex(d.Path(), &IndexOptions{CachePath: cache}).LookupFresh(ctx, "four"); err != nil || !slices.Equal(paths, []string{"user_four.md"}) {
		t.Fatalf("LookupFresh after a refresh = %v, %v", paths, err)
	}

	// A damaged record is ignored.
	mustSave(t, d, &memdir.Memory{Name: "five", Description: "filler", Type: memdir.TypeUser, Body: "x"}, nil)
	if _, ok := lookup("five"); !ok {
		t.Fatal("no record after a save")
	}
	os.WriteFile(cache+".recent", []byte("{\"base\": garbage"), 0o600)
	if _, ok := lookup("five"); ok {
		t.Fatal("a damaged record was used")
	}
	res = mustSave(t, d, &memdir.Memory{Name: "five", Description: "again", Type: memdir.TypeUser, Body: "y"}, nil)
	if res.Created {
		t.Fatalf("save with a damaged record created %s instead of updating user_five.md", res.Path)
	}

	// A record whose times are whole seconds (a file system with coarse
	// timestamps) is not trusted.
	rs := NewIndex(d.Path(), &IndexOptions{CachePath: cache}).readRecent()
	if rs == nil {
		t.Fatal("no record after a save")
	}
	whole := time.Unix(time.Now().Unix()-10, 0)
	os.Chtimes(d.Path(), whole, whole)
	rs.Dirs[0].MTime = whole.UnixNano()
	NewIndex(d.Path(), &IndexOptions{CachePath: cache}).writeRecent(rs)
	if _, ok := lookup("five"); ok {
		t.Fatal("a record of whole-second times was used")
	}
}

// An edit in place that gives a memory another name, unseen by any
// refresh, is missed by the next save of that name, which creates a file
// beside it; the save after updates that file. Once a refresh has seen the
// edit (a recall, the next prompt's hook), a save by the name refuses,
// naming both files. docs/performance.md says so.
func TestSaveAfterAnUnseenInPlaceRename(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d, cache := openIndexedDir(t)
	mustSave(t, d, &memdir.Memory{Name: "first", Description: "filler", Type: memdir.TypeUser, Body: "x"}, nil)
	mustSave(t, d, &memdir.Memory{Name: "old", Description: "to be renamed", Type: memdir.TypeUser, Body: "x"}, nil)
	// An editor gives user_old.md the name "new", writing in place: the
	// directory's time does not change.
	dirTime := mtime(t, d.Path())
	os.WriteFile(d.Abs("user_old.md"), []byte("---\nname: new\ndescription: renamed by hand\ntype: user\n---\nx\n"), 0o600)
	os.Chtimes(d.Path(), dirTime, dirTime)

	res := mustSave(t, d, &memdir.Memory{Name: "new", Description: "saved", Type: memdir.TypeUser, Body: "y"}, nil)
	if !res.Created || res.Path != "user_new.md" {
		t.Fatalf("first save = %+v, want user_new.md created beside the unseen rename", res)
	}
	res = mustSave(t, d, &memdir.Memory{Name: "new", Description: "saved again", Type: memdir.TypeUser, Body: "z"}, nil)
	if res.Created || res.Path != "user_new.md" {
		t.Fatalf("second save = %+v, want an update of user_new.md", res)
	}
	if _, err := NewIndex(d.Path(), &IndexOptions{CachePath: cache}).RefreshAll(ctx); err != nil {
		t.Fatal(err)
	}
	_, err := d.Save(ctx, &memdir.Memory{Name: "new", Description: "third", Type: memdir.TypeUser, Body: "w"}, nil)
	if err == nil || !strings.Contains(err.Error(), "user_new.md") || !strings.Contains(err.Error(), "user_old.md") {
		t.Fatalf("save after a refresh saw both = %v, want a refusal naming both files", err)
	}
}

func mtime(tb testing.TB, p string) time.Time {
	tb.Helper()
	fi, err := os.Stat(p)
	if err != nil {
		tb.Fatal(err)
	}
	return fi.ModTime()
}
