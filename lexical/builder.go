package lexical

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"hash/maphash"
	"io"
	"math"
	"slices"

	"github.com/memdir/memdir/internal/framed"
	"github.com/memdir/memdir/internal/prefault"
)

// A Builder makes a segment (what [Index.WriteTo] writes and [Load] opens)
// from documents, without building an [Index]: for a first build of a large
// directory, whose in-memory Index (a map entry, a string and a slice of
// postings per term) cost most of the build in garbage collection and
// twice the segment's size in memory.
//
// Nothing it holds has pointers the collector must follow: the terms are
// interned in one byte arena through an open-addressing table of term ids
// (and each plain word is mapped to its term once, in a second table, so
// that a word is stemmed only the first time it is seen), each document is
// a fixed record, and its distinct terms with their frequencies are
// appended, packed, to one table in chunks. Writing sorts
// the documents by ID and the terms by text, counts each term's postings,
// and lays the postings out term by term in one pass over the documents in
// slot order, so each list comes out ordered by slot; the segment is then
// streamed, section by section. It holds about 16 bytes per posting at
// most (the packed table and the laid-out postings), against the Index's
// pointer-rich copy.
//
// The segment is byte for byte the one an Index of the same documents
// writes (TestBuilderMatchesIndex). A later document with the same ID as
// an earlier one replaces it, as in [New]. A Builder is not safe for
// concurrent use, and writes once.
type Builder struct {
	tok tokenizer

	// Terms: term id i is terms' string i. tf is by term id: the current
	// document's frequencies; touched, the term ids of the current
	// document, first seen first.
	terms   internTable
	tf      [][nFields]uint8
	touched []uint32

	// Plain words (see tokenizer.plainWord), lowercased, before stopwords
	// and stemming: word i of words is term wordTerm[i], or noTerm for a
	// stopword. Most words of a directory recur, and each is stemmed once.
	words    internTable
	wordTerm []uint32

	// The document being added, and the field its text is.
	cur   builtDoc
	field int

	ids    []byte // document IDs, back to back
	docs   []builtDoc
	pairs  [][]uint64 // chunks of pairChunk packed (term, frequencies)
	npairs uint64
	spent  bool
}

// noTerm is wordTerm's mark of a stopword.
const noTerm = math.MaxUint32

type builtDoc struct {
	idOff, idLen uint32
	len          [nFields]uint32
	pairs        uint64 // the first of its n pairs
	n            uint32
}

const pairChunk = 1 << 16

// NewBuilder returns an empty Builder.
func NewBuilder() *Builder {
	b := &Builder{terms: newInternTable(), words: newInternTable()}
	b.tok.plain = b.plainWord
	return b
}

// Docs returns the number of documents added.
func (b *Builder) Docs() int { return len(b.docs) }

// Reserve makes room for docs more documents whose IDs take idBytes in
// all, so that a build of a known directory does not grow its tables by
// copying them.
func (b *Builder) Reserve(docs, idBytes int) {
	b.ids = slices.Grow(b.ids, idBytes)
	b.docs = slices.Grow(b.docs, docs)
}

// Add adds doc.
func (b *Builder) Add(doc Doc) {
	b.cur = builtDoc{idOff: uint32(len(b.ids)), idLen: uint32(len(doc.ID)), pairs: b.npairs}
	b.ids = append(b.ids, doc.ID...)
	for f, text := range [nFields]string{doc.Name, doc.Description, doc.Body} {
		b.field = f
		b.tok.run(text, b.addTerm)
	}
	for _, id := range b.touched {
		b.addPair(packPair(id, b.tf[id]))
		b.tf[id] = [nFields]uint8{}
	}
	b.cur.n = uint32(len(b.touched))
	b.touched = b.touched[:0]
	b.docs = append(b.docs, b.cur)
}

// addTerm counts one occurrence of the term tok in the current field.
func (b *Builder) addTerm(tok []byte) { b.count(b.termID(tok)) }

