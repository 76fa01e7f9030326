package ui

import (
	"html"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The inlines of a paragraph or heading, parsed as the CommonMark
// specification describes: code spans, emphasis by the rules of
// delimiter runs, links and images (inline and by reference), autolinks,
// raw HTML, entities, backslash escapes and line breaks.

type inKind uint8

const (
	inText inKind = iota
	inSoftBreak
	inHardBreak
	inCode
	inRawHTML
	inEmph
	inStrong
	inLink
	inImage
	inAutoLink
	inCheckBox
)

type mdInline struct {
	links[mdInline]
	kind inKind
	// text is a text's, a code span's, raw HTML's or an autolink's; dest
	// a link's or an image's destination, as written.
	text, dest     string
	email, checked bool
}

// delimiter is a run of * or _ that may open or close emphasis.
type delimiter struct {
	node              *mdInline
	char              byte
	n, orig           int
	canOpen, canClose bool
	prev, next        *delimiter
}

// bracket is an opening [ or ![ waiting for its ].
type bracket struct {
	node         *mdInline
	image        bool
	active       bool
	pos          int
	delims       *delimiter
	prev         *bracket
	bracketAfter bool
}

type inlineParser struct {
	s        string
	before   map[int]byte    // by offset of a line's start after the first: the source character before it
	unclosed map[string]bool // see htmlInline
	pos      int
	refs     map[string]string
	delims   *delimiter
	brackets *bracket
}

// parseInlines parses s; before holds, by line after the first, the
// source character before it (see mdBlock.before); box allows a task
// list's box at its start (the first block of a list item).
func parseInlines(s string, before []byte, refs map[string]string, box bool) *mdInline {
	p := &inlineParser{s: s, refs: refs, unclosed: map[string]bool{}}
	if len(before) > 1 {
		p.before = map[int]byte{}
		line := 0
		for i := 0; i < len(s); i++ {
			if s[i] == '\n' {
				if line++; line < len(before) {
					p.before[i+1] = before[line]
				}
			}
		}
	}
	root := &mdInline{}
	if box {
		p.checkBox(root)
	}
	for p.pos < len(p.s) {
		p.step(root)
	}
	p.processEmphasis(nil)
	return root.first
}

// checkBox reads "[ ]", "[x]" or "[X]" (any one white-space character
// inside counts as empty) and the white space after it, at the start.
func (p *inlineParser) checkBox(root *mdInline) {
	// The first line, its line end included: the white space taken after
	// the box may be that line end.
	line := p.s
	if i := strings.IndexByte(line, '\n'); i >= 0 {
		line = line[:i+1]
	}
	if len(line) < 3 || line[0] != '[' || line[2] != ']' {
		return
	}
	mark := line[1]
	if mark != 'x' && mark != 'X' && !isMarkdownSpace(mark) {
		return
	}
	n := 3
	for n < len(line) && isMarkdownSpace(line[n]) {
		n++
	}
	p.pos = n
	appendChild(root, &mdInline{kind: inCheckBox, checked: !isMarkdownSpace(mark)})
}

// isMarkdownSpace reports whether c is white space as Markdown counts
// it.
func isMarkdownSpace(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\v', '\f', '\r':
		return true
	}
	return false
}

func (p *inlineParser) text(parent *mdInline, s string) *mdInline {
	n := &mdInline{kind: inText, text: s}
	appendChild(parent, n)
	return n
}

func (p *inlineParser) step(parent *mdInline) {
	c := p.s[p.pos]
	switch c {
	case '\n':
		p.newline(parent)
	case '\\':
		p.backslash(parent)
	case '`':
		p.backticks(parent)
	case '*', '_':
		p.delimRun(parent, c)
	case '[':
		n := p.text(parent, "[")
		p.pushBracket(n, false)
		p.pos++
	case '!':
		if p.pos+1 < len(p.s) && p.s[p.pos+1] == '[' {
			n := p.text(parent, "![")
			p.pushBracket(n, true)
			p.pos += 2
		} else {
			p.text(parent, "!")
			p.pos++
		}
	case ']':
		p.closeBracket(parent)
	case '<':
		if !p.autolink(parent) && !p.rawHTML(parent) {
			p.text(parent, "<")
			p.pos++
		}
	case '&':
		if e, n := entity(p.s[p.pos:]); n > 0 {
			p.text(parent, e)
			p.pos += n
		} else {
			p.text(parent, "&")
			p.pos++
		}
	default:
		end := p.pos + 1
		for end < len(p.s) && strings.IndexByte("\n\\`*_[]!<&", p.s[end]) < 0 {
			end++
		}
		p.text(parent, p.s[p.pos:end])
		p.pos = end
	}
}

