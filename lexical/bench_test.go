package lexical_test

import (
	"fmt"
	"testing"

	"github.com/memdir/memdir/lexical"
)

var benchSizes = []int{2000, 20000}

// BenchmarkNew builds an index over n synthetic memories (description ~120
// bytes, body ~600 bytes, English words, identifiers and Chinese).
func BenchmarkNew(b *testing.B) {
	for _, n := range benchSizes {
		docs := synthDocs(n, 7)
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				lexical.New(docs, nil)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/doc")
		})
	}
}

// BenchmarkSearch runs prompt-sized queries (~80 bytes) against a built
// index, with and without pseudo-relevance feedback.
func BenchmarkSearch(b *testing.B) {
	for _, n := range benchSizes {
		docs := synthDocs(n, 7)
		queries := make([]string, 64)
		for i := range queries {
			d := docs[(i*7919)%n]
			queries[i] = d.Description[:min(80, len(d.Description))]
		}
		for _, fb := range []struct {
			name string
			opts *lexical.Options
		}{{"feedback", nil}, {"plain", &lexical.Options{Feedback: -1}}} {
			idx := lexical.New(docs, fb.opts)
			b.Run(fmt.Sprintf("%d/%s", n, fb.name), func(b *testing.B) {
				b.ReportAllocs()
				i := 0
				for b.Loop() {
					idx.Search(queries[i%len(queries)], 30)
					i++
				}
			})
		}
	}
}

// BenchmarkPut replaces one memory in a built index: the cost a cache pays
// per changed file instead of a rebuild.
func BenchmarkPut(b *testing.B) {
	for _, n := range benchSizes {
		docs := synthDocs(n, 7)
		idx := lexical.New(docs, nil)
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				d := docs[(i*31)%n]
				d.Body = docs[(i*17+5)%n].Body
				idx.Put(d)
				i++
			}
		})
	}
}

func BenchmarkTokenize(b *testing.B) {
	docs := synthDocs(1, 7)
	text := docs[0].Description + " " + docs[0].Body
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		lexical.Tokenize(text)
	}
}

// BenchmarkLoad opens a segment in place, as each prompt's new process does
// with the one embedded in the mapped recall index, and runs one query on
// it (the query is what touches the dictionary and posting lists, and so
// their checksums).
func BenchmarkLoad(b *testing.B) {
	for _, n := range benchSizes {
		docs := synthDocs(n, 7)
		seg, err := lexical.New(docs, nil).AppendBinary(nil)
		if err != nil {
			b.Fatal(err)
		}
		seg = aligned(seg)
		query := docs[n/3].Description[:min(80, len(docs[n/3].Description))]
		b.Run(fmt.Sprintf("%d/open", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := lexical.Load(seg, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("%d/open+search", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				x, err := lexical.Load(seg, nil)
				if err != nil {
					b.Fatal(err)
				}
				x.Search(query, 30)
			}
		})
	}
}

// BenchmarkAppendBinary writes the segment of a built index: what a refresh
// that changed something pays before writing the recall index.
func BenchmarkAppendBinary(b *testing.B) {
	for _, n := range benchSizes {
		idx := lexical.New(synthDocs(n, 7), nil)
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := idx.AppendBinary(nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
