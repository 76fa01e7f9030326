package recall

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/llm"
)

// rrfK is the constant of reciprocal rank fusion: a memory's fused score is
// Σ 1/(rrfK + rank) over the rankings it appears in. 60 is the value of
// Cormack, Clarke and Büttcher's paper, and the one most hybrid search
// engines ship; see docs/recall.md for why memdir fuses ranks rather than
// scores.
const rrfK = 60

// closeFalseAlarm is the chance that recall, with embeddings and no model,
// answers a query from cosine similarity alone although no memory is
// related to it (see semanticRanking.threshold).
const closeFalseAlarm = 0.01

// semanticRanking is the cosine ranking of the candidates for one query.
type semanticRanking struct {
	cos      map[string]float64 // path → cosine with the query
	order    []string           // paths, most similar first
	mean, sd float64
	usage    llm.Usage
	stats    *EmbedStats
	n        int
}

// rankSemantic embeds the query and the candidates (through the cache) and
// ranks the candidates by cosine similarity.
func rankSemantic(ctx context.Context, d *memdir.Dir, o *Options, idx *Index, query string, candidates []memdir.Header) (*semanticRanking, error) {
	in, err := memoryEmbedInputs(ctx, d, o, idx, candidates)
	if err != nil {
		return nil, err
	}
	var vecs [][]float32
	var stats *EmbedStats
	if o.EmbedCache != nil {
		vecs, stats, err = o.EmbedCache.Vectors(ctx, o.Embedder, in, o.EmbedOptions)
	} else {
		vecs, stats, err = embedUncached(ctx, o.Embedder, in)
	}
	if err != nil {
		return nil, err
	}
	qv, qUsage, err := EmbedQuery(ctx, o.Embedder, query)
	if err != nil {
		return nil, err
	}
	s := &semanticRanking{cos: make(map[string]float64, len(candidates)), stats: stats, n: len(candidates)}
	s.usage = stats.Usage
	s.usage.Add(qUsage)
	var sum, sum2 float64
	for i, h := range candidates {
		c := Cosine(qv, vecs[i])
		s.cos[h.Path] = c
		s.order = append(s.order, h.Path)
		sum += c
		sum2 += c * c
	}
	n := float64(len(candidates))
	s.mean = sum / n
	s.sd = math.Sqrt(max(0, sum2/n-s.mean*s.mean))
	slices.SortStableFunc(s.order, func(a, b string) int { return cmp.Compare(s.cos[b], s.cos[a]) })
	return s, nil
}

// threshold is the cosine a memory needs to be answered on similarity
// alone: as many standard deviations above the query's mean similarity as
// make it unlikely (closeFalseAlarm) that any of the n candidates gets
// there by chance, were similarities normally distributed (a Bonferroni
// bound). So the bar rises with the directory's size, and it adapts to
// each embedding model's own scale of cosines, which differ widely.
func (s *semanticRanking) threshold() float64 {
	if s.sd == 0 {
		return math.Inf(1)
	}
	z := normalQuantile(1 - closeFalseAlarm/float64(max(s.n, 1)))
	return s.mean + z*s.sd
}

// fuse merges the lexical ranking with the cosine one by reciprocal rank
// fusion and returns every candidate, best first.
func (s *semanticRanking) fuse(lex []rankedMemory, candidates []memdir.Header) []rankedMemory {
	out := make([]rankedMemory, 0, len(candidates))
	out = append(out, lex...)
	at := make(map[string]int, len(candidates))
	for i, r := range out {
		at[r.h.Path] = i
	}
	for _, h := range candidates {
		if _, ok := at[h.Path]; !ok {
			at[h.Path] = len(out)
			out = append(out, rankedMemory{h: h})
		}
	}
	thr := s.threshold()
	for i, p := range s.order {
		r := &out[at[p]]
		r.semRank, r.cos = i+1, s.cos[p]
		r.close = r.cos >= thr && i < MaxMemories
	}
	score := func(r rankedMemory) float64 {
		var f float64
		if r.lexRank > 0 {
			f += 1 / float64(rrfK+r.lexRank)
		}
		if r.semRank > 0 {
			f += 1 / float64(rrfK+r.semRank)
		}
		return f
	}
	slices.SortStableFunc(out, func(a, b rankedMemory) int { return cmp.Compare(score(b), score(a)) })
	return out
}

