package lexical

import (
	"math"
	"slices"
	"sort"
	"sync"
)

// An overlay holds the updates made to a loaded segment, so that a Put or
// Remove costs about the document changed rather than a copy of the whole
// segment into memory (see thaw).
//
// Slots below the segment's document count are the segment's documents
// (a removed one stays as a tombstone: alive false, its ID kept so the
// segment's documents stay sorted); documents put since are appended after
// them. Term ids below the segment's term count are the segment's terms;
// terms the segment lacks get the ids after them. A term's postings are
// the segment's followed by those of the documents put since (their slots
// are higher, so the list stays ordered by slot), and its document
// frequency is the segment's corrected by what was removed and put. The
// collection statistics (live documents, field length totals) are kept
// exactly, so the index ranks as one built from scratch from the same
// live documents.
type overlay struct {
	nbDocs, nbTerms int

	live int               // live documents, the segment's and put since
	ids  map[string]uint32 // ID → slot of a live document put since

	extra   map[string]uint32 // text → id of a term the segment lacks
	text    []string          // by id - nbTerms
	numeric []bool            // by id - nbTerms
	cjk     bool              // some term the segment lacks may be CJK

	post map[uint32][]posting // by term id: postings of documents put since
	df   map[uint32]int32     // by term id: change to the segment's frequency

	tf      map[uint32][nFields]uint8 // per-document scratch of put
	touched []uint32

	mu     sync.Mutex           // guards merged, filled by concurrent searches
	merged map[uint32][]posting // segment postings followed by post[id]
}

// overlayThaw is how many documents may be put over a segment, beyond a
// quarter of its size, before the index is copied into memory instead.
const overlayThaw = 64

func (x *Index) overlay() *overlay {
	if x.ov == nil {
		x.ov = &overlay{
			nbDocs: len(x.seg.docs), nbTerms: len(x.seg.dict), live: len(x.seg.docs),
			ids: map[string]uint32{}, extra: map[string]uint32{},
			post: map[uint32][]posting{}, df: map[uint32]int32{},
			tf: map[uint32][nFields]uint8{}, merged: map[uint32][]posting{},
		}
	}
	return x.ov
}

// slotOf returns the slot of the live document with this ID.
func (x *Index) slotOf(id string) (uint32, bool) {
	if x.seg == nil {
		slot, ok := x.ids[id]
		return slot, ok
	}
	nb := len(x.seg.docs)
	if i := sort.Search(nb, func(i int) bool { return x.docID(uint32(i)) >= id }); i < nb && x.docID(uint32(i)) == id && x.docAlive(uint32(i)) {
		return uint32(i), true
	}
	if x.ov != nil {
		slot, ok := x.ov.ids[id]
		return slot, ok
	}
	return 0, false
}

// ovPut adds doc over the segment, replacing any live document with its ID.
func (x *Index) ovPut(doc Doc) {
	if slot, ok := x.slotOf(doc.ID); ok {
		x.ovRemove(slot)
	}
	ov := x.overlay()
	slot := uint32(x.slots())
	info := docInfo{id: doc.ID, alive: true}
	for f, text := range [nFields]string{doc.Name, doc.Description, doc.Body} {
		x.tok.run(text, func(tok []byte) {
			id, ok := x.lookup(string(tok))
			if !ok {
				term := string(tok)
				id = uint32(ov.nbTerms + len(ov.text))
				ov.extra[term] = id
				ov.text = append(ov.text, term)
				ov.numeric = append(ov.numeric, isNumeric(tok))
				ov.cjk = ov.cjk || tok[0] >= 0xE1
			}
			c, seen := ov.tf[id]
			if !seen {
				ov.touched = append(ov.touched, id)
			}
			if c[f] < math.MaxUint8 {
				c[f]++
			}
			ov.tf[id] = c
			info.len[f]++
		})
	}
	info.terms = slices.Clone(ov.touched)
	for _, id := range ov.touched {
		ov.post[id] = append(ov.post[id], posting{doc: slot, tf: ov.tf[id]})
		ov.df[id]++
		delete(ov.merged, id)
	}
	clear(ov.tf)
	ov.touched = ov.touched[:0]
	for f := range nFields {
		x.totalLen[f] += int64(info.len[f])
	}
	x.docs = append(x.docs, info)
	ov.ids[doc.ID] = slot
	ov.live++
}

// ovRemove turns the live document in slot into a tombstone. Postings stay
// (searches skip tombstones); the frequencies and statistics are updated.
func (x *Index) ovRemove(slot uint32) {
	ov := x.overlay()
	for _, id := range x.docTermIDs(slot) {
		ov.df[id]--
	}
	l := x.docLen(slot)
	for f := range nFields {
		x.totalLen[f] -= int64(l[f])
	}
	if int(slot) >= ov.nbDocs {
		d := &x.docs[int(slot)-ov.nbDocs]
		delete(ov.ids, d.id)
		*d = docInfo{}
	} else {
		if x.seg.dead == nil {
			x.seg.dead = make([]bool, len(x.seg.docs))
		}
		x.seg.dead[slot] = true
	}
	ov.live--
}

// ovPostings returns the postings of term id: the segment's (base) and
// those of documents put since, merged once per term and kept until a put
// changes them.
func (ov *overlay) postings(id uint32, base []posting) []posting {
	add := ov.post[id]
	if len(add) == 0 {
		return base
	}
	if len(base) == 0 {
		return add
	}
	ov.mu.Lock()
	defer ov.mu.Unlock()
	if m, ok := ov.merged[id]; ok {
		return m
	}
	m := make([]posting, 0, len(base)+len(add))
	m = append(append(m, base...), add...)
	ov.merged[id] = m
	return m
}

// wantsThaw reports whether so much was put over the segment that the
// index is better copied into memory.
func (x *Index) wantsThaw() bool {
	return x.ov != nil && len(x.docs) > overlayThaw+x.ov.nbDocs/4
}

// numTerms returns how many term ids there are.
func (x *Index) numTerms() int {
	switch {
	case x.seg == nil:
		return len(x.text)
	case x.ov != nil:
		return x.ov.nbTerms + len(x.ov.text)
	default:
		return len(x.seg.dict)
	}
}
