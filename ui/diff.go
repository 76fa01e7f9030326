package ui

import (
	"strings"

	"github.com/memdir/memdir/internal/linediff"
)

// unifiedDiff returns a unified diff from a to b with three lines of
// context, as the page has always shown one: every hunk range with its
// count, and a missing final newline not counted as a change. It is ""
// when nothing changed; approx says the diff gave up looking for the
// shortest edit (the counts may then be too high).
func unifiedDiff(nameA, nameB, a, b string) (patch string, added, removed int, approx bool) {
	if a == b {
		return "", 0, 0, false
	}
	x, y := lines(a), lines(b)
	ops, approx := linediff.Diff(x, y, 0)
	added, removed = linediff.Stats(ops)
	return linediff.Unified(nameA, nameB, x, y, ops, linediff.Format{Context: 3, FullRanges: true}), added, removed, approx
}

// lines cuts text into lines that all end in "\n", so that a file without
// a final newline diffs as if it had one.
func lines(text string) []string {
	if text != "" && !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	return linediff.Split(text)
}
