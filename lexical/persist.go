package lexical

import (
	"cmp"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/memdir/memdir/internal/framed"
)

// The persisted form of an Index (a segment) is laid out so that it can be
// used where it lies, in a memory-mapped file, without decoding: opening it
// costs one small allocation per document, whatever the number of terms
// and postings, and a query touches only the pages of its own terms.
//
// It is a framed file (internal/framed) of these sections, each 8-byte
// aligned, in the machine's byte order (which the frame records):
//
//	secMeta      one segMeta: the collection statistics
//	secDocs      a segDoc per document, sorted by ID
//	secDocTerms  the term ids of each document (uint32)
//	secDict      a segTerm per term, sorted by term text
//	secPostings  the postings, each term's list ordered by document slot
//	secBlob      document IDs and term texts
//
// The frame's checksums cover the header and section table, checked by
// Load, and each section; Load checks the statistics and the document
// table. The other sections are searched in place and checked piecewise
// instead, as they are used: each term's text and posting list, and each
// document's term list, carry a CRC-32C of their own, and a term's posting
// count, read before its list, must meet the next term's offset.

// segFormat is the segment's magic and version. Version 1 had a header of
// its own before the tables; such a segment is refused like any other
// version, and the index rebuilt.
//
// Version 3 added a checksum of each term's text (checked at each probe of
// a dictionary search, so that damage there cannot make a term silently
// missing) and one of every document ID (checked by Load); version 2
// segments are refused like any other, and the index rebuilt.
var segFormat = framed.Format{Magic: "MDLXSEG\x01", Version: 3}

// The segment's section ids.
const (
	secMeta uint32 = iota + 1
	secDocs
	secDocTerms
	secDict
	secPostings
	secBlob
)

type segMeta struct {
	TotalLen [nFields]int64
	// IDsCRC is the CRC-32C of every document ID, in slot order, each
	// followed by a zero byte.
	IDsCRC, _ uint32
}

type segDoc struct {
	IDOff, IDLen     uint32
	Len              [nFields]uint32
	TermsOff, TermsN uint32
	TermsCRC         uint32
}

type segTerm struct {
	TextOff, TextLen uint32
	PostOff, PostN   uint32
	Numeric          uint32
	PostCRC          uint32
	// TextCRC is the CRC-32C of the text and the Numeric field.
	TextCRC, _ uint32
}

// textCRC covers a term's text and whether it is numeric.
func textCRC(text string, numeric uint32) uint32 {
	return crc32.Update(crc32.Checksum(strBytes(text), crcTable()), crcTable(), []byte{byte(numeric)})
}

