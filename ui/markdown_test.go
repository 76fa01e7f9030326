package ui

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	extast "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/util"
)

func TestRenderMarkdown(t *testing.T) {
	tests := []struct{ in, want string }{
		{"# Title", "<h1>Title</h1>\n"},
		{"para **bold** and *em* and `a<b>`", "<p>para <strong>bold</strong> and <em>em</em> and <code>a&lt;b&gt;</code></p>\n"},
		{"- one\n- two", "<ul>\n<li>one</li>\n<li>two</li>\n</ul>\n"},
		{"1. first\n2. second", "<ol>\n<li>first</li>\n<li>second</li>\n</ol>\n"},
		// goldmark's standard form: the language as a class, the code's
		// last newline kept.
		{"```go\nx := \"<a>\"\n```", "<pre><code class=\"language-go\">x := &quot;&lt;a&gt;&quot;\n</code></pre>\n"},
		{"    indented\n    code", "<pre><code>indented\ncode\n</code></pre>\n"},
		{"> quoted", "<blockquote>\n<p>quoted</p>\n</blockquote>\n"},
		{"---", "<hr>\n"},
		{"[docs](https://example.com/a?b=1&c=2)", `<p><a href="https://example.com/a?b=1&amp;c=2" rel="noopener noreferrer nofollow" target="_blank">docs</a></p>` + "\n"},
		{"[mail](mailto:a@example.com)", `<p><a href="mailto:a@example.com" rel="noopener noreferrer nofollow" target="_blank">mail</a></p>` + "\n"},
		// a link the page does not follow shows its target as text
		{"see [notes](notes.md)", `<p>see notes <span class="link-target">(notes.md)</span></p>` + "\n"},
		{"![diagram](https://example.com/d.png)", `<p>!<a href="https://example.com/d.png" rel="noopener noreferrer nofollow" target="_blank">diagram</a></p>` + "\n"},
		{"- [ ] todo\n- [x] done", "<ul>\n<li>☐ todo</li>\n<li>☑ done</li>\n</ul>\n"},
		// raw HTML is shown as the text it is
		{"Use Vec<String> here", "<p>Use Vec&lt;String&gt; here</p>\n"},
		{"<details>\n<summary>s</summary>\n</details>", "<p>&lt;details&gt;\n&lt;summary&gt;s&lt;/summary&gt;\n&lt;/details&gt;</p>\n"},
		{"<!-- note -->", "<p>&lt;!-- note --&gt;</p>\n"},
		// no GFM tables or strikethrough, as before
		{"| a |\n|---|\n| 1 |", "<p>| a |\n|---|\n| 1 |</p>\n"},
		{"~~gone~~", "<p>~~gone~~</p>\n"},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, RenderMarkdown(tt.in)); diff != "" {
			t.Errorf("RenderMarkdown(%q) (-want +got):\n%s", tt.in, diff)
		}
	}
}

// Nothing a memory holds becomes markup: raw HTML, event handlers, script
// URLs, comments and attribute breakouts all come out as text.
func TestRenderMarkdownEscapes(t *testing.T) {
	attacks := []string{
		"<script>alert(1)</script>",
		"<script>\nalert(1)\n</script>",
		"x <script src=//evil.example/a.js></script> y",
		"<img src=x onerror=alert(1)>",
		"<div onmouseover=\"alert(1)\">hover</div>",
		"text <span onclick=alert(1)>click</span>",
		"<style>body{display:none}</style>",
		"[x](javascript:alert(1))",
		"[x](JaVaScRiPt:alert(1))",
		"[x]( javascript:alert(1) )",
		"[x](&#106;avascript:alert(1))",
		"[x](java&#x09;script:alert(1))",
		"[x](vbscript:msgbox(1))",
		"[x](data:text/html,<script>alert(1)</script>)",
		"[x][r]\n\n[r]: javascript:alert(1)",
		"<javascript:alert(1)>",
		"![x](javascript:alert(1))",
		"![x\" onerror=\"alert(1)](https://a.example/i.png)",
		`[x](https://a.example/" onmouseover="alert(1))`,
		`[x](https://a.example/ "t\" onmouseover=\"alert(1)")`,
		"[<img src=x onerror=alert(1)>](https://a.example/)",
		"```\n</code></pre><script>alert(1)</script>\n```",
		"``` \"><script>alert(1)</script>\nx\n```",
		"```js\" onload=\"alert(1)\nx\n```",
		"# <iframe src=//evil>",
		"- <svg onload=alert(1)>",
		"**<b onclick=alert(1)>x</b>**",
		"<a href=\"javascript:alert(1)\">y</a>",
		"<!-- <script>alert(1)</script> -->",
		"<!--><script>alert(1)</script>-->",
		"<![CDATA[<script>alert(1)</script>]]>",
		"<?php echo 1; ?>",
		"text <!-- hidden --> more",
	}
	for _, a := range attacks {
		got := RenderMarkdown(a)
		low := strings.ToLower(got)
		for _, bad := range []string{"<script", "<img", "<iframe", "<svg", "<style", "<div", "<b ", "<!--", "<![cdata", "<?", "onerror=\"", "onclick=\"", "onmouseover=\"", "onload=\"",
			`href="javascript`, `href="vbscript`, `href="data`} {
			if strings.Contains(low, bad) {
				t.Errorf("RenderMarkdown(%q) = %q holds %q", a, got, bad)
			}
		}
		checkTags(t, a, got)
	}
	// raw HTML is neutralised by showing it, not by dropping it
	if got := RenderMarkdown("<script>alert(1)</script>"); got != "<p>&lt;script&gt;alert(1)&lt;/script&gt;</p>\n" {
		t.Errorf("a script element renders as %q", got)
	}
	if got := RenderMarkdown("a <!-- c --> b"); got != "<p>a &lt;!-- c --&gt; b</p>\n" {
		t.Errorf("an inline comment renders as %q", got)
	}
}

