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
// The query keeps its full precision (an asymmetric estimate): a memory's
// sketch score is the dot product of the query with the decoded sketch,
// less the query's product with the mean, which is the same for every
// memory. It is summed by byte tables: a byte holds the codes of two
// dimensions, and the query's table gives, for each byte position and each
// of the 256 values, the two products, so a sketch costs a lookup per two
// dimensions. Levels are taken about the mean because real embeddings
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

// sketchTables returns the query's byte tables for sketches whose
// dimensions' levels have the half widths width: entry b of table k is q's
// product with the levels byte b codes at position k (dimensions 2k and
// 2k+1).
func sketchTables(q, width []float32) [][256]float32 {
	dim := len(width)
	t := make([][256]float32, sketchStride(dim))
	var lo, hi [sketchLevels]float32
	for k := range t {
		clear(lo[:])
		clear(hi[:])
		for c := range byte(sketchLevels) {
			if d := 2 * k; d < dim && d < len(q) {
				lo[c] = q[d] * sketchLevel(c, width[d])
			}
			if d := 2*k + 1; d < dim && d < len(q) {
				hi[c] = q[d] * sketchLevel(c, width[d])
			}
		}
		for b := range t[k] {
			t[k][b] = lo[b&15] + hi[b>>4]
		}
	}
	return t
}

// sketchScore is a sketch's score against the query's tables (as many as
// the sketch has bytes, a multiple of 8). It is most of what a hybrid
// prompt costs over a lexical one, so it is written for the compiler to
// check no bound in the loop: a table is indexed by a byte.
func sketchScore(t [][256]float32, sk []byte) float32 {
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
// (ties in index order), and a function giving the estimated rank
// (1-based) of any index: one more than how many scores are higher. It
// sorts only those m: the m'th highest is found by selection.
func topBySketch(scores []float32, m int) (top []int, rank func(i int) int) {
	rank = func(i int) int {
		r := 1
		for _, s := range scores {
			if s > scores[i] {
				r++
			}
		}
		return r
	}
	if m <= 0 || len(scores) == 0 {
		return nil, rank
	}
	m = min(m, len(scores))
	thr := kthLargest(slices.Clone(scores), m)
	top = make([]int, 0, m)
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
	return top, rank
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
