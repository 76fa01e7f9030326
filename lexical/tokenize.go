package lexical

import (
	"unicode"
	"unicode/utf8"
)

// maxTokenBytes bounds a single term. Longer runs (base64 blobs, minified
// code, long URLs) are still split into their parts; only the whole is
// dropped, so one pathological line cannot bloat the vocabulary.
const maxTokenBytes = 64

// Tokenize returns the search terms of s in the order they occur, with
// repeats. The rules are documented in the package comment; the index applies
// exactly these rules to documents and to queries.
func Tokenize(s string) []string {
	var out []string
	var t tokenizer
	t.run(s, func(tok []byte) { out = append(out, string(tok)) })
	return out
}

// tokenizer splits text into terms. Its buffers are reused between calls, so
// a long-lived tokenizer allocates only when a longer word than any before
// comes along. It is not safe for concurrent use.
type tokenizer struct {
	buf   []byte // the current compound, lowercased, apostrophes dropped
	stem  []byte // scratch for stemming one part
	runs  []int  // end offsets in buf of the joiner-separated runs
	parts []part // case and digit sub-parts of the current compound
	cjk   []int  // start offsets in the text of the current CJK run's runes
	count []int  // number of parts in each run
	// slowOnly turns off the plain-word path (see plainWord), for the
	// tests that compare the two.
	slowOnly bool
	// plain, when set, is given each plain word (see plainWord) and each
	// letter part of a compound of two letters or more, lowercased,
	// instead of its term being emitted: the caller finds the term
	// itself, with plainTerm, and may remember it (Builder does).
	plain func(word []byte)
}

// part is buf[start:end], a sub-part of run number run.
type part struct {
	start, end int
	run        int
	digits     bool
}

type class uint8

const (
	classSep  class = iota
	classWord       // letters, digits and combining marks
	classCJK        // scripts written without spaces, indexed as bigrams
)

func classify(r rune) class {
	if r < utf8.RuneSelf {
		if 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' {
			return classWord
		}
		return classSep
	}
	if isCJK(r) {
		return classCJK
	}
	if unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r) {
		return classWord
	}
	return classSep
}

func isCJK(r rune) bool {
	if r < 0x1100 {
		return false
	}
	if r == 0x30FC { // katakana prolonged sound mark, whose script is Common
		return true
	}
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul)
}

// isJoiner reports whether r joins two words into one identifier, as in
// snake_case, kebab-case, pkg.Func, a/b/c and 2026-12-05.
func isJoiner(r rune) bool { return r == '_' || r == '-' || r == '.' || r == '/' }

// isApostrophe reports whether r is dropped inside a word, so that
// "carrier's" and "don't" stay one word.
func isApostrophe(r rune) bool { return r == '\'' || r == '\u2019' }

// decode returns the rune at s[i:] and its size, mapping full-width ASCII
// forms (common in CJK text) to ASCII.
func decode(s string, i int) (rune, int) {
	if c := s[i]; c < utf8.RuneSelf {
		return rune(c), 1
	}
	r, n := utf8.DecodeRuneInString(s[i:])
	if r >= 0xFF01 && r <= 0xFF5E {
		r -= 0xFEE0
	}
	return r, n
}

// run calls emit with every term of s. The slice passed to emit is only
// valid during the call.
func (t *tokenizer) run(s string, emit func([]byte)) {
	for i := 0; i < len(s); {
		r, n := decode(s, i)
		switch classify(r) {
		case classWord:
			i = t.compound(s, i, emit)
		case classCJK:
			i = t.cjkRun(s, i, emit)
		default:
			i += n
		}
	}
}

// Letter kinds for splitting camelCase, PascalCase and letter/digit runs.
const (
	kindNone = iota
	kindLower
	kindUpper
	kindDigit
	kindOther // a letter without case
)

func kindOf(r rune) int {
	switch {
	case 'a' <= r && r <= 'z':
		return kindLower
	case 'A' <= r && r <= 'Z':
		return kindUpper
	case '0' <= r && r <= '9':
		return kindDigit
	case r < utf8.RuneSelf:
		return kindOther
	case unicode.IsUpper(r):
		return kindUpper
	case unicode.IsLower(r):
		return kindLower
	case unicode.IsDigit(r):
		return kindDigit
	case unicode.IsMark(r):
		return kindNone // a mark never starts a part
	}
	return kindOther
}

