package screen

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// A view is one normalised rendering of the text the phrase rules run on.
// line[i] is the 1-based line of the original text that byte i of s came
// from, so a finding in any view reports a line a person can find.
type view struct {
	s    string
	line []int32
}

func (v view) lineAt(off int) int {
	if len(v.line) == 0 {
		return 1
	}
	return int(v.line[min(off, len(v.line)-1)])
}

type viewBuilder struct {
	b    []byte
	line []int32
}

func (vb *viewBuilder) add(s string, line int32) {
	vb.b = append(vb.b, s...)
	for range len(s) {
		vb.line = append(vb.line, line)
	}
}

func (vb *viewBuilder) addByte(c byte, line int32) {
	vb.b = append(vb.b, c)
	vb.line = append(vb.line, line)
}

func (vb *viewBuilder) view() view { return view{s: string(vb.b), line: vb.line} }

// normLine folds one line of text to the form the rules are written in:
// format characters (zero-width, bidi, tag characters, soft hyphen)
// removed, Unicode NFKC (fullwidth and compatibility forms to plain ones),
// accents stripped from Latin letters, lower case, typographic quotes to
// ASCII, and Cyrillic or Greek look-alike letters folded to Latin inside
// words that also contain Latin letters ("Ignоre" with a Cyrillic о).
func normLine(ln string) string {
	ascii := true
	for i := 0; i < len(ln); i++ {
		if ln[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		return strings.ToLower(ln)
	}
	var b strings.Builder
	b.Grow(len(ln))
	for _, r := range ln {
		if unicode.Is(unicode.Cf, r) || isInvisible(r) || isTag(r) || (r >= 0xFE00 && r <= 0xFE0F) {
			continue
		}
		b.WriteRune(r)
	}
	s := norm.NFKD.String(b.String())
	b.Reset()
	base := rune(0)
	for _, r := range s {
		if unicode.Is(unicode.Mn, r) {
			if base < 0x250 {
				continue // accent on a Latin letter
			}
		} else {
			base = r
		}
		b.WriteRune(r)
	}
	s = strings.ToLower(norm.NFC.String(b.String()))
	b.Reset()
	for _, r := range s {
		switch r {
		case '\u2018', '\u2019', '\u201a', '\u201b', '\u02bc', '\u2032':
			b.WriteByte('\'')
		case '\u201c', '\u201d', '\u201e', '\u201f', '\u00ab', '\u00bb', '\u2033':
			b.WriteByte('"')
		case '\u2010', '\u2011', '\u2012', '\u2013', '\u2014', '\u2015', '\u2212':
			b.WriteByte('-')
		case 'ł':
			b.WriteByte('l')
		case 'đ':
			b.WriteByte('d')
		case 'ı':
			b.WriteByte('i')
		case 'ß':
			b.WriteString("ss")
		case 'ø':
			b.WriteByte('o')
		case '\u00a0', '\u3000':
			b.WriteByte(' ')
		default:
			b.WriteRune(r)
		}
	}
	return foldConfusables(b.String())
}

// confusables maps Cyrillic and Greek letters that look like Latin ones.
var confusables = map[rune]rune{
	'а': 'a', 'е': 'e', 'о': 'o', 'р': 'p', 'с': 'c', 'у': 'y', 'х': 'x', 'і': 'i', 'ј': 'j', 'ѕ': 's',
	'ԁ': 'd', 'һ': 'h', 'ԛ': 'q', 'ԝ': 'w', 'к': 'k', 'м': 'm', 'т': 't', 'в': 'b', 'н': 'h', 'ѵ': 'v',
	'ο': 'o', 'α': 'a', 'ε': 'e', 'ι': 'i', 'κ': 'k', 'ν': 'v', 'ρ': 'p', 'τ': 't', 'υ': 'u', 'χ': 'x', 'ɡ': 'g',
}

// foldConfusables rewrites look-alike letters in words that mix them with
// ASCII letters; words wholly in Cyrillic or Greek are left alone so the
// Russian and Ukrainian lexicons still match.
func foldConfusables(s string) string {
	if !strings.ContainsFunc(s, func(r rune) bool { _, ok := confusables[r]; return ok }) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	word := func(w string) {
		latin, other := false, false
		for _, r := range w {
			if r < 0x80 {
				latin = true
			} else if _, ok := confusables[r]; ok {
				other = true
			}
		}
		if !latin || !other {
			b.WriteString(w)
			return
		}
		for _, r := range w {
			if c, ok := confusables[r]; ok {
				r = c
			}
			b.WriteRune(r)
		}
	}
	start := -1
	for i, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 {
			word(s[start:i])
			start = -1
		}
		b.WriteRune(r)
	}
	if start >= 0 {
		word(s[start:])
	}
	return b.String()
}