// strBytes views s as bytes without copying; they are only read.
func strBytes(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

// segment is the read-only, mapped form of an index.
type segment struct {
	docs     []segDoc
	docTerms []uint32
	dict     []segTerm
	postings []posting
	blob     []byte
	// checked has a bit per term (posting list) and then per document
	// (term list) whose checksum was verified.
	checked []atomic.Uint32
	// dead marks the documents removed over the segment; nil until one is.
	dead []bool
}

var crcTable = sync.OnceValue(func() *crc32.Table { return crc32.MakeTable(crc32.Castagnoli) })

// termCRC covers a term's text and its posting list.
func termCRC(text string, ps []posting) uint32 {
	return crc32.Update(crc32.Checksum([]byte(text), crcTable()), crcTable(), framed.Raw(ps))
}

// verified reports whether item i's checksum was already checked.
func (s *segment) verified(i int) bool { return s.checked[i/32].Load()&(1<<(i%32)) != 0 }

func (s *segment) markVerified(i int) {
	w := &s.checked[i/32]
	for {
		old := w.Load()
		if w.CompareAndSwap(old, old|1<<(i%32)) {
			return
		}
	}
}

// ErrBadSegment is returned by [Load] for data that is not a segment of this
// version and machine.
var ErrBadSegment = errors.New("lexical: not a valid index segment")

// Load opens an index from a segment written by [Index.WriteTo], in place:
// the Index keeps referring to data, which must stay unchanged and alive for
// as long as the Index and every string it returns are in use (memdir maps
// the file and never unmaps it). data must be 8-byte aligned. The Index
// searches like the one that was written; Put and Remove first copy it into
// memory.
//
// Load checks the structure it reads at once; posting lists are checked
// when a query first uses them, and a bad one makes [Index.Corrupt] true.
func Load(data []byte, opts *Options) (*Index, error) {
	if len(data) > 0 && uintptr(unsafe.Pointer(&data[0]))%8 != 0 {
		return nil, fmt.Errorf("%w: misaligned", ErrBadSegment)
	}
	f, err := segFormat.Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadSegment, err)
	}
	seg, meta, err := viewSegment(f)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadSegment, err)
	}
	seg.checked = make([]atomic.Uint32, (2*len(seg.dict)+len(seg.docs))/32+1)
	blobLen, nDocTerms := uint64(len(seg.blob)), uint64(len(seg.docTerms))
	// The segment's documents are read in place (see docID and the
	// accessors after it): x.docs holds only those put over it. Copied
	// into records, they were 6 MB of fresh pages at 100,000 documents in
	// every process.
	x := &Index{opts: opts.withDefaults(), seg: seg, totalLen: meta.TotalLen}
	// The IDs' checksum over each ID and a zero byte, fed in blocks: a
	// call per ID and per zero byte cost more than the sums themselves.
	var ids uint32
	tab := crcTable()
	block := make([]byte, 0, 16<<10)
	prev := ""
	for i := range seg.docs {
		d := &seg.docs[i]
		if uint64(d.IDOff)+uint64(d.IDLen) > blobLen || uint64(d.TermsOff)+uint64(d.TermsN) > nDocTerms {
			return nil, fmt.Errorf("%w: document %d", ErrBadSegment, i)
		}
		id := seg.str(d.IDOff, d.IDLen)
		if i > 0 && prev >= id {
			return nil, fmt.Errorf("%w: documents out of order", ErrBadSegment)
		}
		prev = id
		if len(block)+len(id)+1 <= cap(block) {
			block = append(append(block, id...), 0)
		} else {
			ids = crc32.Update(crc32.Update(crc32.Update(ids, tab, block), tab, strBytes(id)), tab, []byte{0})
			block = block[:0]
		}
	}
	if ids = crc32.Update(ids, tab, block); ids != meta.IDsCRC {
		return nil, fmt.Errorf("%w: document IDs fail their checksum", ErrBadSegment)
	}
	return x, nil
}

// viewSegment views the sections of a parsed segment in place. The
// statistics and the document table are checked against their checksums
// here; the rest is checked piece by piece as it is used.
func viewSegment(f *framed.File) (*segment, *segMeta, error) {
	metaB, err := f.Section(secMeta)
	if err != nil {
		return nil, nil, err
	}
	docsB, err := f.Section(secDocs)
	if err != nil {
		return nil, nil, err
	}
	var raw [4][]byte
	for i, id := range []uint32{secDocTerms, secDict, secPostings, secBlob} {
		if raw[i], err = f.Unverified(id); err != nil {
			return nil, nil, err
		}
	}
	meta, ok1 := framed.View[segMeta](metaB)
	seg := &segment{blob: raw[3]}
	var ok2, ok3, ok4, ok5 bool
	seg.docs, ok2 = framed.View[segDoc](docsB)
	seg.docTerms, ok3 = framed.View[uint32](raw[0])
	seg.dict, ok4 = framed.View[segTerm](raw[1])
	seg.postings, ok5 = framed.View[posting](raw[2])
	if !ok1 || len(meta) != 1 || !ok2 || !ok3 || !ok4 || !ok5 {
		return nil, nil, errors.New("a section's size is not a whole number of records")
	}
	return seg, &meta[0], nil
}

