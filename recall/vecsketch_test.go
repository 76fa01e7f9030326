package recall

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"unsafe"

	"github.com/memdir/memdir/internal/benchcorpus"
	"github.com/memdir/memdir/internal/evalset"
	"github.com/memdir/memdir/internal/framed"
	"github.com/memdir/memdir/llm"
	"github.com/memdir/memdir/memdirtest"
)

// tableEmbedder answers with a vector per text from vec, in process.
type tableEmbedder struct {
	name string
	vec  func(text string) []float32
}

func (e tableEmbedder) EmbedderName() string { return e.name }

func (e tableEmbedder) Embed(_ context.Context, texts []string) (*llm.Embedding, error) {
	out := &llm.Embedding{Usage: llm.Usage{Calls: 1}}
	for _, t := range texts {
		out.Vectors = append(out.Vectors, e.vec(t))
	}
	return out, nil
}

// skewed is memdirtest.FakeVector moved along a direction every vector
// shares, as real embedding models' vectors are (their mean is far from
// zero): the sketches must hold there too, which they do only because
// they are taken about the mean.
func skewed(text string, dim int) []float32 {
	v := memdirtest.FakeVector(text, dim)
	common := memdirtest.RandomVector("the direction every vector shares", dim)
	var norm float64
	for i := range v {
		v[i] += 1.5 * common[i]
		norm += float64(v[i]) * float64(v[i])
	}
	for i := range v {
		v[i] /= float32(math.Sqrt(norm))
	}
	return v
}

// TestSketchShortlistHoldsTheCosineHead ranks the queries of the three
// labelled sets against the sets' memories and generated ones (6,000 in
// all) by the sketches' shortlist and by every cosine, and checks that the
// shortlist's head is the exact head: what reciprocal rank fusion and the
// agreement rule read of the cosine ranking (its first agreeDepth, and the
// ranks of the lexical hits) comes out the same, with vectors that spread
// like a bag of words, skewed as real models' are, or random.
func TestSketchShortlistHoldsTheCosineHead(t *testing.T) {
	var texts, queries []string
	for _, f := range []string{"recall-dev.json", "recall-oss.json", "recall-app.json"} {
		set, err := evalset.Load(filepath.Join("..", "testdata", "eval", f))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range set.Memories {
			texts = append(texts, EmbedText(m.Name, m.Description, m.Body))
		}
		for _, q := range set.Queries {
			queries = append(queries, q.Query)
		}
	}
	corpus, err := benchcorpus.Load(filepath.Join("..", "testdata", "eval", "recall-dev.json"))
	if err != nil {
		t.Fatal(err)
	}
	const n = 6000
	for i := 0; len(texts) < n; i++ {
		m := corpus.Memory(i, n)
		texts = append(texts, EmbedText(m.Name, m.Description, m.Body))
	}
	const dim = 384
	for _, tc := range []struct {
		name string
		vec  func(string, int) []float32
	}{
		{"bag of words", memdirtest.FakeVector},
		{"skewed", skewed},
		{"random", memdirtest.RandomVector},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := tableEmbedder{name: "table:" + tc.name, vec: func(s string) []float32 { return tc.vec(s, dim) }}
			c, err := OpenEmbedCache(filepath.Join(t.TempDir(), "x.vec"))
			if err != nil {
				t.Fatal(err)
			}
			in := make([]EmbedInput, len(texts))
			keys := make([][32]byte, len(texts))
			for i, s := range texts {
				in[i] = EmbedInput{Text: s}
				keys[i] = in[i].key()
			}
			vecs, _, err := c.Vectors(context.Background(), e, in, &EmbedOptions{BatchSize: 1000})
			if err != nil {
				t.Fatal(err)
			}
			head, deep := 0, 0
			var worstMean, worstSD float64 // errors of the estimates, in deviations
			var plainMean, plainSD float64 // those of the sample alone
			for _, q := range queries {
				qv := e.vec(q)
				exact := upTo(len(texts))
				cos := make([]float64, len(texts))
				for i := range cos {
					cos[i] = Cosine(qv, vecs[i])
				}
				slices.SortStableFunc(exact, func(a, b int) int { return cmp.Compare(cos[b], cos[a]) })
				must := exact[200:230] // lexical hits deep in the cosine ranking
				nr, err := c.near(context.Background(), e.name, qv, keys, must)
				if err != nil {
					t.Fatal(err)
				}
				if !nr.sketched || len(nr.order) != sketchShortlist(len(texts)) {
					t.Fatalf("sketched %v, shortlist of %d: want the sketches' shortlist of %d", nr.sketched, len(nr.order), sketchShortlist(len(texts)))
				}
				// The same head, but for the order of equal cosines.
				for r := range agreeDepth {
					if nr.cos[nr.order[r]] != cos[exact[r]] {
						head++
						break
					}
				}
				// The first 60 by cosine are where a rank counts most in
				// the fusion (1/(60+rank)).
				got := map[int]bool{}
				for _, i := range nr.order {
					got[i] = true
				}
				for _, i := range exact[:60] {
					if !got[i] {
						deep++
					}
				}
				em, esd := meanSD(toMap(cos), exact)
				worstMean = max(worstMean, math.Abs(nr.mean-em)/esd)
				worstSD = max(worstSD, math.Abs(nr.sd-esd)/esd)
				var plain []int
				for h := 0; h < len(exact); h += len(exact) / nearSample {
					plain = append(plain, h)
				}
				pm, psd := meanSD(toMap(cos), plain)
				plainMean = max(plainMean, math.Abs(pm-em)/esd)
				plainSD = max(plainSD, math.Abs(psd-esd)/esd)
				for _, i := range must {
					if _, ok := nr.cos[i]; !ok {
						t.Fatalf("query %q: no cosine for a required memory", q)
					}
				}
			}
			t.Logf("%s: %d queries, head differs on %d, %d of the exact first 60 missed; mean off by %.3f sd at worst, sd by %.3f (the sample alone: %.3f, %.3f)", tc.name, len(queries), head, deep, worstMean, worstSD, plainMean, plainSD)
			// The close rule's bar is mean + 4.5 sd or so: the sample alone
			// moves it by up to a deviation, the estimate by a third of one.
			if worstMean > 0.08 || worstSD > 0.08 {
				t.Errorf("the estimates of the cosines' mean and deviation are off by %.3f and %.3f deviations", worstMean, worstSD)
			}
			if head > 0 || deep > len(queries)*60/200 {
				t.Errorf("the sketches' shortlist changed the cosine head of %d of %d queries and missed %d of their exact first 60", head, len(queries), deep)
			}
		})
	}
}

