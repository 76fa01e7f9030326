package lexical

import (
	"cmp"
	"slices"
	"strings"
	"testing"
	"unsafe"

	gocmp "github.com/google/go-cmp/cmp"

	"github.com/memdir/memdir/internal/evalset"
)

// After feedback, a search adds only the appended terms to the first
// pass's sums. That must be, bit for bit and in the same order of
// documents, what clearing the sums and accumulating the whole expanded
// query gives, on a segment with an overlay as on an index in memory.
func TestFeedbackPassAddsOnlyTheAppendedTerms(t *testing.T) {
	t.Parallel()
	docs, queries := labelledDocs(t, "recall-dev.json", "recall-oss.json")
	mem, loaded := bothForms(t, docs, nil)
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

// labelledDocs returns the memories and queries of labelled sets in
// testdata/eval, each memory's ID prefixed by its set's name.
func labelledDocs(t *testing.T, sets ...string) (docs []Doc, queries []string) {
	t.Helper()
	for _, name := range sets {
		set, err := evalset.Load("../testdata/eval/" + name)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range set.Memories {
			docs = append(docs, Doc{ID: name + "/" + m.File, Name: m.Name, Description: m.Description, Body: m.Body})
		}
		for _, q := range set.Queries {
			queries = append(queries, q.Query)
		}
	}
	return docs, queries
}

// bothForms returns an index of docs in memory and one loaded from its
// segment with a document put over it and one removed.
func bothForms(t *testing.T, docs []Doc, opts *Options) (mem, loaded *Index) {
	t.Helper()
	mem = New(docs, opts)
	seg, err := mem.AppendBinary(nil)
	if err != nil {
		t.Fatal(err)
	}
	if loaded, err = Load(alignedCopy(seg), opts); err != nil {
		t.Fatal(err)
	}
	loaded.Put(Doc{ID: "zz-added.md", Name: "deploy", Body: "the deploy runbook for the dispatch cluster"})
	loaded.Remove(docs[3].ID)
	return mem, loaded
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

// The feedback terms weighed in the order of their bounds are those, with
// the same weights, that weighing every candidate term gives (the way the
// search chose them before): on three labelled sets, an index in memory
// and a segment with an overlay, and several depths of feedback.
func TestFeedbackTermsAsWeighingEveryTerm(t *testing.T) {
	t.Parallel()
	docs, queries := labelledDocs(t, "recall-dev.json", "recall-oss.json", "recall-app.json")
	pruned := 0
	for _, opts := range []*Options{nil, {Feedback: 5, ExpandTerms: 5}, {Feedback: 1, ExpandTerms: 60}} {
		mem, loaded := bothForms(t, docs, opts)
		for _, x := range []*Index{mem, loaded} {
			for _, q := range queries {
				got, want := x.scratchFor(q), x.scratchFor(q)
				sc := x.newScorer()
				x.accumulate(got, got.query, &sc)
				x.accumulate(want, want.query, &sc)
				n := len(got.query)
				okGot := len(got.touched) > 0 && x.addFeedbackTerms(got, &sc)
				okWant := len(want.touched) > 0 && weighEveryTerm(x, want, &sc)
				if okGot != okWant {
					t.Fatalf("%q: expanded %v, weighing every term %v", q, okGot, okWant)
				}
				if d := gocmp.Diff(want.query[n:], got.query[n:], gocmp.AllowUnexported(queryTerm{})); d != "" {
					t.Fatalf("%q (%+v): feedback terms differ from weighing every term:\n%s", q, opts, d)
				}
				if len(got.expand) > len(got.query)-n {
					pruned++
				}
			}
		}
	}
	if pruned == 0 {
		t.Fatal("no search had more candidate terms than it chose: the test shows nothing")
	}
}

// weighEveryTerm is feedback as the search did it before bounds: every
// candidate term weighed exactly, then the heaviest chosen.
func weighEveryTerm(x *Index, s *searchScratch, sc *scorer) bool {
	o := &x.opts
	top := x.selectTop(s, o.Feedback)
	if len(top) == 0 || top[0].score <= 0 {
		return false
	}
	expand := map[uint32]float64{}
	n := float64(x.numDocs())
	for _, t := range top {
		dw := t.score / top[0].score
		l := x.docLen(t.slot)
		for _, id := range x.docTermIDs(t.slot) {
			if x.docFreq(id) < 2 || x.numericTerm(id) || s.inQuery(id) {
				continue
			}
			p, ok := x.posting(id, t.slot)
			if !ok {
				continue
			}
			expand[id] += dw * idf(n, float64(x.docFreq(id))) * sc.saturate(p, l)
		}
	}
	if len(expand) == 0 {
		return false
	}
	type cand struct {
		id uint32
		w  float64
	}
	var cands []cand
	for id, w := range expand {
		cands = append(cands, cand{id, w})
	}
	slices.SortFunc(cands, func(a, b cand) int {
		if c := cmp.Compare(b.w, a.w); c != 0 {
			return c
		}
		return strings.Compare(x.termText(a.id), x.termText(b.id))
	})
	cands = cands[:min(len(cands), o.ExpandTerms)]
	for _, c := range cands {
		s.query = append(s.query, queryTerm{
			text: x.termText(c.id), id: c.id, df: x.docFreq(c.id), idf: idf(n, float64(x.docFreq(c.id))),
			weight: o.ExpandWeight * c.w / cands[0].w, added: true,
		})
	}
	return true
}
