package lexical

import (
	"cmp"
	"math"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/memdir/memdir/internal/framed"
	"github.com/memdir/memdir/internal/prefault"
)

// searchScratch holds per-search buffers, pooled so that a search allocates
// little beyond its result.
type searchScratch struct {
	tok     tokenizer
	acc     []docAcc // by slot
	touched []uint32
	query   []queryTerm
	heap    []scored
	expand  map[uint32]float64 // by term: the bound of its feedback weight
	pairs   []feedbackPair
	edit    []byte // a variant of a term being corrected
}

// feedbackPair is a candidate feedback term in one of the leading
// documents (its place among them).
type feedbackPair struct {
	id   uint32
	lead int32
}

// docAcc is what a search adds up for one document. Kept together, the
// sums of a posting's document are one cache line, not five arrays read
// at random: at 100,000 documents that was most of the search's misses.
type docAcc struct {
	score float64 // the ranking score
	orig  float64 // the part of score due to the query itself
	cov   float64 // IDF weight of the query terms present
	match uint16  // how many of the query's own terms it holds
	seen  bool    // touched by this search
}

// denseQuery reports whether the query's terms hold enough postings, n
// documents in all, to touch nearly every page of a fresh accumulator:
// with d postings spread over n slots, a page of p slots is left
// untouched with a chance of about exp(-d·p/n), under 2% once d ≥ n/32
// (p is 128 for 4 KiB pages). Then the accumulator's pages are better
// mapped at once (prefault.Write) than faulted one by one: accumulate reads a
// slot before writing it, so each fresh page costs two faults, a read
// that maps the shared zero page and a write that copies it. At 100,000
// documents that was 1,600 faults, 40% of a warm hook's, and about 4 ms.
func denseQuery(query []queryTerm, n int) bool {
	d := 0
	for _, q := range query {
		d += int(max(q.df, 0))
	}
	return d >= n/32
}

// queryTerm is a term of the query, or one added by feedback.
type queryTerm struct {
	text   string
	id     uint32
	df     int32
	idf    float64
	weight float64 // repeats in the query, or the feedback weight
	added  bool    // added by feedback, not typed by the user
	// mended is set on a term that stands for one no document holds
	// (see correct): it scores, but counts in Norm's and Coverage's
	// denominators as the term typed, absent from every document, and in
	// no numerator of Coverage; secondHalf is set on the second of the
	// two terms a split word is mended into, which the first counts for.
	mended, secondHalf bool
}

type scored struct {
	slot  uint32
	score float64
}

// Search returns the k documents that best match query, best first. k <= 0
// returns every document that contains at least one query term (or, with
// feedback, one expansion term). Ties are broken by ID so results are
// deterministic.
func (x *Index) Search(query string, k int) []Hit {
	x.mu.RLock()
	defer x.mu.RUnlock()
	if x.numDocs() == 0 {
		return nil
	}
	s, _ := x.scratch.Get().(*searchScratch)
	if s == nil {
		s = &searchScratch{expand: make(map[uint32]float64)}
	}
	defer x.scratch.Put(s)

	x.parseQuery(s, query)
	if len(s.query) == 0 {
		return nil
	}
	var maxScore float64
	for _, q := range s.query {
		w := q.weight
		if q.df == 0 && isCJKTerm(q.text) {
			// Overlapping bigrams of a sentence make many pairs that are
			// not words ("的压", "果在"); one absent from every document is
			// far more likely such an artefact than an unknown concept.
			w *= unseenCJKWeight
		}
		if q.mended {
			if !q.secondHalf {
				maxScore += idf(float64(x.numDocs()), 1) * w
			}
			continue
		}
		maxScore += q.idf * w
	}
	if n := x.slots(); cap(s.acc) < n {
		s.acc = make([]docAcc, n)
		if denseQuery(s.query, n) {
			prefault.Write(framed.Raw(s.acc))
		}
	} else {
		s.acc = s.acc[:n]
	}
	defer s.reset()

	sc := x.newScorer()
	x.accumulate(s, s.query, &sc)
	// Feedback appends its terms to the query and changes none of those
	// before: adding only theirs to the sums gives, addition for
	// addition, what accumulating the whole query again would.
	if n := len(s.query); x.opts.Feedback > 0 && len(s.touched) > 0 && x.addFeedbackTerms(s, &sc) {
		x.accumulate(s, s.query[n:], &sc)
	}
	depth := k // k <= 0: every hit
	if k > 0 {
		depth = max(k, coordinationDepth)
	}
	top := x.selectTop(s, depth)
	x.coordinate(s, top)
	if k > 0 && len(top) > k {
		top = top[:k]
	}
	hits := make([]Hit, len(top))
	// One array backs every hit's Terms.
	var terms []string
	for i, t := range top {
		start := len(terms)
		terms = x.appendMatched(terms, s.query, t.slot)
		hits[i] = Hit{
			ID:       x.docID(t.slot),
			Score:    t.score,
			Norm:     s.acc[t.slot].orig / maxScore,
			Coverage: s.acc[t.slot].cov / maxScore,
		}
		if len(terms) > start {
			hits[i].Terms = terms[start:len(terms):len(terms)]
		}
	}
	return hits
}