// BenchmarkRenderMarkdown renders a realistic memory body (1.8 KB:
// headings, lists with a task list, code, a quote, links) as the memory
// page does on every open.
func BenchmarkRenderMarkdown(b *testing.B) {
	src, err := os.ReadFile("testdata/memory.md")
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		RenderMarkdown(string(src))
	}
}

var attribute = regexp.MustCompile(`^ ([a-z]+)="([^"<>]*)"`)

// checkTags fails unless every tag in out is one the renderer writes, with
// only the attributes it writes. Text never holds a "<" (it is escaped), so
// each one in out starts a tag.
func checkTags(t *testing.T, in, out string) {
	t.Helper()
	for _, tag := range strings.Split(out, "<")[1:] {
		tag, _, ok := strings.Cut(tag, ">")
		name := strings.TrimPrefix(tag, "/")
		name, attrs, _ := strings.Cut(name, " ")
		switch name {
		case "p", "h1", "h2", "h3", "h4", "h5", "h6", "ul", "ol", "li", "pre", "code", "blockquote", "hr", "br", "strong", "em", "a", "span":
		default:
			t.Errorf("RenderMarkdown(%q) = %q writes tag %q", in, out, name)
			continue
		}
		if !ok {
			t.Errorf("RenderMarkdown(%q) = %q leaves tag %q open", in, out, tag)
		}
		for rest := " " + attrs; attrs != "" && rest != ""; {
			m := attribute.FindStringSubmatch(rest)
			if m == nil {
				t.Errorf("RenderMarkdown(%q) = %q: tag %q has an attribute the renderer does not write", in, out, tag)
				break
			}
			switch key, val := m[1], m[2]; {
			case name == "a" && (key == "href" || key == "rel" && val == "noopener noreferrer nofollow" || key == "target" && val == "_blank"):
			case name == "span" && key == "class" && val == "link-target":
			case name == "code" && key == "class" && strings.HasPrefix(val, "language-"):
			case name == "ol" && key == "start" && strings.Trim(val, "0123456789") == "" && val != "":
			default:
				t.Errorf("RenderMarkdown(%q) = %q writes %s=%q on <%s>", in, out, key, val, name)
			}
			rest = rest[len(m[0]):]
		}
	}
}

// The task-list boxes are parsed by checkBoxParser, which keeps goldmark's
// extension package (and its start-up cost) out of the binary; it must read
// every box as that package's parser does.
func TestCheckBoxParserAgreesWithGoldmarks(t *testing.T) {
	theirs := goldmark.New(
		goldmark.WithParserOptions(parser.WithInlineParsers(util.Prioritized(extension.NewTaskCheckBoxParser(), 0))),
		goldmark.WithRendererOptions(renderer.WithNodeRenderers(
			util.Prioritized(safeHTML{}, 100),
			util.Prioritized(goldmarkBoxes{}, 100))),
	)
	inputs := []string{
		"- [ ] todo\n- [x] done\n- [X] Done",
		"- [\t] tab inside\n- [y] not a box\n- [] empty\n- [ x] wide",
		"1. [x] ordered\n2. [ ] open",
		"[x] not in a list",
		"- text then [x] later",
		"- [x]\n- [ ]",
		"- [x]   spaced\n- [x]\tafter a tab",
		"- outer\n  - [x] nested\n  - [ ] nested open",
		"- [x] first\n\n  second paragraph [ ]",
		"* [x] star\n+ [ ] plus",
		"- [x] [link](https://example.com)",
		"- [x](https://example.com) a link, not a box",
		"> - [x] quoted",
		"- **[x]** bold",
		"- [x",
		"- [",
	}
	for _, in := range inputs {
		var want strings.Builder
		if err := theirs.Convert([]byte(in), &want); err != nil {
			t.Fatal(err)
		}
		if got := RenderMarkdown(in); got != want.String() {
			t.Errorf("RenderMarkdown(%q)\n got %q\nwant %q", in, got, want.String())
		}
	}
}

// goldmarkBoxes renders goldmark's own box node as renderCheckBox renders
// checkBox.
type goldmarkBoxes struct{}

func (goldmarkBoxes) RegisterFuncs(reg renderer.NodeRendererFuncRegisterer) {
	reg.Register(extast.KindTaskCheckBox, func(w util.BufWriter, _ []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
		if entering {
			if node.(*extast.TaskCheckBox).IsChecked {
				w.WriteString("☑ ")
			} else {
				w.WriteString("☐ ")
			}
		}
		return ast.WalkContinue, nil
	})
}
