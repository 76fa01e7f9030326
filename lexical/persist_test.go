package lexical_test

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"unsafe"

	"github.com/google/go-cmp/cmp"

	"github.com/memdir/memdir/internal/evalset"
	"github.com/memdir/memdir/internal/framed"
	"github.com/memdir/memdir/lexical"
)

// aligned copies data into 8-byte aligned memory, as a mapped file is.
func aligned(data []byte) []byte {
	words := make([]uint64, (len(data)+7)/8+1)
	out := unsafe.Slice((*byte)(unsafe.Pointer(&words[0])), len(words)*8)[:len(data)]
	copy(out, data)
	return out
}

func devDocs(t *testing.T) ([]lexical.Doc, []string) {
	t.Helper()
	set, err := evalset.Load(devSet)
	if err != nil {
		t.Fatal(err)
	}
	var docs []lexical.Doc
	for _, m := range set.Memories {
		docs = append(docs, lexical.Doc{ID: m.File, Name: m.Name, Description: m.Description, Body: m.Body})
	}
	var qs []string
	for _, q := range set.Queries {
		qs = append(qs, q.Query)
	}
	return docs, qs
}

func segment(t *testing.T, x *lexical.Index) []byte {
	t.Helper()
	var b bytes.Buffer
	if _, err := x.WriteTo(&b); err != nil {
		t.Fatal(err)
	}
	return aligned(b.Bytes())
}

func TestLoadedSegmentSearchesLikeTheIndex(t *testing.T) {
	t.Parallel()
	docs, qs := devDocs(t)
	x := lexical.New(docs, nil)
	y, err := lexical.Load(segment(t, x), nil)
	if err != nil {
		t.Fatal(err)
	}
	if y.Len() != x.Len() || !y.Has(docs[3].ID) || y.Has("nope.md") {
		t.Fatalf("Len %d (want %d), Has wrong", y.Len(), x.Len())
	}
	for _, q := range qs {
		if d := cmp.Diff(x.Search(q, 30), y.Search(q, 30)); d != "" {
			t.Fatalf("query %q: loaded segment ranks differently (-built +loaded):\n%s", q, d)
		}
	}
	if y.Corrupt() {
		t.Fatal("a good segment reported corrupt")
	}
}

// An index updated after loading ranks exactly as one built from scratch
// with the same documents, and so does the segment written from it.
//
// Loaded from docs[:n], it takes the rest as puts: past a quarter of the
// segment the index is copied into memory (thawed), below it the puts stay
// over the segment read in place.
func TestLoadedSegmentUpdates(t *testing.T) {
	t.Parallel()
	docs, _ := devDocs(t)
	for _, n := range []int{100, len(docs) - 5} {
		t.Run(fmt.Sprint(n), func(t *testing.T) { testLoadedSegmentUpdates(t, n) })
	}
}

