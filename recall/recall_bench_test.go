package recall

import (
	"context"
	"fmt"
	"hash/fnv"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/llm"
)

// hashEmbedder makes bag-of-words vectors by feature hashing, in process:
// the benchmarks measure recall's work around an embedder, not a server.
type hashEmbedder struct{ dim int }

func (e hashEmbedder) EmbedderName() string { return fmt.Sprintf("bench:hash@%d", e.dim) }

func (e hashEmbedder) Embed(_ context.Context, texts []string) (*llm.Embedding, error) {
	out := &llm.Embedding{Usage: llm.Usage{Calls: 1}}
	for _, t := range texts {
		v := make([]float32, e.dim)
		for w := range strings.FieldsSeq(strings.ToLower(t)) {
			h := fnv.New32a()
			h.Write([]byte(w))
			v[h.Sum32()%uint32(e.dim)]++
		}
		var n float64
		for _, x := range v {
			n += float64(x) * float64(x)
		}
		if n > 0 {
			for i := range v {
				v[i] /= float32(math.Sqrt(n))
			}
		}
		out.Vectors = append(out.Vectors, v)
		out.Usage.InputTokens += len(t) / 4
	}
	return out, nil
}

// BenchmarkRecallMethods measures a recall without a model at 2,000 and
// 20,000 memories, lexical and hybrid (memory vectors already cached),
// cold (the persisted index and the vector cache opened anew each time, as
// by the hook's new process) and warm (both kept, as by the MCP server),
// and reports what each would send a selector: its manifest's tokens and
// lines (and how many in full) beside Claude Code's 200-newest manifest.
func BenchmarkRecallMethods(b *testing.B) {
	queries := []string{
		"the integration tests for the dispatch postgres schema are flaky",
		"where is the on-call runbook for kafka lag alerts",
		"部署流程需要注意什么",
		"how do we ship the service to production?",
	}
	ctx := context.Background()
	emb := hashEmbedder{dim: 384}
	for _, n := range []int{2000, 20000} {
		dir := benchDir(b, n)
		d, err := memdir.Open(dir, &memdir.Options{Journal: memdir.NewJournal(b.TempDir(), nil)})
		if err != nil {
			b.Fatal(err)
		}
		tmp := b.TempDir()
		idxPath, vecPath := filepath.Join(tmp, "idx"), filepath.Join(tmp, "vectors")
		// Build the index file and embed every memory once.
		warmIdx := NewIndex(dir, &IndexOptions{CachePath: idxPath})
		warmCache, err := OpenEmbedCache(vecPath)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := Recall(ctx, d, queries[0], &Options{Index: warmIdx, Embedder: emb, EmbedCache: warmCache, NoCount: true}); err != nil {
			b.Fatal(err)
		}
		for _, method := range []string{"lexical", "hybrid"} {
			for _, temp := range []string{"cold", "warm"} {
				b.Run(fmt.Sprintf("files=%d/%s/%s", n, method, temp), func(b *testing.B) {
					var tokens, base, lines, full float64
					i := 0
					cpu0 := cpuTime()
					for b.Loop() {
						o := &Options{Index: warmIdx, EmbedCache: warmCache, NoCount: true, ShowManifest: true}
						if temp == "cold" {
							o.Index = NewIndex(dir, &IndexOptions{CachePath: idxPath})
							if o.EmbedCache, err = OpenEmbedCache(vecPath); err != nil {
								b.Fatal(err)
							}
						}
						if method == "hybrid" {
							o.Embedder = emb
						}
						res, err := Recall(ctx, d, queries[i%len(queries)], o)
						if err != nil || res.Candidates != n {
							b.Fatalf("recall: %v (%d candidates)", err, res.Candidates)
						}
						if method == "hybrid" && !strings.HasPrefix(res.Semantic, "hybrid:") {
							b.Fatalf("hybrid recall did not use the embedder: %q", res.Semantic)
						}
						tokens += float64(res.ManifestTokens)
						base += float64(res.BaselineTokens)
						lines += float64(len(res.Shortlist))
						full += float64(res.FullLines)
						i++
					}
					nb := float64(b.N)
					b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/1e3/nb, "cpu-ms/op")
					b.ReportMetric(tokens/nb, "manifest-tokens")
					b.ReportMetric(base/nb, "newest200-tokens")
					b.ReportMetric(lines/nb, "manifest-lines")
					b.ReportMetric(full/nb, "full-lines")
				})
			}
		}
	}
}
