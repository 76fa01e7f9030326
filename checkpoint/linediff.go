package checkpoint

import (
	"bytes"
	"fmt"
	"strings"
)

// A line diff in the manner of Myers' O(ND) algorithm with the linear-space
// "middle snake" refinement: common prefixes and suffixes are trimmed, then
// each remaining region is split at a point on a shortest edit path and the
// halves are diffed in turn. A work budget bounds pathological inputs; past
// it a region is reported as wholly replaced, which is still a correct (if
// not minimal) diff, and the result is marked approximate.

type opKind uint8

const (
	opEqual opKind = iota
	opDelete
	opInsert
)

// diffOp is one line of an edit script: a[ai] kept or deleted, or b[bi]
// inserted.
type diffOp struct {
	kind   opKind
	ai, bi int
}

// diffBudget is the number of inner-loop steps one diff may take, about a
// second of work, before it stops looking for a shortest script.
const diffBudget = 50_000_000

type differ struct {
	a, b         []int // lines, interned
	ops          []diffOp
	work, budget int
	approx       bool
	v1, v2       []int
}

// splitLines cuts data into lines, each keeping its "\n"; a last line
// without one is a line too.
func splitLines(data []byte) []string {
	if len(data) == 0 {
		return nil
	}
	lines := make([]string, 0, bytes.Count(data, []byte("\n"))+1)
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			lines = append(lines, string(data))
			break
		}
		lines = append(lines, string(data[:i+1]))
		data = data[i+1:]
	}
	return lines
}

// diffLines returns an edit script turning a into b, and whether the budget
// ran out so that the script may not be the shortest.
func diffLines(a, b []string) ([]diffOp, bool) { return diffLinesBudget(a, b, diffBudget) }

func diffLinesBudget(a, b []string, budget int) ([]diffOp, bool) {
	ids := map[string]int{}
	intern := func(lines []string) []int {
		out := make([]int, len(lines))
		for i, l := range lines {
			id, ok := ids[l]
			if !ok {
				id = len(ids)
				ids[l] = id
			}
			out[i] = id
		}
		return out
	}
	d := &differ{a: intern(a), b: intern(b), budget: budget}
	d.ops = make([]diffOp, 0, max(len(a), len(b)))
	n := len(a) + len(b) + 4
	d.v1, d.v2 = make([]int, n), make([]int, n)
	d.diff(0, len(a), 0, len(b))
	return d.ops, d.approx
}

func (d *differ) diff(a0, a1, b0, b1 int) {
	for a0 < a1 && b0 < b1 && d.a[a0] == d.b[b0] {
		d.ops = append(d.ops, diffOp{opEqual, a0, b0})
		a0++
		b0++
	}
	suffix := 0
	for a1 > a0 && b1 > b0 && d.a[a1-1] == d.b[b1-1] {
		a1--
		b1--
		suffix++
	}
	switch {
	case a0 == a1 || b0 == b1:
		d.replace(a0, a1, b0, b1)
	default:
		x, y, ok := d.split(a0, a1, b0, b1)
		corner := (x == a0 && y == b0) || (x == a1 && y == b1)
		if ok && !corner {
			d.diff(a0, x, b0, y)
			d.diff(x, a1, y, b1)
		} else {
			d.approx = d.approx || d.work > d.budget
			d.replace(a0, a1, b0, b1)
		}
	}
	for i := range suffix {
		d.ops = append(d.ops, diffOp{opEqual, a1 + i, b1 + i})
	}
}

func (d *differ) replace(a0, a1, b0, b1 int) {
	for i := a0; i < a1; i++ {
		d.ops = append(d.ops, diffOp{opDelete, i, b0})
	}
	for j := b0; j < b1; j++ {
		d.ops = append(d.ops, diffOp{opInsert, a1, j})
	}
}

