package memdir

import (
	"os"
	"path"
	"sort"
	"strings"
	"time"
)

// OverflowIndexName is the file that takes the index lines compaction moves
// out of a MEMORY.md that has more lines than Claude Code loads (see
// [MaxIndexLines]). It sits beside the MEMORY.md it extends, is itself a
// memory of type reference (Claude Code scans every .md file but
// MEMORY.md as a memory, so it carries valid frontmatter), and MEMORY.md
// links it with one ordinary pointer line, so an agent reading the index
// finds it and every memory stays reachable. Its body holds pointer lines in
// the MEMORY.md format, one memory per line.
const OverflowIndexName = "MEMORY-more.md"

// Overflow file frontmatter.
const (
	overflowName        = "More index entries"
	overflowDescription = "Index lines of the least recently changed memories, moved out of MEMORY.md to keep it under its 200-line load limit; read this file to find them"
)

// compactHeadroom is how many lines under MaxIndexLines compaction leaves
// MEMORY.md, so the next saves do not push it over the limit at once.
const compactHeadroom = 10

// overflowFor returns the overflow file of the index at indexRel.
func overflowFor(indexRel string) string {
	return path.Join(path.Dir(indexRel), OverflowIndexName)
}

// isOverflowIndex reports whether rel is an overflow index file.
func isOverflowIndex(rel string) bool { return path.Base(rel) == OverflowIndexName }

// overflowHolding returns the overflow file of indexRel and its index when ix
// (the index at indexRel) has no line for link and the overflow file has one:
// a change to that memory then edits its line where compaction moved it.
// ok is false otherwise.
func (d *Dir) overflowHolding(root *os.Root, indexRel, link string, ix *Index) (string, *Index, bool, error) {
	if link == OverflowIndexName || len(ix.Find(link)) > 0 {
		return "", nil, false, nil
	}
	oRel := overflowFor(indexRel)
	if _, err := root.Lstat(oRel); err != nil {
		return "", nil, false, nil
	}
	oix, err := d.readIndex(root, oRel)
	if err != nil {
		return "", nil, false, err
	}
	if len(oix.Find(link)) == 0 {
		return "", nil, false, nil
	}
	return oRel, oix, true, nil
}

// newOverflowIndex returns the text of a new overflow file: its frontmatter.
func newOverflowIndex() *Index {
	m := &Memory{Name: overflowName, Description: overflowDescription, Type: TypeReference}
	return ParseIndex(m.Format())
}

// moveOverflow moves pointer lines out of ix (the index at indexRel) into
// oix, its overflow file, until ix is MaxIndexLines-compactHeadroom lines or
// fewer and under MaxIndexChars: the lines of the least recently modified
// memories go first, and keep their order and text. ix gains one line
// linking the overflow file if it has none. It returns how many lines moved.
func (d *Dir) moveOverflow(root *os.Root, indexRel string, ix, oix *Index) int {
	base := path.Dir(indexRel)
	type cand struct {
		line  int
		mtime time.Time
	}
	var cands []cand
	for _, e := range ix.Entries() {
		target := e.Path()
		if target == "" || target == OverflowIndexName || strings.Contains(e.File, "://") {
			continue
		}
		var mt time.Time
		if fi, err := root.Stat(path.Join(base, target)); err == nil {
			mt = fi.ModTime()
		}
		cands = append(cands, cand{e.Line - 1, mt})
	}
	sort.SliceStable(cands, func(a, b int) bool { return cands[a].mtime.Before(cands[b].mtime) })

	linked := len(ix.Find(OverflowIndexName)) > 0
	fits := func(extra int) bool {
		st := MeasureIndex(strings.Join(ix.lines, "\n"))
		return st.Lines+extra <= MaxIndexLines-compactHeadroom && st.Chars+extra*IndexLineTarget <= MaxIndexChars
	}
	extra := 1 // the link line still to add
	if linked {
		extra = 0
	}
	move := map[int]bool{}
	kept := ix.lines
	for _, c := range cands {
		if fits(extra) {
			break
		}
		move[c.line] = true
		// Measure as if the chosen lines were gone.
		var rest []string
		for i, l := range kept {
			if !move[i] {
				rest = append(rest, l)
			}
		}
		ix.lines = rest
	}
	ix.lines = kept
	if len(move) == 0 {
		return 0
	}
	var rest []string
	for i, l := range ix.lines {
		if !move[i] {
			rest = append(rest, l)
			continue
		}
		e, _ := ParseIndexLine(l)
		oix.Upsert(e.Path(), l)
	}
	ix.lines = rest
	if !linked {
		ix.Upsert(OverflowIndexName, IndexEntry{Title: overflowName, File: OverflowIndexName, Hook: overflowDescription}.String())
	}
	return len(move)
}