func (s *semanticRanking) summary() string {
	st := s.stats
	return fmt.Sprintf("hybrid: lexical and cosine rankings fused (%d vectors cached, %d embedded)", st.Cached, st.Embedded)
}

func formatCos(c float64) string { return strconv.FormatFloat(c, 'f', 2, 64) }

// normalQuantile returns z with Φ(z) = p for the standard normal
// distribution, by bisection on math.Erfc (precise to 1e-9, plenty here).
func normalQuantile(p float64) float64 {
	lo, hi := -10.0, 10.0
	for hi-lo > 1e-9 {
		mid := (lo + hi) / 2
		if 0.5*math.Erfc(-mid/math.Sqrt2) < p {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}

// memoryEmbedInputs returns the embedding input of each candidate, keyed by
// its file's hash as the recall index knows it. Only the files whose vector
// the cache lacks are read, for their text, so a recall whose memories are
// all embedded reads no memory file.
func memoryEmbedInputs(ctx context.Context, d *memdir.Dir, o *Options, idx *Index, candidates []memdir.Header) ([]EmbedInput, error) {
	hash := map[string]string{}
	for _, e := range idx.Entries() {
		hash[e.Path] = e.Hash
	}
	in := make([]EmbedInput, len(candidates))
	for i, h := range candidates {
		in[i].Key = hash[h.Path]
	}
	todo := make([]int, len(in))
	for i := range todo {
		todo[i] = i
	}
	if o.EmbedCache != nil {
		var err error
		if todo, err = o.EmbedCache.Missing(o.Embedder, in); err != nil {
			return nil, err
		}
	}
	if len(todo) == 0 {
		return in, nil
	}
	root, err := os.OpenRoot(d.Path())
	if err != nil {
		return nil, fmt.Errorf("recall: %w", err)
	}
	defer root.Close()
	for _, i := range todo {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		h := candidates[i]
		data, err := root.ReadFile(h.Path)
		if err != nil {
			continue // gone since the refresh: no vector, no rank
		}
		in[i] = MemoryEmbedInput(h.Name, h.Description, data)
	}
	return in, nil
}

// embedUncached embeds every input, in batches, for a recall without an
// embedding cache; an input without text gets no vector.
func embedUncached(ctx context.Context, e llm.Embedder, in []EmbedInput) ([][]float32, *EmbedStats, error) {
	st := &EmbedStats{}
	out := make([][]float32, len(in))
	var todo []int
	for i := range in {
		if strings.TrimSpace(in[i].Text) != "" {
			todo = append(todo, i)
		}
	}
	for start := 0; start < len(todo); start += DefaultEmbedBatchSize {
		batch := todo[start:min(start+DefaultEmbedBatchSize, len(todo))]
		texts := make([]string, len(batch))
		for j, i := range batch {
			texts[j] = in[i].Text
		}
		emb, err := e.Embed(ctx, texts)
		if err != nil {
			if ctx.Err() != nil {
				return nil, nil, ctx.Err()
			}
			return nil, nil, &llm.EmbedError{Embedder: e.EmbedderName(), Err: err}
		}
		if emb == nil || len(emb.Vectors) != len(batch) {
			return nil, nil, errEmbedReply(e.EmbedderName(), "wrong number of vectors for %d texts", len(batch))
		}
		for j, i := range batch {
			out[i] = emb.Vectors[j]
		}
		st.Embedded += len(batch)
		st.Requests++
		st.Usage.Add(emb.Usage)
	}
	return out, st, nil
}
