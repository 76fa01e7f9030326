package lexical

import (
	"bytes"
	"fmt"
	"testing"
)

func TestDenseQuery(t *testing.T) {
	q := func(dfs ...int32) []queryTerm {
		var out []queryTerm
		for _, df := range dfs {
			out = append(out, queryTerm{df: df})
		}
		return out
	}
	for _, c := range []struct {
		query []queryTerm
		n     int
		want  bool
	}{
		{q(), 100000, false},
		{q(10, 20, 3), 100000, false},
		{q(3000, 124), 100000, false},
		{q(3000, 125), 100000, true}, // 3,125 = n/32
		{q(-1, 50000), 100000, true},
		{q(0, 1), 20, true}, // a tiny index: the accumulator is under two pages anyway
	} {
		if got := denseQuery(c.query, c.n); got != c.want {
			t.Errorf("denseQuery(%v, %d) = %v, want %v", c.query, c.n, got, c.want)
		}
	}
}

// loadedSegment writes docs' segment and loads it; data is the segment,
// for a test to load again and damage.
func loadedSegment(t *testing.T, docs []Doc) (*Index, []byte) {
	t.Helper()
	var out bytes.Buffer
	if _, err := New(docs, nil).WriteTo(&out); err != nil {
		t.Fatal(err)
	}
	data := alignedCopy(out.Bytes())
	x, err := Load(data, nil)
	if err != nil {
		t.Fatal(err)
	}
	return x, data
}

// A damaged posting count is found when it is read, though its posting
// list is not (see segDocFreq); a sound segment's counts all pass.
func TestDamagedPostingCount(t *testing.T) {
	var docs []Doc
	for i := range 40 {
		docs = append(docs, Doc{ID: fmt.Sprintf("m%02d.md", i), Name: fmt.Sprintf("memory %d", i),
			Body: fmt.Sprintf("deploys go through the blue green script, step %d of the runbook; word%d", i%7, i)})
	}
	x, data := loadedSegment(t, docs)
	for id := range x.seg.dict {
		x.docFreq(uint32(id))
	}
	if x.Corrupt() {
		t.Fatal("a sound segment's posting counts look damaged")
	}
	for _, k := range []int{0, len(x.seg.dict) / 2, len(x.seg.dict) - 1} {
		for _, field := range []string{"count", "offset"} {
			y, err := Load(alignedCopy(data), nil)
			if err != nil {
				t.Fatal(err)
			}
			if field == "count" {
				y.seg.dict[k].PostN ^= 0x5a
			} else {
				y.seg.dict[k].PostOff ^= 1 << 3
			}
			y.docFreq(uint32(k))
			if !y.Corrupt() {
				t.Errorf("term %d with a damaged posting %s: not found damaged", k, field)
			}
		}
	}
}

// A damaged numeric flag (any of its bytes) or text offset is found when
// the term is read other than through the dictionary search (a
// document's term list, for feedback): the text's checksum covers both;
// a sound segment's terms all pass.
func TestDamagedTermFlag(t *testing.T) {
	docs := []Doc{{ID: "a.md", Body: "deploys 2026 blue green v1.2"}, {ID: "b.md", Body: "runbook 42 kafka"}}
	x, data := loadedSegment(t, docs)
	for id := range x.seg.dict {
		x.numericTerm(uint32(id))
		x.termText(uint32(id))
	}
	if x.Corrupt() {
		t.Fatal("a sound segment's terms look damaged")
	}
	for k := range x.seg.dict {
		for _, damage := range []func(*segTerm){
			func(t *segTerm) { t.Numeric ^= 1 },
			func(t *segTerm) { t.Numeric ^= 0x5a << 24 },
			func(t *segTerm) { t.TextOff ^= 1 },
		} {
			y, err := Load(alignedCopy(data), nil)
			if err != nil {
				t.Fatal(err)
			}
			damage(&y.seg.dict[k])
			y.numericTerm(uint32(k))
			if !y.Corrupt() {
				t.Errorf("term %d (%q) with a damaged entry: not found damaged", k, x.termText(uint32(k)))
			}
		}
	}
}

// A lookup of one posting (what feedback does for many terms) finds what
// a search of the whole merged list finds, in the segment and in what was
// put over it, and leaves the segment's list unsummed: summing it is left
// to a search that scores the term.
func TestPostingLookupOverSegmentAndOverlay(t *testing.T) {
	var docs []Doc
	for i := range 60 {
		docs = append(docs, Doc{ID: fmt.Sprintf("m%02d.md", i), Name: fmt.Sprintf("memory %d", i),
			Body: fmt.Sprintf("deploys go through the blue green script, step %d of the runbook; word%d", i%7, i%11)})
	}
	var out bytes.Buffer
	if _, err := New(docs, nil).WriteTo(&out); err != nil {
		t.Fatal(err)
	}
	x, err := Load(alignedCopy(out.Bytes()), nil)
	if err != nil {
		t.Fatal(err)
	}
	for id := range x.seg.dict {
		for slot := range uint32(len(x.seg.docs)) {
			x.posting(uint32(id), slot)
		}
		if x.seg.verified(id) {
			t.Fatalf("term %d: summed by a lookup", id)
		}
	}
	x.Put(Doc{ID: "m03.md", Name: "memory 3", Body: "deploys go through the canary script now; word3"})
	x.Put(Doc{ID: "new.md", Name: "new memory", Body: "the blue green script is retired; word99"})
	slots := uint32(len(x.seg.docs) + len(x.docs))
	for id := range uint32(x.numTerms()) {
		whole := x.postingsOf(id)
		for slot := range slots {
			got, gotOK := x.posting(id, slot)
			want, wantOK := findPosting(whole, slot)
			if got != want || gotOK != wantOK {
				t.Fatalf("term %q, slot %d: lookup %v %v, whole list %v %v", x.termText(id), slot, got, gotOK, want, wantOK)
			}
		}
	}
	if x.Corrupt() {
		t.Error("a sound segment looks damaged")
	}
}
