package team

import (
	"strings"
)

// A line-level three-way merge (diff3) of Markdown texts, on top of a Myers
// diff. No Go library with a maintained diff3 fits: the common ones are
// character-level (diff-match-patch) or two-way only, so this is small and
// tested on its own (merge_test.go).

// maxDiffEdits bounds the work of one diff: texts that differ in more than
// this many lines are treated as having nothing in common, which makes a
// three-way merge report a conflict (never a wrong merge). It keeps the
// memory of a diff of two unrelated 250 KB files to a few megabytes.
const maxDiffEdits = 2000

// Conflict markers written by [Merge3] around the parts both sides changed,
// in the order of git's diff3 style.
const (
	MarkerOurs   = "<<<<<<< yours"
	MarkerBase   = "||||||| base"
	MarkerSplit  = "======="
	MarkerTheirs = ">>>>>>> server"
)

// MergeResult is the outcome of [Merge3].
type MergeResult struct {
	// Text is the merged text. When Conflicts > 0 it holds, for each
	// conflicting region, both versions and the base between conflict
	// markers, for a person to edit.
	Text string
	// Conflicts counts the regions both sides changed differently.
	Conflicts int
}

// Merge3 merges ours and theirs, two edits of base, line by line: a region
// only one side changed takes that side's lines, a region both changed in
// the same way takes them once, and a region both changed differently is a
// conflict. Changes must be separated by at least one unchanged line to
// merge (as in git): edits to adjacent lines conflict.
func Merge3(base, ours, theirs string) MergeResult {
	switch {
	case ours == theirs, theirs == base:
		return MergeResult{Text: ours}
	case ours == base:
		return MergeResult{Text: theirs}
	}
	o, a, b := splitLines(base), splitLines(ours), splitLines(theirs)
	ma, mb := matchLines(o, a), matchLines(o, b)
	var out strings.Builder
	conflicts := 0
	write := func(ls []string) {
		for _, l := range ls {
			out.WriteString(l)
		}
	}
	i, j, k := 0, 0, 0
	for i < len(o) || j < len(a) || k < len(b) {
		if i < len(o) && ma[i] == j && mb[i] == k {
			out.WriteString(o[i])
			i, j, k = i+1, j+1, k+1
			continue
		}
		// The next base line both sides kept ends the unstable region.
		ni, nj, nk := len(o), len(a), len(b)
		for x := i; x < len(o); x++ {
			if ma[x] >= 0 && mb[x] >= 0 {
				ni, nj, nk = x, ma[x], mb[x]
				break
			}
		}
		co, ca, cb := o[i:ni], a[j:nj], b[k:nk]
		switch {
		case equalLines(ca, co):
			write(cb)
		case equalLines(cb, co), equalLines(ca, cb):
			write(ca)
		default:
			conflicts++
			writeMarker(&out, MarkerOurs)
			write(ca)
			writeMarker(&out, MarkerBase)
			write(co)
			writeMarker(&out, MarkerSplit)
			write(cb)
			writeMarker(&out, MarkerTheirs)
		}
		i, j, k = ni, nj, nk
	}
	return MergeResult{Text: out.String(), Conflicts: conflicts}
}

// writeMarker writes a marker line, first ending the text written so far
// with a newline when it lacks one (a last line without "\n").
func writeMarker(b *strings.Builder, m string) {
	if s := b.String(); s != "" && !strings.HasSuffix(s, "\n") {
		b.WriteByte('\n')
	}
	b.WriteString(m)
	b.WriteByte('\n')
}

// HasConflictMarkers reports whether text still holds a line that is one of
// Merge3's conflict markers.
func HasConflictMarkers(text string) bool {
	for l := range strings.SplitSeq(text, "\n") {
		l = strings.TrimRight(l, "\r")
		if l == MarkerOurs || l == MarkerBase || l == MarkerSplit || l == MarkerTheirs {
			return true
		}
	}
	return false
}

