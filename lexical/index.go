package lexical

import (
	"math"
	"sync"
	"sync/atomic"
)

// Doc is one document: for memdir, one memory file.
type Doc struct {
	// ID identifies the document and is what hits return; for memories it
	// is the path relative to the memory directory.
	ID          string
	Name        string
	Description string
	Body        string
}

// Hit is one document that matched a query.
type Hit struct {
	ID string
	// Score is the BM25F score, feedback terms included, that orders the
	// hits. It is comparable only between hits of the same query.
	Score float64
	// Norm is the part of Score due to the query's own terms divided by the
	// most any document could score for them (every term present, with
	// saturated frequency), so it lies in [0, 1) and can be compared with a
	// fixed threshold whatever the query's length.
	Norm float64
	// Coverage is the share of the query's weight (its terms, weighted by
	// IDF and repeats) that the document contains, in [0, 1].
	Coverage float64
	// Terms lists the query's own terms the document contains, in query
	// order: the reason it matched.
	Terms []string
}

// Options tunes the ranking. A zero field means its default.
type Options struct {
	// K1 controls how fast repeats of a term stop adding score. Default 1.2.
	K1 float64
	// B controls how much a long field is penalised, from 0 (not at all)
	// to 1 (fully in proportion to its length). Default 0.75. Set a
	// negative value for 0.
	B float64
	// Field weights: how much one occurrence in each field counts. Names
	// and descriptions are written to be matched, bodies are long and
	// wordy. Defaults 3, 2 and 1.
	NameWeight, DescriptionWeight, BodyWeight float64
	// Feedback is how many of the best first-pass documents expand the
	// query (pseudo-relevance feedback); see [Index.Search]. Default 2;
	// negative disables feedback.
	Feedback int
	// ExpandTerms is how many feedback terms join the query. Default 30.
	ExpandTerms int
	// ExpandWeight is the weight of the strongest feedback term, relative
	// to a term the user typed once. Default 0.5.
	ExpandWeight float64
	// Coordination is the power of the share of the query's terms a
	// document holds that scales its score (see the package doc).
	// Default 0.25; negative disables it.
	Coordination float64
	// GlossaryWeight is the weight of an English↔Chinese glossary
	// translation of a query term (see the package doc). Default
	// GlossaryWeight; negative disables the glossary.
	GlossaryWeight float64
}

func (o *Options) withDefaults() Options {
	var r Options
	if o != nil {
		r = *o
	}
	def := func(v *float64, d float64) {
		switch {
		case *v == 0:
			*v = d
		case *v < 0:
			*v = 0
		}
	}
	def(&r.K1, 1.2)
	def(&r.B, 0.75)
	def(&r.NameWeight, 3)
	def(&r.DescriptionWeight, 2)
	def(&r.BodyWeight, 1)
	def(&r.ExpandWeight, 0.5)
	def(&r.GlossaryWeight, GlossaryWeight)
	def(&r.Coordination, 0.25)
	switch {
	case r.Feedback == 0:
		r.Feedback = 2
	case r.Feedback < 0:
		r.Feedback = 0
	}
	if r.ExpandTerms <= 0 {
		r.ExpandTerms = 30
	}
	return r
}

const (
	fieldName = iota
	fieldDescription
	fieldBody
	nFields
)

// posting records that a document contains a term, with the term's
// frequency in each field (saturated at 255, far beyond where BM25 stops
// caring).
type posting struct {
	doc uint32
	tf  [nFields]uint8
}

type docInfo struct {
	id    string
	len   [nFields]uint32 // terms per field
	terms []uint32        // distinct term ids, to undo df on removal
	alive bool
}

// Index is a BM25F index over documents. Build it once with [New], query it
// with [Index.Search], and keep it current with [Index.Put] and
// [Index.Remove] instead of rebuilding.
//
// An Index is safe for concurrent use: searches run in parallel, updates
// wait for them.
type Index struct {
	mu   sync.RWMutex
	opts Options

	terms    map[string]uint32 // term → term id
	text     []string          // term id → term
	postings [][]posting       // by term id, ordered by doc slot
	df       []int32           // live documents containing each term
	numeric  []bool            // by term id: only digits and joiners

	docs     []docInfo         // by slot; removed documents stay as tombstones
	ids      map[string]uint32 // ID → slot of its live document
	dead     int               // tombstones among docs
	totalLen [nFields]int64    // field lengths summed over live documents

	// seg, when not nil, is the loaded segment the index reads in place
	// (see Load); the mutable fields above except docs and totalLen are
	// then empty until an update copies it into them.
	seg *segment
	// ov, when not nil, holds what was put and removed over seg since it
	// was loaded (see overlay).
	ov *overlay
	// damaged is set when a loaded segment turned out to be corrupt.
	damaged atomic.Bool

	tok     tokenizer        // for updates, under mu
	tf      [][nFields]uint8 // by term id, per-document scratch for updates
	touched []uint32
	scratch sync.Pool // *searchScratch
}

// New indexes docs. A later document with the same ID as an earlier one
// replaces it.
func New(docs []Doc, opts *Options) *Index {
	x := &Index{
		opts:  opts.withDefaults(),
		terms: make(map[string]uint32),
		ids:   make(map[string]uint32, len(docs)),
		docs:  make([]docInfo, 0, len(docs)),
	}
	for _, d := range docs {
		x.put(d)
	}
	return x
}