// unseenCJKWeight is how much a CJK bigram found in no document counts in
// the most a document could score (see Norm).
const unseenCJKWeight = 0.1

// isCJKTerm reports whether a term is a CJK bigram or character.
func isCJKTerm(t string) bool {
	r, _ := utf8.DecodeRuneInString(t)
	return isCJK(r)
}

// parseQuery fills s.query with the distinct terms of query, counting
// repeats, those no document holds mended where they can be (see
// correct).
func (x *Index) parseQuery(s *searchScratch, query string) {
	n := float64(x.numDocs())
	s.query = s.query[:0]
	s.tok.run(query, func(tok []byte) {
		for i := range s.query {
			if s.query[i].text == string(tok) {
				s.query[i].weight++
				return
			}
		}
		q := queryTerm{weight: 1}
		if id, ok := x.lookup(string(tok)); ok {
			q.text, q.id, q.df = x.termText(id), id, x.docFreq(id)
		} else {
			q.text = string(tok)
		}
		// A term no document holds weighs as one a single document holds:
		// see Hit.Coverage and Answer.
		q.idf = idf(n, max(float64(q.df), 1))
		s.query = append(s.query, q)
	})
	x.correct(s)
	weighLightVerbs(s)
	if x.opts.GlossaryWeight <= 0 {
		return
	}
	// An English query's translations are Chinese terms: where no
	// document holds a CJK term they cannot count, so the glossary (a
	// millisecond to build) is not loaded for them.
	if !hasCJK(query) && !x.mayHoldCJK() {
		return
	}
	// Translations join as the user's own terms, at a lower weight, and
	// only when some document holds them.
	for _, t := range loadGlossary().translations(query) {
		id, ok := x.lookup(t)
		if !ok || x.docFreq(id) == 0 {
			continue
		}
		dup := false
		for i := range s.query {
			if s.query[i].text == t {
				dup = true
				break
			}
		}
		if !dup {
			s.query = append(s.query, queryTerm{text: x.termText(id), id: id, df: x.docFreq(id), idf: idf(n, float64(x.docFreq(id))), weight: x.opts.GlossaryWeight})
		}
	}
}

func (s *searchScratch) reset() {
	for _, slot := range s.touched {
		s.acc[slot] = docAcc{}
	}
	s.touched = s.touched[:0]
}

// accumulate adds the contribution of every term of query (s.query, or
// the terms feedback appended to it) to the documents that contain it.
// For term t and document d the contribution is
//
//	weight(t) · idf(t) · tf'(t,d) / (k1 + tf'(t,d))
//	tf'(t,d) = Σ_field w_field · tf(t,d,field) / ((1-b) + b · len(d,field) / avglen(field))
//
// that is BM25F: field frequencies are weighted and length-normalised per
// field, summed, and only then saturated, so a term repeated across fields
// does not count twice.
func (x *Index) accumulate(s *searchScratch, query []queryTerm, sc *scorer) {
	// The segment's documents (read in place) and those in x.docs, as the
	// accessors after segDocs give them, without a call per posting.
	var segDocs []segDoc
	var dead []bool
	if x.seg != nil {
		segDocs, dead = x.seg.docs, x.seg.dead
	}
	nb := uint32(len(segDocs))
	for _, q := range query {
		if q.df <= 0 {
			continue
		}
		c := q.weight * q.idf
		for _, p := range x.postingsOf(q.id) {
			var l *[nFields]uint32
			if p.doc < nb {
				if dead != nil && dead[p.doc] {
					continue
				}
				l = &segDocs[p.doc].Len
			} else {
				d := &x.docs[p.doc-nb]
				if !d.alive {
					continue
				}
				l = &d.len
			}
			a := &s.acc[p.doc]
			if !a.seen {
				a.seen = true
				s.touched = append(s.touched, p.doc)
			}
			v := c * sc.saturate(p, l)
			a.score += v
			if !q.added {
				a.orig += v
				if !q.mended {
					a.cov += c
				}
				a.match++
			}
		}
	}
}

