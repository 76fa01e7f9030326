package recall

import (
	"cmp"
	"math"
	"slices"

	"github.com/memdir/memdir/internal/framed"
)

// A sketch is a cached vector at 4 bits a dimension: each component is
// coded as one of 16 levels spread evenly on either side of that
// dimension's mean, as far as the farthest vector reaches and at most six
// standard deviations, the mean and spread being those of all the
// embedder's vectors. The cache file keeps every vector's
// sketch beside the vectors (docs/format.md §15), an eighth of their size,
// so that a recall over many memories ranks all of them by sketch and takes
// the exact cosine of the few hundred the sketches put first (and of the
// lexical hits) only. Without it a hybrid prompt read every vector: 123 MB
// at 20,000 memories of 1,536 dimensions.
//
// The query is not sketched (an asymmetric estimate): a memory's sketch
// score is the dot product of the query with the decoded sketch, less the
// query's product with the mean, which is the same for every memory. It is
// summed in integers, the query's weights at 8 bits (see sketchQuery): 24
// ns a sketch of 1,536 dimensions with AVX2, against 360 ns by the float
// byte tables it was summed by before (BenchmarkSketchScan). Levels are
// taken about the mean because real embeddings
// share a common direction, and per dimension because their spread differs
// from one dimension to the next. One bit a dimension (the sign) was
// tried: on bag-of-words and skewed vectors it lost most of the exact
// cosine's first 60 memories from a shortlist of 512 of 20,000; two bits
// lost a tenth; four bits over 2.7 deviations (the best spread for a
// Gaussian) under one in a hundred, but more than eight bits, because a
// bag of words' components are heavy-tailed; the width bounded by the
// farthest vector and six deviations loses under one in a thousand on
// all three kinds (TestSketchShortlistHoldsTheCosineHead).

const (
	sketchLevels = 16
	sketchRange  = 8
)

// sketchStride is the bytes of one vector's sketch: 4 bits a dimension,
// padded to 8 bytes so that every sketch starts aligned.
func sketchStride(dim int) int { return (dim + 15) / 16 * 8 }

// sketchBytes is the size of a section's sketches and their levels: count
// sketches, and the mean and the half width of the levels of each
// dimension (2 × dim float32).
func sketchBytes(count, dim int) int { return count*sketchStride(dim) + 8*dim }

// buildSketches returns the sketches of a section of count vectors of dim
// floats, vec(i) being the i'th, and their levels: the codes of each
// vector, sketchStride(dim) bytes apart, dimension d in the low half of
// byte d/2 when d is even and the high half when odd; and the mean and half
// width vectors (2 × dim float32, in the machine's order like the
// vectors).
func buildSketches(count, dim int, vec func(i int) []float32) (sketches, levels []byte) {
	stride := sketchStride(dim)
	out := make([]byte, count*stride)
	sum := make([]float64, dim)
	sum2 := make([]float64, dim)
	for i := range count {
		for d, x := range vec(i) {
			sum[d] += float64(x)
			sum2[d] += float64(x) * float64(x)
		}
	}
	mean := make([]float32, dim)
	width := make([]float32, dim) // the half width of each dimension's levels
	if count > 0 {
		for d := range sum {
			m := sum[d] / float64(count)
			mean[d] = float32(m)
			width[d] = float32(sketchRange * math.Sqrt(max(0, sum2[d]/float64(count)-m*m)))
		}
		// No wider than the vectors reach: Gaussian components stay
		// within 4 or 5 deviations, so their levels are closer.
		reach := make([]float32, dim)
		for i := range count {
			for d, x := range vec(i) {
				reach[d] = max(reach[d], abs32(x-mean[d]))
			}
		}
		for d := range width {
			width[d] = min(width[d], reach[d])
		}
	}
	for i := range count {
		sk := out[i*stride : (i+1)*stride]
		for d, x := range vec(i) {
			c := sketchCode(x, mean[d], width[d])
			sk[d>>1] |= c << (4 * (d & 1))
		}
	}
	return out, framed.Raw(slices.Concat(mean, width))
}

