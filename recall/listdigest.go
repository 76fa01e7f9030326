package recall

import "hash/maphash"

// pairListed pairs the index's files at positions in (file gives the path
// and inode at a position) with the files a listing found: paired[k] says
// whether the path of in[k] was listed, known[j] whether found[j] was
// paired, and sameIno[k] that the listing gave in[k] the inode the index
// holds (neither 0). sameIno errs only one way: false for a file of a
// bucket where some inode changed (below), which the caller then stats.
//
// Each side's files are spread over buckets by a 64-bit hash of the path
// (with a seed of this process), four or fewer a bucket on average, and
// each bucket keeps two sums over the index's files and the listing's: the
// XOR of the paths' hashes, and the XOR of a mix of hash and inode. Where
// the paths' sums cancel, the bucket holds the same paths on both sides (a
// different set that cancels needs a collision of the 64-bit hashes, about
// 2⁻⁶⁴ a bucket) and its files are paired as they are; where the inodes'
// sums cancel too, and no inode is unknown, each kept its inode (the mix is
// not linear: two files renamed over each other do not cancel). Only the
// files of buckets whose paths differ (a file added or removed, and its
// bucket's neighbours) are paired one by one, through a map of their
// hashes. Nothing is sorted: the merge of both sides ordered by hash that
// this replaced cost the first prompt after one of 100,000 memories was
// rewritten 26–32 ms.
func pairListed(file func(i int) (path string, ino uint64), in []int, found []foundFile) (paired, sameIno, known []bool) {
	seed := maphash.MakeSeed()
	nb := 64
	for nb < len(in)/4 {
		nb <<= 1
	}
	mask := uint64(nb - 1)
	type sums struct {
		paths, inos uint64
		unknown     bool // an inode 0 on either side
	}
	sum := make([]sums, nb)
	th := make([]uint64, len(in))
	ti := make([]uint64, len(in))
	add := func(h, ino uint64) {
		s := &sum[h&mask]
		s.paths ^= h
		s.inos ^= mixIno(h, ino)
		s.unknown = s.unknown || ino == 0
	}
	for k, i := range in {
		p, ino := file(i)
		h := maphash.String(seed, p)
		th[k], ti[k] = h, ino
		add(h, ino)
	}
	fh := make([]uint64, len(found))
	for j := range found {
		h := maphash.String(seed, found[j].path)
		fh[j] = h
		add(h, found[j].ino)
	}
	paired, sameIno, known = make([]bool, len(in)), make([]bool, len(in)), make([]bool, len(found))
	var rest map[uint64]int32 // by hash, the listed files of buckets whose paths differ
	for j, h := range fh {
		if sum[h&mask].paths == 0 {
			known[j] = true
			continue
		}
		if rest == nil {
			rest = map[uint64]int32{}
		}
		rest[h] = int32(j)
	}
	for k, h := range th {
		if s := &sum[h&mask]; s.paths == 0 {
			paired[k], sameIno[k] = true, s.inos == 0 && !s.unknown
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
