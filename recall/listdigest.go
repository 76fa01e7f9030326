package recall

import "hash/maphash"

// pairListed pairs the index's files at positions in (file gives the path
// and inode at a position) with the files a listing found: paired[k] says whether the path of
// in[k] was listed, sameIno[k] whether the listing gave it the inode the
// index holds (neither 0), known[j] whether found[j] was paired.
//
// Each side's files are spread over buckets by a 64-bit hash of the path
// (with a seed of this process), and each bucket keeps the XOR of a mix of
// hash and inode over the index's files and the listing's. A bucket whose
// two sums cancel holds the same paths with the same inodes on both sides
// (a change that cancels needs a collision of the mix, about 2⁻⁶⁴ a
// bucket): its files are paired without being looked at again. Only the
// files of the other buckets (the one rewritten by rename, the ones added
// and removed, and their buckets' neighbours) are paired one by one, by
// their hashes. Nothing is sorted: the merge of both sides ordered by hash
// (two radix passes each) that this replaced cost the first prompt after
// one of 100,000 memories was rewritten 26–32 ms, this 17 ms, most of it
// hashing the paths (interleaved, 20 and 30 prompts: median CPU 170.4
// against 173.4 ms, then 165.4 against 180.1).
func pairListed(file func(i int) (path string, ino uint64), in []int, found []foundFile) (paired, sameIno, known []bool) {
	seed := maphash.MakeSeed()
	nb := 64
	for nb < len(in)/4 {
		nb <<= 1
	}
	mask := uint64(nb - 1)
	sum := make([]uint64, nb)
	// A bucket with a file of unknown inode on either side is paired one
	// by one: an unknown inode is never the same.
	open := make([]bool, nb)
	th := make([]uint64, len(in))
	ti := make([]uint64, len(in))
	for k, i := range in {
		p, ino := file(i)
		h := maphash.String(seed, p)
		th[k], ti[k] = h, ino
		sum[h&mask] ^= mixIno(h, ino)
		if ino == 0 {
			open[h&mask] = true
		}
	}
	fh := make([]uint64, len(found))
	for j := range found {
		h := maphash.String(seed, found[j].path)
		fh[j] = h
		sum[h&mask] ^= mixIno(h, found[j].ino)
		if found[j].ino == 0 {
			open[h&mask] = true
		}
	}
	for b := range sum {
		if sum[b] != 0 {
			open[b] = true
		}
	}
	paired, sameIno, known = make([]bool, len(in)), make([]bool, len(in)), make([]bool, len(found))
	var rest map[uint64]int32 // by hash, the listed files of open buckets
	for j, h := range fh {
		if !open[h&mask] {
			known[j] = true
			continue
		}
		if rest == nil {
			rest = map[uint64]int32{}
		}
		rest[h] = int32(j)
	}
	for k, h := range th {
		if !open[h&mask] {
			paired[k], sameIno[k] = true, true
			continue
		}
		if j, ok := rest[h]; ok && !known[j] {
			paired[k], known[j] = true, true
			sameIno[k] = ti[k] != 0 && found[j].ino == ti[k]
		}
	}
	return paired, sameIno, known
}

// mixIno mixes a path's hash with its inode (the finaliser of
// MurmurHash3's 64-bit hash over their sum).
func mixIno(h, ino uint64) uint64 {
	x := h + ino*0x9e3779b97f4a7c15
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	x *= 0xc4ceb9fe1a85ec53
	x ^= x >> 33
	return x
}
