package lexical

import (
	"testing"
	"unsafe"

	"github.com/memdir/memdir/internal/evalset"
)

// After feedback, a search adds only the appended terms to the first
// pass's sums. That must be, bit for bit and in the same order of
// documents, what clearing the sums and accumulating the whole expanded
// query gives, on a segment with an overlay as on an index in memory.
func TestFeedbackPassAddsOnlyTheAppendedTerms(t *testing.T) {
	t.Parallel()
	var docs []Doc
	var queries []string
	for _, p := range []string{"../testdata/eval/recall-dev.json", "../testdata/eval/recall-oss.json"} {
		set, err := evalset.Load(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range set.Memories {
			docs = append(docs, Doc{ID: p + "/" + m.File, Name: m.Name, Description: m.Description, Body: m.Body})
		}
		for _, q := range set.Queries {
			queries = append(queries, q.Query)
		}
	}
	mem := New(docs, nil)
	seg, err := mem.AppendBinary(nil)
	if err != nil {
		t.Fatal(err)
	}
	loaded, err := Load(alignedCopy(seg), nil)
	if err != nil {
		t.Fatal(err)
	}
	loaded.Put(Doc{ID: "zz-added.md", Name: "deploy", Body: "the deploy runbook for the dispatch cluster"})
	loaded.Remove(docs[3].ID)
	expanded := 0
	for _, x := range []*Index{mem, loaded} {
		for _, q := range queries {
			inc, full := x.scratchFor(q), x.scratchFor(q)
			sc := x.newScorer()
			x.accumulate(inc, inc.query, &sc)
			x.accumulate(full, full.query, &sc)
			n := len(inc.query)
			if len(inc.touched) == 0 || !x.addFeedbackTerms(inc, &sc) || !x.addFeedbackTerms(full, &sc) {
				continue
			}
			expanded++
			x.accumulate(inc, inc.query[n:], &sc)
			full.reset()
			x.accumulate(full, full.query, &sc)
			if len(inc.touched) != len(full.touched) {
				t.Fatalf("%q: %d documents touched, a full pass touches %d", q, len(inc.touched), len(full.touched))
			}
			for i, slot := range full.touched {
				if inc.touched[i] != slot || inc.acc[slot] != full.acc[slot] {
					t.Fatalf("%q: document %d: %+v, a full pass gives %+v", q, slot, inc.acc[slot], full.acc[slot])
				}
			}
		}
	}
	if expanded < len(queries) {
		t.Fatalf("feedback expanded only %d of %d searches", expanded, 2*len(queries))
	}
}

// scratchFor parses q into a new scratch sized for x, as Search does.
func (x *Index) scratchFor(q string) *searchScratch {
	s := &searchScratch{expand: make(map[uint32]float64), acc: make([]docAcc, x.slots())}
	x.parseQuery(s, q)
	return s
}

func alignedCopy(b []byte) []byte {
	words := make([]uint64, (len(b)+7)/8)
	out := unsafe.Slice((*byte)(unsafe.Pointer(&words[0])), len(b))
	copy(out, b)
	return out
}