// coordinationDepth is how many of the leading hits coordination re-orders:
// it re-orders the head of the ranking and never changes which documents
// reach it, so the shortlist a model is shown keeps what BM25 found.
const coordinationDepth = 30

// coordinate scales the score of each of top's leading coordinationDepth
// hits by the share of the query's own terms (those some document holds)
// it contains, raised to the power Options.Coordination, and re-sorts
// them: BM25 adds terms up, so a short document holding one rare word the
// question only uses in passing ("how long", "the third") can outscore one
// holding the two words the question is about; coordination favours the
// documents that hold more of the question.
func (x *Index) coordinate(s *searchScratch, top []scored) {
	c := x.opts.Coordination
	if c <= 0 {
		return
	}
	n := 0
	for _, q := range s.query {
		if !q.added && q.df > 0 {
			n++
		}
	}
	if n <= 1 {
		return
	}
	head := top[:min(len(top), coordinationDepth)]
	for i := range head {
		if m := s.acc[head[i].slot].match; int(m) < n {
			head[i].score *= math.Pow(float64(m)/float64(n), c)
		}
	}
	sort.SliceStable(head, func(i, j int) bool { return x.ranksBelow(head[j], head[i]) })
}

// ranksBelow reports whether a ranks below b: a lower score, or the same
// score and a later ID.
func (x *Index) ranksBelow(a, b scored) bool {
	if a.score != b.score {
		return a.score < b.score
	}
	return x.docID(a.slot) > x.docID(b.slot)
}

// scorer holds what BM25F needs per posting, computed once per search.
type scorer struct {
	k1     float64
	weight [nFields]float64 // field weights
	base   float64          // 1 - b
	perLen [nFields]float64 // b / avglen(field)
}

func (x *Index) newScorer() scorer {
	o := &x.opts
	sc := scorer{
		k1:     o.K1,
		weight: [nFields]float64{o.NameWeight, o.DescriptionWeight, o.BodyWeight},
		base:   1 - o.B,
	}
	for f := range nFields {
		if x.totalLen[f] > 0 {
			sc.perLen[f] = o.B * float64(x.numDocs()) / float64(x.totalLen[f])
		}
	}
	return sc
}

// saturate returns tf'/(k1+tf') for one posting, in [0, 1).
func (sc *scorer) saturate(p posting, l *[nFields]uint32) float64 {
	var tf float64
	for f := range nFields {
		if p.tf[f] != 0 {
			tf += sc.weight[f] * float64(p.tf[f]) / (sc.base + sc.perLen[f]*float64(l[f]))
		}
	}
	return tf / (sc.k1 + tf)
}

// addFeedbackTerms expands the query with pseudo-relevance feedback: the
// terms that weigh most in the best few documents of the first pass, each
// scored by Σ over those documents of (document score / best score) ·
// idf · saturated tf. The best ExpandTerms of them join the query with
// weights up to ExpandWeight. It reports whether any term was added.
//
// Feedback is what lets a query reach memories that share no word with it
// but share many with the memories it does match: a Chinese question that
// hits a memory written half in English, or a symptom described in other
// words than the rule that explains it.
func (x *Index) addFeedbackTerms(s *searchScratch, sc *scorer) bool {
	o := &x.opts
	top := x.selectTop(s, o.Feedback)
	if len(top) == 0 || top[0].score <= 0 {
		return false
	}
	n := float64(x.numDocs())
	leads, terms := x.feedbackCandidates(s, top, n)
	cands, weighed := x.weighFeedback(leads, terms, max(o.ExpandTerms, 0), n, sc)
	if !weighed {
		return false
	}
	for _, c := range cands {
		s.query = append(s.query, queryTerm{
			text:   x.termText(c.id),
			id:     c.id,
			df:     x.docFreq(c.id),
			idf:    idf(n, float64(x.docFreq(c.id))),
			weight: o.ExpandWeight * c.w / cands[0].w,
			added:  true,
		})
	}
	return true
}