func (p *inlineParser) newline(parent *mdInline) {
	p.pos++
	// Two spaces just before the line end make a hard break; white space
	// there is dropped either way.
	kind := inSoftBreak
	if last := parent.last; last != nil && last.kind == inText {
		if strings.HasSuffix(last.text, "  ") {
			kind = inHardBreak
		}
		last.text = strings.TrimRight(last.text, " \t\r")
	}
	p.breakLine(parent, kind)
}

// breakLine ends a line with a break of kind, its line end taken, and
// skips the next line's leading white space.
func (p *inlineParser) breakLine(parent *mdInline, kind inKind) {
	appendChild(parent, &mdInline{kind: kind})
	for p.pos < len(p.s) && isSpaceOrTab(p.s[p.pos]) {
		p.pos++
	}
}

func isSpaceOrNL(c byte) bool { return c == ' ' || c == '\n' }

func isASCIIPunct(c byte) bool {
	return c >= '!' && c <= '/' || c >= ':' && c <= '@' || c >= '[' && c <= '`' || c >= '{' && c <= '~'
}

func (p *inlineParser) backslash(parent *mdInline) {
	p.pos++
	switch {
	case p.pos < len(p.s) && p.s[p.pos] == '\n':
		p.pos++
		p.breakLine(parent, inHardBreak)
	case p.pos < len(p.s) && isASCIIPunct(p.s[p.pos]):
		p.text(parent, p.s[p.pos:p.pos+1])
		p.pos++
	default:
		p.text(parent, "\\")
	}
}

func (p *inlineParser) backticks(parent *mdInline) {
	start := p.pos
	for p.pos < len(p.s) && p.s[p.pos] == '`' {
		p.pos++
	}
	run := p.pos - start
	for i := p.pos; i < len(p.s); {
		if p.s[i] != '`' {
			i++
			continue
		}
		j := i
		for j < len(p.s) && p.s[j] == '`' {
			j++
		}
		if j-i == run {
			// One space (or line end) comes off each side when both have
			// one and the code is not all white space; line ends are
			// spaces.
			code := p.s[p.pos:i]
			if len(code) >= 2 && strings.Trim(code, " \t\r\n") != "" && isSpaceOrNL(code[0]) && isSpaceOrNL(code[len(code)-1]) {
				code = code[1 : len(code)-1]
			}
			code = strings.ReplaceAll(code, "\n", " ")
			appendChild(parent, &mdInline{kind: inCode, text: code})
			p.pos = j
			return
		}
		i = j
	}
	p.text(parent, p.s[start:p.pos])
}

// runeBefore and runeAfter are the characters around a delimiter run, a
// line's start or end counting as white space. Where the text is not
// UTF-8 they read it as goldmark does: from the last byte that can start
// a character at or before the place, an undecodable one being U+FFFD.
func runeBefore(s string, i int) rune {
	i--
	for i >= 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	if i < 0 {
		return '\n'
	}
	r, _ := utf8.DecodeRuneInString(s[i:])
	return r
}

func runeAfter(s string, i int) rune {
	if i >= len(s) {
		return '\n'
	}
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	r, _ := utf8.DecodeRuneInString(s[i:])
	return r
}

func isPunctRune(r rune) bool {
	if r < utf8.RuneSelf {
		return isASCIIPunct(byte(r))
	}
	return unicode.IsPunct(r) || unicode.IsSymbol(r)
}

func (p *inlineParser) delimRun(parent *mdInline, c byte) {
	start := p.pos
	for p.pos < len(p.s) && p.s[p.pos] == c {
		p.pos++
	}
	n := p.pos - start
	before, after := runeBefore(p.s, start), runeAfter(p.s, p.pos)
	if c, ok := p.before[start]; ok {
		// At a line's start the character before is the source's,
		// where goldmark reads it: a quote's ">" is punctuation.
		before = rune(c)
	}
	spaceAfter, spaceBefore := unicode.IsSpace(after), unicode.IsSpace(before)
	punctAfter, punctBefore := isPunctRune(after), isPunctRune(before)
	left := !spaceAfter && (!punctAfter || spaceBefore || punctBefore)
	right := !spaceBefore && (!punctBefore || spaceAfter || punctAfter)
	canOpen, canClose := left, right
	if c == '_' {
		canOpen = left && (!right || punctBefore)
		canClose = right && (!left || punctAfter)
	}
	node := p.text(parent, p.s[start:p.pos])
	if canOpen || canClose {
		d := &delimiter{node: node, char: c, n: n, orig: n, canOpen: canOpen, canClose: canClose, prev: p.delims}
		if p.delims != nil {
			p.delims.next = d
		}
		p.delims = d
	}
}

