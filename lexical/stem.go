package lexical

// stem reduces an English word to a stem so that inflected forms meet:
// "tests", "testing" and "tested" all become "test". It applies the light
// steps of Porter's algorithm (1a plurals, 1b -ed/-ing, 1c -y, 5 final -e
// and -ll) and one derivational rule, -ion after s or t ("deletion" meets
// "deleted"), and leaves the other derivational suffixes (-ment, -ness)
// alone, which keeps distinct words like "deploy" and "deployment" apart.
//
// Words that are not all lowercase ASCII letters, and words of two letters
// or fewer, are returned unchanged. stem works in place and may append one
// byte, so the result can share b's array.
func stem(b []byte) []byte {
	if len(b) <= 2 {
		return b
	}
	for _, c := range b {
		if c < 'a' || c > 'z' {
			return b
		}
	}
	b = step1a(b)
	b = step1b(b)
	if len(b) > 1 && b[len(b)-1] == 'y' && hasVowel(b[:len(b)-1]) {
		b[len(b)-1] = 'i'
	}
	b = stepIon(b)
	b = step5(b)
	return b
}

// stepIon is Porter's rule for -ion after s or t in a long enough stem: the
// noun meets its verb ("deletion" and "deleted", "migration" and "migrate",
// "connection" and "connect").
func stepIon(b []byte) []byte {
	if hasSuffix(b, "ion") && len(b) > 4 {
		s := b[:len(b)-3]
		if c := s[len(s)-1]; (c == 's' || c == 't') && measure(s) > 1 {
			return s
		}
	}
	return b
}

// step1a removes plural endings: sses → ss, ies → i, s → "" (but not ss).
func step1a(b []byte) []byte {
	switch {
	case hasSuffix(b, "sses"), hasSuffix(b, "ies"):
		return b[:len(b)-2]
	case hasSuffix(b, "ss"):
		return b
	case hasSuffix(b, "s"):
		return b[:len(b)-1]
	}
	return b
}

// step1b removes -eed, -ed and -ing, then repairs the stem so that
// "hoping" and "hope" meet and "hopping" and "hop" meet.
func step1b(b []byte) []byte {
	switch {
	case hasSuffix(b, "eed"):
		if measure(b[:len(b)-3]) > 0 {
			return b[:len(b)-1]
		}
		return b
	case hasSuffix(b, "ed") && hasVowel(b[:len(b)-2]):
		b = b[:len(b)-2]
	case hasSuffix(b, "ing") && hasVowel(b[:len(b)-3]):
		b = b[:len(b)-3]
	default:
		return b
	}
	switch {
	case hasSuffix(b, "at"), hasSuffix(b, "bl"), hasSuffix(b, "iz"):
		return append(b, 'e')
	case doubleConsonant(b):
		if c := b[len(b)-1]; c != 'l' && c != 's' && c != 'z' {
			return b[:len(b)-1]
		}
	case measure(b) == 1 && cvc(b):
		return append(b, 'e')
	}
	return b
}

// step5 removes a final e where the stem is long enough, and reduces a
// final ll to l.
func step5(b []byte) []byte {
	if hasSuffix(b, "e") {
		s := b[:len(b)-1]
		if m := measure(s); m > 1 || m == 1 && !cvc(s) {
			b = s
		}
	}
	if hasSuffix(b, "ll") && measure(b) > 1 {
		b = b[:len(b)-1]
	}
	return b
}

func hasSuffix(b []byte, suf string) bool {
	return len(b) >= len(suf) && string(b[len(b)-len(suf):]) == suf
}

// consonant reports whether b[i] is a consonant; y is a consonant at the
// start of a word or after a vowel.
func consonant(b []byte, i int) bool {
	switch b[i] {
	case 'a', 'e', 'i', 'o', 'u':
		return false
	case 'y':
		return i == 0 || !consonant(b, i-1)
	}
	return true
}