// split finds a point (x, y) on a shortest edit path through the region by
// running the search forward from its start and backward from its end until
// the two meet. The region's first lines differ and so do its last ones, so
// the point is never a corner and both halves are smaller.
func (d *differ) split(a0, a1, b0, b1 int) (x, y int, ok bool) {
	n, m := a1-a0, b1-b0
	maxD := (n + m + 1) / 2
	off := maxD + 1
	size := 2*maxD + 2
	v1, v2 := d.v1[:size], d.v2[:size]
	for i := range v1 {
		v1[i], v2[i] = -1, -1
	}
	v1[off+1], v2[off+1] = 0, 0
	delta := n - m
	front := delta%2 != 0
	// k1lo and k1hi (and k2's) skip diagonals whose paths already ran off
	// an edge of the grid.
	k1lo, k1hi, k2lo, k2hi := 0, 0, 0, 0
	for dd := range maxD {
		if d.work > d.budget {
			return 0, 0, false
		}
		for k := -dd + k1lo; k <= dd-k1hi; k += 2 {
			i := off + k
			var x1 int
			if k == -dd || (k != dd && v1[i-1] < v1[i+1]) {
				x1 = v1[i+1]
			} else {
				x1 = v1[i-1] + 1
			}
			y1 := x1 - k
			start := x1
			for x1 < n && y1 < m && d.a[a0+x1] == d.b[b0+y1] {
				x1++
				y1++
			}
			d.work += 1 + x1 - start
			v1[i] = x1
			switch {
			case x1 > n:
				k1hi += 2
			case y1 > m:
				k1lo += 2
			case front:
				j := off + delta - k
				if j >= 0 && j < size && v2[j] != -1 && x1 >= n-v2[j] {
					return a0 + x1, b0 + y1, true
				}
			}
		}
		for k := -dd + k2lo; k <= dd-k2hi; k += 2 {
			i := off + k
			var x2 int
			if k == -dd || (k != dd && v2[i-1] < v2[i+1]) {
				x2 = v2[i+1]
			} else {
				x2 = v2[i-1] + 1
			}
			y2 := x2 - k
			start := x2
			for x2 < n && y2 < m && d.a[a1-1-x2] == d.b[b1-1-y2] {
				x2++
				y2++
			}
			d.work += 1 + x2 - start
			v2[i] = x2
			switch {
			case x2 > n:
				k2hi += 2
			case y2 > m:
				k2lo += 2
			case !front:
				j := off + delta - k
				if j >= 0 && j < size && v1[j] != -1 {
					x1 := v1[j]
					y1 := x1 - (delta - k)
					if x1 >= n-x2 {
						return a0 + x1, b0 + y1, true
					}
				}
			}
		}
	}
	return 0, 0, false
}

// lineStats counts inserted and deleted lines in an edit script.
func lineStats(ops []diffOp) (added, removed int) {
	for _, op := range ops {
		switch op.kind {
		case opInsert:
			added++
		case opDelete:
			removed++
		}
	}
	return added, removed
}

// unified renders an edit script as a unified diff with ctx lines of context
// around each change, headed by the two names.
func unified(oldName, newName string, a, b []string, ops []diffOp, ctx int) string {
	var hunks [][2]int // [start, end) ranges of ops
	for i := 0; i < len(ops); {
		if ops[i].kind == opEqual {
			i++
			continue
		}
		start := max(0, i-ctx)
		end := i
		for end < len(ops) {
			if ops[end].kind != opEqual {
				end++
				continue
			}
			// A run of equal lines longer than twice the context ends
			// the hunk.
			run := end
			for run < len(ops) && ops[run].kind == opEqual {
				run++
			}
			if run == len(ops) || run-end > 2*ctx {
				end = min(end+ctx, len(ops))
				break
			}
			end = run
		}
		if n := len(hunks); n > 0 && hunks[n-1][1] >= start {
			hunks[n-1][1] = end
		} else {
			hunks = append(hunks, [2]int{start, end})
		}
		i = end
	}
	if len(hunks) == 0 {
		return ""
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "--- %s\n+++ %s\n", oldName, newName)
	for _, h := range hunks {
		first := ops[h[0]]
		var na, nb int
		for _, op := range ops[h[0]:h[1]] {
			if op.kind != opInsert {
				na++
			}
			if op.kind != opDelete {
				nb++
			}
		}
		fmt.Fprintf(&sb, "@@ -%s +%s @@\n", hunkRange(first.ai, na), hunkRange(first.bi, nb))
		for _, op := range ops[h[0]:h[1]] {
			switch op.kind {
			case opEqual:
				writeDiffLine(&sb, ' ', a[op.ai])
			case opDelete:
				writeDiffLine(&sb, '-', a[op.ai])
			case opInsert:
				writeDiffLine(&sb, '+', b[op.bi])
			}
		}
	}
	return sb.String()
}

// hunkRange formats a unified diff range: 1-based start and count, with an
// empty range numbered by the line before it.
func hunkRange(start, n int) string {
	if n == 0 {
		return fmt.Sprintf("%d,0", start)
	}
	if n == 1 {
		return fmt.Sprintf("%d", start+1)
	}
	return fmt.Sprintf("%d,%d", start+1, n)
}

func writeDiffLine(sb *strings.Builder, mark byte, line string) {
	sb.WriteByte(mark)
	sb.WriteString(line)
	if !strings.HasSuffix(line, "\n") {
		sb.WriteString("\n\\ No newline at end of file\n")
	}
}