// A feedback term's weight is a sum, over the leading documents that hold
// it, of dw · idf · saturated tf, and a saturated tf is below 1: Σ dw · idf
// bounds the weight. Weighing a term needs its posting in each of those
// documents, which checks its whole posting list the first time (most of
// a warm search's checks at 100,000 documents). Terms are weighed in the
// order of their bounds, and once ExpandTerms are weighed, a term whose
// bound is below the last of them cannot take its place: the common
// terms, with the longest lists and the lowest idf, are mostly never
// weighed. The terms chosen, and their weights, are the same as weighing
// every term.

// feedbackLead is one of the leading documents feedback draws terms from.
type feedbackLead struct {
	slot uint32
	dw   float64 // its score over the best one's
	l    *[nFields]uint32
}

// feedbackCand is a candidate feedback term: its bound, its weight once
// weighed, and where it occurs among the leading documents.
type feedbackCand struct {
	id       uint32
	w, bound float64
	pairs    []feedbackPair
}

// feedbackCandidates returns the leading documents top and the candidate
// terms they hold, highest bound first; s.expand keeps the bounds.
func (x *Index) feedbackCandidates(s *searchScratch, top []scored, n float64) ([]feedbackLead, []feedbackCand) {
	clear(s.expand)
	leads := make([]feedbackLead, len(top))
	pairs := s.pairs[:0]
	for i, t := range top {
		leads[i] = feedbackLead{t.slot, t.score / top[0].score, x.docLen(t.slot)}
		for _, id := range x.docTermIDs(t.slot) {
			if x.docFreq(id) < 2 || x.numericTerm(id) || s.inQuery(id) {
				// A term in only this document cannot lead anywhere new,
				// and dates and version numbers say little about topic.
				continue
			}
			s.expand[id] += leads[i].dw * idf(n, float64(x.docFreq(id)))
			pairs = append(pairs, feedbackPair{id, int32(i)})
		}
	}
	s.pairs = pairs
	// Each term's documents together, in the leading order.
	slices.SortStableFunc(pairs, func(a, b feedbackPair) int { return cmp.Compare(a.id, b.id) })
	terms := make([]feedbackCand, 0, len(s.expand))
	for i := 0; i < len(pairs); {
		j := i + 1
		for j < len(pairs) && pairs[j].id == pairs[i].id {
			j++
		}
		terms = append(terms, feedbackCand{id: pairs[i].id, bound: s.expand[pairs[i].id], pairs: pairs[i:j]})
		i = j
	}
	slices.SortFunc(terms, func(a, b feedbackCand) int { return cmp.Compare(b.bound, a.bound) })
	return leads, terms
}

// weighFeedback weighs terms (highest bound first) until no bound can
// reach the k'th weight, and returns the k heaviest, and whether any term
// had a posting to weigh.
func (x *Index) weighFeedback(leads []feedbackLead, terms []feedbackCand, k int, n float64, sc *scorer) (cands []feedbackCand, weighed bool) {
	// Heavier first, then by text (term ids depend on the order documents
	// arrived in; the text does not, so an updated index expands exactly
	// like a rebuilt one).
	byWeight := func(a, b feedbackCand) int {
		if c := cmp.Compare(b.w, a.w); c != 0 {
			return c
		}
		return strings.Compare(x.termText(a.id), x.termText(b.id))
	}
	for _, c := range terms {
		// The margin covers rounding in the sums: a weight is well below
		// its bound (a saturated tf under 1 by far more than that).
		if k > 0 && len(cands) >= k && c.bound*(1+1e-9) < cands[len(cands)-1].w || k == 0 && weighed {
			break
		}
		found := false
		for _, pr := range c.pairs {
			ld := &leads[pr.lead]
			p, ok := x.posting(c.id, ld.slot)
			if !ok || !plausible(p, ld.l) {
				// The document's term list, checked, holds the term: its
				// posting is missing or impossible only in a damaged list,
				// which a lookup does not sum (see posting).
				x.damaged.Store(true)
				continue
			}
			found = true
			c.w += ld.dw * idf(n, float64(x.docFreq(c.id))) * sc.saturate(p, ld.l)
		}
		if !found {
			continue
		}
		weighed = true
		if i, _ := slices.BinarySearchFunc(cands, c, byWeight); i < k {
			cands = slices.Insert(cands, i, c)
			cands = cands[:min(len(cands), k)]
		}
	}
	return cands, weighed
}