// termID returns the id of the term tok, adding it if new.
func (b *Builder) termID(tok []byte) uint32 {
	id, added := b.terms.intern(tok)
	if added {
		b.tf = append(b.tf, [nFields]uint8{})
	}
	return id
}

// plainWord counts the term of the plain word w (see tokenizer.plain):
// stemmed the first time it is seen, found in the memo after.
func (b *Builder) plainWord(w []byte) {
	i, added := b.words.intern(w)
	if added {
		term := uint32(noTerm)
		if t := b.tok.plainTerm(w); t != nil {
			term = b.termID(t)
		}
		b.wordTerm = append(b.wordTerm, term)
	}
	if t := b.wordTerm[i]; t != noTerm {
		b.count(t)
	}
}

// count counts one occurrence of term id in the current field.
func (b *Builder) count(id uint32) {
	c := &b.tf[id]
	if *c == ([nFields]uint8{}) {
		b.touched = append(b.touched, id)
	}
	if c[b.field] < math.MaxUint8 {
		c[b.field]++
	}
	b.cur.len[b.field]++
}

func packPair(term uint32, tf [nFields]uint8) uint64 {
	return uint64(term)<<24 | uint64(tf[0])<<16 | uint64(tf[1])<<8 | uint64(tf[2])
}

func unpackPair(p uint64) (uint32, [nFields]uint8) {
	return uint32(p >> 24), [nFields]uint8{uint8(p >> 16), uint8(p >> 8), uint8(p)}
}

func (b *Builder) addPair(p uint64) {
	if b.npairs%pairChunk == 0 {
		b.pairs = append(b.pairs, make([]uint64, 0, pairChunk))
	}
	c := &b.pairs[len(b.pairs)-1]
	*c = append(*c, p)
	b.npairs++
}

func (b *Builder) pair(i uint64) uint64 { return b.pairs[i/pairChunk][i%pairChunk] }

func (b *Builder) text(id uint32) []byte { return b.terms.text(id) }

// An internTable numbers distinct byte strings in the order they are
// first seen: string i is arena[off[i]:off[i+1]], found through slots, an
// open-addressing table probed from the string's hash whose entries hold
// that hash (high 32 bits) and i + 1 (low; 0 is empty), so that a probe
// compares bytes only when the hashes agree. Nothing in it has pointers
// the collector must follow.
type internTable struct {
	arena []byte
	off   []uint32
	slots []uint64
	seed  maphash.Seed
}

func newInternTable() internTable {
	return internTable{off: []uint32{0}, slots: make([]uint64, 1<<12), seed: maphash.MakeSeed()}
}

// len returns the number of strings interned.
func (t *internTable) len() int { return len(t.off) - 1 }

func (t *internTable) text(id uint32) []byte { return t.arena[t.off[id]:t.off[id+1]] }