// splitLines splits s into lines that keep their "\n", so that joining
// them gives s back (a last line may lack it).
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	ls := strings.SplitAfter(s, "\n")
	if ls[len(ls)-1] == "" {
		ls = ls[:len(ls)-1]
	}
	return ls
}

func equalLines(x, y []string) bool {
	if len(x) != len(y) {
		return false
	}
	for i := range x {
		if x[i] != y[i] {
			return false
		}
	}
	return true
}

// matchLines returns, for each line of x, the index of the line of y it is
// matched with in a shortest edit script from x to y, or -1.
func matchLines(x, y []string) []int {
	m := make([]int, len(x))
	for i := range m {
		m[i] = -1
	}
	// Common prefix and suffix first: most edits of a memory touch a few
	// lines, and trimming keeps the diff proper small.
	p := 0
	for p < len(x) && p < len(y) && x[p] == y[p] {
		m[p] = p
		p++
	}
	s := 0
	for s < len(x)-p && s < len(y)-p && x[len(x)-1-s] == y[len(y)-1-s] {
		m[len(x)-1-s] = len(y) - 1 - s
		s++
	}
	for _, pair := range myers(x[p:len(x)-s], y[p:len(y)-s]) {
		m[p+pair[0]] = p + pair[1]
	}
	return m
}

// myers returns the matched line pairs of a shortest edit script from x to
// y (Myers, "An O(ND) Difference Algorithm and Its Variations", 1986), in
// increasing order; nil when the texts differ by more than maxDiffEdits.
func myers(x, y []string) [][2]int {
	n, m := len(x), len(y)
	if n == 0 || m == 0 {
		return nil
	}
	// Compare small integers, not strings.
	ids := map[string]int32{}
	id := func(ls []string) []int32 {
		out := make([]int32, len(ls))
		for i, l := range ls {
			v, ok := ids[l]
			if !ok {
				v = int32(len(ids))
				ids[l] = v
			}
			out[i] = v
		}
		return out
	}
	a, b := id(x), id(y)
	maxD := min(n+m, maxDiffEdits)
	off := maxD + 1
	v := make([]int32, 2*maxD+3)
	// trace[d] holds v[k] for k in [-d, d] after step d.
	var trace [][]int32
	found := -1
	for d := 0; d <= maxD && found < 0; d++ {
		for k := -d; k <= d; k += 2 {
			var xx int32
			if k == -d || (k != d && v[off+k-1] < v[off+k+1]) {
				xx = v[off+k+1]
			} else {
				xx = v[off+k-1] + 1
			}
			yy := xx - int32(k)
			for int(xx) < n && int(yy) < m && a[xx] == b[yy] {
				xx, yy = xx+1, yy+1
			}
			v[off+k] = xx
			if int(xx) >= n && int(yy) >= m {
				found = d
				break
			}
		}
		snap := make([]int32, 2*d+1)
		copy(snap, v[off-d:off+d+1])
		trace = append(trace, snap)
	}
	if found < 0 {
		return nil
	}
	// Walk back from (n, m), collecting the diagonal moves.
	var pairs [][2]int
	xx, yy := n, m
	for d := found; d > 0; d-- {
		prev := trace[d-1]
		at := func(k int) int { return int(prev[k+d-1]) }
		k := xx - yy
		var pk int
		if k == -d || (k != d && at(k-1) < at(k+1)) {
			pk = k + 1
		} else {
			pk = k - 1
		}
		px := at(pk)
		py := px - pk
		for xx > px && yy > py {
			xx, yy = xx-1, yy-1
			pairs = append(pairs, [2]int{xx, yy})
		}
		xx, yy = px, py
	}
	for xx > 0 && yy > 0 {
		xx, yy = xx-1, yy-1
		pairs = append(pairs, [2]int{xx, yy})
	}
	for i, j := 0, len(pairs)-1; i < j; i, j = i+1, j-1 {
		pairs[i], pairs[j] = pairs[j], pairs[i]
	}
	return pairs
}
