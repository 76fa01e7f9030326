package ui

import (
	"slices"
	"strings"
)

// The block structure of a Markdown text, parsed line by line as the
// CommonMark specification describes: each line first continues the open
// container blocks it can (block quotes, list items, fenced code…), then
// may open new ones, and what is left is added to the innermost open
// block, or continues a paragraph lazily.

type mdKind uint8

const (
	mdDoc mdKind = iota
	mdQuote
	mdList
	mdItem
	mdPara
	mdHeading
	mdRule
	mdFence
	mdIndented
	mdHTML
)

// mdBlock is a block of the document: a container (the document, a
// quote, a list, an item) or a leaf.
type mdBlock struct {
	links[mdBlock]
	kind      mdKind
	open      bool
	startLine int
	// lastLineBlank: the block's last line was blank; checked: that was
	// looked for through its last children (endsWithBlankLine).
	lastLineBlank, checked bool
	lines                  []string // a leaf's text, line by line
	// before holds, by line of a paragraph, the character of the source
	// line just before the text: a container's marker, white space, or a
	// line end. Emphasis reads it as goldmark does (see runeBefore).
	before []byte

	level int    // a heading's
	text  string // a heading's

	// A list's kind, its first number, and whether it is tight.
	ordered       bool
	bullet, delim byte
	start         int
	tight         bool
	// An item's: the columns before its marker, and from the marker to
	// its text.
	markerOffset, padding int
	// A fenced code block's fence, its indentation, and its info string.
	fenceChar   byte
	fenceLen    int
	fenceOffset int
	info        string
	htmlType    int // an HTML block's type, as the specification numbers them
}

// acceptsLines reports whether a block of kind k takes the rest of a
// line as its own text.
func acceptsLines(k mdKind) bool {
	return k == mdPara || k == mdFence || k == mdIndented || k == mdHTML
}

// canContain reports whether a block of kind parent may hold one of
// kind child.
func canContain(parent, child mdKind) bool {
	switch parent {
	case mdDoc, mdQuote, mdItem:
		return child != mdItem
	case mdList:
		return child == mdItem
	}
	return false
}

type blockParser struct {
	doc, tip, oldTip, lastMatched *mdBlock
	refs                          map[string]string

	line                          string
	lineNo                        int
	offset, column                int
	nextNonspace, nextNonspaceCol int
	indent                        int
	indented, blank, partialTab   bool
	allClosed                     bool
}

// parseBlocks parses src into its blocks, and the link reference
// definitions it holds (by normalised label).
func parseBlocks(src string) (*mdBlock, map[string]string) {
	p := &blockParser{refs: map[string]string{}}
	p.doc = &mdBlock{kind: mdDoc, open: true}
	p.tip = p.doc
	src = strings.TrimSuffix(src, "\n")
	for l := range strings.SplitSeq(src, "\n") {
		p.lineNo++
		p.addLine(l)
	}
	for p.tip != nil {
		p.finalize(p.tip)
	}
	return p.doc, p.refs
}

func (p *blockParser) peek() byte {
	if p.offset < len(p.line) {
		return p.line[p.offset]
	}
	return 0
}

func isSpaceOrTab(c byte) bool { return c == ' ' || c == '\t' }

func (p *blockParser) findNextNonspace() {
	i, cols := p.offset, p.column
	for i < len(p.line) {
		c := p.line[i]
		if c == ' ' {
			i++
			cols++
		} else if c == '\t' {
			i++
			cols += 4 - cols%4
		} else {
			break
		}
	}
	// A line of white space is blank, a lone CR (not a line end here)
	// counting as white space.
	p.blank = strings.Trim(p.line[i:], " \t\r") == ""
	p.nextNonspace, p.nextNonspaceCol = i, cols
	p.indent = cols - p.column
	p.indented = p.indent >= 4
}

func (p *blockParser) advanceNextNonspace() {
	p.offset, p.column = p.nextNonspace, p.nextNonspaceCol
	p.partialTab = false
}