func (p *inlineParser) removeDelim(d *delimiter) {
	if d.prev != nil {
		d.prev.next = d.next
	}
	if d.next != nil {
		d.next.prev = d.prev
	} else {
		p.delims = d.prev
	}
}

// processEmphasis matches the openers and closers above stackBottom into
// emphasis, as the specification's algorithm does.
func (p *inlineParser) processEmphasis(stackBottom *delimiter) {
	// The lowest place an opener was looked for, by closer kind, so that
	// a failed search is not repeated.
	type key struct {
		c       byte
		canOpen bool
		mod3    int
	}
	bottoms := map[key]*delimiter{}
	closer := p.delims
	for closer != nil && closer.prev != stackBottom {
		closer = closer.prev
	}
	for closer != nil {
		if !closer.canClose {
			closer = closer.next
			continue
		}
		k := key{closer.char, closer.canOpen, closer.orig % 3}
		bottom, seen := bottoms[k]
		if !seen {
			bottom = stackBottom
		}
		if opener := findOpener(closer, stackBottom, bottom); opener != nil {
			closer = p.emphasize(opener, closer)
			continue
		}
		bottoms[k] = closer.prev
		next := closer.next
		if !closer.canOpen {
			p.removeDelim(closer)
		}
		closer = next
	}
	for p.delims != nil && p.delims != stackBottom {
		p.removeDelim(p.delims)
	}
}

// findOpener returns the nearest opener below closer that it can match,
// looking no lower than stackBottom or bottom, or nil.
func findOpener(closer, stackBottom, bottom *delimiter) *delimiter {
	for opener := closer.prev; opener != nil && opener != stackBottom && opener != bottom; opener = opener.prev {
		// The rule of three: a run that can both open and close matches
		// another only when their lengths do not sum to a multiple of 3,
		// unless both are.
		odd := (opener.canClose || closer.canOpen) && (opener.orig+closer.orig)%3 == 0 && !(opener.orig%3 == 0 && closer.orig%3 == 0)
		if opener.char == closer.char && opener.canOpen && !odd {
			return opener
		}
	}
	return nil
}

// emphasize makes emphasis (or strong emphasis) of what lies between
// opener and closer, and returns the closer to go on from.
func (p *inlineParser) emphasize(opener, closer *delimiter) *delimiter {
	use := 1
	if closer.n >= 2 && opener.n >= 2 {
		use = 2
	}
	opener.n -= use
	closer.n -= use
	opener.node.text = opener.node.text[:opener.n]
	closer.node.text = closer.node.text[:closer.n]
	emph := &mdInline{kind: inEmph}
	if use == 2 {
		emph.kind = inStrong
	}
	adoptFollowing(emph, opener.node, closer.node)
	insertAfter(opener.node, emph)
	// Delimiters between the two can no longer match.
	for d := closer.prev; d != nil && d != opener; {
		prev := d.prev
		p.removeDelim(d)
		d = prev
	}
	if opener.n == 0 {
		unlink(opener.node)
		p.removeDelim(opener)
	}
	if closer.n == 0 {
		next := closer.next
		unlink(closer.node)
		p.removeDelim(closer)
		return next
	}
	return closer
}

func (p *inlineParser) pushBracket(n *mdInline, image bool) {
	if p.brackets != nil {
		p.brackets.bracketAfter = true
	}
	pos := p.pos + len(n.text) // the label's start, past "[" or "!["
	p.brackets = &bracket{node: n, image: image, active: true, pos: pos, delims: p.delims, prev: p.brackets}
}

