package recall

import (
	"context"
	"slices"

	"github.com/memdir/memdir"
)

// vectorKeys returns the path and content hash of every searchable memory
// not in skip, in path order: what the embedding cache is looked up by.
// Paths are checked against their sums only when headersOf hands them out,
// so that ranking every memory by vector does not touch every record.
func (x *Index) vectorKeys(skip map[string]bool) (paths []string, keys [][32]byte) {
	x.mu.Lock()
	defer x.mu.Unlock()
	n := x.nfiles()
	paths = make([]string, 0, n)
	keys = make([][32]byte, 0, n)
	for i := range n {
		var f *recallFile
		if x.view == nil {
			f = &x.files[i]
		} else if d, e, _ := x.view.at(i); e != nil {
			f = e
		} else {
			// Read in place: a record per file would cost more than the
			// ranking by vector it serves.
			if d.Flags&flagBad == 0 {
				paths = append(paths, x.view.str(d.PathOff, d.PathLen))
				keys = append(keys, d.Hash)
			}
			continue
		}
		if !f.bad {
			paths = append(paths, f.path)
			keys = append(keys, f.hash)
		}
	}
	if len(skip) == 0 {
		return paths, keys
	}
	// The few paths to skip are found in the sorted list, not every path
	// looked up in the set: that hashed every path of the directory.
	drop := make([]bool, len(paths))
	for p := range skip {
		if i, ok := slices.BinarySearch(paths, p); ok {
			drop[i] = true
		}
	}
	k := 0
	for i := range paths {
		if !drop[i] {
			paths[k], keys[k] = paths[i], keys[i]
			k++
		}
	}
	return paths[:k], keys[:k]
}

// headersOf returns the headers of the indexed memories at paths, in that
// order, leaving out those no longer indexed; a damaged record rebuilds
// the index, and the headers are then those of the rebuilt one.
func (x *Index) headersOf(paths []string) []memdir.Header {
	x.mu.Lock()
	defer x.mu.Unlock()
	out := make([]memdir.Header, 0, len(paths))
	for _, p := range paths {
		i, ok := x.find(p)
		if !ok || x.badAt(i) {
			continue
		}
		if !x.fileOK(i) {
			x.reset()
			x.refreshLocked(context.Background(), true)
			return x.headersOfLocked(paths)
		}
		out = append(out, x.headerAt(i))
	}
	return out
}

// headersOfLocked is headersOf after a rebuild, whose records need no check.
func (x *Index) headersOfLocked(paths []string) []memdir.Header {
	out := make([]memdir.Header, 0, len(paths))
	for _, p := range paths {
		if i, ok := x.find(p); ok && !x.badAt(i) {
			out = append(out, x.headerAt(i))
		}
	}
	return out
}