// sketchCode is the level of x in a dimension of that mean and half
// width.
func sketchCode(x, mean, width float32) byte {
	if width == 0 {
		return sketchLevels / 2
	}
	z := (float64(x-mean)/float64(width) + 1) / 2 * (sketchLevels - 1)
	return byte(math.Round(min(sketchLevels-1, max(0, z))))
}

// sketchLevel is what code c stands for, less the mean, in a dimension of
// that half width.
func sketchLevel(c byte, width float32) float32 {
	return width * float32(-1+float64(c)*2/(sketchLevels-1))
}

func abs32(x float32) float32 { return float32(math.Abs(float64(x))) }

// A sketchQuery is the query made ready to score sketches. A sketch's
// decoded product with the query is Σ_d q_d·level_d(c_d), and level_d(c) is
// width_d·(2c/15 − 1), so the product is (2/15)·Σ_d q_d·width_d·c_d less a
// sum the same for every memory. Ranking sketches (and regressing cosines
// on their scores, see estimateMeanSD) needs only Σ_d a_d·c_d with
// a_d = q_d·width_d, and a_d is kept as a signed byte: rounded to a 254th
// of the largest |a_d|, an error far below the sketch's own (a code is off
// by up to a 30th of its dimension's range). The score is then a sum of
// small integers, exact whichever way it is added: AVX2 multiplies 32
// codes by their weights an instruction (sketchDotAVX2), and a byte table
// per sketch byte does the same elsewhere, with the same result.
type sketchQuery struct {
	// w is the weight of each dimension (a_d in units of step), the
	// padding's 0.
	w []int8
	// packed holds the weights the vector kernel reads: for each 32 bytes
	// of sketch (64 dimensions), the 32 even dimensions' weights, then the
	// 32 odd ones'.
	packed []int8
	// body is how many bytes of a sketch the kernel scores (a multiple of
	// 32); tab scores the rest, a table for each byte position k from body
	// on: entry b is the weights of dimensions 2k and 2k+1 times the codes
	// in b.
	body int
	tab  [][256]int32
	// scale and shift map a score back to the decoded product:
	// product ≈ scale·score − shift.
	scale, shift float64
}

// newSketchQuery prepares q for sketches whose levels have the half widths
// width (one per dimension), for the vector kernel when kernel is true
// (haveSketchKernel) and for byte tables alone when it is false.
func newSketchQuery(q, width []float32, kernel bool) *sketchQuery {
	dim := len(width)
	stride := sketchStride(dim)
	a := make([]float64, 2*stride)
	var most, shift float64
	for d := range min(dim, len(q)) {
		a[d] = float64(q[d]) * float64(width[d])
		most = max(most, math.Abs(a[d]))
		shift += a[d]
	}
	step := most / 127
	if step == 0 {
		step = 1
	}
	w := make([]int8, len(a))
	for d, x := range a {
		w[d] = int8(math.Round(x / step))
	}
	sq := &sketchQuery{w: w, scale: 2 * step / (sketchLevels - 1), shift: shift}
	if kernel {
		sq.body = stride / 32 * 32
	}
	sq.packed = make([]int8, 2*sq.body)
	for b := 0; b < sq.body; b += 32 {
		for j := range 32 {
			sq.packed[2*b+j] = w[2*(b+j)]
			sq.packed[2*b+32+j] = w[2*(b+j)+1]
		}
	}
	sq.tab = make([][256]int32, stride-sq.body)
	for k := range sq.tab {
		lo, hi := int32(w[2*(sq.body+k)]), int32(w[2*(sq.body+k)+1])
		for b := range sq.tab[k] {
			sq.tab[k][b] = lo*int32(b&15) + hi*int32(b>>4)
		}
	}
	return sq
}