func (p *inlineParser) closeBracket(parent *mdInline) {
	p.pos++
	start := p.pos
	op := p.brackets
	if op == nil {
		p.text(parent, "]")
		return
	}
	if !op.active {
		p.text(parent, "]")
		p.brackets = op.prev
		return
	}
	dest, ok := "", false
	// An inline link: (destination "title").
	if p.pos < len(p.s) && p.s[p.pos] == '(' {
		i := skipSpaceNL(p.s, p.pos+1)
		if i < len(p.s) && p.s[i] == ')' {
			dest, ok, p.pos = "", true, i+1
		} else if d, n, dok := linkDestination(p.s[i:]); dok {
			j := skipSpaceNL(p.s, i+n)
			if j < len(p.s) && p.s[j] == ')' {
				dest, ok, p.pos = d, true, j+1
			} else if j > i+n {
				if t := linkTitle(p.s[j:]); t > 0 {
					k := skipSpaceNL(p.s, j+t)
					if k < len(p.s) && p.s[k] == ')' {
						dest, ok, p.pos = d, true, k+1
					}
				}
			}
		}
		if !ok {
			p.pos = start
		}
	}
	if !ok {
		// A reference: [text][label], [text][] or [text].
		label := ""
		if lbl, n := linkLabel(p.s[p.pos:]); n > 0 {
			label, p.pos = lbl, p.pos+n
		} else if n := blankLabel(p.s[p.pos:]); n > 0 {
			p.pos += n // [] or [ ]: collapsed, as goldmark reads it
		}
		if label == "" && !op.bracketAfter {
			label = p.s[op.pos : start-1]
		}
		if d, found := p.refs[normLabel(label)]; found && label != "" {
			dest, ok = d, true
		} else {
			p.pos = start
		}
	}
	if !ok {
		p.brackets = op.prev
		p.text(parent, "]")
		return
	}
	link := &mdInline{kind: inLink, dest: dest}
	if op.image {
		link.kind = inImage
	}
	adoptFollowing(link, op.node, nil)
	appendChild(parent, link)
	p.processEmphasis(op.delims)
	p.brackets = op.prev
	unlink(op.node)
	if !op.image {
		// No link inside a link: the brackets before this one are
		// plain text now.
		for b := p.brackets; b != nil; b = b.prev {
			if !b.image {
				b.active = false
			}
		}
	}
}

// linkLabel reads [label] at the start of s: its inside and its length
// with the brackets, or 0.
func linkLabel(s string) (string, int) {
	if !strings.HasPrefix(s, "[") {
		return "", 0
	}
	for i := 1; i < len(s) && i <= 1000; i++ {
		switch s[i] {
		case '\\':
			i++
		case '[':
			return "", 0
		case ']':
			if strings.TrimFunc(s[1:i], unicode.IsSpace) == "" {
				return "", 0
			}
			return s[1:i], i + 1
		}
	}
	return "", 0
}

// blankLabel returns the length of a label of nothing but white space
// ([] or [ ]) at the start of s, or 0.
func blankLabel(s string) int {
	if !strings.HasPrefix(s, "[") {
		return 0
	}
	i := 1
	for i < len(s) && isMarkdownSpace(s[i]) {
		i++
	}
	if i < len(s) && s[i] == ']' {
		return i + 1
	}
	return 0
}

// normLabel is a label as labels are matched: case folded, white space
// collapsed.
func normLabel(s string) string {
	return strings.Join(strings.Fields(strings.ToLower(strings.ToUpper(s))), " ")
}

// linkDestination reads a destination at the start of s, as it is
// written (escapes and entities kept, as the page's link checks take
// it): its text, the bytes it took, and whether there was one.
func linkDestination(s string) (string, int, bool) {
	if strings.HasPrefix(s, "<") {
		for i := 1; i < len(s); i++ {
			switch s[i] {
			case '\\':
				if i+1 < len(s) && isASCIIPunct(s[i+1]) {
					i++
				}
			case '>':
				return s[1:i], i + 1, true
			case '\n':
				// (No line end; goldmark lets a < stand inside.)
				return "", 0, false
			}
		}
		return "", 0, false
	}
	depth, i := 0, 0
loop:
	for i < len(s) {
		c := s[i]
		switch {
		case c == '\\' && i+1 < len(s) && isASCIIPunct(s[i+1]):
			i += 2
			continue
		case c == '(':
			depth++
		case c == ')':
			if depth == 0 {
				break loop
			}
			depth--
		case isMarkdownSpace(c):
			break loop
		}
		i++
	}
	// goldmark does not ask that the parentheses balance.
	if i == 0 {
		return "", 0, false
	}
	return s[:i], i, true
}

