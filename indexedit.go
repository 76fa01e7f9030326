package memdir

import (
	"os"
	"path"
	"strings"
	"unicode/utf8"

	"github.com/memdir/memdir/internal/memfile"
)

// IndexEdits are edits to a directory's index files (MEMORY.md,
// team/MEMORY.md and the overflow files beside them) made inside one
// Change: each file is read, and recorded in the Change's journal run, the
// first time it is asked for, and all of them are written, atomically,
// by Write. Package doctor repairs indexes with it.
type IndexEdits struct {
	d     *Dir
	root  *os.Root
	rec   *Recorder
	files map[string]*Index
}

// NewIndexEdits starts edits of d's index files recorded in rec, the run of
// a Change on d, which holds the directory lock. Close releases the
// directory they read through.
func NewIndexEdits(d *Dir, rec *Recorder) (*IndexEdits, error) {
	root, err := d.openRoot()
	if err != nil {
		return nil, err
	}
	return &IndexEdits{d: d, root: root, rec: rec, files: map[string]*Index{}}, nil
}

// Close releases the edits' hold on the directory; edits not written are
// dropped.
func (e *IndexEdits) Close() { e.root.Close() }

// Index returns the index file at rel (relative to the directory, such as
// "MEMORY.md" or "team/MEMORY-more.md") to edit, empty when it does not
// exist yet.
func (e *IndexEdits) Index(rel string) (*Index, error) {
	if ix := e.files[rel]; ix != nil {
		return ix, nil
	}
	if err := e.rec.Before(rel); err != nil {
		return nil, err
	}
	ix, err := e.d.readIndex(e.root, rel)
	if err != nil {
		return nil, err
	}
	e.files[rel] = ix
	return ix, nil
}

// PointerLine returns the MEMORY.md line memdir writes for the memory at
// rel: its name (or its file name) and its description.
func (e *IndexEdits) PointerLine(rel string) (string, error) { return pointerLine(e.root, rel) }

// MoveOverflow moves the lines of the least recently changed memories out of
// the index at indexRel into its overflow file (OverflowIndexName beside
// it, created with its frontmatter when missing), until the index is back
// under its load limits with room to spare, and links the overflow file
// from the index. It returns how many lines moved.
func (e *IndexEdits) MoveOverflow(indexRel string) (int, error) {
	ix, err := e.Index(indexRel)
	if err != nil {
		return 0, err
	}
	oix, err := e.Index(overflowFor(indexRel))
	if err != nil {
		return 0, err
	}
	if len(oix.lines) == 0 {
		*oix = *newOverflowIndex()
	}
	return e.d.moveOverflow(e.root, indexRel, ix, oix), nil
}

// Write writes every index file asked for (an overflow file only when it
// holds lines).
func (e *IndexEdits) Write() error {
	for rel, ix := range e.files {
		if isOverflowIndex(rel) && len(ix.lines) == 0 {
			continue // there was none and nothing moved
		}
		if err := e.d.writeIndex(e.root, rel, ix); err != nil {
			return err
		}
	}
	return nil
}

// pointerLine is the MEMORY.md line memdir writes for the memory at rel: its
// name (or its file name) and its description.
func pointerLine(root *os.Root, rel string) (string, error) {
	data, _, err := memfile.ReadRooted(root, rel, MaxMemoryFileBytes)
	if err != nil {
		return "", err
	}
	m, _ := ParseMemory(data)
	_, link := IndexFor(rel)
	title := m.Name
	if title == "" {
		title = strings.TrimSuffix(path.Base(link), ".md")
	}
	return IndexEntry{Title: title, File: link, Hook: m.Description}.String(), nil
}

// Drop removes the pointer lines for which drop returns true, keeping every
// other line as it is, and returns how many it removed.
func (ix *Index) Drop(drop func(e IndexEntry) bool) int {
	gone := make([]bool, len(ix.lines))
	removed := 0
	for i := range ix.lines {
		if e, ok := ix.entry(i); ok && drop(e) {
			gone[i] = true
			removed++
		}
	}
	if removed > 0 {
		ix.deleteLines(func(i int) bool { return gone[i] })
	}
	return removed
}

// Compact shortens pointer lines over IndexLineTarget, drops blank lines
// between two pointer lines and collapses other runs of blank lines to one.
// Headings and prose are kept as written.
func (ix *Index) Compact() {
	var out []string
	var parsed []parsedLine
	pendingBlank, prevEntry := false, false
	for i, l := range ix.lines {
		if strings.TrimSpace(l) == "" {
			pendingBlank = len(out) > 0
			continue
		}
		p := *ix.at(i)
		entry := p.state == isEntry
		if pendingBlank {
			if !(entry && prevEntry) {
				out = append(out, "")
				parsed = append(parsed, parsedLine{state: notEntry})
			}
			pendingBlank = false
		}
		if entry && utf8.RuneCountInString(l) > IndexLineTarget {
			l = p.e.String()
			p = parsedLine{}
			_, entry = ParseIndexLine(l)
		}
		out = append(out, l)
		parsed = append(parsed, p)
		prevEntry = entry
	}
	*ix = Index{lines: out, parsed: parsed, trailingNewline: ix.trailingNewline}
}