func (s *segment) str(off, n uint32) string {
	if n == 0 || uint64(off)+uint64(n) > uint64(len(s.blob)) {
		return ""
	}
	return unsafe.String(&s.blob[off], int(n))
}

// Corrupt reports whether a search found a loaded segment damaged; its
// results are then incomplete and the index should be rebuilt.
func (x *Index) Corrupt() bool { return x.damaged.Load() }

// Accessors that work on both forms of the index.

func (x *Index) numDocs() int {
	if x.ov != nil {
		return x.ov.live
	}
	if x.seg != nil {
		return len(x.seg.docs)
	}
	return len(x.ids)
}

// Documents by slot: the first segDocs slots are the loaded segment's,
// read in place; x.docs holds the rest (all of them without a segment),
// the document in slot s at x.docs[s-segDocs].

// segDocs returns how many slots are the segment's documents.
func (x *Index) segDocs() int {
	if x.seg == nil {
		return 0
	}
	return len(x.seg.docs)
}

// slots returns how many document slots there are, tombstones included.
func (x *Index) slots() int { return x.segDocs() + len(x.docs) }

func (x *Index) docAlive(slot uint32) bool {
	if nb := x.segDocs(); int(slot) < nb {
		return x.seg.dead == nil || !x.seg.dead[slot]
	}
	return x.docs[int(slot)-x.segDocs()].alive
}

// docID returns the ID of the document in slot; a removed document of the
// segment keeps its ID, so that the segment's IDs stay sorted.
func (x *Index) docID(slot uint32) string {
	if int(slot) < x.segDocs() {
		d := &x.seg.docs[slot]
		return x.seg.str(d.IDOff, d.IDLen)
	}
	return x.docs[int(slot)-x.segDocs()].id
}

// docLen returns the field lengths of the document in slot.
func (x *Index) docLen(slot uint32) *[nFields]uint32 {
	if int(slot) < x.segDocs() {
		return &x.seg.docs[slot].Len
	}
	return &x.docs[int(slot)-x.segDocs()].len
}

// docTerms returns the distinct term ids of the document in slot, not
// checked (see docTermIDs); Load checked their place.
func (x *Index) docTerms(slot uint32) []uint32 {
	if int(slot) < x.segDocs() {
		d := &x.seg.docs[slot]
		return x.seg.docTerms[d.TermsOff : d.TermsOff+d.TermsN : d.TermsOff+d.TermsN]
	}
	return x.docs[int(slot)-x.segDocs()].terms
}

func (x *Index) lookup(term string) (uint32, bool) {
	if x.seg == nil {
		id, ok := x.terms[term]
		return id, ok
	}
	d := x.seg.dict
	// Each probe's text is checked (once): damage there would otherwise
	// send the search the wrong way and hide the term.
	i := sort.Search(len(d), func(i int) bool { return x.probe(i) >= term })
	if i < len(d) && x.probe(i) == term {
		return uint32(i), true
	}
	if x.ov != nil {
		id, ok := x.ov.extra[term]
		return id, ok
	}
	return 0, false
}

// mayHoldCJK reports whether some term of the index may be CJK (see
// isCJK). A loaded segment's dictionary is sorted by bytes, and every CJK
// term's UTF-8 starts at 0xE1 or above, so its last term decides; an index
// built in memory answers true.
func (x *Index) mayHoldCJK() bool {
	if x.seg == nil || x.ov != nil && x.ov.cjk {
		return true
	}
	d := x.seg.dict
	if len(d) == 0 {
		return false
	}
	last := x.seg.str(d[len(d)-1].TextOff, d[len(d)-1].TextLen)
	return last != "" && last[0] >= 0xE1
}