func testLoadedSegmentUpdates(t *testing.T, n int) {
	docs, qs := devDocs(t)
	y, err := lexical.Load(segment(t, lexical.New(docs[:n], nil)), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range docs[n:] {
		y.Put(d)
	}
	changed := docs[7]
	changed.Body = "nothing left of it but a note about zebras"
	y.Put(changed)
	y.Remove(docs[11].ID)
	want := append([]lexical.Doc{}, docs...)
	want[7] = changed
	want = append(want[:11], want[12:]...)
	ref := lexical.New(want, nil)
	z, err := lexical.Load(segment(t, y), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range append(qs, "zebras note") {
		r := ref.Search(q, 30)
		if d := cmp.Diff(r, y.Search(q, 30)); d != "" {
			t.Fatalf("query %q: updated index differs from a rebuild:\n%s", q, d)
		}
		if d := cmp.Diff(r, z.Search(q, 30)); d != "" {
			t.Fatalf("query %q: segment of the updated index differs from a rebuild:\n%s", q, d)
		}
	}
}

// Damaged segments are refused or, when the damage is in posting lists,
// reported by Corrupt; never a panic.
func TestDamagedSegments(t *testing.T) {
	t.Parallel()
	docs, qs := devDocs(t)
	good := segment(t, lexical.New(docs, nil))
	for _, n := range []int{0, 10, 100, len(good) / 2, len(good) - 1} {
		if _, err := lexical.Load(aligned(good[:n]), nil); err == nil && n < 100 {
			t.Errorf("a segment cut to %d bytes loaded", n)
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 300 {
		bad := aligned(good)
		for j := 0; j < 1+rng.IntN(8); j++ {
			bad[rng.IntN(len(bad))] ^= byte(1 + rng.IntN(255))
		}
		x, err := lexical.Load(bad, nil)
		if err != nil {
			continue
		}
		for _, q := range qs[:10] {
			x.Search(q, 30)
		}
		x.Put(lexical.Doc{ID: "new.md", Body: "a new document"})
		x.Search(qs[0], 5)
	}
}

// A segment written by the previous format version (testdata/segment-v1.bin,
// two documents) is refused as another version, so that the recall index
// holding it is rebuilt rather than read wrongly.
func TestOldSegmentRefused(t *testing.T) {
	t.Parallel()
	old, err := os.ReadFile("testdata/segment-v1.bin")
	if err != nil {
		t.Fatal(err)
	}
	_, err = lexical.Load(aligned(old), nil)
	if !errors.Is(err, lexical.ErrBadSegment) || !errors.Is(err, framed.ErrVersion) {
		t.Fatalf("a version 1 segment: %v, want ErrBadSegment and framed.ErrVersion", err)
	}
	good := segment(t, lexical.New([]lexical.Doc{{ID: "a.md", Body: "x"}}, nil))
	if _, err := lexical.Load(good[1:], nil); !errors.Is(err, lexical.ErrBadSegment) {
		t.Errorf("a misaligned segment: %v", err)
	}
	if _, err := lexical.Load(nil, nil); !errors.Is(err, lexical.ErrBadSegment) {
		t.Errorf("no segment: %v", err)
	}
}

// A segment appended after other bytes, as the recall index embeds it, loads
// where it lands when that is 8-byte aligned.
func TestAppendBinaryAfterOtherBytes(t *testing.T) {
	t.Parallel()
	docs, qs := devDocs(t)
	x := lexical.New(docs[:50], nil)
	b, err := x.AppendBinary(make([]byte, 24))
	if err != nil {
		t.Fatal(err)
	}
	b = aligned(b)
	y, err := lexical.Load(b[24:], nil)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(x.Search(qs[0], 10), y.Search(qs[0], 10)); d != "" {
		t.Errorf("(-built +loaded):\n%s", d)
	}
}

// Every document ID is covered by the IDs' checksum at load, past the
// block it is summed in and for an ID longer than a block: one changed
// byte that keeps the IDs in order is refused.
func TestLoadChecksEveryDocumentID(t *testing.T) {
	t.Parallel()
	var docs []lexical.Doc
	for i := range 3000 {
		docs = append(docs, lexical.Doc{ID: fmt.Sprintf("project/area-%02d/memory-%05d.md", i%40, i), Body: fmt.Sprintf("note %d about the harbour", i)})
	}
	long := "zz/" + strings.Repeat("long-name-", 3000) + ".md"
	docs = append(docs, lexical.Doc{ID: long, Body: "the longest name"})
	good := segment(t, lexical.New(docs, nil))
	if _, err := lexical.Load(aligned(good), nil); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"project/area-07/memory-02887.md", long} {
		i := bytes.LastIndex(good, []byte(id))
		if i < 0 {
			t.Fatalf("%s is not in the segment", id)
		}
		bad := aligned(good)
		bad[i+len(id)-1] = 'e' // .md → .me: the order is the same
		if _, err := lexical.Load(bad, nil); !errors.Is(err, lexical.ErrBadSegment) {
			t.Errorf("%.40s changed: loaded (%v), want ErrBadSegment", id, err)
		}
	}
}