func TestSketchScoreIsTheDecodedProduct(t *testing.T) {
	const dim = 77 // not a multiple of 2, 8 or 16
	vecs := make([][]float32, 9)
	for i := range vecs {
		vecs[i] = memdirtest.RandomVector(fmt.Sprint(i), dim)
	}
	part, lv := buildSketches(len(vecs), dim, func(i int) []float32 { return vecs[i] })
	stride := sketchStride(dim)
	if len(part)+len(lv) != sketchBytes(len(vecs), dim) || stride != 40 {
		t.Fatalf("sketches of %d bytes, levels of %d, stride %d", len(part), len(lv), stride)
	}
	stats, ok := framed.View[float32](lv)
	if !ok {
		t.Fatal("mean and width not aligned")
	}
	mean, width := stats[:dim], stats[dim:]
	q := memdirtest.RandomVector("query", dim)
	sq := newSketchQuery(q, width, haveSketchKernel)
	for i, v := range vecs {
		sk := part[i*stride : (i+1)*stride]
		var want, exact float64
		for d, x := range v {
			c := sk[d/2] >> (4 * (d % 2)) & 15
			level := float64(mean[d]) + float64(sketchLevel(c, width[d]))
			if math.Abs(level-float64(x)) > float64(width[d])/(sketchLevels-1)+1e-6 {
				t.Errorf("vector %d, dimension %d: %v coded as %d, which stands for %v", i, d, x, c, level)
			}
			want += float64(q[d]) * float64(sketchLevel(c, width[d]))
			exact += float64(q[d]) * float64(x-mean[d])
		}
		// The weights are rounded to a 254th of the largest: each
		// dimension's term is off by at most half a step times its code.
		got := sq.scale*float64(sq.score(sk)) - sq.shift
		if tol := float64(dim) * sq.scale / 2 * (sketchLevels - 1) / 2; math.Abs(got-want) > tol {
			t.Errorf("vector %d: score %v, want %v", i, got, want)
		}
		if math.Abs(got-exact) > 0.1 {
			t.Errorf("vector %d: score %v, far from the exact %v", i, got, exact)
		}
	}
}