// intern returns the id of tok, and whether it was added.
func (t *internTable) intern(tok []byte) (uint32, bool) {
	h := uint32(maphash.Bytes(t.seed, tok))
	mask := uint32(len(t.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		s := t.slots[i]
		if s == 0 {
			id := uint32(t.len())
			t.arena = append(t.arena, tok...)
			t.off = append(t.off, uint32(len(t.arena)))
			t.slots[i] = uint64(h)<<32 | uint64(id+1)
			if 2*t.len() > len(t.slots) {
				t.grow()
			}
			return id, true
		}
		if uint32(s>>32) == h {
			if id := uint32(s) - 1; bytes.Equal(t.text(id), tok) {
				return id, false
			}
		}
	}
}

func (t *internTable) grow() {
	old := t.slots
	t.slots = make([]uint64, 2*len(old))
	mask := uint32(len(t.slots) - 1)
	for _, s := range old {
		if s == 0 {
			continue
		}
		i := uint32(s>>32) & mask
		for t.slots[i] != 0 {
			i = (i + 1) & mask
		}
		t.slots[i] = s
	}
}

// docID returns the ID of the document added i'th.
func (b *Builder) docID(i uint32) []byte {
	d := &b.docs[i]
	return b.ids[d.idOff : d.idOff+d.idLen]
}

// layout is what writing a segment works out before streaming it.
type layout struct {
	docs     []uint32 // documents added, by new slot (sorted by ID)
	terms    []uint32 // term ids some document holds, by new term id (sorted by text)
	newTerm  []uint32 // by term id: its new id
	postings []posting
	postOff  []uint32 // by new term id: its first posting; one more at the end
	segDocs  []segDoc
	meta     segMeta
	idsLen   int
}

// plan sorts the documents and terms and lays out the postings.
func (b *Builder) plan() (*layout, error) {
	l := &layout{}
	// Documents by ID; of several with one ID, the last added.
	order := make([]uint32, len(b.docs))
	for i := range order {
		order[i] = uint32(i)
	}
	slices.SortFunc(order, func(x, y uint32) int {
		if c := bytes.Compare(b.docID(x), b.docID(y)); c != 0 {
			return c
		}
		return cmp.Compare(x, y)
	})
	for i, d := range order {
		if i+1 < len(order) && bytes.Equal(b.docID(d), b.docID(order[i+1])) {
			continue
		}
		l.docs = append(l.docs, d)
	}
	// Terms some kept document holds, by text.
	nt := b.terms.len()
	df := make([]uint32, nt)
	for _, d := range l.docs {
		bd := &b.docs[d]
		for i := bd.pairs; i < bd.pairs+uint64(bd.n); i++ {
			t, _ := unpackPair(b.pair(i))
			df[t]++
		}
	}
	type key struct {
		prefix uint64 // the text's first 8 bytes, big-endian, zero-padded
		id     uint32
	}
	keys := make([]key, 0, nt)
	for id := range nt {
		if df[id] > 0 {
			var p [8]byte
			copy(p[:], b.text(uint32(id)))
			keys = append(keys, key{binary.BigEndian.Uint64(p[:]), uint32(id)})
		}
	}
	slices.SortFunc(keys, func(x, y key) int {
		if c := cmp.Compare(x.prefix, y.prefix); c != 0 {
			return c
		}
		return bytes.Compare(b.text(x.id), b.text(y.id))
	})
	l.terms = make([]uint32, len(keys))
	l.newTerm = make([]uint32, nt)
	l.postOff = make([]uint32, len(keys)+1)
	var total uint64
	for i, k := range keys {
		l.terms[i] = k.id
		l.newTerm[k.id] = uint32(i)
		l.postOff[i] = uint32(total)
		total += uint64(df[k.id])
		if total > math.MaxUint32 {
			return nil, errors.New("lexical: index too large to persist")
		}
	}
	l.postOff[len(keys)] = uint32(total)
	keys, df = nil, nil
	// Postings, term by term, each list in slot order; the documents'
	// records and statistics on the way.
	l.postings = make([]posting, total)
	// Written at random, term by term: mapped in one call, not a fault
	// per page as the scatter reaches it (81 MB at 100,000 memories,
	// 20,000 faults; 0.2 s of a first build in a virtual machine).
	prefault.Write(framed.Raw(l.postings))
	next := slices.Clone(l.postOff[:len(l.terms)])
	l.segDocs = make([]segDoc, len(l.docs))
	var mapped []uint32
	var termsOff uint64
	var zero [1]byte
	for slot, d := range l.docs {
		bd := &b.docs[d]
		mapped = mapped[:0]
		for i := bd.pairs; i < bd.pairs+uint64(bd.n); i++ {
			t, tf := unpackPair(b.pair(i))
			nt := l.newTerm[t]
			mapped = append(mapped, nt)
			l.postings[next[nt]] = posting{doc: uint32(slot), tf: tf}
			next[nt]++
		}
		id := b.docID(d)
		sd := &l.segDocs[slot]
		sd.IDOff, sd.IDLen = uint32(l.idsLen), bd.idLen
		l.idsLen += len(id)
		sd.Len = bd.len
		sd.TermsOff, sd.TermsN = uint32(termsOff), bd.n
		sd.TermsCRC = crc32.Checksum(framed.Raw(mapped), crcTable())
		termsOff += uint64(bd.n)
		l.meta.IDsCRC = crc32.Update(crc32.Update(l.meta.IDsCRC, crcTable(), id), crcTable(), zero[:])
		for f := range nFields {
			l.meta.TotalLen[f] += int64(bd.len[f])
		}
	}
	blob := uint64(l.idsLen)
	for _, t := range l.terms {
		blob += uint64(len(b.text(t)))
	}
	if blob > math.MaxUint32 || termsOff > math.MaxUint32 {
		return nil, errors.New("lexical: index too large to persist")
	}
	return l, nil
}

// WriteSegmentAt writes the segment at offset base of w (a multiple of 8,
// for Load to use it in place) and returns its length. The Builder is
// spent afterwards: its tables are released as they are written.
func (b *Builder) WriteSegmentAt(w io.WriterAt, base int64) (int64, error) {
	if b.spent {
		return 0, errors.New("lexical: a Builder writes once")
	}
	b.spent = true
	b.terms.slots, b.tf = nil, nil
	b.words, b.wordTerm = internTable{}, nil
	l, err := b.plan()
	if err != nil {
		return 0, err
	}
	s := segFormat.NewStreamWriter(w, base)
	s.Begin(secMeta)
	s.Write(framed.Raw([]segMeta{l.meta}))
	s.Begin(secDocs)
	s.Write(framed.Raw(l.segDocs))
	s.Begin(secDocTerms)
	buf := make([]uint32, 0, 8<<10)
	for _, d := range l.docs {
		bd := &b.docs[d]
		for i := bd.pairs; i < bd.pairs+uint64(bd.n); i++ {
			t, _ := unpackPair(b.pair(i))
			if buf = append(buf, l.newTerm[t]); len(buf) == cap(buf) {
				s.Write(framed.Raw(buf))
				buf = buf[:0]
			}
		}
	}
	s.Write(framed.Raw(buf))
	b.pairs = nil // the postings hold what is left to write
	s.Begin(secDict)
	dict := make([]segTerm, 0, 2<<10)
	textOff := uint32(l.idsLen)
	for nt, t := range l.terms {
		text := b.text(t)
		st := segTerm{TextOff: textOff, TextLen: uint32(len(text))}
		textOff += st.TextLen
		if isNumeric(text) {
			st.Numeric = 1
		}
		st.PostOff, st.PostN = l.postOff[nt], l.postOff[nt+1]-l.postOff[nt]
		ps := l.postings[st.PostOff : st.PostOff+st.PostN]
		st.PostCRC = crc32.Update(crc32.Checksum(text, crcTable()), crcTable(), framed.Raw(ps))
		st.TextCRC = crc32.Update(crc32.Checksum(text, crcTable()), crcTable(), []byte{byte(st.Numeric)})
		if dict = append(dict, st); len(dict) == cap(dict) {
			s.Write(framed.Raw(dict))
			dict = dict[:0]
		}
	}
	s.Write(framed.Raw(dict))
	s.Begin(secPostings)
	s.Write(framed.Raw(l.postings))
	l.postings = nil
	s.Begin(secBlob)
	for _, d := range l.docs {
		s.Write(b.docID(d))
	}
	for _, t := range l.terms {
		s.Write(b.text(t))
	}
	return s.Finish()
}

// Index writes the segment into memory and loads it: an Index searched in
// place, as one loaded from a file.
func (b *Builder) Index(opts *Options) (*Index, error) {
	var buf framed.Buffer
	n, err := b.WriteSegmentAt(&buf, 0)
	if err != nil {
		return nil, err
	}
	return Load(buf.Bytes(n), opts)
}
