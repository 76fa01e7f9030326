package recall_test

import (
	"bytes"
	"context"
	"encoding/gob"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/memdir/memdir/llm"
	"github.com/memdir/memdir/recall"
)

// benchEmbedder makes random vectors in process: the benchmarks measure the
// cache, not a server.
type benchEmbedder struct{ dim int }

func (b benchEmbedder) EmbedderName() string { return fmt.Sprintf("bench:%d", b.dim) }

func (b benchEmbedder) Embed(_ context.Context, texts []string) (*llm.Embedding, error) {
	r := rand.New(rand.NewPCG(uint64(len(texts)), 1))
	out := &llm.Embedding{Usage: llm.Usage{Calls: 1}}
	for range texts {
		v := make([]float32, b.dim)
		for i := range v {
			v[i] = r.Float32()*2 - 1
		}
		out.Vectors = append(out.Vectors, v)
	}
	return out, nil
}

// BenchmarkEmbedCache measures getting the vectors of every memory of a
// directory from the cache, at 2,000 and 20,000 memories of 1,536
// dimensions (text-embedding-3-small): "cold" opens the file as a new
// process does (a hook, a CLI call), "warm" asks a cache that already read
// it (the MCP server). "gob" decodes the same vectors stored as gob of
// [][]float32, the format version 1 (a flat file) was chosen over.
func BenchmarkEmbedCache(b *testing.B) {
	const dim = 1536
	for _, n := range []int{2000, 20000} {
		in := make([]recall.EmbedInput, n)
		for i := range in {
			in[i] = recall.NewEmbedInput(fmt.Sprintf("memory %d", i), "a description", fmt.Sprintf("body of memory %d", i))
		}
		path := filepath.Join(b.TempDir(), "bench.vec")
		e := benchEmbedder{dim}
		c, err := recall.OpenEmbedCache(path)
		if err != nil {
			b.Fatal(err)
		}
		vecs, _, err := c.Vectors(context.Background(), e, in, &recall.EmbedOptions{BatchSize: 2048})
		if err != nil {
			b.Fatal(err)
		}
		fi, err := os.Stat(path)
		if err != nil {
			b.Fatal(err)
		}
		check := func(b *testing.B, st *recall.EmbedStats) {
			if st.Cached != n || st.Embedded != 0 {
				b.Fatalf("cached %d, embedded %d; want %d, 0", st.Cached, st.Embedded, n)
			}
		}
		b.Run(fmt.Sprintf("n=%d/cold", n), func(b *testing.B) {
			b.SetBytes(fi.Size())
			for b.Loop() {
				c, _ := recall.OpenEmbedCache(path)
				_, st, err := c.Vectors(context.Background(), e, in, nil)
				if err != nil {
					b.Fatal(err)
				}
				check(b, st)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/vector")
			b.ReportMetric(float64(fi.Size())/1e6, "MB/file")
		})
		b.Run(fmt.Sprintf("n=%d/warm", n), func(b *testing.B) {
			for b.Loop() {
				_, st, err := c.Vectors(context.Background(), e, in, nil)
				if err != nil {
					b.Fatal(err)
				}
				check(b, st)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/vector")
		})
		b.Run(fmt.Sprintf("n=%d/gob", n), func(b *testing.B) {
			type entry struct {
				Key    string
				Vector []float32
			}
			entries := make([]entry, n)
			for i := range entries {
				entries[i] = entry{in[i].Key, vecs[i]}
			}
			var buf bytes.Buffer
			if err := gob.NewEncoder(&buf).Encode(entries); err != nil {
				b.Fatal(err)
			}
			data := buf.Bytes()
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				var got []entry
				if err := gob.NewDecoder(bytes.NewReader(data)).Decode(&got); err != nil || len(got) != n {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/vector")
		})
	}
}