// TestSketchKernelAsTables: the vector kernel and the byte tables give
// every sketch the same integer score, Σ weight·code, for dimensions that
// fill the kernel's 32 bytes exactly, leave a tail, or give it nothing,
// with codes and weights at their extremes.
func TestSketchKernelAsTables(t *testing.T) {
	if !haveSketchKernel {
		t.Log("no vector kernel on this machine: the tables alone are checked")
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, dim := range []int{1, 16, 63, 64, 77, 100, 128, 384, 1000, 1536, 3072} {
		stride := sketchStride(dim)
		q, width := make([]float32, dim), make([]float32, dim)
		for d := range dim {
			q[d], width[d] = float32(rng.NormFloat64()), float32(rng.Float64())
		}
		q[dim/2] = -3 * float32(dim) // a weight of −127 beside small ones
		kern, tabs := newSketchQuery(q, width, haveSketchKernel), newSketchQuery(q, width, false)
		if !slices.Equal(kern.w, tabs.w) || tabs.body != 0 {
			t.Fatalf("dim %d: the two preparations differ", dim)
		}
		for i := range 50 {
			sk := make([]byte, stride)
			for k := range sk {
				switch i {
				case 0:
					sk[k] = 0xff
				case 1:
				default:
					sk[k] = byte(rng.IntN(256))
				}
			}
			for d := dim; d < 2*stride; d++ { // the padding's codes are 0
				sk[d/2] &^= 15 << (4 * (d % 2))
			}
			var want int32
			for d := range 2 * stride {
				want += int32(kern.w[d]) * int32(sk[d/2]>>(4*(d%2))&15)
			}
			if got := kern.score(sk); got != float32(want) {
				t.Errorf("dim %d, sketch %d: kernel score %v, want %d", dim, i, got, want)
			}
			if got := tabs.score(sk); got != float32(want) {
				t.Errorf("dim %d, sketch %d: table score %v, want %d", dim, i, got, want)
			}
		}
	}
}

// sketchTestCache fills a cache with n random vectors of dim dimensions
// and returns it with the inputs' keys.
func sketchTestCache(t *testing.T, n, dim int) (*EmbedCache, tableEmbedder, [][32]byte) {
	t.Helper()
	e := tableEmbedder{name: "table:random", vec: func(s string) []float32 { return memdirtest.RandomVector(s, dim) }}
	c, err := OpenEmbedCache(filepath.Join(t.TempDir(), "x.vec"))
	if err != nil {
		t.Fatal(err)
	}
	in := make([]EmbedInput, n)
	keys := make([][32]byte, n)
	for i := range in {
		in[i] = EmbedInput{Text: fmt.Sprintf("memory %d", i)}
		keys[i] = in[i].key()
	}
	if _, _, err := c.Vectors(context.Background(), e, in, &EmbedOptions{BatchSize: 2048}); err != nil {
		t.Fatal(err)
	}
	return c, e, keys
}

// TestNearRewritesAVersion2File: a cache file of version 2 (no sketches)
// is read as it is, and the first ranking over many memories rewrites it
// with sketches without embedding anything again.
func TestNearRewritesAVersion2File(t *testing.T) {
	const n, dim = 1100, 16
	c, e, keys := sketchTestCache(t, n, dim)
	// Write the same vectors as version 2 wrote them.
	f, err := embedFormat.ReadFile(c.path)
	if err != nil {
		t.Fatal(err)
	}
	w := embedFormatV2.NewWriter(nil)
	for _, id := range []uint32{0, 1, 2, 3} {
		b, err := f.Unverified(id)
		if err != nil {
			t.Fatal(err)
		}
		w.Add(id, b)
	}
	if err := w.WriteMapped(c.path, 0o600); err != nil {
		t.Fatal(err)
	}
	old, err := OpenEmbedCache(c.path)
	if err != nil {
		t.Fatal(err)
	}
	if got := old.Len(e.name); got != n {
		t.Fatalf("version 2 file: %d vectors, want %d", got, n)
	}
	q := e.vec("a query")
	nr, err := old.near(context.Background(), e.name, q, keys, nil)
	if err != nil {
		t.Fatal(err)
	}
	if nr.n != n || !nr.sketched {
		t.Errorf("ranked %d (sketched %v), want all %d by sketch", nr.n, nr.sketched, n)
	}
	if _, err := embedFormat.ReadFile(c.path); err != nil {
		t.Errorf("not rewritten as version %d: %v", embedCacheVersion, err)
	}
	fresh, _ := OpenEmbedCache(c.path)
	in := make([]EmbedInput, n)
	for i := range in {
		in[i] = EmbedInput{Text: fmt.Sprintf("memory %d", i)}
	}
	_, st, err := fresh.Vectors(context.Background(), e, in, nil)
	if err != nil || st.Cached != n || st.Embedded != 0 {
		t.Errorf("after the rewrite: %+v, %v; want all %d cached", st, err, n)
	}
}

// TestDamagedSketchesKeepTheVectors: a damaged sketch part costs no vector;
// the ranking rewrites the sketches.
func TestDamagedSketchesKeepTheVectors(t *testing.T) {
	const n, dim = 1100, 16
	c, e, keys := sketchTestCache(t, n, dim)
	data, err := os.ReadFile(c.path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := embedFormat.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	part, err := f.Section(5) // the levels of the sketches
	if err != nil {
		t.Fatal(err)
	}
	at := int(uintptr(unsafe.Pointer(&part[7])) - uintptr(unsafe.Pointer(&data[0])))
	data[at] ^= 0x5a
	if err := os.WriteFile(c.path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	d, _ := OpenEmbedCache(c.path)
	nr, err := d.near(context.Background(), e.name, e.vec("a query"), keys, nil)
	if err != nil {
		t.Fatal(err)
	}
	if nr.n != n || !nr.sketched {
		t.Errorf("ranked %d (sketched %v), want all %d, by sketches rewritten", nr.n, nr.sketched, n)
	}
	g, err := embedFormat.ReadFile(c.path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.Section(5); err != nil {
		t.Errorf("the sketches were not rewritten: %v", err)
	}
}

func TestTopBySketch(t *testing.T) {
	for n := range 40 {
		scores := make([]float32, n)
		for i := range scores {
			scores[i] = float32((i * 7919) % 13) // many ties
		}
		for _, m := range []int{1, 3, n / 2, n, n + 5} {
			top := topBySketch(scores, m)
			want := upTo(n)
			slices.SortStableFunc(want, func(a, b int) int { return cmp.Compare(scores[b], scores[a]) })
			want = want[:min(max(m, 0), n)]
			if !slices.Equal(top, want) {
				t.Errorf("n %d, m %d: top %v, want %v", n, m, top, want)
			}
		}
		// Every index, and some twice, in no order.
		at := append(upTo(n), upTo(n/3)...)
		slices.Reverse(at)
		ranks := sketchRanks(scores, at)
		for k, i := range at {
			r := 1
			for _, s := range scores {
				if s > scores[i] {
					r++
				}
			}
			if ranks[k] != r {
				t.Errorf("n %d: rank of %d = %d, want %d", n, i, ranks[k], r)
			}
		}
	}
}

// TestNearRanksTwinsOutsideTheShortlist: two memories of the same content
// (one vector, one key) both among the lexical hits and both far from the
// query are each given a cosine and the same rank by sketch. Before, the
// twin that did not own the key's slot indexed the scores at -1.
func TestNearRanksTwinsOutsideTheShortlist(t *testing.T) {
	const n, dim = 1100, 16
	c, e, keys := sketchTestCache(t, n, dim)
	q := e.vec("a query")
	worst, low := 0, 2.0
	for i := range n {
		if cos := Cosine(q, e.vec(fmt.Sprintf("memory %d", i))); cos < low {
			worst, low = i, cos
		}
	}
	keys = append(keys, keys[worst])
	nr, err := c.near(context.Background(), e.name, q, keys, []int{worst, n})
	if err != nil {
		t.Fatal(err)
	}
	if !nr.sketched || nr.n != n+1 {
		t.Fatalf("sketched %v, %d with a vector; want sketched, %d", nr.sketched, nr.n, n+1)
	}
	a, aok := nr.rank[worst]
	b, bok := nr.rank[n]
	if !aok || !bok || a != b || a <= len(nr.order) {
		t.Errorf("twins ranked %d (%v) and %d (%v), want the same rank past the shortlist's %d", a, aok, b, bok, len(nr.order))
	}
	if nr.cos[worst] != nr.cos[n] || nr.cos[n] == 0 {
		t.Errorf("twins' cosines %v and %v", nr.cos[worst], nr.cos[n])
	}
}

func TestSectionPositions(t *testing.T) {
	c, _, keys := sketchTestCache(t, 300, 8)
	c.mu.Lock()
	c.refresh()
	sec := c.section("table:random")
	c.mu.Unlock()
	var other, shared [32]byte
	other[0] = 1
	shared = keys[7]
	shared[31] ^= 1 // the first 8 bytes of a key the section has
	ask := append([][32]byte{other, keys[5], shared, keys[5]}, keys[10:20]...)
	pos := sec.positions(ask)
	for i, k := range ask {
		j, ok := sec.find(k)
		if !ok {
			j = -1
		}
		if pos[i] != int32(j) {
			t.Errorf("key %d: position %d, want %d", i, pos[i], j)
		}
	}
}

func toMap(cos []float64) map[int]float64 {
	m := make(map[int]float64, len(cos))
	for i, c := range cos {
		m[i] = c
	}
	return m
}

// BenchmarkSketchScan scores 20,000 sketches of 1,536 dimensions (a hybrid
// prompt's scan at 20,000 memories) with the vector kernel, with the
// integer byte tables alone (other processors), and with the float byte
// tables the scores were summed by before (floatTables), the anchor.
func BenchmarkSketchScan(b *testing.B) {
	const n, dim = 20000, 1536
	vecs := make([][]float32, n)
	for i := range vecs {
		vecs[i] = memdirtest.RandomVector(fmt.Sprint(i), dim)
	}
	part, lv := buildSketches(n, dim, func(i int) []float32 { return vecs[i] })
	stats, _ := framed.View[float32](lv)
	width := stats[dim:]
	q := memdirtest.RandomVector("query", dim)
	stride := sketchStride(dim)
	scores := make([]float32, n)
	run := func(score func([]byte) float32) func(b *testing.B) {
		return func(b *testing.B) {
			for b.Loop() {
				for i := range scores {
					scores[i] = score(part[i*stride : (i+1)*stride])
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/sketch")
		}
	}
	if haveSketchKernel {
		b.Run("kernel", run(newSketchQuery(q, width, true).score))
	}
	b.Run("tables", run(newSketchQuery(q, width, false).score))
	ft := floatTables(q, width)
	b.Run("float-tables", run(func(sk []byte) float32 { return floatTableSum(ft, sk) }))
}

// floatTables and floatTableSum are the float byte tables sketches were
// scored by before the integer weights, kept as the benchmark's anchor.
func floatTables(q, width []float32) [][256]float32 {
	t := make([][256]float32, sketchStride(len(width)))
	for k := range t {
		for b := range t[k] {
			for h, d := range []int{2 * k, 2*k + 1} {
				if d < len(width) {
					t[k][b] += q[d] * sketchLevel(byte(b>>(4*h))&15, width[d])
				}
			}
		}
	}
	return t
}

func floatTableSum(t [][256]float32, sk []byte) float32 {
	t = t[:len(sk)]
	var s0, s1, s2, s3 float32
	for k := 0; k+4 <= len(sk); k += 4 {
		b := sk[k : k+4 : k+4]
		u := t[k : k+4 : k+4]
		s0 += u[0][b[0]]
		s1 += u[1][b[1]]
		s2 += u[2][b[2]]
		s3 += u[3][b[3]]
	}
	return s0 + s1 + s2 + s3
}