// advanceOffset moves count bytes on, or count columns when columns is
// set, a tab counting to the next tab stop (and partly, when only some of
// its columns are taken).
func (p *blockParser) advanceOffset(count int, columns bool) {
	for count > 0 && p.offset < len(p.line) {
		c := p.line[p.offset]
		if c == '\t' {
			width := 4 - p.column%4
			if columns {
				p.partialTab = width > count
				take := min(width, count)
				p.column += take
				if !p.partialTab {
					p.offset++
				}
				count -= take
			} else {
				p.partialTab = false
				p.column += width
				p.offset++
				count--
			}
		} else {
			p.partialTab = false
			p.offset++
			p.column++
			count--
		}
	}
}

func (p *blockParser) addChild(kind mdKind) *mdBlock {
	for !canContain(p.tip.kind, kind) {
		p.finalize(p.tip)
	}
	b := &mdBlock{kind: kind, open: true, startLine: p.lineNo}
	appendChild(p.tip, b)
	p.tip = b
	return b
}

func (p *blockParser) closeUnmatched() {
	if !p.allClosed {
		for p.oldTip != p.lastMatched {
			parent := p.oldTip.parent
			p.finalize(p.oldTip)
			p.oldTip = parent
		}
		p.allClosed = true
	}
}

// addText adds the rest of the line to the tip, a partly taken tab as
// the spaces left of it.
func (p *blockParser) addText() {
	before := byte('\n')
	if p.offset > 0 && p.offset <= len(p.line) {
		before = p.line[p.offset-1]
	}
	s := p.line[min(p.offset, len(p.line)):]
	if p.partialTab {
		p.offset++
		s = strings.Repeat(" ", 4-p.column%4) + p.line[min(p.offset, len(p.line)):]
		before = ' '
	}
	p.tip.lines = append(p.tip.lines, s)
	p.tip.before = append(p.tip.before, before)
}

// trimParagraph drops each line's leading white space, as a paragraph's
// text is read, the character before a line becoming the last dropped.
func trimParagraph(b *mdBlock) {
	for i, l := range b.lines {
		t := strings.TrimLeft(l, " \t\r")
		if len(t) < len(l) && i < len(b.before) {
			b.before[i] = l[len(l)-len(t)-1]
		}
		b.lines[i] = t
	}
}

// takeQuoteMarker takes the > at the next non-space and one space or
// tab column after it.
func (p *blockParser) takeQuoteMarker() {
	p.advanceNextNonspace()
	p.advanceOffset(1, false)
	if isSpaceOrTab(p.peek()) {
		p.advanceOffset(1, true)
	}
}

// continueFence continues fenced code block b: 2 when the line closes
// it, else 0, the fence's indentation taken off the line (all of a
// shorter one, but a blank line keeps its spaces, as goldmark reads it).
func (p *blockParser) continueFence(b *mdBlock) int {
	if !p.indented {
		rest := p.line[p.nextNonspace:]
		n := 0
		for n < len(rest) && rest[n] == b.fenceChar {
			n++
		}
		if n >= b.fenceLen && strings.Trim(rest[n:], " \t\r") == "" {
			p.finalize(b)
			return 2
		}
	}
	if p.blank && p.indent < b.fenceOffset {
		return 0
	}
	for i := b.fenceOffset; i > 0 && isSpaceOrTab(p.peek()); i-- {
		p.advanceOffset(1, true)
	}
	return 0
}

// continues tries to continue the open block b with the line: 0 it does,
// 1 it does not, 2 it does and the line is used up (a closing fence).
func (p *blockParser) continues(b *mdBlock) int {
	switch b.kind {
	case mdDoc, mdList:
		return 0
	case mdQuote:
		if !p.indented && p.nextNonspace < len(p.line) && p.line[p.nextNonspace] == '>' {
			p.takeQuoteMarker()
			return 0
		}
		return 1
	case mdItem:
		if p.blank {
			if b.first == nil {
				return 1 // a blank line after an empty item ends it
			}
			p.advanceNextNonspace()
			return 0
		}
		if p.indent >= b.markerOffset+b.padding {
			p.advanceOffset(b.markerOffset+b.padding, true)
			return 0
		}
		return 1
	case mdFence:
		return p.continueFence(b)
	case mdIndented:
		if p.indent >= 4 {
			p.advanceOffset(4, true)
			return 0
		}
		if p.blank {
			p.advanceNextNonspace()
			return 0
		}
		return 1
	case mdHTML:
		if p.blank && (b.htmlType == 6 || b.htmlType == 7) {
			return 1
		}
		return 0
	case mdPara:
		if p.blank {
			return 1
		}
		return 0
	}
	return 1 // headings and rules hold one line
}