// probe returns the text of the segment's term i, checking its checksum
// (which covers the Numeric flag too) the first time (a bit per term,
// after those of the posting lists and document term lists): for a
// dictionary search, and wherever else a term's text or flag is read.
func (x *Index) probe(i int) string {
	t := &x.seg.dict[i]
	text := x.seg.str(t.TextOff, t.TextLen)
	bit := len(x.seg.dict) + len(x.seg.docs) + i
	if x.seg.verified(bit) {
		return text
	}
	// The checksum covers the flag's low byte: the flag is 0 or 1.
	if t.Numeric > 1 || textCRC(text, t.Numeric) != t.TextCRC {
		x.damaged.Store(true)
		return text
	}
	x.seg.markVerified(bit)
	return text
}

func (x *Index) termText(id uint32) string {
	if x.seg == nil {
		return x.text[id]
	}
	if int(id) >= len(x.seg.dict) {
		if x.ov != nil && int(id)-x.ov.nbTerms < len(x.ov.text) {
			return x.ov.text[int(id)-x.ov.nbTerms]
		}
		return ""
	}
	return x.probe(int(id))
}

func (x *Index) docFreq(id uint32) int32 {
	if x.seg == nil {
		return x.df[id]
	}
	var n int32
	if int(id) < len(x.seg.dict) {
		n = x.segDocFreq(id)
	}
	if x.ov != nil {
		n += x.ov.df[id]
	}
	return n
}

// segDocFreq returns the document frequency of the segment's term id, its
// posting count. No checksum covers the count until the posting list is
// read, and a search reads it for terms whose lists it may never read (a
// feedback candidate's bound): a damaged count would change the ranking
// silently. Both writers lay the lists end to end in term order, so a
// term's list must end where the next one's starts (the last one's at the
// end of the postings); an entry that does not is damage.
func (x *Index) segDocFreq(id uint32) int32 {
	d := x.seg.dict
	t := &d[id]
	end := uint64(len(x.seg.postings))
	if int(id)+1 < len(d) {
		end = uint64(d[id+1].PostOff)
	}
	if uint64(t.PostOff)+uint64(t.PostN) != end {
		x.damaged.Store(true)
	}
	return int32(t.PostN)
}

func (x *Index) numericTerm(id uint32) bool {
	if x.seg == nil {
		return x.numeric[id]
	}
	if int(id) >= len(x.seg.dict) {
		return x.ov != nil && int(id)-x.ov.nbTerms < len(x.ov.numeric) && x.ov.numeric[int(id)-x.ov.nbTerms]
	}
	// The flag is covered by the text's checksum, which a term reached
	// other than through the dictionary (a document's term list, for
	// feedback) has not had checked: a damaged flag would change its
	// weight silently.
	x.probe(int(id))
	return x.seg.dict[id].Numeric == 1
}

func (x *Index) postingsOf(id uint32) []posting {
	if x.seg == nil {
		return x.postings[id]
	}
	if x.ov == nil {
		return x.segPostings(id)
	}
	var base []posting
	if int(id) < len(x.seg.dict) {
		if base = x.segPostings(id); base == nil {
			return nil // damaged
		}
	}
	return x.ov.postings(id, base)
}

// segPostings returns the segment's postings of term id, checked on first
// use.
func (x *Index) segPostings(id uint32) []posting {
	ps := x.segPostingsUnchecked(id)
	if ps == nil || x.seg.verified(int(id)) {
		return ps
	}
	t := &x.seg.dict[id]
	if termCRC(x.seg.str(t.TextOff, t.TextLen), ps) != t.PostCRC {
		x.damaged.Store(true)
		return nil
	}
	n := uint32(len(x.seg.docs))
	prev := int64(-1)
	for _, p := range ps {
		if p.doc >= n || int64(p.doc) <= prev {
			x.damaged.Store(true)
			return nil
		}
		prev = int64(p.doc)
	}
	x.seg.markVerified(int(id))
	return ps
}

