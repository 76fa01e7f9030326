package recall

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestMatchListedAsAMap checks the hash merge of a listing against the
// index's files with what a map of the listing gives, on sets large
// enough that many paths share the 24 bits the merge orders by: files
// kept, replaced, removed and added, in a random order on both sides.
func TestMatchListedAsAMap(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 7, 1000, 60000} {
		var files []recallFile
		var found []foundFile
		for i := range n {
			p := fmt.Sprintf("mem_%07d.md", i)
			switch r.IntN(10) {
			case 0: // removed since
				files = append(files, recallFile{path: p})
			case 1: // new
				found = append(found, foundFile{path: p})
			case 2: // replaced by a rename: a new inode
				files = append(files, recallFile{path: p, stamp: fileStamp{Ino: uint64(i + 1)}})
				found = append(found, foundFile{path: p, ino: uint64(n + i + 1)})
			default:
				files = append(files, recallFile{path: p, stamp: fileStamp{Ino: uint64(i + 1)}})
				found = append(found, foundFile{path: p, ino: uint64(i + 1)})
			}
		}
		r.Shuffle(len(found), func(i, j int) { found[i], found[j] = found[j], found[i] })
		in := r.Perm(len(files))[:len(files)*9/10]
		match, sameIno, known := matchListed(func(i int) (string, uint64) { return files[i].path, files[i].stamp.Ino }, in, found)
		at := map[string]int{}
		for j, f := range found {
			at[f.path] = j
		}
		want := make([]bool, len(found))
		for k, i := range in {
			j, ok := at[files[i].path]
			if !ok {
				j = -1
			} else {
				want[j] = true
			}
			if int(match[k]) != j {
				t.Fatalf("n=%d: %s matched %d, want %d", n, files[i].path, match[k], j)
			}
			if same := j >= 0 && found[j].ino == files[i].stamp.Ino && found[j].ino != 0; sameIno[k] != same {
				t.Fatalf("n=%d: %s same inode %v, want %v", n, files[i].path, sameIno[k], same)
			}
		}
		for j := range found {
			if known[j] != want[j] {
				t.Fatalf("n=%d: %s known %v, want %v", n, found[j].path, known[j], want[j])
			}
		}
	}
}

func TestSortTop24(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	s := make([]hashedPos, 5000)
	for i := range s {
		s[i] = hashedPos{h: r.Uint64() &^ (0xfff << 28), pos: int32(i)} // some low bits cleared, top kept
	}
	got := sortTop24(append([]hashedPos(nil), s...))
	seen := map[int32]bool{}
	for i, e := range got {
		seen[e.pos] = true
		if i > 0 && got[i-1].h>>40 > e.h>>40 {
			t.Fatalf("out of order at %d: %x after %x", i, e.h, got[i-1].h)
		}
	}
	if len(seen) != len(s) {
		t.Fatalf("%d of %d positions kept", len(seen), len(s))
	}
}
