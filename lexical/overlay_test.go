package lexical_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/memdir/memdir/lexical"
)

// Updates over a loaded segment (adds, edits, removals, a document put
// twice, terms the segment lacks, CJK among them) rank exactly as an index
// built from scratch from the same documents: the same hits, in the same
// order, with identical scores. So does the segment written from the
// updated index, and the index once enough was put to copy it into memory.
func TestOverlayRanksAsARebuild(t *testing.T) {
	t.Parallel()
	docs, qs := devDocs(t)
	qs = append(qs, "zebras note", "部署 zebras", "quuxword")
	rng := rand.New(rand.NewPCG(7, 11))
	base := docs[:len(docs)-20]
	y, err := lexical.Load(segment(t, lexical.New(base, nil)), nil)
	if err != nil {
		t.Fatal(err)
	}
	live := map[string]lexical.Doc{}
	for _, d := range base {
		live[d.ID] = d
	}
	check := func(step string) {
		t.Helper()
		var want []lexical.Doc
		for _, d := range docs {
			if l, ok := live[d.ID]; ok {
				want = append(want, l)
			}
		}
		for id, d := range live {
			if !hasID(docs, id) {
				want = append(want, d)
			}
		}
		ref := lexical.New(want, nil)
		if y.Len() != ref.Len() {
			t.Fatalf("%s: Len %d, want %d", step, y.Len(), ref.Len())
		}
		z, err := lexical.Load(segment(t, y), nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range qs {
			r := ref.Search(q, 30)
			if d := cmp.Diff(r, y.Search(q, 30)); d != "" {
				t.Fatalf("%s: query %q: updated index differs from a rebuild (-rebuild +updated):\n%s", step, q, d)
			}
			if d := cmp.Diff(r, z.Search(q, 30)); d != "" {
				t.Fatalf("%s: query %q: its segment differs from a rebuild:\n%s", step, q, d)
			}
		}
	}
	for step := range 12 {
		switch step % 4 {
		case 0: // add
			d := docs[len(docs)-20+step]
			y.Put(d)
			live[d.ID] = d
		case 1: // edit, with words the segment never held
			d := base[rng.IntN(len(base))]
			d.Body = fmt.Sprintf("nothing left of it but a note about zebras %d quuxword 部署脚本", step)
			y.Put(d)
			live[d.ID] = d
		case 2: // remove
			d := base[rng.IntN(len(base))]
			if got, want := y.Remove(d.ID), live[d.ID].ID != ""; got != want {
				t.Fatalf("Remove(%s) = %v, want %v", d.ID, got, want)
			}
			delete(live, d.ID)
		case 3: // remove something put since, and put an edit twice
			d := docs[len(docs)-20+step-3]
			y.Remove(d.ID)
			delete(live, d.ID)
			e := base[rng.IntN(len(base))]
			e.Name = "zebras"
			y.Put(e)
			y.Put(e)
			live[e.ID] = e
		}
		for id := range live {
			if !y.Has(id) {
				t.Fatalf("step %d: Has(%s) false", step, id)
			}
		}
		check(fmt.Sprintf("step %d", step))
	}
	// Enough puts to copy the index into memory.
	for i := range 200 {
		d := lexical.Doc{ID: fmt.Sprintf("new/%03d.md", i), Name: "zebras", Body: fmt.Sprintf("note %d about zebras and deploys", i)}
		y.Put(d)
		live[d.ID] = d
	}
	check("after many puts")
	if y.Corrupt() {
		t.Fatal("reported corrupt")
	}
}

func hasID(docs []lexical.Doc, id string) bool {
	for _, d := range docs {
		if d.ID == id {
			return true
		}
	}
	return false
}