// segPostingsUnchecked returns the segment's postings of term id where
// the dictionary says they lie, within the postings section, without
// summing them: for a lookup of one posting (see Index.posting), which
// reads what it finds as data and never as an offset.
func (x *Index) segPostingsUnchecked(id uint32) []posting {
	if int(id) >= len(x.seg.dict) {
		return nil
	}
	t := &x.seg.dict[id]
	if uint64(t.PostOff)+uint64(t.PostN) > uint64(len(x.seg.postings)) {
		x.damaged.Store(true)
		return nil
	}
	return x.seg.postings[t.PostOff : t.PostOff+t.PostN]
}

// docTermIDs returns the distinct term ids of the document in slot (none
// when its checksum fails).
func (x *Index) docTermIDs(slot uint32) []uint32 {
	if !x.docTermsOK(slot) {
		return nil
	}
	return x.docTerms(slot)
}

func (x *Index) docTermsOK(slot uint32) bool {
	if x.seg == nil || int(slot) >= len(x.seg.docs) {
		return true
	}
	i := len(x.seg.dict) + int(slot)
	if x.seg.verified(i) {
		return true
	}
	if crc32.Checksum(framed.Raw(x.docTerms(slot)), crcTable()) != x.seg.docs[slot].TermsCRC {
		x.damaged.Store(true)
		return false
	}
	x.seg.markVerified(i)
	return true
}

// thaw copies a loaded segment, and what was put over it, into the
// mutable form.
func (x *Index) thaw() {
	if x.seg == nil {
		return
	}
	nt := x.numTerms()
	x.terms = make(map[string]uint32, nt)
	x.text = make([]string, nt)
	x.postings = make([][]posting, nt)
	x.df = make([]int32, nt)
	x.numeric = make([]bool, nt)
	x.tf = make([][nFields]uint8, nt)
	for i := range nt {
		id := uint32(i)
		text := strings.Clone(x.termText(id))
		x.terms[text] = id
		x.text[i] = text
		x.numeric[i] = x.numericTerm(id)
		ps := x.postingsOf(id)
		if ps == nil {
			continue // damaged (Corrupt reports it), or no longer held
		}
		x.postings[i] = slices.Clip(slices.Clone(ps))
		x.df[i] = x.docFreq(id)
	}
	// The segment's documents become records, before those put over it.
	docs := make([]docInfo, x.slots())
	for i := range x.segDocs() {
		slot := uint32(i)
		docs[i] = docInfo{id: x.docID(slot), len: *x.docLen(slot), terms: x.docTerms(slot), alive: x.docAlive(slot)}
	}
	copy(docs[x.segDocs():], x.docs)
	x.docs = docs
	x.ids = make(map[string]uint32, len(x.docs))
	x.dead = 0
	for i := range x.docs {
		d := &x.docs[i]
		if !d.alive {
			*d = docInfo{}
			x.dead++
			continue
		}
		ok := x.docTermsOK(uint32(i))
		d.id = strings.Clone(d.id)
		terms := d.terms
		d.terms = make([]uint32, 0, len(terms))
		x.ids[d.id] = uint32(i)
		if !ok {
			continue
		}
		for _, t := range terms {
			if int(t) < nt {
				d.terms = append(d.terms, t)
			} else {
				x.damaged.Store(true)
			}
		}
	}
	x.seg, x.ov = nil, nil
}

// WriteTo writes the index as a segment that [Load] opens in place: only
// its live documents, sorted by ID, with their terms.
func (x *Index) WriteTo(w io.Writer) (int64, error) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	data, err := x.marshal(nil)
	if err != nil {
		return 0, err
	}
	n, err := w.Write(data)
	return int64(n), err
}

// AppendBinary appends the segment [Index.WriteTo] writes to b. Its
// sections are 8-byte aligned relative to the segment's start, so Load can
// use it in place where it lands 8-byte aligned.
func (x *Index) AppendBinary(b []byte) ([]byte, error) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	out, err := x.marshal(b)
	if err != nil {
		return b, err
	}
	return out, nil
}