// measure counts the vowel-consonant sequences of b, Porter's m.
func measure(b []byte) int {
	n, i := 0, 0
	for i < len(b) && consonant(b, i) {
		i++
	}
	for i < len(b) {
		for i < len(b) && !consonant(b, i) {
			i++
		}
		if i == len(b) {
			break
		}
		for i < len(b) && consonant(b, i) {
			i++
		}
		n++
	}
	return n
}

func hasVowel(b []byte) bool {
	for i := range b {
		if !consonant(b, i) {
			return true
		}
	}
	return false
}

func doubleConsonant(b []byte) bool {
	n := len(b)
	return n >= 2 && b[n-1] == b[n-2] && consonant(b, n-1)
}

// cvc reports whether b ends consonant-vowel-consonant with the last
// consonant not w, x or y, as in "hop" (and unlike "tax").
func cvc(b []byte) bool {
	n := len(b)
	if n < 3 || !consonant(b, n-3) || consonant(b, n-2) || !consonant(b, n-1) {
		return false
	}
	c := b[n-1]
	return c != 'w' && c != 'x' && c != 'y'
}

// stopwords are frequent English function words that carry no topic. The
// list is short on purpose: BM25's IDF already discounts common words, and
// every dropped word is one a user cannot search for.
var stopwords = []string{
	"a", "about", "above", "after", "again", "all", "also", "am", "an", "and", "any", "are", "as", "at",
	"be", "been", "before", "being", "below", "both", "but", "by",
	"can", "could", "did", "do", "does", "doing", "dont", "down", "during",
	"each", "else", "etc", "every", "few", "for", "from", "further",
	"had", "has", "have", "having", "he", "her", "here", "hers", "him", "his", "how",
	"i", "if", "im", "in", "into", "is", "isnt", "it", "its", "ive",
	"just", "let", "lets", "may", "me", "might", "more", "most", "must", "my", "myself",
	"no", "nor", "not", "now", "of", "off", "on", "once", "only", "or", "other", "our", "ours", "out", "over", "own",
	"please", "same", "shall", "she", "should", "so", "some", "such",
	"than", "that", "thats", "the", "their", "theirs", "them", "then", "there", "these", "they", "this", "those",
	"through", "to", "too", "under", "until", "up", "us", "very",
	"was", "we", "were", "what", "whats", "when", "where", "wheres", "which", "while", "who", "whom", "why",
	"will", "with", "would", "you", "your", "youre", "yours",
}

func init() {
	if 4*len(stopwords) > len(stopTable) {
		panic("lexical: stopTable too small for the stopwords")
	}
	for _, w := range stopwords {
		if len(w) > maxStopword {
			panic("lexical: stopword longer than maxStopword: " + w)
		}
		k := stopKey([]byte(w))
		i := stopSlot(k)
		for stopTable[i] != 0 {
			i = (i + 1) % uint64(len(stopTable))
		}
		stopTable[i] = k
	}
}

// maxStopword is the length of the longest stopword; longer words skip the
// lookup.
const maxStopword = 7

// stopTable holds the stopwords as stopKey packs them, open-addressed from
// stopSlot: a word is looked up by a multiply and a probe or two. About
// two in five words of prose are looked up and most of those are
// stopwords, and a Go map's string hash and compare were a tenth of a
// first index build's tokenizing.
var stopTable [1 << stopBits]uint64

const stopBits = 10

// stopKey packs a word of at most maxStopword bytes into one number: its
// bytes, and its length in the top byte (so that no key is 0).
func stopKey(w []byte) uint64 {
	k := uint64(len(w)) << 56
	for i, c := range w {
		k |= uint64(c) << (8 * i)
	}
	return k
}

func stopSlot(k uint64) uint64 { return (k * 0x9e3779b97f4a7c15) >> (64 - stopBits) }

func isStopword(w []byte) bool {
	if len(w) > maxStopword || len(w) == 0 {
		return false
	}
	k := stopKey(w)
	for i := stopSlot(k); ; i = (i + 1) % uint64(len(stopTable)) {
		switch stopTable[i] {
		case k:
			return true
		case 0:
			return false
		}
	}
}
