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
	type line struct{ id, text string }
	parse := func(s string) ([]line, map[string]string) {
		ix := memdir.ParseIndex([]byte(s))
		var out []line
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
			out = append(out, line{id, l})
			if _, seen := byID[id]; !seen {
				byID[id] = l
			}
		}
		return out, byID
	}
	_, baseBy := parse(base)
	loc, _ := parse(local)
	srv, srvBy := parse(server)
	file := func(id string) string { return path.Clean(strings.TrimPrefix(id, "link:")) }

	var out []string
	placed := map[string]bool{}
	for _, l := range loc {
		text := l.text
		if st, onServer := srvBy[l.id]; onServer && strings.HasPrefix(l.id, "link:") && st != text {
			bt, inBase := baseBy[l.id]
			if !inBase || bt != text && bt != st {
				conflicts = append(conflicts, file(l.id)) // both changed it
			}
			if !inBase || bt == text || bt != st {
				text = st // the server changed it (or both did)
			}
		}
		if _, onServer := srvBy[l.id]; !onServer && strings.HasPrefix(l.id, "link:") {
			if _, inBase := baseBy[l.id]; inBase && !serverHas(file(l.id)) {
				continue // the server deleted the file and its line
			}
		}
		out = append(out, text)
		placed[l.id] = true
	}
	// Server lines the local side lacks, each after its server predecessor.
	after := func(prevID string) int {
		if prevID == "" {
			return -1
		}
		for i := len(out) - 1; i >= 0; i-- {
			if idOf(out[i]) == prevID {
				return i
			}
		}
		return -2
	}
	prev := ""
	for _, l := range srv {
		if placed[l.id] {
			prev = l.id
			continue
		}
		if strings.TrimSpace(l.text) == "" {
			continue
		}
		if _, inBase := baseBy[l.id]; inBase && strings.HasPrefix(l.id, "link:") && !localHas(file(l.id)) {
			continue // deleted here on purpose
		}
		if _, inBase := baseBy[l.id]; inBase && strings.HasPrefix(l.id, "text:") {
			continue // prose the local side removed
		}
		at := after(prev)
		switch {
		case at == -2:
			// The predecessor is not in the result: append, before any
			// trailing blank lines.
			at = len(out) - 1
			for at >= 0 && strings.TrimSpace(out[at]) == "" {
				at--
			}
		case at == -1:
			// First on the server: after a leading heading, if any.
			for at+1 < len(out) && !isPointer(out[at+1]) &&
				(strings.TrimSpace(out[at+1]) == "" || strings.HasPrefix(out[at+1], "#")) {
				at++
			}
		}
		out = append(out[:at+1], append([]string{l.text}, out[at+1:]...)...)
		placed[l.id] = true
		prev = l.id
	}
	if len(out) == 0 {
		return "", conflicts
	}
	return strings.Join(out, "\n") + "\n", conflicts
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