// inQuery reports whether term id is one of the query's, found in the index.
func (s *searchScratch) inQuery(id uint32) bool {
	for _, q := range s.query {
		if q.df > 0 && q.id == id {
			return true
		}
	}
	return false
}

// posting finds the posting of term id for slot. Postings are ordered by
// slot, so this is a binary search in the segment's list and then in what
// was put since (slots past the segment's), neither merged nor copied.
//
// A segment's list is only bounds-checked here, not summed (see
// segPostingsUnchecked): a lookup reads a few of its entries, and
// feedback looks up many terms, common ones among them, for a handful of
// documents. Summing each whole list first was about a quarter of the
// search's samples in a profile of a warm recall at 20,000 memories, most
// of it the first touch of pages no lookup reads. A list the search then
// scores is summed in full by postingsOf, as before.
func (x *Index) posting(id, slot uint32) (posting, bool) {
	if x.seg == nil {
		return findPosting(x.postings[id], slot)
	}
	if p, ok := findPosting(x.segPostingsUnchecked(id), slot); ok {
		return p, true
	}
	if x.ov != nil {
		return findPosting(x.ov.post[id], slot)
	}
	return posting{}, false
}

// plausible reports whether p could be a posting of a document of field
// lengths l: a term occurs in some field, and no more often than the
// field has terms (frequencies saturate at 255).
func plausible(p posting, l *[nFields]uint32) bool {
	if p.tf == ([nFields]uint8{}) {
		return false
	}
	for f, n := range p.tf {
		if uint32(n) > l[f] {
			return false
		}
	}
	return true
}

// findPosting finds slot's posting in ps, ordered by slot. A damaged list
// out of order gives a wrong answer or none, never a fault.
func findPosting(ps []posting, slot uint32) (posting, bool) {
	i := sort.Search(len(ps), func(i int) bool { return ps[i].doc >= slot })
	if i < len(ps) && ps[i].doc == slot {
		return ps[i], true
	}
	return posting{}, false
}

// selectTop returns the k best touched documents, best first, using a
// min-heap of size k so the cost is O(touched · log k).
func (x *Index) selectTop(s *searchScratch, k int) []scored {
	if k <= 0 || k > len(s.touched) {
		k = len(s.touched)
	}
	less := x.ranksBelow
	h := s.heap[:0]
	for _, slot := range s.touched {
		c := scored{slot, s.acc[slot].score}
		if len(h) < k {
			h = append(h, c)
			up(h, len(h)-1, less)
			continue
		}
		// A lower score than the least kept never ranks above it: most
		// documents are passed over without comparing IDs.
		if c.score >= h[0].score && less(h[0], c) {
			h[0] = c
			down(h, 0, less)
		}
	}
	s.heap = h
	out := make([]scored, len(h))
	copy(out, h)
	sort.Slice(out, func(i, j int) bool { return less(out[j], out[i]) })
	return out
}

func up(h []scored, i int, less func(a, b scored) bool) {
	for i > 0 {
		p := (i - 1) / 2
		if !less(h[i], h[p]) {
			return
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
}

func down(h []scored, i int, less func(a, b scored) bool) {
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		m := l
		if r := l + 1; r < len(h) && less(h[r], h[l]) {
			m = r
		}
		if !less(h[m], h[i]) {
			return
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
}

// appendMatched appends the query's own terms that the document in slot
// contains, in query order.
func (x *Index) appendMatched(out []string, query []queryTerm, slot uint32) []string {
	for _, q := range query {
		if q.added || q.df <= 0 {
			continue
		}
		if _, ok := x.posting(q.id, slot); ok {
			out = append(out, q.text)
		}
	}
	return out
}

// idf is the BM25 inverse document frequency in its non-negative form,
// ln(1 + (N - df + 0.5) / (df + 0.5)).
func idf(n, df float64) float64 {
	return math.Log(1 + (n-df+0.5)/(df+0.5))
}