func (p *blockParser) addLine(line string) {
	p.line = line
	p.offset, p.column, p.partialTab = 0, 0, false
	p.blank = false
	container := p.doc
	p.oldTip = p.tip
	allMatched := true
	for c := container.last; c != nil && c.open; c = container.last {
		container = c
		p.findNextNonspace()
		switch p.continues(c) {
		case 1:
			allMatched = false
		case 2:
			return
		}
		if !allMatched {
			container = container.parent
			break
		}
	}
	p.allClosed = container == p.oldTip
	p.lastMatched = container

	matchedLeaf := container.kind != mdPara && acceptsLines(container.kind)
	for !matchedLeaf {
		p.findNextNonspace()
		if !p.indented && !maybeSpecial(p.line[p.nextNonspace:]) {
			p.advanceNextNonspace()
			break
		}
		started := p.startBlock(container)
		if started == 0 {
			p.advanceNextNonspace()
			break
		}
		container = p.tip
		if started == 2 {
			matchedLeaf = true
		}
	}

	if !p.allClosed && !p.blank && p.tip.kind == mdPara {
		p.addText() // a lazy continuation line
		return
	}
	p.closeUnmatched()
	if p.blank && container.last != nil {
		container.last.lastLineBlank = true
	}
	k := container.kind
	lastBlank := p.blank && !(k == mdQuote || k == mdFence || k == mdItem && container.first == nil && container.startLine == p.lineNo)
	for c := container; c != nil; c = c.parent {
		c.lastLineBlank = lastBlank
	}
	switch {
	case acceptsLines(k):
		p.addText()
		if k == mdHTML && htmlBlockEnds(container.htmlType, p.line[min(p.offset, len(p.line)):]) {
			p.finalize(container)
		}
	case p.offset < len(p.line) && !p.blank:
		p.addChild(mdPara)
		p.advanceNextNonspace()
		p.addText()
	}
}

// maybeSpecial reports whether a line (from its first non-space) could
// start a block other than a paragraph.
func maybeSpecial(s string) bool {
	if s == "" {
		return false
	}
	switch c := s[0]; {
	case strings.IndexByte("#`~*+_=<>-", c) >= 0:
		return true
	case '0' <= c && c <= '9':
		return true
	}
	return false
}

// startBlock tries each kind of block that can start here: 0 none did,
// 1 a container started, 2 a leaf started.
func (p *blockParser) startBlock(container *mdBlock) int {
	if !p.indented {
		if started := p.startUnindented(container, p.line[p.nextNonspace:]); started != 0 {
			return started
		}
	}
	if (!p.indented || container.kind == mdList) && p.listItem(container) {
		return 1
	}
	if p.indented && p.tip.kind != mdPara && !p.blank {
		p.advanceOffset(4, true)
		p.closeUnmatched()
		p.addChild(mdIndented)
		return 2
	}
	return 0
}

// startUnindented tries the blocks that start at an indentation under
// four columns, other than list items, at rest (the line from its first
// non-space), as startBlock reports them.
func (p *blockParser) startUnindented(container *mdBlock, rest string) int {
	switch {
	case rest[0] == '>':
		p.takeQuoteMarker()
		p.closeUnmatched()
		p.addChild(mdQuote)
		return 1
	case rest[0] == '#':
		if level, text, ok := atxHeading(rest); ok {
			p.advanceNextNonspace()
			p.closeUnmatched()
			h := p.addChild(mdHeading)
			h.level, h.text = level, text
			p.offset = len(p.line)
			return 2
		}
	case rest[0] == '`' || rest[0] == '~':
		if n := fenceOpening(rest); n > 0 {
			p.closeUnmatched()
			f := p.addChild(mdFence)
			f.fenceChar, f.fenceLen, f.fenceOffset = rest[0], n, p.indent
			f.info = strings.Trim(rest[n:], " \t\r")
			p.offset = len(p.line)
			return 2
		}
	case rest[0] == '<':
		for t := 1; t <= 7; t++ {
			if htmlBlockStarts(t, rest) && (t < 7 || container.kind != mdPara && (p.allClosed || p.blank || p.tip.kind != mdPara)) {
				p.closeUnmatched()
				h := p.addChild(mdHTML)
				h.htmlType = t
				return 2
			}
		}
	}
	if container.kind == mdPara && (rest[0] == '=' || rest[0] == '-') && setextUnderline(rest) {
		p.closeUnmatched()
		p.takeRefs(container)
		if len(container.lines) > 0 {
			h := &mdBlock{kind: mdHeading, startLine: container.startLine, open: true}
			h.text = strings.Trim(strings.Join(container.lines, "\n"), " \t\r") // lines trimmed by takeRefs
			h.level = 2
			if rest[0] == '=' {
				h.level = 1
			}
			appendChild(container.parent, h)
			unlink(container)
			p.tip = h
			p.offset = len(p.line)
			return 2
		}
	}
	if thematicBreak(rest) {
		p.closeUnmatched()
		p.addChild(mdRule)
		p.offset = len(p.line)
		return 2
	}
	return 0
}