// Len returns the number of documents in the index.
func (x *Index) Len() int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.numDocs()
}

// Has reports whether a document with this ID is indexed.
func (x *Index) Has(id string) bool {
	x.mu.RLock()
	defer x.mu.RUnlock()
	_, ok := x.slotOf(id)
	return ok
}

// Put adds doc, replacing any document with the same ID.
func (x *Index) Put(doc Doc) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.seg != nil {
		x.ovPut(doc)
		if x.wantsThaw() {
			x.thaw()
		}
		return
	}
	x.put(doc)
}

// Remove removes the document with this ID and reports whether it was there.
func (x *Index) Remove(id string) bool {
	x.mu.Lock()
	defer x.mu.Unlock()
	slot, ok := x.slotOf(id)
	if !ok {
		return false
	}
	if x.seg != nil {
		x.ovRemove(slot)
		return true
	}
	x.remove(slot)
	x.maybeCompact()
	return true
}

func (x *Index) put(doc Doc) {
	if slot, ok := x.ids[doc.ID]; ok {
		x.remove(slot)
	}
	slot := uint32(len(x.docs))
	info := docInfo{id: doc.ID, alive: true}
	for f, text := range [nFields]string{doc.Name, doc.Description, doc.Body} {
		x.tok.run(text, func(tok []byte) {
			id, ok := x.terms[string(tok)]
			if !ok {
				id = uint32(len(x.postings))
				term := string(tok)
				x.terms[term] = id
				x.text = append(x.text, term)
				x.postings = append(x.postings, nil)
				x.df = append(x.df, 0)
				x.numeric = append(x.numeric, isNumeric(tok))
				x.tf = append(x.tf, [nFields]uint8{})
			}
			c := &x.tf[id]
			if *c == ([nFields]uint8{}) {
				x.touched = append(x.touched, id)
			}
			if c[f] < math.MaxUint8 {
				c[f]++
			}
			info.len[f]++
		})
	}
	info.terms = make([]uint32, len(x.touched))
	copy(info.terms, x.touched)
	for _, id := range x.touched {
		x.postings[id] = append(x.postings[id], posting{doc: slot, tf: x.tf[id]})
		x.df[id]++
		x.tf[id] = [nFields]uint8{}
	}
	x.touched = x.touched[:0]
	for f := range nFields {
		x.totalLen[f] += int64(info.len[f])
	}
	x.docs = append(x.docs, info)
	x.ids[doc.ID] = slot
	x.maybeCompact()
}

// remove turns the document in slot into a tombstone. Its postings stay
// until the next compaction; searches skip them.
func (x *Index) remove(slot uint32) {
	d := &x.docs[slot]
	for _, id := range d.terms {
		x.df[id]--
	}
	for f := range nFields {
		x.totalLen[f] -= int64(d.len[f])
	}
	delete(x.ids, d.id)
	*d = docInfo{}
	x.dead++
}

// maybeCompact rewrites the postings without tombstones once they make up
// a quarter of the slots, so updates cost amortised time proportional to
// the document's size and searches never wade through much garbage.
func (x *Index) maybeCompact() {
	if x.dead < 64 || x.dead*4 < len(x.docs) {
		return
	}
	const gone = ^uint32(0)
	slots := make([]uint32, len(x.docs)) // old slot → new slot, or gone
	live := x.docs[:0]
	for i, d := range x.docs {
		if !d.alive {
			slots[i] = gone
			continue
		}
		slots[i] = uint32(len(live))
		x.ids[d.id] = slots[i]
		live = append(live, d)
	}
	clear(x.docs[len(live):])
	x.docs = live
	x.dead = 0

	// Renumber terms too, dropping those no live document uses, so a
	// long-lived index does not keep every word it ever saw.
	ids := make([]uint32, len(x.postings))
	postings := make([][]posting, 0, len(x.terms))
	df := make([]int32, 0, len(x.terms))
	numeric := make([]bool, 0, len(x.terms))
	text := make([]string, 0, len(x.terms))
	for term, old := range x.terms {
		if x.df[old] == 0 {
			delete(x.terms, term)
			continue
		}
		ids[old] = uint32(len(postings))
		x.terms[term] = ids[old]
		ps := x.postings[old][:0]
		for _, p := range x.postings[old] {
			if slots[p.doc] != gone {
				p.doc = slots[p.doc]
				ps = append(ps, p)
			}
		}
		postings = append(postings, ps)
		df = append(df, x.df[old])
		numeric = append(numeric, x.numeric[old])
		text = append(text, term)
	}
	for i := range x.docs {
		for j, t := range x.docs[i].terms {
			x.docs[i].terms[j] = ids[t]
		}
	}
	x.postings, x.df, x.numeric, x.text = postings, df, numeric, text
	x.tf = make([][nFields]uint8, len(postings))
}

// isNumeric reports whether a term is a number, date or version: digits
// and joiners only.
func isNumeric(tok []byte) bool {
	for _, c := range tok {
		if (c < '0' || c > '9') && c != '.' && c != '-' && c != '_' && c != '/' {
			return false
		}
	}
	return true
}
