package recall

import (
	"cmp"
	"context"
	"encoding/hex"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

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
	cos   map[string]float64 // path → cosine with the query, where taken
	order []string           // paths, most similar first
	// rank is the estimated cosine rank of lexical hits outside order
	// (see nearRanking.rank); heads are the headers of order's memories.
	rank     map[string]int
	heads    map[string]memdir.Header
	mean, sd float64
	usage    llm.Usage
	stats    *EmbedStats
	n        int
	// missing counts the candidates ranked without a vector: the cache
	// lacked one and the recall did not wait for it (Options.EmbedMissing).
	missing int
	// trust is the weight of the cosine ranking in the fusion (see trust).
	trust float64
}

// DefaultQueryEmbedTimeout bounds the wait for the query's own vector; past
// it recall ranks lexically and says why.
const DefaultQueryEmbedTimeout = 2 * time.Second

// rankSemantic embeds the query and ranks the candidates (every searchable
// memory not surfaced) by cosine similarity. The query's vector is waited
// for, within Options.QueryEmbedTimeout; memory vectors come from the
// cache, and those it lacks are embedded now only with
// Options.EmbedMissing (or without a cache): otherwise those memories rank
// lexically alone and are counted in missing, for a background run to
// fill. With a cache, the cosines taken are those of the cache's shortlist
// and of the lexical hits lex (see EmbedCache.near).
func rankSemantic(ctx context.Context, d *memdir.Dir, o *Options, idx *Index, query string, lex []rankedMemory, surfaced map[string]bool) (*semanticRanking, error) {
	timeout := o.QueryEmbedTimeout
	if timeout <= 0 {
		timeout = DefaultQueryEmbedTimeout
	}
	qctx, cancel := context.WithTimeout(ctx, timeout)
	qv, qUsage, err := EmbedQuery(qctx, o.Embedder, query)
	cancel()
	if err != nil {
		if ctx.Err() == nil && qctx.Err() == context.DeadlineExceeded {
			err = fmt.Errorf("no vector for the query within %s from %s", timeout, o.Embedder.EmbedderName())
		}
		return nil, err
	}
	if o.EmbedCache == nil {
		return rankUncached(ctx, d, o, idx, qv, qUsage, surfaced)
	}
	paths, keys, at := idx.vectorKeys(surfaced)
	stats := &EmbedStats{}
	if o.EmbedMissing {
		if stats, err = embedMissing(ctx, d, o, idx, paths, keys); err != nil {
			return nil, err
		}
	}
	var must []int
	for _, r := range lex {
		if i, ok := slices.BinarySearch(paths, r.h.Path); ok {
			must = append(must, i)
		}
	}
	nr, err := o.EmbedCache.near(ctx, o.Embedder.EmbedderName(), qv, keys, must)
	if err != nil {
		return nil, err
	}
	s := &semanticRanking{
		cos: make(map[string]float64, len(nr.cos)), rank: make(map[string]int, len(nr.rank)),
		stats: stats, n: nr.n, missing: len(keys) - nr.n, mean: nr.mean, sd: nr.sd,
	}
	stats.Cached = nr.n - stats.Embedded
	s.usage = stats.Usage
	s.usage.Add(qUsage)
	for i, c := range nr.cos {
		s.cos[paths[i]] = c
	}
	for i, r := range nr.rank {
		s.rank[paths[i]] = r
	}
	s.order = make([]string, len(nr.order))
	orderAt := make([]int32, len(nr.order))
	for r, i := range nr.order {
		s.order[r], orderAt[r] = paths[i], at[i]
	}
	s.heads = map[string]memdir.Header{}
	for _, h := range idx.headersAt(s.order, orderAt) {
		s.heads[h.Path] = h
	}
	return s, nil
}

// embedMissing embeds, into the cache, the vectors of the candidates it
// lacks (Options.EmbedMissing), reading their files.
func embedMissing(ctx context.Context, d *memdir.Dir, o *Options, idx *Index, paths []string, keys [][32]byte) (*EmbedStats, error) {
	in := make([]EmbedInput, len(keys))
	for i, k := range keys {
		in[i].Key = hex.EncodeToString(k[:])
	}
	todo, err := o.EmbedCache.Missing(o.Embedder, in)
	if err != nil || len(todo) == 0 {
		return &EmbedStats{}, err
	}
	heads := idx.headersOf(atIndexes(paths, todo))
	in = make([]EmbedInput, len(heads))
	if err := readEmbedInputs(ctx, d, heads, in, upTo(len(in))); err != nil {
		return nil, err
	}
	_, stats, err := o.EmbedCache.Vectors(ctx, o.Embedder, in, o.EmbedOptions)
	return stats, err
}