// linkTitle returns the length of the title ("…", '…' or (…)) at the
// start of s, or 0.
func linkTitle(s string) int {
	if s == "" {
		return 0
	}
	closer := s[0]
	switch closer {
	case '"', '\'':
	case '(':
		closer = ')'
	default:
		return 0
	}
	for i := 1; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\':
			i++
		case c == closer:
			return i + 1
		case c == '(' && closer == ')':
			return 0
		case c == '\n' && blankLineAt(s, i+1):
			return 0 // a title cannot hold a blank line
		}
	}
	return 0
}

// blankLineAt reports whether the line starting at s[i:] is blank.
func blankLineAt(s string, i int) bool {
	for ; i < len(s) && s[i] != '\n'; i++ {
		if !isSpaceOrTab(s[i]) {
			return false
		}
	}
	return true
}

// autolink reads <scheme:…> or <user@host> at the parser's place.
func (p *inlineParser) autolink(parent *mdInline) bool {
	// Neither kind holds white space or a <: look for the > only that
	// far, so that many unclosed <s cost each only their word.
	s := p.s[p.pos+1:]
	end := 0
	for end < len(s) && s[end] > ' ' && s[end] != '<' && s[end] != '>' {
		end++
	}
	if end == len(s) || s[end] != '>' {
		return false
	}
	inner := s[:end]
	email := !isURIAutolink(inner)
	if email && !isEmailAutolink(inner) {
		return false
	}
	appendChild(parent, &mdInline{kind: inAutoLink, text: inner, email: email})
	p.pos += end + 2
	return true
}

// isURIAutolink reports whether s (which autolink has found free of
// white space, < and >) starts with a scheme: a letter, then 1 to 31
// letters, digits, +, . or -, then a colon.
func isURIAutolink(s string) bool {
	colon := strings.IndexByte(s, ':')
	if colon < 2 || colon > 32 || !isLetter(s[0]) {
		return false
	}
	for i := 1; i < colon; i++ {
		if c := s[i]; !isAlnum(c) && c != '+' && c != '.' && c != '-' {
			return false
		}
	}
	return true
}