// compound consumes the word or identifier starting at s[i], emits its
// terms and returns the offset just past it.
func (t *tokenizer) compound(s string, i int, emit func([]byte)) int {
	if !t.slowOnly {
		if end, ok := t.plainWord(s, i, emit); ok {
			return end
		}
	}
	t.buf, t.runs, t.parts = t.buf[:0], t.runs[:0], t.parts[:0]
	partStart := 0
	prevStart := 0 // offset in buf of the previous rune
	prev, prev2 := kindNone, kindNone
	endPart := func(end int) {
		if end > partStart {
			t.parts = append(t.parts, part{start: partStart, end: end, run: len(t.runs), digits: prev == kindDigit})
		}
		partStart = end
	}
	for i < len(s) {
		r, n := decode(s, i)
		if classify(r) != classWord {
			// A joiner or apostrophe continues the compound only when a
			// word rune follows it directly.
			if !isJoiner(r) && !isApostrophe(r) || i+n >= len(s) {
				break
			}
			if r2, _ := decode(s, i+n); classify(r2) != classWord {
				break
			}
			i += n
			if isJoiner(r) {
				endPart(len(t.buf))
				t.runs = append(t.runs, len(t.buf))
				t.buf = append(t.buf, byte(r))
				partStart = len(t.buf)
				prev, prev2 = kindNone, kindNone
			}
			continue
		}
		k := kindOf(r)
		if k != kindNone && prev != kindNone {
			switch {
			case (k == kindDigit) != (prev == kindDigit):
				endPart(len(t.buf))
			case k == kindUpper && (prev == kindLower || prev == kindOther):
				endPart(len(t.buf))
			case k == kindLower && prev == kindUpper && prev2 == kindUpper && !pluralS(s, i, r, n):
				// "HTTPServer": the last capital starts the next part,
				// but "APIs" and "ETAs" are plural acronyms.
				endPart(prevStart)
			}
		}
		prevStart = len(t.buf)
		t.buf = appendLower(t.buf, r)
		if k != kindNone {
			prev2, prev = prev, k
		}
		i += n
	}
	endPart(len(t.buf))
	t.runs = append(t.runs, len(t.buf))
	t.emitCompound(emit)
	return i
}

// plainWord handles the commonest word of prose, ASCII lowercase letters
// after at most one capital, that neither a capital, a digit, a joiner, an
// apostrophe nor a non-ASCII rune continues: one part in one run, so its
// only term is the part itself, stemmed, unless it is a single letter, a
// stopword or too long, exactly as compound would emit it
// (TestPlainWordsAsCompounds). It reports false, having emitted nothing,
// for any other word. Most of a first index build is tokenizing, and most
// words are plain.
func (t *tokenizer) plainWord(s string, i int, emit func([]byte)) (int, bool) {
	j := i
	if c := s[j]; 'A' <= c && c <= 'Z' {
		j++
	}
	k := j
	for k < len(s) && 'a' <= s[k] && s[k] <= 'z' {
		k++
	}
	if k == i {
		return i, false // a digit, or a non-ASCII letter
	}
	if k < len(s) {
		if c := s[k]; c >= utf8.RuneSelf || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || isJoiner(rune(c)) || isApostrophe(rune(c)) {
			return i, false
		}
	}
	if k-i == 1 || k-i > maxTokenBytes {
		return k, true
	}
	t.buf = append(t.buf[:0], s[i:k]...)
	if j > i {
		t.buf[0] += 'a' - 'A'
	}
	if t.plain != nil {
		t.plain(t.buf)
	} else if term := t.plainTerm(t.buf); term != nil {
		emit(term)
	}
	return k, true
}

// plainTerm returns the term of the plain word or compound part w
// (lowercased, two letters or more), valid until the next call, or nil
// for a stopword.
func (t *tokenizer) plainTerm(w []byte) []byte {
	if isStopword(w) {
		return nil
	}
	t.stem = stem(append(t.stem[:0], w...))
	return t.stem
}

// emitCompound emits each sub-part (stemmed, without stopwords and
// single letters), each run of more than one part as a whole, and the whole
// compound when it has more than one run.
func (t *tokenizer) emitCompound(emit func([]byte)) {
	t.count = t.count[:0]
	for _, p := range t.parts {
		for len(t.count) <= p.run {
			t.count = append(t.count, 0)
		}
		t.count[p.run]++
		w := t.buf[p.start:p.end]
		if p.end-p.start > maxTokenBytes {
			continue
		}
		if p.digits {
			emit(w)
			continue
		}
		if utf8.RuneCount(w) == 1 {
			continue
		}
		if t.plain != nil {
			t.plain(w)
		} else if term := t.plainTerm(w); term != nil {
			emit(term)
		}
	}
	start := 0
	for r, end := range t.runs {
		if r < len(t.count) && t.count[r] > 1 && end-start <= maxTokenBytes {
			emit(t.buf[start:end])
		}
		start = end + 1
	}
	if len(t.runs) > 1 && len(t.buf) <= maxTokenBytes {
		emit(t.buf)
	}
}

// cjkRun consumes the run of CJK characters starting at s[i] and emits its
// overlapping bigrams, or the character alone for a one-character run.
func (t *tokenizer) cjkRun(s string, i int, emit func([]byte)) int {
	t.cjk = t.cjk[:0]
	for i < len(s) {
		r, n := decode(s, i)
		if classify(r) != classCJK {
			break
		}
		t.cjk = append(t.cjk, i)
		i += n
	}
	t.cjk = append(t.cjk, i)
	if len(t.cjk) == 2 {
		t.buf = append(t.buf[:0], s[t.cjk[0]:t.cjk[1]]...)
		emit(t.buf)
		return i
	}
	for k := 0; k+2 < len(t.cjk); k++ {
		t.buf = append(t.buf[:0], s[t.cjk[k]:t.cjk[k+2]]...)
		emit(t.buf)
	}
	return i
}

// pluralS reports whether r, at s[i:i+n], is a lone "s" ending a word, as
// in "APIs".
func pluralS(s string, i int, r rune, n int) bool {
	if r != 's' {
		return false
	}
	if i+n == len(s) {
		return true
	}
	next, _ := decode(s, i+n)
	return kindOf(next) != kindLower
}

func appendLower(b []byte, r rune) []byte {
	if r < utf8.RuneSelf {
		if 'A' <= r && r <= 'Z' {
			r += 'a' - 'A'
		}
		return append(b, byte(r))
	}
	return utf8.AppendRune(b, unicode.ToLower(r))
}