// rankUncached ranks every candidate by the cosine of vectors embedded now,
// for a recall without an embedding cache.
func rankUncached(ctx context.Context, d *memdir.Dir, o *Options, idx *Index, qv []float32, qUsage llm.Usage, surfaced map[string]bool) (*semanticRanking, error) {
	var candidates []memdir.Header
	for _, h := range idx.Headers() {
		if !surfaced[h.Path] {
			candidates = append(candidates, h)
		}
	}
	in := make([]EmbedInput, len(candidates))
	if err := readEmbedInputs(ctx, d, candidates, in, upTo(len(in))); err != nil {
		return nil, err
	}
	vecs, stats, err := embedUncached(ctx, o.Embedder, in)
	if err != nil {
		return nil, err
	}
	s := &semanticRanking{cos: make(map[string]float64, len(candidates)), heads: map[string]memdir.Header{}, stats: stats}
	s.usage = stats.Usage
	s.usage.Add(qUsage)
	for i, h := range candidates {
		if vecs[i] == nil {
			continue // no text to embed
		}
		s.cos[h.Path] = Cosine(qv, vecs[i])
		s.order = append(s.order, h.Path)
		s.heads[h.Path] = h
	}
	s.n = len(s.order)
	var sum, sum2 float64
	for _, c := range s.cos {
		sum += c
		sum2 += c * c
	}
	if s.n > 0 {
		n := float64(s.n)
		s.mean = sum / n
		s.sd = math.Sqrt(max(0, sum2/n-s.mean*s.mean))
	}
	// Sort the cosines beside their paths: looking both up in s.cos at
	// every comparison was a fifth of the ranking at 20,000 memories.
	type pathCos struct {
		p string
		c float64
	}
	byCos := make([]pathCos, len(s.order))
	for i, p := range s.order {
		byCos[i] = pathCos{p, s.cos[p]}
	}
	slices.SortStableFunc(byCos, func(a, b pathCos) int { return cmp.Compare(b.c, a.c) })
	for i := range byCos {
		s.order[i] = byCos[i].p
	}
	return s, nil
}