func isEmailAutolink(s string) bool {
	user, host, ok := strings.Cut(s, "@")
	// At most 64 bytes before the @ and 255 after, as goldmark reads
	// an address.
	if !ok || user == "" || host == "" || len(user) > 64 || len(host) > 255 {
		return false
	}
	for i := 0; i < len(user); i++ {
		c := user[i]
		if !(isAlnum(c) || strings.IndexByte(".!#$%&'*+/=?^_`{|}~-", c) >= 0) {
			return false
		}
	}
	for label := range strings.SplitSeq(host, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for i := 0; i < len(label); i++ {
			if c := label[i]; !isAlnum(c) && c != '-' {
				return false
			}
		}
	}
	return true
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// rawHTML reads an inline tag, comment, processing instruction,
// declaration or CDATA section at the parser's place.
func (p *inlineParser) rawHTML(parent *mdInline) bool {
	n := htmlInline(p.s[p.pos:], p.unclosed)
	if n == 0 {
		return false
	}
	appendChild(parent, &mdInline{kind: inRawHTML, text: p.s[p.pos : p.pos+n]})
	p.pos += n
	return true
}

// htmlInline returns the length of the raw HTML at the start of s, or 0.
// unclosed records the closers ("-->", "?>", …) found nowhere in a text
// of which s is the rest, so that many openers without one do not each
// search to its end again.
func htmlInline(s string, unclosed map[string]bool) int {
	closeAt := func(from int, closer string) int {
		if unclosed[closer] {
			return -1
		}
		i := strings.Index(s[from:], closer)
		if i < 0 {
			unclosed[closer] = true
			return -1
		}
		return from + i + len(closer)
	}
	switch {
	case strings.HasPrefix(s, "<!--"):
		if strings.HasPrefix(s, "<!-->") {
			return 5
		}
		if strings.HasPrefix(s, "<!--->") {
			return 6
		}
		return max(closeAt(4, "-->"), 0)
	case strings.HasPrefix(s, "<?"):
		return max(closeAt(2, "?>"), 0)
	case strings.HasPrefix(s, "<![CDATA["):
		return max(closeAt(9, "]]>"), 0)
	case strings.HasPrefix(s, "<!") && len(s) > 2 && s[2] >= 'A' && s[2] <= 'Z':
		return max(closeAt(2, ">"), 0)
	case strings.HasPrefix(s, "</"):
		i := tagName(s, 2)
		if i == 0 {
			return 0
		}
		i = skipHTMLSpace(s, i)
		if i < len(s) && s[i] == '>' {
			return i + 1
		}
		return 0
	}
	return openTag(s)
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// tagName returns the end of the tag name at s[i:], or 0.
func tagName(s string, i int) int {
	if i >= len(s) || !isLetter(s[i]) {
		return 0
	}
	i++
	for i < len(s) && (isAlnum(s[i]) || s[i] == '-') {
		i++
	}
	return i
}

// skipHTMLSpace skips white space, line ends included.
func skipHTMLSpace(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
		i++
	}
	return i
}

// openTag returns the length of the open tag at the start of s, or 0.
func openTag(s string) int {
	i := tagName(s, 1)
	if i == 0 {
		return 0
	}
	for {
		j := skipHTMLSpace(s, i)
		if j >= len(s) {
			return 0
		}
		if s[j] == '>' {
			return j + 1
		}
		if strings.HasPrefix(s[j:], "/>") {
			return j + 2
		}
		if j == i {
			return 0 // an attribute needs white space before it
		}
		// An attribute: name, then maybe = value.
		c := s[j]
		if !(isLetter(c) || c == '_' || c == ':') {
			return 0
		}
		k := j + 1
		for k < len(s) && (isAlnum(s[k]) || strings.IndexByte("_.:-", s[k]) >= 0) {
			k++
		}
		m := skipHTMLSpace(s, k)
		if m < len(s) && s[m] == '=' {
			m = skipHTMLSpace(s, m+1)
			if m >= len(s) {
				return 0
			}
			switch q := s[m]; q {
			case '"', '\'':
				e := strings.IndexByte(s[m+1:], q)
				if e < 0 {
					return 0
				}
				k = m + 1 + e + 1
			default:
				e := m
				for e < len(s) && s[e] > ' ' && strings.IndexByte("\"'=<>`", s[e]) < 0 {
					e++
				}
				if e == m {
					return 0
				}
				k = e
			}
		}
		i = k
	}
}

// entity decodes the entity or numeric character reference at the start
// of s: its text and length, or 0.
func entity(s string) (string, int) {
	end := strings.IndexByte(s, ';')
	if end < 2 || end > 33 {
		return "", 0
	}
	ref := s[:end+1]
	if ref[1] == '#' {
		r, ok := numericRef(ref[2:end])
		if !ok {
			return "", 0
		}
		return string(r), end + 1
	}
	for i := 1; i < end; i++ {
		if !isAlnum(ref[i]) {
			return "", 0
		}
	}
	// An entity is one or two characters; what html.UnescapeString
	// makes of a longer name that starts with an entity's ("&amp0;") is
	// longer, and not an entity.
	if u := html.UnescapeString(ref); u != ref && utf8.RuneCountInString(u) <= 2 && (!strings.HasSuffix(u, ";") || ref == "&semi;") {
		return u, end + 1
	}
	return "", 0
}

// numericRef reads the digits of a numeric reference ("35" of "&#35;",
// "x22" of "&#x22;"); a code point that cannot be is U+FFFD.
func numericRef(digits string) (rune, bool) {
	base := 10
	if digits != "" && (digits[0] == 'x' || digits[0] == 'X') {
		base, digits = 16, digits[1:]
	}
	if digits == "" || base == 16 && len(digits) > 6 || base == 10 && len(digits) > 7 {
		return 0, false
	}
	v := 0
	for i := 0; i < len(digits); i++ {
		d := hexDigit(digits[i])
		if d < 0 || d >= base {
			return 0, false
		}
		v = v*base + d
	}
	if v == 0 || v > unicode.MaxRune || v >= 0xD800 && v <= 0xDFFF {
		return 0xFFFD, true
	}
	return rune(v), true
}

// hexDigit is c's value as a hexadecimal digit, or -1.
func hexDigit(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

// unescapeText resolves backslash escapes and entities in s (an info
// string).
func unescapeText(s string) string {
	if !strings.ContainsAny(s, `\&`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\' && i+1 < len(s) && isASCIIPunct(s[i+1]):
			b.WriteByte(s[i+1])
			i++
		case c == '&':
			if e, n := entity(s[i:]); n > 0 {
				b.WriteString(e)
				i += n - 1
			} else {
				b.WriteByte(c)
			}
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}
