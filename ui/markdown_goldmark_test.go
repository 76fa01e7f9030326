package ui

// The page's Markdown as goldmark renders it, with the rules the page
// applies to links and raw HTML: the reference RenderMarkdown is held to
// (TestRenderMarkdownAgreesWithGoldmark). It was the page's renderer until
// memdir's own parser replaced it, to keep goldmark's start-up cost out of
// every memdir process; here it is linked into the tests only.

import (
	"bytes"
	"html"
	"strconv"
	"strings"
	"sync"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// goldmarkRender renders src as the page did with goldmark.
func goldmarkRender(src string) string {
	var b bytes.Buffer
	if err := goldmarkPage().Convert([]byte(strings.ReplaceAll(src, "\r\n", "\n")), &b); err != nil {
		return "<pre>" + html.EscapeString(src) + "</pre>\n"
	}
	return b.String()
}

// markdown is CommonMark, as goldmark parses it, with task-list boxes and
// nothing else of GFM (no tables, strikethrough or bare-URL links, which
// the page never rendered). safeHTML renders what could carry markup or a
// script: raw HTML, links and images.
//
// The boxes are parsed here (checkBoxParser) rather than by goldmark's
// extension package, whose bare-URL patterns are compiled when any program
// that links it starts: 3 ms of every memdir process, the hook's included,
// on a machine with slow page faults. It is built on first use for the
// same reason.
var goldmarkPage = sync.OnceValue(func() goldmark.Markdown {
	return goldmark.New(
		goldmark.WithParserOptions(parser.WithInlineParsers(util.Prioritized(checkBoxParser{}, 0))),
		goldmark.WithRendererOptions(renderer.WithNodeRenderers(util.Prioritized(safeHTML{}, 100))),
	)
})

// checkBox is the box that opens a task list's item: "- [ ] todo".
type checkBox struct {
	ast.BaseInline
	checked bool
}

var kindCheckBox = ast.NewNodeKind("CheckBox")

func (n *checkBox) Kind() ast.NodeKind { return kindCheckBox }

func (n *checkBox) Dump(src []byte, level int) {
	ast.DumpHelper(n, src, level, map[string]string{"Checked": strconv.FormatBool(n.checked)}, nil)
}

// checkBoxParser reads "[ ]", "[x]" or "[X]" (any one white-space character
// inside counts as empty) and the white space after it, where it is the
// first thing in the first block of a list item. It runs before the link
// parser, which would otherwise take "[x]" as a link's text.
type checkBoxParser struct{}

func (checkBoxParser) Trigger() []byte { return []byte{'['} }

func (checkBoxParser) Parse(parent ast.Node, block text.Reader, _ parser.Context) ast.Node {
	item := parent.Parent()
	if item == nil || item.FirstChild() != parent || parent.HasChildren() {
		return nil
	}
	if _, ok := item.(*ast.ListItem); !ok {
		return nil
	}
	line, _ := block.PeekLine()
	if len(line) < 3 || line[0] != '[' || line[2] != ']' {
		return nil
	}
	mark := line[1]
	if mark != 'x' && mark != 'X' && !isMarkdownSpace(mark) {
		return nil
	}
	n := 3
	for n < len(line) && isMarkdownSpace(line[n]) {
		n++
	}
	block.Advance(n)
	return &checkBox{checked: !isMarkdownSpace(mark)}
}

func (checkBoxParser) CloseBlock(ast.Node, parser.Context) {}

// safeHTML replaces goldmark's HTML renderer for the nodes that could
// carry markup (goldmark's own default drops raw HTML, where the page has
// always shown it as text).
type safeHTML struct{}

func (safeHTML) RegisterFuncs(reg renderer.NodeRendererFuncRegisterer) {
	reg.Register(ast.KindRawHTML, renderRawHTML)
	reg.Register(ast.KindHTMLBlock, renderHTMLBlock)
	reg.Register(ast.KindLink, renderLink)
	reg.Register(ast.KindImage, renderImage)
	reg.Register(ast.KindAutoLink, renderAutoLink)
	reg.Register(kindCheckBox, renderCheckBox)
}

// renderRawHTML writes an inline tag or comment as the text it is.
func renderRawHTML(w util.BufWriter, src []byte, n ast.Node, entering bool) (ast.WalkStatus, error) {
	if entering {
		segs := n.(*ast.RawHTML).Segments
		for i := range segs.Len() {
			seg := segs.At(i)
			w.WriteString(html.EscapeString(string(seg.Value(src))))
		}
	}
	return ast.WalkSkipChildren, nil
}

// renderHTMLBlock writes a block of HTML as a paragraph of its text.
func renderHTMLBlock(w util.BufWriter, src []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkContinue, nil
	}
	n := node.(*ast.HTMLBlock)
	var text strings.Builder
	for i := range n.Lines().Len() {
		seg := n.Lines().At(i)
		text.Write(seg.Value(src))
	}
	if n.HasClosure() {
		text.Write(n.ClosureLine.Value(src))
	}
	w.WriteString("<p>" + html.EscapeString(strings.TrimRight(text.String(), "\n")) + "</p>\n")
	return ast.WalkSkipChildren, nil
}

// renderLink writes a link to a safe URL, opened apart from the page; a
// link to anything else is its text followed by the target, as text.
func renderLink(w util.BufWriter, _ []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	writeGoldmarkLink(w, string(node.(*ast.Link).Destination), entering)
	return ast.WalkContinue, nil
}

// renderImage writes an image as "!" and a link to it, its alternative
// text the link's: the page shows no image from a memory.
func renderImage(w util.BufWriter, _ []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if entering {
		w.WriteString("!")
	}
	writeGoldmarkLink(w, string(node.(*ast.Image).Destination), entering)
	return ast.WalkContinue, nil
}

func writeGoldmarkLink(w util.BufWriter, target string, entering bool) {
	href, safe := safeURL(target)
	switch {
	case entering && safe:
		w.WriteString(`<a href="` + html.EscapeString(href) + `" rel="noopener noreferrer nofollow" target="_blank">`)
	case safe:
		w.WriteString("</a>")
	case !entering:
		w.WriteString(` <span class="link-target">(` + html.EscapeString(target) + ")</span>")
	}
}

// renderAutoLink writes <https://…> and <user@host> as links when their
// URL is safe, else as the text they are.
func renderAutoLink(w util.BufWriter, src []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkContinue, nil
	}
	n := node.(*ast.AutoLink)
	label, target := string(n.Label(src)), string(n.URL(src))
	if n.AutoLinkType == ast.AutoLinkEmail && !strings.HasPrefix(strings.ToLower(target), "mailto:") {
		target = "mailto:" + target
	}
	if href, ok := safeURL(target); ok {
		w.WriteString(`<a href="` + html.EscapeString(href) + `" rel="noopener noreferrer nofollow" target="_blank">` + html.EscapeString(label) + "</a>")
	} else {
		w.WriteString(html.EscapeString("<" + label + ">"))
	}
	return ast.WalkContinue, nil
}

// renderCheckBox writes a task list's box as a character and a space (the
// parser takes the space after "[ ]"), not as a form control.
func renderCheckBox(w util.BufWriter, _ []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if entering {
		if node.(*checkBox).checked {
			w.WriteString("☑ ")
		} else {
			w.WriteString("☐ ")
		}
	}
	return ast.WalkContinue, nil
}
