package team

import (
	"path"
	"strings"

	"github.com/memdir/memdir"
)

// IndexKey is the key of the team index. It is merged line by line with
// [MergeIndex] instead of [Merge3]: it conflicts only when both sides
// changed the same pointer line ([MergeIndexConflicts]).
const IndexKey = memdir.EntrypointName

// MergeIndex merges two edits of the team MEMORY.md, local and server, of
// base (the version both last agreed on; "" when unknown). Pointer lines
// ("- [Title](file.md) — hook") are matched by their link target, other
// lines by their text:
//
//   - the result keeps the local lines in the local order;
//   - a line only the server has is added after the line that precedes it
//     on the server (at the end when there is none), unless base had it and
//     the local side removed it and deleted its file (localHas false): a
//     memory deleted on purpose stays deleted;
//   - a line only the local side has is kept, unless base had it and the
//     server removed it and no longer holds its file (serverHas false);
//   - a pointer line both have, changed by one side only, takes that
//     side's text; changed by both, the server's (its file is the server's
//     too until a conflict on it is resolved).
//
// Blank lines the server added are not copied. localHas and serverHas get
// a link target as a slash path relative to the team directory.
// MergeIndex does not say which lines both sides changed; a client that
// must not lose the local text of such a line uses [MergeIndexConflicts].
func MergeIndex(base, local, server string, localHas, serverHas func(file string) bool) string {
	merged, _ := MergeIndexConflicts(base, local, server, localHas, serverHas)
	return merged
}

// MergeIndexConflicts is [MergeIndex] that also returns, in local order,
// the link targets of the pointer lines both sides changed to different
// texts: lines the base had and both edited, and lines both added (or,
// without a base, both have) with different texts. For those lines the
// merge holds the server's text, so the local one is lost unless the
// caller keeps it: [Client] records a conflict on the whole index then,
// as it does for any key both sides changed on the same lines.
func MergeIndexConflicts(base, local, server string, localHas, serverHas func(file string) bool) (merged string, conflicts []string) {
	m := &indexMerge{localHas: localHas, serverHas: serverHas, placed: map[string]bool{}}
	_, m.baseBy = parseIndexLines(base)
	loc, _ := parseIndexLines(local)
	srv, srvBy := parseIndexLines(server)
	m.mergeLocal(loc, srvBy)
	m.insertServer(srv)
	if len(m.out) == 0 {
		return "", m.conflicts
	}
	return strings.Join(m.out, "\n") + "\n", m.conflicts
}

// indexLine is one line of a MEMORY.md with what identifies it across the
// three versions: its link target for a pointer line ("link:file"), its
// text for anything else ("text:line").
type indexLine struct{ id, text string }

// parseIndexLines splits an index into identified lines, and maps each id
// to the text of its first line.
func parseIndexLines(s string) ([]indexLine, map[string]string) {
	ix := memdir.ParseIndex([]byte(s))
	var out []indexLine
	byID := map[string]string{}
	for _, l := range ix.Lines() {
		id := "text:" + l
		if e, ok := memdir.ParseIndexLine(l); ok && e.Path() != "" && e.Path() != "." {
			id = "link:" + e.Path()
		}
		if _, dup := byID[id]; dup && strings.HasPrefix(id, "link:") {
			// A repeated pointer line stays as it is, matched by text.
			id = "text:" + l
		}
		out = append(out, indexLine{id, l})
		if _, seen := byID[id]; !seen {
			byID[id] = l
		}
	}
	return out, byID
}

// indexMerge is one three-way merge of MEMORY.md.
type indexMerge struct {
	baseBy              map[string]string
	localHas, serverHas func(file string) bool
	out                 []string
	placed              map[string]bool
	conflicts           []string
}

func linkFile(id string) string { return path.Clean(strings.TrimPrefix(id, "link:")) }

// mergeLocal keeps the local lines in their order, each as the server
// changed it, dropping those whose file the server deleted; a pointer line
// both sides changed to different texts is a conflict (the server's text
// is kept, the caller keeps yours).
func (m *indexMerge) mergeLocal(loc []indexLine, srvBy map[string]string) {
	for _, l := range loc {
		text := l.text
		st, onServer := srvBy[l.id]
		isLink := strings.HasPrefix(l.id, "link:")
		if onServer && isLink && st != text {
			bt, inBase := m.baseBy[l.id]
			if !inBase || bt != text && bt != st {
				m.conflicts = append(m.conflicts, linkFile(l.id)) // both changed it
			}
			if !inBase || bt == text || bt != st {
				text = st // the server changed it (or both did)
			}
		}
		if !onServer && isLink {
			if _, inBase := m.baseBy[l.id]; inBase && !m.serverHas(linkFile(l.id)) {
				continue // the server deleted the file and its line
			}
		}
		m.out = append(m.out, text)
		m.placed[l.id] = true
	}
}

// insertServer adds the server lines the local side lacks, each after its
// server predecessor, leaving out what the local side deleted on purpose.
func (m *indexMerge) insertServer(srv []indexLine) {
	prev := ""
	for _, l := range srv {
		if m.placed[l.id] {
			prev = l.id
			continue
		}
		if strings.TrimSpace(l.text) == "" {
			continue
		}
		_, inBase := m.baseBy[l.id]
		if inBase && strings.HasPrefix(l.id, "link:") && !m.localHas(linkFile(l.id)) {
			continue // deleted here on purpose
		}
		if inBase && strings.HasPrefix(l.id, "text:") {
			continue // prose the local side removed
		}
		at := m.insertAt(prev)
		m.out = append(m.out[:at+1], append([]string{l.text}, m.out[at+1:]...)...)
		m.placed[l.id] = true
		prev = l.id
	}
}

// insertAt returns the index of the result line a server line goes after:
// its server predecessor; or, for the first line on the server, after a
// leading heading; or, when the predecessor is not in the result, the last
// line before any trailing blank lines.
func (m *indexMerge) insertAt(prevID string) int {
	if prevID != "" {
		for i := len(m.out) - 1; i >= 0; i-- {
			if idOf(m.out[i]) == prevID {
				return i
			}
		}
		at := len(m.out) - 1
		for at >= 0 && strings.TrimSpace(m.out[at]) == "" {
			at--
		}
		return at
	}
	at := -1
	for at+1 < len(m.out) && !isPointer(m.out[at+1]) &&
		(strings.TrimSpace(m.out[at+1]) == "" || strings.HasPrefix(m.out[at+1], "#")) {
		at++
	}
	return at
}

func isPointer(l string) bool {
	_, ok := memdir.ParseIndexLine(l)
	return ok
}

// idOf returns the identity of a result line, as MergeIndex matches them.
func idOf(l string) string {
	if e, ok := memdir.ParseIndexLine(l); ok && e.Path() != "" && e.Path() != "." {
		return "link:" + e.Path()
	}
	return "text:" + l
}
