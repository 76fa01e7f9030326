package lexical_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/memdir/memdir/internal/framed"
	"github.com/memdir/memdir/lexical"
)

// variedDocs generates n documents mixing what the tokenizer treats apart:
// plain and stemmed words, camelCase and snake_case identifiers, numbers,
// dates and versions, CJK runs, words repeated past the 255 a frequency
// saturates at, over-long runs, empty fields, and IDs repeated (a later
// document replaces an earlier one).
func variedDocs(r *rand.Rand, n int) []lexical.Doc {
	words := []string{"kafka", "lag", "alerts", "runbook", "deploying", "deployed", "on-call", "pkg.Func",
		"snake_case_name", "camelCaseName", "HTTPServer", "v1.2.3", "2026-12-05", "a/b/c", "42", "x",
		"部署流程", "需要注意", "東京タワー", "한국어", "naïve", "café", "Straße", "don't", "it's"}
	word := func() string {
		switch r.IntN(10) {
		case 0:
			return fmt.Sprintf("term%d", r.IntN(5000)) // a long tail
		case 1:
			return strings.Repeat("z", 60+r.IntN(20)) // around maxTokenBytes
		default:
			return words[r.IntN(len(words))]
		}
	}
	text := func(max int) string {
		var b strings.Builder
		for range r.IntN(max + 1) {
			b.WriteString(word())
			b.WriteString([]string{" ", ", ", "\n", ". ", "—"}[r.IntN(5)])
		}
		return b.String()
	}
	docs := make([]lexical.Doc, n)
	for i := range docs {
		id := fmt.Sprintf("dir%d/mem_%05d.md", r.IntN(3), r.IntN(n))
		docs[i] = lexical.Doc{ID: id, Name: text(4), Description: text(12), Body: text(200)}
		if r.IntN(50) == 0 {
			docs[i].Body = strings.Repeat("again ", 300)
		}
		if r.IntN(40) == 0 {
			docs[i] = lexical.Doc{ID: id}
		}
	}
	return docs
}

// TestBuilderMatchesIndex holds the Builder to the segment an Index of the
// same documents writes, byte for byte, and to the same search results.
func TestBuilderMatchesIndex(t *testing.T) {
	t.Parallel()
	dev, qs := devDocs(t)
	r := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct {
		name string
		docs []lexical.Doc
	}{
		{"empty", nil},
		{"one", []lexical.Doc{{ID: "a.md", Name: "Kafka", Body: "lag alerts"}}},
		{"no terms", []lexical.Doc{{ID: "b.md"}, {ID: "a.md", Body: "— …"}}},
		{"dev set", dev},
		{"varied", variedDocs(r, 3000)},
		{"varied, many repeats", variedDocs(r, 300)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := segment(t, lexical.New(tc.docs, nil))
			b := lexical.NewBuilder()
			for _, d := range tc.docs {
				b.Add(d)
			}
			var buf framed.Buffer
			n, err := b.WriteSegmentAt(&buf, 8)
			if err != nil {
				t.Fatal(err)
			}
			got := buf.Bytes(n + 8)[8:]
			if !bytes.Equal(want, got) {
				t.Fatalf("the Builder's segment (%d bytes) differs from the Index's (%d bytes)", len(got), len(want))
			}
			if _, err := b.WriteSegmentAt(&buf, 0); err == nil {
				t.Error("a second write succeeded")
			}
			b = lexical.NewBuilder()
			for _, d := range tc.docs {
				b.Add(d)
			}
			y, err := b.Index(nil)
			if err != nil {
				t.Fatal(err)
			}
			x := lexical.New(tc.docs, nil)
			for _, q := range append(qs[:min(len(qs), 20)], "kafka lag", "部署流程", "term17 again") {
				if diff := cmp.Diff(x.Search(q, 10), y.Search(q, 10)); diff != "" {
					t.Fatalf("%q (-index +builder):\n%s", q, diff)
				}
			}
		})
	}
}

func BenchmarkBuilder(b *testing.B) {
	docs := variedDocs(rand.New(rand.NewPCG(3, 4)), 5000)
	b.Run("index", func(b *testing.B) {
		for b.Loop() {
			var out bytes.Buffer
			lexical.New(docs, nil).WriteTo(&out)
		}
	})
	b.Run("builder", func(b *testing.B) {
		for b.Loop() {
			bl := lexical.NewBuilder()
			for _, d := range docs {
				bl.Add(d)
			}
			var buf framed.Buffer
			bl.WriteSegmentAt(&buf, 0)
		}
	})
}

// FuzzBuilderMatchesIndex holds the Builder, whose words go through its
// memo of plain words, to the Index's segment on any text: each field of
// the first document is repeated in the second, so that words are seen
// again after the memo has them.
func FuzzBuilderMatchesIndex(f *testing.F) {
	f.Add("Kafka lag", "on-call runbook: don't page", "Deploying HTTPServer v1.2.3 — 部署流程 naïve cafés APIs the a")
	f.Add("", "", "snake_case_name camelCaseName it's")
	f.Fuzz(func(t *testing.T, name, desc, body string) {
		docs := []lexical.Doc{
			{ID: "a.md", Name: name, Description: desc, Body: body},
			{ID: "b.md", Name: body, Description: name, Body: desc + " " + body},
		}
		want := segment(t, lexical.New(docs, nil))
		b := lexical.NewBuilder()
		for _, d := range docs {
			b.Add(d)
		}
		var buf framed.Buffer
		n, err := b.WriteSegmentAt(&buf, 0)
		if err != nil {
			t.Fatal(err)
		}
		if got := buf.Bytes(n); !bytes.Equal(want, got) {
			t.Fatalf("the Builder's segment (%d bytes) differs from the Index's (%d bytes)", len(got), len(want))
		}
	})
}
