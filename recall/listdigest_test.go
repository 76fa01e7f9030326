package recall

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestPairListedAsAMap checks the bucket sums pairing a listing with the
// index's files against what a map of the listing gives, on sets large
// enough that most buckets hold several files: files kept, replaced,
// removed, added, of unknown inode, and pairs that swapped their inodes
// (renamed over each other), in a random order on both sides.
func TestPairListedAsAMap(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 7, 1000, 60000} {
		var files []recallFile
		var found []foundFile
		for i := 0; i < n; i++ {
			p := fmt.Sprintf("mem_%07d.md", i)
			ino := uint64(i + 1)
			switch r.IntN(12) {
			case 0: // removed since
				files = append(files, recallFile{path: p})
			case 1: // new
				found = append(found, foundFile{path: p})
			case 2: // replaced by a rename: a new inode
				files = append(files, recallFile{path: p, stamp: fileStamp{Ino: ino}})
				found = append(found, foundFile{path: p, ino: uint64(n + i + 1)})
			case 3: // an inode unknown to the listing, or to both
				files = append(files, recallFile{path: p, stamp: fileStamp{Ino: ino * uint64(r.IntN(2))}})
				found = append(found, foundFile{path: p})
			case 4: // this file and the next swapped by renames
				if i+1 < n {
					q := fmt.Sprintf("mem_%07d.md", i+1)
					files = append(files, recallFile{path: p, stamp: fileStamp{Ino: ino}}, recallFile{path: q, stamp: fileStamp{Ino: ino + 1}})
					found = append(found, foundFile{path: p, ino: ino + 1}, foundFile{path: q, ino: ino})
					i++
					continue
				}
				fallthrough
			default:
				files = append(files, recallFile{path: p, stamp: fileStamp{Ino: ino}})
				found = append(found, foundFile{path: p, ino: ino})
			}
		}
		r.Shuffle(len(found), func(i, j int) { found[i], found[j] = found[j], found[i] })
		in := r.Perm(len(files))[:len(files)*9/10]
		paired, sameIno, known := pairListed(func(i int) (string, uint64) { return files[i].path, files[i].stamp.Ino }, in, found)
		at := map[string]int{}
		for j, f := range found {
			at[f.path] = j
		}
		want := make([]bool, len(found))
		for k, i := range in {
			j, ok := at[files[i].path]
			if ok {
				want[j] = true
			}
			if paired[k] != ok {
				t.Fatalf("n=%d: %s paired %v, want %v", n, files[i].path, paired[k], ok)
			}
			// sameIno may be false for a file that kept its inode (one of
			// a bucket where another changed: the caller stats it), never
			// true for one that did not.
			if same := ok && found[j].ino == files[i].stamp.Ino && found[j].ino != 0; sameIno[k] && !same {
				t.Fatalf("n=%d: %s same inode, but it is not", n, files[i].path)
			}
		}
		for j := range found {
			if known[j] != want[j] {
				t.Fatalf("n=%d: %s known %v, want %v", n, found[j].path, known[j], want[j])
			}
		}
	}
}

// TestPairListedOneRewritten: after one file of many was rewritten by
// rename, every file is paired and only the rewritten one's bucket (a few
// files) is left to be stat-ed; with inodes unknown (a listing that gives
// none), every file is.
func TestPairListedOneRewritten(t *testing.T) {
	const n = 60000
	files := make([]recallFile, n)
	found := make([]foundFile, n)
	in := make([]int, n)
	for i := range n {
		p := fmt.Sprintf("mem_%07d.md", i)
		files[i] = recallFile{path: p, stamp: fileStamp{Ino: uint64(i + 1)}}
		found[i] = foundFile{path: p, ino: uint64(i + 1)}
		in[i] = i
	}
	found[n/2].ino = n + 1 // the rewritten one
	rand.New(rand.NewPCG(5, 6)).Shuffle(n, func(i, j int) { found[i], found[j] = found[j], found[i] })
	file := func(i int) (string, uint64) { return files[i].path, files[i].stamp.Ino }
	paired, sameIno, known := pairListed(file, in, found)
	toStat := 0
	for j := range found {
		if !known[j] {
			t.Fatalf("%s not paired", found[j].path)
		}
	}
	for k := range in {
		if !paired[k] {
			t.Fatalf("%s not paired", files[k].path)
		}
		if !sameIno[k] {
			toStat++
		}
	}
	if sameIno[n/2] || toStat > 16 {
		t.Errorf("the rewritten file same inode %v; %d files to stat, want it and a few of its bucket", sameIno[n/2], toStat)
	}
	for j := range found {
		found[j].ino = 0
	}
	_, sameIno, _ = pairListed(file, in, found)
	for k := range in {
		if sameIno[k] {
			t.Fatalf("%s: same inode with none listed", files[k].path)
		}
	}
}