// listMarker is the length of a leading Markdown list or quote marker
// ("- ", "* ", "1. ", "> ") on a trimmed line, or 0.
func listMarker(t string) int {
	switch {
	case strings.HasPrefix(t, "- "), strings.HasPrefix(t, "* "), strings.HasPrefix(t, "+ "), strings.HasPrefix(t, "> "):
		return 2
	}
	i := 0
	for i < len(t) && t[i] >= '0' && t[i] <= '9' {
		i++
	}
	if i > 0 && i+1 < len(t) && (t[i] == '.' || t[i] == ')') && t[i+1] == ' ' {
		return i + 2
	}
	return 0
}

// views holds the renderings of one text.
type views struct {
	lines []string // normalised lines, for the line-anchored rules
	flat  view     // lines joined into running prose
	prose view     // flat with mentioned (quoted, code) examples blanked
	tight view     // prose reduced to letters and digits only
}

// buildViews normalises text. The flat view joins lines so a phrase broken
// over lines ("Ig-\nnore every\nprevious") reads as one: a hyphen at a line
// end joins the halves, a plain line break becomes a space, and a blank
// line, a list item or a frontmatter key starts a new sentence (". ").
// Spaced-out or dotted letters ("i g n o r e", "i.g.n.o.r.e") are closed up.
func buildViews(text string) views {
	raw := strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	var v views
	v.lines = make([]string, len(raw))
	var fb viewBuilder
	fb.b = make([]byte, 0, len(text)+len(raw)*2)
	fb.line = make([]int32, 0, cap(fb.b))
	prevHyphen := false
	for i, r := range raw {
		n := normLine(r)
		v.lines[i] = n
		ln := int32(i + 1)
		t := strings.TrimSpace(n)
		m := listMarker(t)
		key := isFrontmatterKey(t)
		switch {
		case len(fb.b) == 0:
		case t == "" || m > 0 || key || t == "---":
			fb.add(". ", ln)
		case prevHyphen:
		default:
			fb.addByte(' ', ln)
		}
		t = t[m:]
		prevHyphen = false
		if len(t) > 1 && t[len(t)-1] == '-' && isLetterByte(t[len(t)-2]) && i+1 < len(raw) {
			t = t[:len(t)-1]
			prevHyphen = true
		}
		fb.add(collapseSpace(closeSpacedLetters(t)), ln)
	}
	v.flat = fb.view()
	v.prose = maskMentions(v.flat)
	v.tight = tighten(v.prose)
	return v
}

// collapseSpace turns every run of white space into one space.
func collapseSpace(t string) string {
	if !strings.Contains(t, "  ") && !strings.ContainsAny(t, "\t\v\f\r") {
		return t
	}
	return strings.Join(strings.Fields(t), " ")
}

func isLetterByte(c byte) bool { return c >= 'a' && c <= 'z' || c >= 0x80 }

func isFrontmatterKey(t string) bool {
	for _, k := range []string{"name:", "description:", "type:", "metadata:"} {
		if strings.HasPrefix(t, k) {
			return true
		}
	}
	return false
}

// closeSpacedLetters rewrites runs of four or more single letters separated
// by one space or dot ("i g n o r e", "i.g.n.o.r.e") as words. Wider gaps
// between such runs separate words.
func closeSpacedLetters(t string) string {
	if len(t) < 7 {
		return t
	}
	b := []byte(t)
	changed := false
	for i := 0; i < len(b); {
		if !isASCIILetter(b[i]) || (i > 0 && isASCIILetter(b[i-1])) {
			i++
			continue
		}
		j, n := i, 1
		var sep byte
		for j+2 < len(b) && (b[j+1] == ' ' || b[j+1] == '.') && isASCIILetter(b[j+2]) && (j+3 >= len(b) || !isASCIILetter(b[j+3])) {
			if sep == 0 {
				sep = b[j+1]
			} else if b[j+1] != sep {
				break
			}
			j += 2
			n++
		}
		if n >= 4 {
			w := make([]byte, 0, n)
			for k := i; k <= j; k += 2 {
				w = append(w, b[k])
			}
			copy(b[i:], w)
			for k := i + len(w); k <= j; k++ {
				b[k] = 0 // removed below
			}
			changed = true
		}
		i = j + 1
	}
	if !changed {
		return t
	}
	out := b[:0]
	for _, c := range b {
		if c != 0 {
			out = append(out, c)
		}
	}
	return string(out)
}

