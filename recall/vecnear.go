package recall

import (
	"cmp"
	"context"
	"encoding/binary"
	"hash/crc32"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/memdir/memdir/internal/framed"
	"github.com/memdir/memdir/internal/prefault"
)

// nearRanking is the cosine ranking of a query against the cached vectors
// of some candidates (see EmbedCache.near).
type nearRanking struct {
	// cos holds the exact cosine of the candidates it was taken for: the
	// shortlist, the required ones, and a sample.
	cos map[int]float64
	// order is the shortlist, by exact cosine, best first: the candidates
	// that rank highest (all of them when the sketches were not used).
	order []int
	// rank gives the estimated rank of a required candidate outside the
	// shortlist (from its sketch score); nil when every candidate is in
	// order.
	rank map[int]int
	// n counts the candidates with a vector; mean and sd are of their
	// cosines (estimated from a sample when the sketches were used).
	n        int
	mean, sd float64
	sketched bool
}

// nearSample is how many vectors, spread over the candidates, have their
// cosine taken to estimate the mean and spread of all cosines when the
// sketches rank the rest.
const nearSample = 256

// near ranks the candidates whose content keys are keys by the cosine of
// their cached vectors (embedder name) with the query's q. With few
// candidates every cosine is taken. With many, every candidate is ranked
// by its sketch (vecsketch.go) and only the sketch's shortlist
// (sketchShortlist), the candidates at the indexes in must and a sample
// have their vectors read: a prompt touches a few megabytes of the file
// whatever its size. A candidate without a cached vector (or of another
// dimension than q) is left out. A version 2 file, without sketches, is
// rewritten with them first. Vectors are read from the file, not the
// mapping (see framed.File.ReadAt), so that a prompt's resident memory
// grows by the vectors it reads and not by the pages around them.
func (c *EmbedCache) near(ctx context.Context, name string, q []float32, keys [][32]byte, must []int) (*nearRanking, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.refresh(); err != nil {
		return nil, err
	}
	sec := c.section(name)
	if sec == nil || sec.dim != len(q) {
		return &nearRanking{}, nil
	}
	if sec.sketch == nil && len(keys) > 2*512 {
		// Worth a rewrite: every later prompt reads an eighth of what this one does.
		if _, err := c.save(ctx, name, sec.dim, nil, nil); err == nil {
			if sec = c.section(name); sec == nil || sec.dim != len(q) {
				return &nearRanking{}, nil
			}
		}
	}
	pos := sec.positions(keys)
	var has []int // candidates with a vector, ascending
	for i, j := range pos {
		if j >= 0 {
			has = append(has, i)
		}
	}
	nr := &nearRanking{cos: map[int]float64{}, n: len(has)}
	if len(has) == 0 {
		return nr, nil
	}
	buf := make([]float32, sec.dim)
	qn := sumSquares(q)
	exact := func(i int) bool {
		if _, ok := nr.cos[i]; ok {
			return true
		}
		if !sec.readVector(c.file, int(pos[i]), buf) {
			return false
		}
		nr.cos[i] = cosineWith(q, qn, buf)
		return true
	}
	m := sketchShortlist(len(has))
	if m >= len(has) || sec.sketch == nil {
		for _, i := range has {
			if !exact(i) {
				return &nearRanking{}, nil // damaged: the section counts as empty
			}
		}
		nr.order = has
		nr.mean, nr.sd = meanSD(nr.cos, has)
	} else if !nr.bySketch(sec, q, pos, has, must, m, exact) {
		return &nearRanking{}, nil // damaged: the section counts as empty
	}
	slices.SortStableFunc(nr.order, func(a, b int) int { return cmp.Compare(nr.cos[b], nr.cos[a]) })
	return nr, nil
}

// bySketch fills nr for the candidates has (of which must are required)
// from the sketches of sec: every candidate scored by its sketch against
// q, the m best, the required ones and a sample given their exact cosine
// by exact, the rest of the required ranked by sketch, and the cosines'
// mean and spread estimated from the sample. pos gives each candidate's
// place in sec. It reports false when a vector is damaged.
func (nr *nearRanking) bySketch(sec *embedSection, q []float32, pos []int32, has, must []int, m int, exact func(int) bool) bool {
	nr.sketched = true
	// Scored in the order of the file, so that the sketches are read
	// front to back, not a page here and there.
	bySec := make([]int32, len(sec.keys))
	for j := range bySec {
		bySec[j] = -1
	}
	for _, i := range has {
		bySec[pos[i]] = int32(i)
	}
	sq := newSketchQuery(q, sec.width, haveSketchKernel)
	stride := sketchStride(sec.dim)
	if 4*len(has) >= len(sec.keys) {
		// Most of the section's pages hold a candidate's sketch (five
		// sketches of 1,536 dimensions a page): mapped in one call, not
		// a fault for every 16 pages the scan reaches. At 20,000
		// memories a hybrid prompt faulted 220 times less and took 3%
		// less CPU on a machine with slow faults.
		prefault.Read(sec.sketch)
	}
	scores := make([]float32, 0, len(has))
	cands := make([]int, 0, len(has))
	for j, i := range bySec {
		if i >= 0 {
			scores = append(scores, sq.score(sec.sketch[j*stride:(j+1)*stride]))
			cands = append(cands, int(i))
		}
	}
	top := topBySketch(scores, m)
	nr.order = make([]int, len(top))
	inTop := make(map[int]bool, len(top))
	for r, h := range top {
		nr.order[r] = cands[h]
		inTop[cands[h]] = true
	}
	// A sample, spread over the file (whose order, by content hash, is
	// no order of the memories').
	var sample, sampleAt []int
	for h := 0; h < len(cands); h += max(1, len(cands)/nearSample) {
		sample, sampleAt = append(sample, cands[h]), append(sampleAt, h)
	}
	// The required candidates outside the shortlist are ranked by
	// their sketches; cands is in the file's order, so a candidate's
	// index in it comes from its position there.
	var outside, outsideAt []int
	for _, i := range must {
		if pos[i] >= 0 && !inTop[i] {
			h, _ := slices.BinarySearchFunc(cands, pos[i], func(c int, j int32) int { return cmp.Compare(pos[c], j) })
			outside, outsideAt = append(outside, i), append(outsideAt, h)
		}
	}
	nr.rank = map[int]int{}
	for k, r := range sketchRanks(scores, outsideAt) {
		nr.rank[outside[k]] = max(r, len(nr.order)+1)
	}
	for _, list := range [][]int{nr.order, must, sample} {
		for _, i := range list {
			if pos[i] >= 0 && !exact(i) {
				return false
			}
		}
	}
	nr.mean, nr.sd = estimateMeanSD(nr.cos, sample, scores, sampleAt)
	return true
}