// marshal appends the segment to b.
func (x *Index) marshal(b []byte) ([]byte, error) {
	// Live documents in ID order: new slot by old slot.
	var live []uint32
	for i := range x.slots() {
		if x.docAlive(uint32(i)) {
			live = append(live, uint32(i))
		}
	}
	slices.SortFunc(live, func(a, b uint32) int { return strings.Compare(x.docID(a), x.docID(b)) })
	newSlot := make([]uint32, x.slots())
	for ns, os := range live {
		newSlot[os] = uint32(ns)
	}
	// Terms some live document holds, in text order.
	nAll := x.numTerms()
	var terms []uint32
	for id := 0; id < nAll; id++ {
		if x.docFreq(uint32(id)) > 0 {
			terms = append(terms, uint32(id))
		}
	}
	slices.SortFunc(terms, func(a, b uint32) int { return strings.Compare(x.termText(a), x.termText(b)) })
	newTerm := make([]uint32, nAll)
	for nt, ot := range terms {
		newTerm[ot] = uint32(nt)
	}

	var blob []byte
	addStr := func(s string) (uint32, uint32) {
		off := len(blob)
		blob = append(blob, s...)
		return uint32(off), uint32(len(s))
	}
	docs := make([]segDoc, len(live))
	var docTerms []uint32
	var meta segMeta
	for ns, os := range live {
		id, l := x.docID(os), x.docLen(os)
		sd := &docs[ns]
		sd.IDOff, sd.IDLen = addStr(id)
		meta.IDsCRC = crc32.Update(crc32.Update(meta.IDsCRC, crcTable(), []byte(id)), crcTable(), []byte{0})
		sd.Len = *l
		sd.TermsOff = uint32(len(docTerms))
		for _, t := range x.docTerms(os) {
			if int(t) < nAll {
				docTerms = append(docTerms, newTerm[t])
			}
		}
		sd.TermsN = uint32(len(docTerms)) - sd.TermsOff
		sd.TermsCRC = crc32.Checksum(framed.Raw(docTerms[sd.TermsOff:]), crcTable())
		for f := range nFields {
			meta.TotalLen[f] += int64(l[f])
		}
	}
	dict := make([]segTerm, len(terms))
	var postings []posting
	for nt, ot := range terms {
		st := &dict[nt]
		st.TextOff, st.TextLen = addStr(x.termText(ot))
		if x.numericTerm(ot) {
			st.Numeric = 1
		}
		st.PostOff = uint32(len(postings))
		start := len(postings)
		for _, p := range x.postingsOf(ot) {
			if int(p.doc) < x.slots() && x.docAlive(p.doc) {
				p.doc = newSlot[p.doc]
				postings = append(postings, p)
			}
		}
		ps := postings[start:]
		slices.SortFunc(ps, func(a, b posting) int { return cmp.Compare(a.doc, b.doc) })
		st.PostN = uint32(len(ps))
		st.PostCRC = termCRC(x.termText(ot), ps)
		st.TextCRC = textCRC(x.termText(ot), st.Numeric)
		if uint64(len(postings)) > math.MaxUint32 || uint64(len(blob)) > math.MaxUint32 {
			return nil, errors.New("lexical: index too large to persist")
		}
	}
	w := segFormat.NewWriter(b)
	// The sections, and for the frame a header, a table entry and at most
	// 7 bytes of padding a section.
	w.Grow(len(framed.Raw(docs)) + len(docTerms)*4 + len(framed.Raw(dict)) + len(framed.Raw(postings)) + len(blob) +
		int(unsafe.Sizeof(meta)) + 32 + 6*(24+7))
	w.Add(secMeta, framed.Raw([]segMeta{meta}))
	w.Add(secDocs, framed.Raw(docs))
	w.Add(secDocTerms, framed.Raw(docTerms))
	w.Add(secDict, framed.Raw(dict))
	w.Add(secPostings, framed.Raw(postings))
	w.Add(secBlob, blob)
	return w.Finish()
}