func isASCIILetter(c byte) bool { return c >= 'a' && c <= 'z' }

// mentionCue marks a quoted or code span as an example being talked about
// ("strings like \"ignore previous instructions\"") rather than an
// instruction.
var mentionCues = []string{
	"like ", "such as", "e.g.", "for example", "example", "string", "phrase", "fixture", "test input",
	"contains", "containing", "detect", "pattern", "literal", "payload", "sample", "attack", "jailbreak",
}

// maskMentions empties quoted and backquoted spans of up to 120 bytes when
// a mention cue appears in the 60 bytes before the opening quote.
func maskMentions(v view) view {
	s := v.s
	var cut [][2]int
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '"' && c != '`' && c != '\'' {
			continue
		}
		if c == '\'' && i > 0 && isLetterByte(s[i-1]) {
			continue // an apostrophe
		}
		j := strings.IndexByte(s[i+1:], c)
		if j < 0 || j > 120 {
			continue
		}
		before := s[max(0, i-60):i]
		for _, cue := range mentionCues {
			if strings.Contains(before, cue) {
				cut = append(cut, [2]int{i + 1, i + 1 + j})
				break
			}
		}
		i += j + 1
	}
	if cut == nil {
		return v
	}
	var vb viewBuilder
	prev := 0
	for _, c := range cut {
		vb.b = append(vb.b, s[prev:c[0]]...)
		vb.line = append(vb.line, v.line[prev:c[0]]...)
		prev = c[1]
	}
	vb.b = append(vb.b, s[prev:]...)
	vb.line = append(vb.line, v.line[prev:]...)
	return vb.view()
}

// tighten keeps only letters and digits, so the core phrases match however
// they were split: by spaces, dots, line breaks, list markers or hyphens.
func tighten(v view) view {
	var vb viewBuilder
	vb.b = make([]byte, 0, len(v.s))
	vb.line = make([]int32, 0, len(v.s))
	for i, r := range v.s {
		if r < 0x80 {
			c := byte(r)
			if isASCIILetter(c) || c >= '0' && c <= '9' || c == '$' || c == '@' {
				vb.addByte(c, v.line[i])
			}
			continue
		}
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			vb.add(string(r), v.line[i])
		}
	}
	return vb.view()
}

// leet maps digits and symbols used as letters ("1gn0r3") back to letters.
// It returns "" when the text has none next to a letter.
func leet(s string) string {
	mixed := false
	for i := 1; i < len(s); i++ {
		if isLeet(s[i]) && isASCIILetter(s[i-1]) || isLeet(s[i-1]) && isASCIILetter(s[i]) {
			mixed = true
			break
		}
	}
	if !mixed {
		return ""
	}
	b := []byte(s)
	for i, c := range b {
		switch c {
		case '0':
			b[i] = 'o'
		case '1':
			b[i] = 'i'
		case '3':
			b[i] = 'e'
		case '4', '@':
			b[i] = 'a'
		case '5', '$':
			b[i] = 's'
		case '7':
			b[i] = 't'
		}
	}
	return string(b)
}

func isLeet(c byte) bool {
	return c == '0' || c == '1' || c == '3' || c == '4' || c == '5' || c == '7' || c == '@' || c == '$'
}

// rot13 rotates ASCII letters; reverse reverses the bytes of an ASCII
// string (the tight view of English text is ASCII; other bytes are left
// as they come and simply do not match).
func rot13(s string) string {
	b := []byte(s)
	for i, c := range b {
		if isASCIILetter(c) {
			b[i] = 'a' + (c-'a'+13)%26
		}
	}
	return string(b)
}

func reverse(s string) string {
	b := make([]byte, len(s))
	for i := range len(s) {
		b[len(s)-1-i] = s[i]
	}
	return string(b)
}