// listItem starts a list item (and its list when needed) when the line
// holds a list marker here.
func (p *blockParser) listItem(container *mdBlock) bool {
	if p.indent >= 4 {
		return false
	}
	rest := p.line[p.nextNonspace:]
	bullet, delim, start, markerLen := listMarker(rest)
	if markerLen == 0 {
		return false
	}
	if container.kind == mdPara && (delim != 0 && start != 1 || strings.Trim(rest[markerLen:], " \t\r") == "") {
		// Only a list from 1, and not an empty item, can interrupt a
		// paragraph.
		return false
	}
	p.advanceNextNonspace()
	p.advanceOffset(markerLen, true)
	startCol, startOff := p.column, p.offset
	for {
		p.advanceOffset(1, true)
		if !(p.column-startCol < 5 && isSpaceOrTab(p.peek())) {
			break
		}
	}
	blankItem := p.offset >= len(p.line)
	spaces := p.column - startCol
	padding := markerLen + spaces
	if spaces >= 5 || spaces < 1 || blankItem {
		padding = markerLen + 1
		p.column, p.offset, p.partialTab = startCol, startOff, false
		if isSpaceOrTab(p.peek()) {
			p.advanceOffset(1, true)
		}
	}
	p.closeUnmatched()
	if t := p.tip; t.kind != mdList || t.ordered != (delim != 0) || t.bullet != bullet || t.delim != delim {
		l := p.addChild(mdList)
		l.ordered, l.bullet, l.delim, l.start, l.tight = delim != 0, bullet, delim, start, true
	}
	item := p.addChild(mdItem)
	item.markerOffset, item.padding = p.indent, padding
	return true
}

// listMarker reads the list marker that starts s, followed by white
// space or nothing: a bullet, or an ordered list's number and delimiter,
// and the marker's length (0 for none).
func listMarker(s string) (bullet, delim byte, start, n int) {
	switch c := s[0]; {
	case c == '*' || c == '+' || c == '-':
		bullet, n = c, 1
	case '0' <= c && c <= '9':
		for n < len(s) && n < 10 && '0' <= s[n] && s[n] <= '9' {
			start = start*10 + int(s[n]-'0')
			n++
		}
		if n > 9 || n >= len(s) || s[n] != '.' && s[n] != ')' {
			return 0, 0, 0, 0
		}
		delim = s[n]
		n++
	default:
		return 0, 0, 0, 0
	}
	if n < len(s) && !isSpaceOrTab(s[n]) {
		return 0, 0, 0, 0
	}
	return bullet, delim, start, n
}

func atxHeading(s string) (int, string, bool) {
	n := 0
	for n < len(s) && s[n] == '#' {
		n++
	}
	if n > 6 || n < len(s) && !isSpaceOrTab(s[n]) && s[n] != '\r' {
		return 0, "", false
	}
	text := strings.Trim(s[n:], " \t\r")
	// A closing run of #s goes, when white space (or nothing) is before it.
	if t := strings.TrimRight(text, "#"); t == "" {
		text = ""
	} else if len(t) < len(text) && strings.IndexByte(" \t\r", t[len(t)-1]) >= 0 {
		text = strings.TrimRight(t, " \t\r")
	}
	return n, text, true
}

// fenceOpening returns the length of the fence that opens s, or 0.
func fenceOpening(s string) int {
	c := s[0]
	n := 0
	for n < len(s) && s[n] == c {
		n++
	}
	if n < 3 || c == '`' && strings.IndexByte(s[n:], '`') >= 0 {
		return 0
	}
	return n
}

