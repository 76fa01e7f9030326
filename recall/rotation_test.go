package recall

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestRotationFindsAnEditWhateverIsAdded: a memory rewritten in place, in
// a directory whose entries do not change, is seen within ⌈n/512⌉
// refreshes even when every refresh sees a new memory that sorts before it
// (which moved every file's position in the table along with the
// rotation, so that the edited file was never stat-ed).
func TestRotationFindsAnEditWhateverIsAdded(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "memory")
	const k = 4
	n := k*recallStatBudget - 5
	for _, sub := range []string{"aa", "zz"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	for i := range n {
		writeMem(t, dir, fmt.Sprintf("zz/m%05d.md", i), fmt.Sprintf("memory %d", i), fmt.Sprintf("note number %d", i), "plain text")
	}
	later := func() time.Time { return time.Now().Add(racyWindow + time.Second) }
	cache := filepath.Join(t.TempDir(), "idx")
	open := func() *Index { return NewIndex(dir, &IndexOptions{CachePath: cache, Now: later}) }
	if _, err := open().Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	// Edit files in every residue of the rotation, in place.
	edited := []int{10, 11, 12, 13, 700, 1501}
	for _, i := range edited {
		writeMem(t, dir, fmt.Sprintf("zz/m%05d.md", i), fmt.Sprintf("memory %d", i), fmt.Sprintf("note number %d", i), word(i))
	}
	found := map[int]int{}
	for r := 1; r <= 3*k && len(found) < len(edited); r++ {
		// A new memory that sorts before every edited one.
		writeMem(t, dir, fmt.Sprintf("aa/a%05d.md", 1000-r), "new", "a new memory", "text")
		x := open()
		if _, err := x.Refresh(ctx); err != nil {
			t.Fatal(err)
		}
		for _, i := range edited {
			if _, ok := found[i]; ok {
				continue
			}
			if hits, _ := x.Search(word(i), 1); len(hits) > 0 {
				found[i] = r
			}
		}
	}
	for _, i := range edited {
		r, ok := found[i]
		switch {
		case !ok:
			t.Errorf("the edit of m%05d was not seen in %d refreshes", i, 3*k)
		case r > k+1:
			t.Errorf("the edit of m%05d was seen after %d refreshes, want within %d", i, r, k+1)
		}
	}
}

// word is a word of letters only, one per file, which the tokenizer keeps
// whole and no stemming makes another's.
func word(i int) string {
	w := []byte("zebra")
	for i++; i > 0; i /= 26 {
		w = append(w, byte('a'+i%26))
	}
	return string(append(w, "quux"...))
}