// positions returns the position in s of each of keys, -1 for those it
// lacks. The section's keys are walked once against a table of keys by
// their first 8 bytes: open addressing, slotted by those bytes times a
// random odd number (SHA-256 bytes need no more hashing, and the random
// factor keeps a directory of files made to share leading bytes from
// lengthening the probes). It costs a fraction of a Go map of the same
// keys, which was a seventh of the ranking by vector at 20,000 memories.
func (s *embedSection) positions(keys [][32]byte) []int32 {
	pos := make([]int32, len(keys))
	bits := 1
	for 1<<bits < 2*len(keys) {
		bits++
	}
	mask := uint64(1)<<bits - 1
	mul := rand.Uint64() | 1
	slot := func(p uint64) uint64 { return (p * mul) >> (64 - bits) }
	table := make([]int32, 1<<bits) // a key's index + 1; 0 is empty
	for i, k := range keys {
		pos[i] = -1
		p := binary.LittleEndian.Uint64(k[:8])
		h := slot(p)
		for table[h] != 0 {
			h = (h + 1) & mask
		}
		table[h] = int32(i) + 1
	}
	for j := range s.keys {
		k := &s.keys[j]
		p := binary.LittleEndian.Uint64(k[:8])
		for h := slot(p); table[h] != 0; h = (h + 1) & mask {
			if i := table[h] - 1; keys[i] == *k {
				pos[i] = int32(j)
			}
		}
	}
	return pos
}

// readVector reads the i'th vector of s from f into buf, checking it
// against its sum; false when it fails, and the section is then bad.
func (s *embedSection) readVector(f *framed.File, i int, buf []float32) bool {
	raw := framed.Raw(buf)
	if f.ReadAt(s.id+1, raw, i*len(raw)) != nil || crc32.Checksum(raw, castagnoli()) != s.sums[i] {
		s.bad = true
		return false
	}
	return true
}

// estimateMeanSD estimates the mean and standard deviation of every
// candidate's cosine from the exact cosines of a sample and the sketch
// scores of all (scores; sampleAt are the sample's indexes in it): a
// regression estimator. Sketch scores follow the cosine closely, so the
// sample gives the slope between the two precisely, and the scores of all
// give what the sample alone would estimate with the error of a sample of
// its size: over the labelled sets' queries against 6,000 memories, the
// worst errors of the mean and deviation were 0.14–0.19 and 0.11–0.12
// deviations from 256 vectors alone, 0.01–0.05 and 0.01–0.06 with the
// scores (TestSketchShortlistHoldsTheCosineHead); the former moved the bar
// of the close rule enough to change answers on dev under 1,880
// distractors.
func estimateMeanSD(cos map[int]float64, sample []int, scores []float32, sampleAt []int) (mean, sd float64) {
	cm, csd := meanSD(cos, sample)
	var sm, sm2, cov float64
	for k, h := range sampleAt {
		x := float64(scores[h])
		sm += x
		sm2 += x * x
		cov += x * cos[sample[k]]
	}
	n := float64(len(sampleAt))
	sm, sm2, cov = sm/n, sm2/n, cov/n
	svar := sm2 - sm*sm
	if n < 2 || svar <= 0 {
		return cm, csd
	}
	beta := (cov - sm*cm) / svar
	var am, am2 float64
	for _, x := range scores {
		am += float64(x)
		am2 += float64(x) * float64(x)
	}
	an := float64(len(scores))
	am, am2 = am/an, am2/an
	avar := max(0, am2-am*am)
	mean = cm + beta*(am-sm)
	// The cosines' variance: what the scores explain (β² of theirs, over
	// all) and what they do not (the sample's residual).
	resid := max(0, csd*csd-beta*beta*svar)
	return mean, math.Sqrt(beta*beta*avar + resid)
}

// meanSD returns the mean and standard deviation of cos over the indexes.
func meanSD(cos map[int]float64, idx []int) (mean, sd float64) {
	if len(idx) == 0 {
		return 0, 0
	}
	var sum, sum2 float64
	for _, i := range idx {
		c := cos[i]
		sum += c
		sum2 += c * c
	}
	n := float64(len(idx))
	mean = sum / n
	return mean, math.Sqrt(max(0, sum2/n-mean*mean))
}
