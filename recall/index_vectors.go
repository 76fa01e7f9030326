package recall

import (
	"context"
	"slices"

	"github.com/memdir/memdir"
)

// vectorKeys returns the path and content hash of every searchable memory
// not in skip, in path order: what the embedding cache is looked up by;
// and the position of each in the file table, where headersAt finds it
// again. Paths are checked against their sums only when headersAt hands
// them out, so that ranking every memory by vector does not touch every
// record.
func (x *Index) vectorKeys(skip map[string]bool) (paths []string, keys [][32]byte, at []int32) {
	x.mu.Lock()
	defer x.mu.Unlock()
	n := x.nfiles()
	paths = make([]string, 0, n)
	keys = make([][32]byte, 0, n)
	at = make([]int32, 0, n)
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
				at = append(at, int32(i))
			}
			continue
		}
		if !f.bad {
			paths = append(paths, f.path)
			keys = append(keys, f.hash)
			at = append(at, int32(i))
		}
	}
	if len(skip) == 0 {
		return paths, keys, at
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
			paths[k], keys[k], at[k] = paths[i], keys[i], at[i]
			k++
		}
	}
	return paths[:k], keys[:k], at[:k]
}

// headersOf returns the headers of the indexed memories at paths, in that
// order, leaving out those no longer indexed; a damaged record rebuilds
// the index, and the headers are then those of the rebuilt one.
func (x *Index) headersOf(paths []string) []memdir.Header {
	return x.headersAt(paths, nil)
}

// headersAt is headersOf for paths that vectorKeys gave at positions at
// (nil: unknown): a path still at its position is taken from there rather
// than searched for, which for the cosine ranking's 512 memories at
// 20,000 was a sixteenth of a hybrid prompt.
func (x *Index) headersAt(paths []string, at []int32) []memdir.Header {
	x.mu.Lock()
	defer x.mu.Unlock()
	out := make([]memdir.Header, 0, len(paths))
	for k, p := range paths {
		i, ok := 0, false
		if at != nil && int(at[k]) < x.nfiles() && x.pathAt(int(at[k])) == p {
			i, ok = int(at[k]), true
		} else {
			i, ok = x.find(p)
		}
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
