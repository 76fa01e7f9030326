// Package linediff is memdir's one line diff: it cuts text into lines,
// finds a short edit script between two lists of lines, counts the lines
// added and removed, and renders the script as a unified diff. Checkpoints
// use it for their diffs and rewind counts, the web UI for journal runs.
//
// The diff follows Myers' O(ND) algorithm with the linear-space "middle
// snake" refinement: common prefixes and suffixes are trimmed, then each
// remaining region is split at a point on a shortest edit path and the
// halves are diffed in turn. A work budget bounds pathological inputs; past
// it a region is reported as wholly replaced, which is still a correct (if
// not minimal) script, and the result is marked approximate.
package linediff

import (
	"fmt"
	"strings"
)

// Kind says what an Op does with its line.
type Kind uint8

// The kinds of edit.
const (
	Equal  Kind = iota // the line is in both texts
	Delete             // the line of the old text is gone
	Insert             // the line of the new text is added
)

// Op is one line of an edit script: old line A kept (Equal) or deleted, or
// new line B inserted. Every op also carries the position the other side
// has reached, 0-based, which hunk headers are numbered from.
type Op struct {
	Kind Kind
	A, B int
}

// DefaultBudget is the number of inner-loop steps one diff takes, about a
// second of work, before it stops looking for a shortest script.
const DefaultBudget = 50_000_000

// Split cuts text into lines, each keeping its "\n"; a last line without
// one is a line too. The lines share text's memory.
func Split(text string) []string {
	if text == "" {
		return nil
	}
	lines := make([]string, 0, strings.Count(text, "\n")+1)
	for text != "" {
		i := strings.IndexByte(text, '\n')
		if i < 0 {
			lines = append(lines, text)
			break
		}
		lines = append(lines, text[:i+1])
		text = text[i+1:]
	}
	return lines
}

// Diff returns an edit script turning a into b, walking both in order with
// the deletions of each changed block before its insertions, and whether
// budget (DefaultBudget when not positive) ran out so that the
// script may not be the shortest.
func Diff(a, b []string, budget int) (ops []Op, approx bool) {
	if budget <= 0 {
		budget = DefaultBudget
	}
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
	d.ops = make([]Op, 0, max(len(a), len(b)))
	n := len(a) + len(b) + 4
	d.v1, d.v2 = make([]int, n), make([]int, n)
	d.diff(0, len(a), 0, len(b))
	deletesFirst(d.ops)
	return d.ops, d.approx
}

// deletesFirst reorders each run of changes in place so that its deletions
// come before its insertions, as diff and git write a changed block; the
// search itself may interleave them.
func deletesFirst(ops []Op) {
	for i := 0; i < len(ops); {
		if ops[i].Kind == Equal {
			i++
			continue
		}
		a0, b0 := ops[i].A, ops[i].B // both sides' positions where the run starts
		j, dels := i, 0
		for ; j < len(ops) && ops[j].Kind != Equal; j++ {
			if ops[j].Kind == Delete {
				dels++
			}
		}
		for k := i; k < j; k++ {
			if n := k - i; n < dels {
				ops[k] = Op{Delete, a0 + n, b0}
			} else {
				ops[k] = Op{Insert, a0 + dels, b0 + n - dels}
			}
		}
		i = j
	}
}

// Stats counts the inserted and deleted lines of an edit script.
func Stats(ops []Op) (added, removed int) {
	for _, op := range ops {
		switch op.Kind {
		case Insert:
			added++
		case Delete:
			removed++
		}
	}
	return added, removed
}

type differ struct {
	a, b         []int // lines, interned
	ops          []Op
	work, budget int
	approx       bool
	v1, v2       []int
}

func (d *differ) diff(a0, a1, b0, b1 int) {
	for a0 < a1 && b0 < b1 && d.a[a0] == d.b[b0] {
		d.ops = append(d.ops, Op{Equal, a0, b0})
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
		d.ops = append(d.ops, Op{Equal, a1 + i, b1 + i})
	}
}

func (d *differ) replace(a0, a1, b0, b1 int) {
	for i := a0; i < a1; i++ {
		d.ops = append(d.ops, Op{Delete, i, b0})
	}
	for j := b0; j < b1; j++ {
		d.ops = append(d.ops, Op{Insert, a1, j})
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

// Format shapes a unified diff.
type Format struct {
	// Context is the number of unchanged lines shown before and after each
	// change; changes closer than twice that share a hunk.
	Context int
	// FullRanges writes every hunk range as start,count. Without it a
	// range of one line is written as its start alone ("-3" for "-3,1"),
	// as GNU diff does.
	FullRanges bool
}

// Unified renders an edit script of a into b as a unified diff headed by
// the two names, "" when the script changes nothing. A line without a
// final "\n" is followed by "\ No newline at end of file".
func Unified(oldName, newName string, a, b []string, ops []Op, f Format) string {
	hunks := hunksOf(ops, max(f.Context, 0))
	if len(hunks) == 0 {
		return ""
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "--- %s\n+++ %s\n", oldName, newName)
	for _, h := range hunks {
		first := ops[h[0]]
		var na, nb int
		for _, op := range ops[h[0]:h[1]] {
			if op.Kind != Insert {
				na++
			}
			if op.Kind != Delete {
				nb++
			}
		}
		fmt.Fprintf(&sb, "@@ -%s +%s @@\n", hunkRange(first.A, na, f.FullRanges), hunkRange(first.B, nb, f.FullRanges))
		for _, op := range ops[h[0]:h[1]] {
			switch op.Kind {
			case Equal:
				writeLine(&sb, ' ', a[op.A])
			case Delete:
				writeLine(&sb, '-', a[op.A])
			case Insert:
				writeLine(&sb, '+', b[op.B])
			}
		}
	}
	return sb.String()
}

// hunksOf groups the changes of ops into [start, end) ranges with ctx
// equal lines around each.
func hunksOf(ops []Op, ctx int) [][2]int {
	var hunks [][2]int
	for i := 0; i < len(ops); {
		if ops[i].Kind == Equal {
			i++
			continue
		}
		start := max(0, i-ctx)
		end := i
		for end < len(ops) {
			if ops[end].Kind != Equal {
				end++
				continue
			}
			// A run of equal lines longer than twice the context ends
			// the hunk.
			run := end
			for run < len(ops) && ops[run].Kind == Equal {
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
	return hunks
}

// hunkRange formats a unified diff range: 1-based start and count, with an
// empty range numbered by the line before it.
func hunkRange(start, n int, full bool) string {
	switch {
	case n == 0:
		return fmt.Sprintf("%d,0", start)
	case n == 1 && !full:
		return fmt.Sprintf("%d", start+1)
	}
	return fmt.Sprintf("%d,%d", start+1, n)
}

func writeLine(sb *strings.Builder, mark byte, line string) {
	sb.WriteByte(mark)
	sb.WriteString(line)
	if !strings.HasSuffix(line, "\n") {
		sb.WriteString("\n\\ No newline at end of file\n")
	}
}