func setextUnderline(s string) bool {
	c := s[0]
	t := strings.TrimRight(s, " \t\r")
	return strings.Trim(t, string(c)) == ""
}

func thematicBreak(s string) bool {
	c := s[0]
	if c != '*' && c != '-' && c != '_' {
		return false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case c:
			n++
		case ' ', '\t', '\r':
		default:
			return false
		}
	}
	return n >= 3
}

// finalize closes b: a paragraph gives up its link reference
// definitions (and goes if nothing else is left), indented code its
// trailing blank lines, a list learns whether it is tight.
func (p *blockParser) finalize(b *mdBlock) {
	parent := b.parent
	b.open = false
	switch b.kind {
	case mdPara:
		p.takeRefs(b)
		if len(b.lines) == 0 {
			unlink(b)
		}
	case mdFence:
		// The first line held the opening fence and its info string.
		if len(b.lines) > 0 {
			b.lines = b.lines[1:]
		}
	case mdIndented:
		for len(b.lines) > 0 && strings.Trim(b.lines[len(b.lines)-1], " \t\r") == "" {
			b.lines = b.lines[:len(b.lines)-1]
		}
	case mdList:
		b.tight = true
	items:
		for item := b.first; item != nil; item = item.next {
			if item.next != nil && endsWithBlankLine(item) {
				b.tight = false
				break
			}
			for sub := item.first; sub != nil; sub = sub.next {
				if sub.next != nil && endsWithBlankLine(sub) {
					b.tight = false
					break items
				}
			}
		}
	}
	p.tip = parent
}

func endsWithBlankLine(b *mdBlock) bool {
	for b != nil {
		if b.lastLineBlank {
			return true
		}
		if !b.checked && (b.kind == mdList || b.kind == mdItem) {
			b.checked = true
			b = b.last
		} else {
			b.checked = true
			break
		}
	}
	return false
}

// takeRefs takes the link reference definitions that open paragraph b's
// text out of it.
func (p *blockParser) takeRefs(b *mdBlock) {
	trimParagraph(b)
	text := strings.Join(b.lines, "\n")
	taken := false
	for strings.HasPrefix(text, "[") {
		n := p.linkRefDef(text)
		if n == 0 {
			break
		}
		text = text[n:]
		taken = true
	}
	if !taken {
		return
	}
	if strings.Trim(text, " \t\n") == "" {
		b.lines, b.before = nil, nil
		return
	}
	// Definitions take whole lines: what is left is the last lines.
	b.lines = strings.Split(text, "\n")
	b.before = b.before[len(b.before)-len(b.lines):]
}

// linkRefDef reads one definition at the start of s, records it unless
// its label is taken, and returns the bytes it used (its line end
// included), or 0.
func (p *blockParser) linkRefDef(s string) int {
	label, n := linkLabel(s)
	if n == 0 || n >= len(s) || s[n] != ':' {
		return 0
	}
	i := skipSpaceNL(s, n+1)
	dest, m, ok := linkDestination(s[i:])
	if !ok {
		return 0
	}
	i += m
	beforeTitle := i
	j := skipSpaceNL(s, i)
	end := -1
	if j > i && j < len(s) {
		if t := linkTitle(s[j:]); t > 0 {
			if k := lineEnd(s, j+t); k >= 0 {
				end = k
			}
		}
	}
	if end < 0 {
		k := lineEnd(s, beforeTitle)
		if k < 0 {
			return 0
		}
		end = k
	}
	key := normLabel(label)
	if key == "" {
		return 0
	}
	if _, ok := p.refs[key]; !ok {
		p.refs[key] = dest
	}
	return end
}

// lineEnd returns the offset just past the end of the line at s[i:]
// when only spaces are left on it, or -1.
func lineEnd(s string, i int) int {
	for i < len(s) && isSpaceOrTab(s[i]) {
		i++
	}
	switch {
	case i == len(s):
		return i
	case s[i] == '\n':
		return i + 1
	}
	return -1
}

// skipSpaceNL skips spaces and tabs and at most one line end.
func skipSpaceNL(s string, i int) int {
	nl := false
	for i < len(s) {
		switch s[i] {
		case ' ', '\t', '\r':
		case '\n':
			if nl {
				return i
			}
			nl = true
		default:
			return i
		}
		i++
	}
	return i
}

