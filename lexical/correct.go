package lexical

// minCorrectLen is the shortest query term that correct tries to mend:
// one edit away from a shorter word there are too many others ("kind" is
// one letter from "kid", "mind", "find").
const minCorrectLen = 5

// maxCorrect bounds the terms one query tries to mend: a question has a
// typo or two, while a pasted log or stack trace can hold hundreds of
// words no memory uses, and each try looks up some 50 variants per letter
// (400 unknown words cost a hook at 100,000 memories 31 ms).
const maxCorrect = 4

// correct mends the query's terms that no document holds, in place, the
// way a reader would: a misspelt word as the word one edit away that the
// documents use ("fesitval" as "festival", "seperate" as "separat"), or, when
// there is none, a word written as one that the documents write as two
// ("ratelimiter" as "rate" and "limiter"). Only a term of plain ASCII letters at
// least minCorrectLen long is mended, its first letter kept, and only into
// terms that some
// document holds and the query does not hold already; a term it cannot
// mend stays as it is, absent from every document (see Hit.Coverage).
//
// A term found in no document adds nothing to any score, so correcting it
// can only let the query reach documents it missed; the edited variants
// are stemmed like any word, so "eduction" meets "education" through its
// stem. A mend is a guess: it scores, but Coverage, which judges whether
// the index answers the query at all, still counts the term as typed and
// absent (see queryTerm.mended).
func (x *Index) correct(s *searchScratch) {
	n := float64(x.numDocs())
	tries := 0
	for i, nq := 0, len(s.query); i < nq && tries < maxCorrect; i++ {
		q := &s.query[i]
		if q.df > 0 || len(q.text) < minCorrectLen || !lowerASCII(q.text) {
			continue
		}
		tries++
		if id, ok := x.nearestTerm(s, q.text); ok {
			q.text, q.id, q.df = x.termText(id), id, x.docFreq(id)
			q.idf, q.mended = idf(n, float64(q.df)), true
			continue
		}
		a, b, ok := x.splitTerm(s, q.text)
		if !ok {
			continue
		}
		w := q.weight
		q.text, q.id, q.df = x.termText(a), a, x.docFreq(a)
		q.idf, q.mended = idf(n, float64(q.df)), true
		// The typed word counts once in the denominators, by the first half.
		s.query = append(s.query, queryTerm{text: x.termText(b), id: b, df: x.docFreq(b), idf: idf(n, float64(x.docFreq(b))), weight: w, mended: true, secondHalf: true})
	}
}

// nearestTerm returns the term one edit (a letter deleted, inserted or
// replaced, or two neighbours swapped) from w, stemmed, that the most
// documents hold and the query does not, the first in byte order of those
// as frequent. The first letter is kept: misspellings seldom start wrong,
// and a word absent from the index is more often a real one ("right")
// than a typo of its neighbour with another first letter ("light").
func (x *Index) nearestTerm(s *searchScratch, w string) (uint32, bool) {
	var best uint32
	var bestDF int32
	try := func(v []byte) {
		id, ok := x.lookup(string(stem(v)))
		if !ok {
			return
		}
		df := x.docFreq(id)
		if df == 0 || df < bestDF || s.inQuery(id) {
			return
		}
		if df > bestDF || x.termText(id) < x.termText(best) {
			best, bestDF = id, df
		}
	}
	b := s.edit[:0]
	for j := 1; j < len(w); j++ { // deletions
		b = append(append(b[:0], w[:j]...), w[j+1:]...)
		try(b)
	}
	for j := 1; j+1 < len(w); j++ { // swaps
		b = append(b[:0], w...)
		b[j], b[j+1] = b[j+1], b[j]
		try(b)
	}
	for j := 1; j < len(w); j++ { // replacements
		for c := byte('a'); c <= 'z'; c++ {
			if c != w[j] {
				b = append(b[:0], w...)
				b[j] = c
				try(b)
			}
		}
	}
	for j := 1; j <= len(w); j++ { // insertions
		for c := byte('a'); c <= 'z'; c++ {
			b = append(append(append(b[:0], w[:j]...), c), w[j:]...)
			try(b)
		}
	}
	s.edit = b
	return best, bestDF > 0
}

// splitTerm returns the two terms that w is the concatenation of, each
// of at least three letters and stemmed, both held by some document and
// not by the query; of several splits, the one whose rarer half is the
// most frequent, the first of those.
func (x *Index) splitTerm(s *searchScratch, w string) (a, b uint32, ok bool) {
	var bestDF int32
	for j := 3; j <= len(w)-3; j++ {
		id1, ok1 := x.lookup(string(stem(append(s.edit[:0], w[:j]...))))
		if !ok1 || x.docFreq(id1) == 0 || s.inQuery(id1) {
			continue
		}
		id2, ok2 := x.lookup(string(stem(append(s.edit[:0], w[j:]...))))
		if !ok2 || x.docFreq(id2) == 0 || id2 == id1 || s.inQuery(id2) {
			continue
		}
		if df := min(x.docFreq(id1), x.docFreq(id2)); df > bestDF {
			a, b, bestDF, ok = id1, id2, df, true
		}
	}
	return a, b, ok
}

func lowerASCII(w string) bool {
	for i := 0; i < len(w); i++ {
		if c := w[i]; c < 'a' || c > 'z' {
			return false
		}
	}
	return true
}