// score is a sketch's score: Σ_d a_d·c_d in the query's byte weights. It
// is most of what a hybrid prompt costs over a lexical one.
func (sq *sketchQuery) score(sk []byte) float32 {
	var s int32
	if sq.body > 0 {
		s = sketchDotAVX2(&sq.packed[0], &sk[0], sq.body)
	}
	return float32(s + sketchTableSum(sq.tab, sk[sq.body:]))
}

// sketchTableSum adds up the tables' entries for the bytes of sk (as many
// tables as bytes), written for the compiler to check no bound in the
// loop: a table is indexed by a byte.
func sketchTableSum(t [][256]int32, sk []byte) int32 {
	t = t[:len(sk)]
	var s int32
	for k, b := range sk {
		s += t[k][b]
	}
	return s
}

// sketchShortlist is how many memories, of n with a vector, have their
// exact cosine taken after the sketches ranked them all: a fiftieth, at
// least 512 and at most 4,096. All of them are taken when n is at most
// twice the least.
func sketchShortlist(n int) int {
	m := min(max(512, n/50), 4096)
	if n <= 2*512 {
		return n
	}
	return m
}

// topBySketch returns the indexes of the m highest of scores, best first
// (ties in index order). It sorts only those m: the m'th highest is found
// by selection.
func topBySketch(scores []float32, m int) []int {
	if m <= 0 || len(scores) == 0 {
		return nil
	}
	m = min(m, len(scores))
	thr := kthLargest(slices.Clone(scores), m)
	top := make([]int, 0, m)
	for i, s := range scores {
		if s > thr {
			top = append(top, i)
		}
	}
	for i, s := range scores {
		if len(top) == m {
			break
		}
		if s == thr {
			top = append(top, i)
		}
	}
	slices.SortStableFunc(top, func(a, b int) int { return cmp.Compare(scores[b], scores[a]) })
	return top
}

// sketchRanks returns the rank (1-based) of each of the indexes at among
// scores: one more than how many scores are higher. One pass over scores
// serves them all, each score placed among theirs by a binary search.
func sketchRanks(scores []float32, at []int) []int {
	vals := make([]float32, len(at))
	for k, h := range at {
		vals[k] = scores[h]
	}
	slices.Sort(vals)
	// above[j] counts the scores higher than exactly the lowest j of vals.
	above := make([]int, len(vals)+1)
	for _, s := range scores {
		j, _ := slices.BinarySearch(vals, s) // vals[:j] < s
		above[j]++
	}
	// higher[k]: the scores above vals[k], those placed past it.
	higher := make([]int, len(vals)+1)
	for j := len(vals) - 1; j >= 0; j-- {
		higher[j] = higher[j+1] + above[j+1]
	}
	ranks := make([]int, len(at))
	for k, h := range at {
		j, _ := slices.BinarySearch(vals, scores[h])
		ranks[k] = 1 + higher[j]
	}
	return ranks
}

// kthLargest returns the k'th largest of a (1-based), reordering a: a
// selection by partition (Hoare's), linear on average.
func kthLargest(a []float32, k int) float32 {
	lo, hi, want := 0, len(a)-1, k-1 // want: the index in descending order
	for lo < hi {
		// The median of three as pivot.
		mid := lo + (hi-lo)/2
		if a[mid] > a[lo] {
			a[mid], a[lo] = a[lo], a[mid]
		}
		if a[hi] > a[lo] {
			a[hi], a[lo] = a[lo], a[hi]
		}
		if a[mid] > a[hi] {
			a[mid], a[hi] = a[hi], a[mid]
		}
		p := a[hi] // lo ≥ p ≥ mid in descending terms
		i, j := lo, hi
		for i <= j {
			for a[i] > p {
				i++
			}
			for a[j] < p {
				j--
			}
			if i <= j {
				a[i], a[j] = a[j], a[i]
				i++
				j--
			}
		}
		switch {
		case want <= j:
			hi = j
		case want >= i:
			lo = i
		default:
			return a[want]
		}
	}
	return a[want]
}