// blockTags are the tag names that start an HTML block of type 6.
var blockTags = map[string]bool{
	"address": true, "article": true, "aside": true, "base": true, "basefont": true, "blockquote": true,
	"body": true, "caption": true, "center": true, "col": true, "colgroup": true, "dd": true,
	"details": true, "dialog": true, "dir": true, "div": true, "dl": true, "dt": true,
	"fieldset": true, "figcaption": true, "figure": true, "footer": true, "form": true, "frame": true,
	"frameset": true, "h1": true, "h2": true, "h3": true, "h4": true, "h5": true, "h6": true,
	"head": true, "header": true, "hr": true, "html": true, "iframe": true, "legend": true,
	"li": true, "link": true, "main": true, "menu": true, "menuitem": true, "meta": true,
	"nav": true, "noframes": true, "ol": true, "optgroup": true, "option": true, "p": true,
	"param": true, "search": true, "section": true, "summary": true, "table": true, "tbody": true,
	"td": true, "tfoot": true, "th": true, "thead": true, "title": true, "tr": true,
	"track": true, "ul": true,
}

// rawTags start an HTML block of type 1, which ends at their closing tag.
var rawTags = []string{"script", "pre", "style", "textarea"}

// htmlBlockStarts reports whether s (a line from its first non-space)
// starts an HTML block of type t, as the specification numbers them.
func htmlBlockStarts(t int, s string) bool {
	switch t {
	case 1:
		low := strings.ToLower(s)
		for _, tag := range rawTags {
			if rest, ok := strings.CutPrefix(low, "<"+tag); ok && (rest == "" || rest[0] == '>' || isSpaceOrTab(rest[0])) {
				return true
			}
		}
	case 2:
		return strings.HasPrefix(s, "<!--")
	case 3:
		return strings.HasPrefix(s, "<?")
	case 4:
		// An upper-case letter, as goldmark reads it (the specification
		// now takes any letter).
		return len(s) > 2 && s[1] == '!' && s[2] >= 'A' && s[2] <= 'Z'
	case 5:
		return strings.HasPrefix(s, "<![CDATA[")
	case 6:
		return blockTagStart(s)
	case 7:
		return wholeTagLine(s)
	}
	return false
}

// blockTagStart reports whether s opens or closes one of blockTags.
func blockTagStart(s string) bool {
	i := 1
	if strings.HasPrefix(s, "</") {
		i = 2
	}
	j := i
	for j < len(s) && isAlnum(s[j]) {
		j++
	}
	if !blockTags[strings.ToLower(s[i:j])] {
		return false
	}
	rest := s[j:]
	return rest == "" || isSpaceOrTab(rest[0]) || rest[0] == '>' || strings.HasPrefix(rest, "/>")
}

// wholeTagLine reports whether s is one complete open or closing tag,
// of any name but rawTags', and spaces after it.
func wholeTagLine(s string) bool {
	var name string
	n := 0
	if strings.HasPrefix(s, "</") {
		// goldmark lets spaces follow the slash.
		i := 2
		for i < len(s) && s[i] == ' ' {
			i++
		}
		end := tagName(s, i)
		if end == 0 {
			return false
		}
		name = s[i:end]
		for end < len(s) && isSpaceOrTab(s[end]) {
			end++
		}
		if end >= len(s) || s[end] != '>' {
			return false
		}
		n = end + 1
	} else {
		if n = openTag(s); n == 0 {
			return false
		}
		name = s[1:tagName(s, 1)]
	}
	return !slices.Contains(rawTags, strings.ToLower(name)) && strings.Trim(s[n:], " ") == ""
}

// htmlBlockEnds reports whether the line s ends an HTML block of type t
// (types 6 and 7 end at a blank line instead).
func htmlBlockEnds(t int, s string) bool {
	low := strings.ToLower(s)
	switch t {
	case 1:
		for _, tag := range rawTags {
			if strings.Contains(low, "</"+tag+">") {
				return true
			}
		}
	case 2:
		return strings.Contains(s, "-->")
	case 3:
		return strings.Contains(s, "?>")
	case 4:
		return strings.Contains(s, ">")
	case 5:
		return strings.Contains(s, "]]>")
	}
	return false
}
