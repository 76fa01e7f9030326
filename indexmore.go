package memdir

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path"
	"sort"
	"strings"
	"time"
	"unicode"

	"github.com/memdir/memdir/internal/safeopen"
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
	// The overflow file of a large directory holds most of its lines;
	// a new memory's save need not read, split and parse them to learn
	// that none is its own.
	if !overflowMayHold(root, oRel, path.Clean(link)) {
		return "", nil, false, nil
	}
	data, err := d.readIndexData(root, oRel)
	if err != nil || data == nil {
		return "", nil, false, err
	}
	oix := ParseIndex(data)
	if len(oix.Find(link)) == 0 {
		return "", nil, false, nil
	}
	return oRel, oix, true, nil
}

// overflowMayHold reports whether the index file at rel may hold a line
// for file (a clean path), reading it through a small buffer a run of
// whole lines at a time (see mayLinkData). It answers true whenever it
// cannot tell (a file it cannot read, too large, or a line longer than the
// buffer), leaving the full read to report what is wrong.
func overflowMayHold(root *os.Root, rel, file string) bool {
	f, fi, err := safeopen.OpenIn(root, rel)
	if err != nil {
		return true
	}
	defer f.Close()
	if fi.Size() > 64<<20 {
		return true
	}
	buf := make([]byte, 64<<10)
	n := 0 // bytes of a partial line carried from the last read
	for {
		m, err := io.ReadFull(f, buf[n:])
		n += m
		eof := errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
		if err != nil && !eof {
			return true
		}
		end := n
		if !eof {
			if end = bytes.LastIndexByte(buf[:n], '\n') + 1; end == 0 {
				return true // one line fills the buffer
			}
		}
		if mayLinkData(buf[:end], file) {
			return true
		}
		if eof {
			return false
		}
		n = copy(buf, buf[end:n])
	}
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
	for i := range ix.lines {
		e, ok := ix.entry(i)
		if !ok {
			continue
		}
		target := e.Path()
		if target == "" || target == OverflowIndexName || strings.Contains(e.File, "://") {
			continue
		}
		var mt time.Time
		if fi, err := root.Stat(path.Join(base, target)); err == nil {
			mt = fi.ModTime()
		}
		cands = append(cands, cand{i, mt})
	}
	sort.SliceStable(cands, func(a, b int) bool { return cands[a].mtime.Before(cands[b].mtime) })

	linked := len(ix.find(OverflowIndexName)) > 0
	extra := 1 // the link line still to add
	if linked {
		extra = 0
	}
	m := newIndexMeasure(ix.lines)
	fits := func() bool {
		st := m.status()
		return st.Lines+extra <= MaxIndexLines-compactHeadroom && st.Chars+extra*IndexLineTarget <= MaxIndexChars
	}
	move := make([]bool, len(ix.lines))
	moved := 0
	for _, c := range cands {
		if fits() {
			break
		}
		move[c.line] = true
		moved++
		m.remove(c.line)
	}
	if moved == 0 {
		return 0
	}
	for i, l := range ix.lines {
		if move[i] {
			oix.Upsert(ix.at(i).path, l)
		}
	}
	ix.deleteLines(func(i int) bool { return move[i] })
	if !linked {
		ix.Upsert(OverflowIndexName, IndexEntry{Title: overflowName, File: OverflowIndexName, Hook: overflowDescription}.String())
	}
	return moved
}

// indexMeasure is MeasureIndex of some lines joined by line feeds, kept
// current as lines are taken out one at a time without joining them again:
// the text runs, once trimmed, from the first line that is not blank to
// the last, less the leading space of the one and the trailing space of
// the other. Only lines that are not blank are removed.
type indexMeasure struct {
	lines  []string
	u16    []int // UTF-16 length of each line
	blank  []bool
	gone   []bool
	lo, hi int // the first and last kept lines that are not blank
	n, sum int // kept lines in [lo, hi] and their UTF-16 length
}

func newIndexMeasure(lines []string) *indexMeasure {
	m := &indexMeasure{lines: lines, u16: make([]int, len(lines)), blank: make([]bool, len(lines)), gone: make([]bool, len(lines)), lo: 0, hi: -1}
	first := true
	for i, l := range lines {
		m.u16[i] = utf16Len(l)
		m.blank[i] = strings.TrimSpace(l) == ""
		if !m.blank[i] {
			if first {
				m.lo, first = i, false
			}
			m.hi = i
		}
	}
	for i := m.lo; i <= m.hi; i++ {
		m.n++
		m.sum += m.u16[i]
	}
	return m
}

// remove takes line i, which is not blank, out of the text.
func (m *indexMeasure) remove(i int) {
	if m.gone[i] || m.blank[i] {
		return
	}
	m.gone[i] = true
	m.n--
	m.sum -= m.u16[i]
	// Lines left outside the first and last non-blank ones are trimmed.
	for m.lo <= m.hi && (m.gone[m.lo] || m.blank[m.lo]) {
		if !m.gone[m.lo] {
			m.n--
			m.sum -= m.u16[m.lo]
		}
		m.lo++
	}
	for m.hi >= m.lo && (m.gone[m.hi] || m.blank[m.hi]) {
		if !m.gone[m.hi] {
			m.n--
			m.sum -= m.u16[m.hi]
		}
		m.hi--
	}
}

// status is MeasureIndex of the kept lines joined by line feeds.
func (m *indexMeasure) status() IndexStatus {
	var s IndexStatus
	if m.lo <= m.hi {
		first, last := m.lines[m.lo], m.lines[m.hi]
		lead := utf16Len(first) - utf16Len(strings.TrimLeftFunc(first, unicode.IsSpace))
		trail := utf16Len(last) - utf16Len(strings.TrimRightFunc(last, unicode.IsSpace))
		s.Lines = m.n
		s.Chars = m.sum + m.n - 1 - lead - trail
	}
	s.LineTruncated = s.Lines > MaxIndexLines
	s.CharTruncated = s.Chars > MaxIndexChars
	return s
}