// upTo returns 0, 1, …, n-1.
func upTo(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
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
// fusion, the cosine ranking weighted by how far it can be trusted (see
// trust), and returns the lexical hits, the cosine ranking's shortlist and
// the memories of all (every candidate, for a manifest; may be nil), best
// first.
func (s *semanticRanking) fuse(lex []rankedMemory, all []memdir.Header) []rankedMemory {
	s.trust = s.agreement(lex)
	out := make([]rankedMemory, 0, len(lex)+len(s.order)+len(all))
	out = append(out, lex...)
	at := make(map[string]int, cap(out))
	for i, r := range out {
		at[r.h.Path] = i
	}
	add := func(h memdir.Header) {
		if _, ok := at[h.Path]; !ok {
			at[h.Path] = len(out)
			out = append(out, rankedMemory{h: h, factors: noFactors})
		}
	}
	for _, p := range s.order {
		if h, ok := s.heads[p]; ok {
			add(h)
		}
	}
	for _, h := range all {
		add(h)
	}
	thr := s.threshold()
	for i, p := range s.order {
		j, ok := at[p]
		if !ok {
			continue // gone from the index since it was ranked
		}
		r := &out[j]
		r.semRank, r.cos = i+1, s.cos[p]
		// Similarity alone answers only when the cosine ranking is
		// trusted: a useless embedder has its outliers too.
		r.close = r.cos >= thr && i < MaxMemories && s.trust >= 0.5
	}
	for p, rank := range s.rank {
		if j, ok := at[p]; ok {
			out[j].semRank, out[j].cos = rank, s.cos[p]
		}
	}
	for i := range out {
		r := &out[i]
		if r.lexRank > 0 {
			r.fused += 1 / float64(rrfK+r.lexRank)
		}
		if r.semRank > 0 {
			r.fused += s.trust / float64(rrfK+r.semRank)
		}
	}
	slices.SortStableFunc(out, func(a, b rankedMemory) int {
		if c := cmp.Compare(b.fused, a.fused); c != 0 {
			return c
		}
		return cmp.Compare(b.cos, a.cos)
	})
	return out
}

// agreeDepth is how deep agreement between the rankings is measured.
const agreeDepth = 10

// agreement is the weight of the cosine ranking in the fusion, from 0 to
// 1: how unlikely it is that the cosine ranking's head shares as many
// memories with the lexical ranking's head by chance. Of n memories with
// a vector, the lexical head holds l (its first agreeDepth hits with a
// query term and a vector) and the cosine head k = agreeDepth; an overlap
// of o has the hypergeometric tail p = P(X ≥ o). At p ≥ 0.1 (what a random
// ranking reaches one query in ten) the weight is 0 and the lexical order
// stands; at p ≤ 0.01 it is 1, plain reciprocal rank fusion; between, it
// grows with −log10 p. A query no memory shares a word with has no lexical
// head to agree with: there the cosine ranking is all there is, weight 1.
func (s *semanticRanking) agreement(lex []rankedMemory) float64 {
	k := min(agreeDepth, len(s.order))
	var head []string
	for _, r := range lex {
		if len(head) == agreeDepth {
			break
		}
		if _, ok := s.cos[r.h.Path]; ok && len(r.lex.Terms) > 0 {
			head = append(head, r.h.Path)
		}
	}
	if len(head) == 0 || k == 0 {
		return 1
	}
	top := map[string]bool{}
	for _, p := range s.order[:k] {
		top[p] = true
	}
	o := 0
	for _, p := range head {
		if top[p] {
			o++
		}
	}
	p := hypergeomTail(s.n, len(head), k, o)
	return min(1, max(0, -math.Log10(p)-1))
}

// hypergeomTail is P(X ≥ o) for X the number of marked items among k drawn
// without replacement from n of which m are marked.
func hypergeomTail(n, m, k, o int) float64 {
	if o <= 0 {
		return 1
	}
	lchoose := func(a, b int) float64 {
		if b < 0 || b > a {
			return math.Inf(-1)
		}
		la, _ := math.Lgamma(float64(a + 1))
		lb, _ := math.Lgamma(float64(b + 1))
		lab, _ := math.Lgamma(float64(a - b + 1))
		return la - lb - lab
	}
	total := lchoose(n, k)
	var p float64
	for x := o; x <= min(m, k); x++ {
		p += math.Exp(lchoose(m, x) + lchoose(n-m, k-x) - total)
	}
	return min(1, p)
}

func (s *semanticRanking) summary() string {
	st := s.stats
	msg := fmt.Sprintf("hybrid: lexical and cosine rankings fused, the cosine weighted %.2f by its agreement with the lexical (%d vectors cached, %d embedded", s.trust, st.Cached, st.Embedded)
	if s.missing > 0 {
		msg += fmt.Sprintf(", %d not yet: ranked lexically", s.missing)
	}
	return msg + ")"
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

// readEmbedInputs reads, for the inputs at todo, the memory files' text.
// Only those files are read, so a recall whose memories are all embedded
// reads no memory file.
func readEmbedInputs(ctx context.Context, d *memdir.Dir, candidates []memdir.Header, in []EmbedInput, todo []int) error {
	root, err := os.OpenRoot(d.Path())
	if err != nil {
		return fmt.Errorf("recall: %w", err)
	}
	defer root.Close()
	for _, i := range todo {
		if err := ctx.Err(); err != nil {
			return err
		}
		h := candidates[i]
		data, err := root.ReadFile(h.Path)
		if err != nil {
			continue // gone since the refresh: no vector, no rank
		}
		in[i] = MemoryEmbedInput(h.Name, h.Description, data)
	}
	return nil
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

// FillVectors embeds, into cache, the memories of the directory idx
// indexes that it has no vector for: what recalls did without (see
// Options.EmbedMissing). The work is done in batches saved as they go, so a
// cancelled fill keeps most of what it did and the next one resumes. It is
// for long-lived processes (the MCP server) to call outside any prompt; a
// nil idx means one built for this call.
func FillVectors(ctx context.Context, d *memdir.Dir, idx *Index, e llm.Embedder, cache *EmbedCache, opts *EmbedOptions) (*EmbedStats, error) {
	if idx == nil {
		idx = NewIndex(d.Path(), nil)
	}
	if _, err := idx.Refresh(ctx); err != nil {
		return nil, err
	}
	paths, keys, _ := idx.vectorKeys(nil)
	return embedMissing(ctx, d, &Options{Embedder: e, EmbedCache: cache, EmbedOptions: opts}, idx, paths, keys)
}

// atIndexes returns the elements of s at the indexes idx, in their order.
func atIndexes[T any](s []T, idx []int) []T {
	out := make([]T, len(idx))
	for j, i := range idx {
		out[j] = s[i]
	}
	return out
}
