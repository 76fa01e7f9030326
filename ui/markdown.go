package ui

import (
	"html"
	"net/url"
	"strconv"
	"strings"
)

// RenderMarkdown renders a memory's body as HTML for the memory page:
// CommonMark's blocks and inlines, and the boxes of task lists ("- [ ]",
// "- [x]") as characters. It is safe to put in a page: every character of
// text is HTML-escaped; raw HTML in the body (tags, comments) is shown as
// text; links are kept only for http, https and mailto URLs, and any other
// target is shown after the link's text; an image is shown as a link to
// it. So nothing in a memory can become live markup or script.
//
// The parser is memdir's own (markdown_block.go, markdown_inline.go), not
// a library's: goldmark, which rendered the page before, builds tables and
// compiles patterns whenever a program that links it starts, about 140
// pages and 2–3 ms of every memdir process, the hook's included, on a
// machine with slow page faults (docs/performance.md). Its output is held
// to goldmark's, with the page's rules for links and raw HTML, by a
// differential test over the labelled sets' memories and CommonMark's
// corner cases (TestRenderMarkdownAgreesWithGoldmark) and by fuzzing
// (FuzzRenderMarkdown, which also holds any input to the tags the page
// writes); goldmark is now a dependency of the tests only.
func RenderMarkdown(src string) string {
	src = strings.ReplaceAll(src, "\r\n", "\n")
	doc, refs := parseBlocks(src)
	r := mdRenderer{refs: refs}
	r.blocks(doc)
	return r.b.String()
}

// mdRenderer writes a parsed document as HTML, in goldmark's layout.
type mdRenderer struct {
	b    strings.Builder
	refs map[string]string
}

func (r *mdRenderer) blocks(parent *mdBlock) {
	for c := parent.first; c != nil; c = c.next {
		r.block(c, parent)
	}
}

func (r *mdRenderer) block(n, parent *mdBlock) {
	b := &r.b
	switch n.kind {
	case mdPara:
		tight := parent.kind == mdItem && parent.parent.tight
		if !tight {
			b.WriteString("<p>")
		}
		r.inlines(parseInlines(paragraphText(n), n.before, r.refs, parent.kind == mdItem && parent.first == n))
		switch {
		case !tight:
			b.WriteString("</p>\n")
		case n.next != nil:
			b.WriteByte('\n')
		}
	case mdHeading:
		h := "h" + string(rune('0'+n.level))
		b.WriteString("<" + h + ">")
		r.inlines(parseInlines(n.text, nil, r.refs, parent.kind == mdItem && parent.first == n))
		b.WriteString("</" + h + ">\n")
	case mdRule:
		b.WriteString("<hr>\n")
	case mdQuote:
		b.WriteString("<blockquote>\n")
		r.blocks(n)
		b.WriteString("</blockquote>\n")
	case mdList:
		tag := "ul"
		if n.ordered {
			tag = "ol"
		}
		b.WriteString("<" + tag)
		if n.ordered && n.start != 1 {
			b.WriteString(` start="` + strconv.Itoa(n.start) + `"`)
		}
		b.WriteString(">\n")
		r.blocks(n)
		b.WriteString("</" + tag + ">\n")
	case mdItem:
		b.WriteString("<li>")
		if n.first != nil && !(n.first.kind == mdPara && n.parent.tight) {
			b.WriteByte('\n')
		}
		r.blocks(n)
		b.WriteString("</li>\n")
	case mdFence, mdIndented:
		b.WriteString("<pre><code")
		if lang, _, _ := strings.Cut(n.info, " "); n.kind == mdFence && lang != "" {
			b.WriteString(` class="language-`)
			escapeText(b, unescapeText(lang))
			b.WriteString(`"`)
		}
		b.WriteString(">")
		for _, l := range n.lines {
			escapeText(b, l)
			b.WriteByte('\n')
		}
		b.WriteString("</code></pre>\n")
	case mdHTML:
		// A block of HTML is a paragraph of its text.
		b.WriteString("<p>" + html.EscapeString(strings.TrimRight(strings.Join(n.lines, "\n"), "\n")) + "</p>\n")
	}
}

// paragraphText is a paragraph's lines as its inlines are parsed: the
// last line's trailing white space dropped.
func paragraphText(n *mdBlock) string {
	return strings.TrimRight(strings.Join(n.lines, "\n"), " \t\r")
}

func (r *mdRenderer) inlines(n *mdInline) {
	b := &r.b
	for ; n != nil; n = n.next {
		switch n.kind {
		case inText:
			escapeText(b, n.text)
		case inSoftBreak:
			b.WriteByte('\n')
		case inHardBreak:
			b.WriteString("<br>\n")
		case inCode:
			b.WriteString("<code>")
			escapeText(b, n.text)
			b.WriteString("</code>")
		case inRawHTML:
			// Raw HTML is shown as the text it is.
			b.WriteString(html.EscapeString(n.text))
		case inEmph, inStrong:
			tag := "em"
			if n.kind == inStrong {
				tag = "strong"
			}
			b.WriteString("<" + tag + ">")
			r.inlines(n.first)
			b.WriteString("</" + tag + ">")
		case inLink, inImage:
			// An image is "!" and a link to it, its alternative text the
			// link's: the page shows no image from a memory.
			if n.kind == inImage {
				b.WriteString("!")
			}
			r.writeLink(n.dest, true)
			r.inlines(n.first)
			r.writeLink(n.dest, false)
		case inAutoLink:
			target := n.text
			if n.email && !strings.HasPrefix(strings.ToLower(target), "mailto:") {
				target = "mailto:" + target
			}
			if href, ok := safeURL(target); ok {
				r.openLink(href)
				b.WriteString(html.EscapeString(n.text) + "</a>")
			} else {
				b.WriteString(html.EscapeString("<" + n.text + ">"))
			}
		case inCheckBox:
			// A task list's box is a character and a space, not a form
			// control.
			if n.checked {
				b.WriteString("☑ ")
			} else {
				b.WriteString("☐ ")
			}
		}
	}
}

// writeLink writes the opening (entering) or closing of a link to target:
// a link to a safe URL, opened apart from the page; for anything else the
// link's text stays and the target follows it, as text.
func (r *mdRenderer) writeLink(target string, entering bool) {
	href, safe := safeURL(target)
	switch {
	case entering && safe:
		r.openLink(href)
	case safe:
		r.b.WriteString("</a>")
	case !entering:
		r.b.WriteString(` <span class="link-target">(` + html.EscapeString(target) + ")</span>")
	}
}

// openLink opens a link to href (a safeURL), in a tab of its own and
// telling the target nothing of the page.
func (r *mdRenderer) openLink(href string) {
	r.b.WriteString(`<a href="` + html.EscapeString(href) + `" rel="noopener noreferrer nofollow" target="_blank">`)
}

// safeURL accepts absolute http, https and mailto URLs only.
func safeURL(raw string) (string, bool) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", false
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "https", "mailto":
		return u.String(), true
	}
	return "", false
}

// escapeText writes s with &, <, > and " escaped, NUL as U+FFFD.
func escapeText(b *strings.Builder, s string) {
	start := 0
	for i := 0; i < len(s); i++ {
		var rep string
		switch s[i] {
		case '&':
			rep = "&amp;"
		case '<':
			rep = "&lt;"
		case '>':
			rep = "&gt;"
		case '"':
			rep = "&quot;"
		case 0:
			rep = "\uFFFD"
		default:
			continue
		}
		b.WriteString(s[start:i])
		b.WriteString(rep)
		start = i + 1
	}
	b.WriteString(s[start:])
}
