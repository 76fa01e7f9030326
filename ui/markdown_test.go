package ui

import (
	"strings"
	"testing"
)

func TestRenderMarkdown(t *testing.T) {
	tests := []struct{ in, want string }{
		{"# Title", "<h1>Title</h1>\n"},
		{"para **bold** and *em* and `a<b>`", "<p>para <strong>bold</strong> and <em>em</em> and <code>a&lt;b&gt;</code></p>\n"},
		{"- one\n- two", "<ul>\n<li>one</li>\n<li>two</li>\n</ul>\n"},
		{"1. first\n2. second", "<ol>\n<li>first</li>\n<li>second</li>\n</ol>\n"},
		{"```go\nx := \"<a>\"\n```", "<pre><code data-lang=\"go\">x := &#34;&lt;a&gt;&#34;</code></pre>\n"},
		{"> quoted", "<blockquote>\n<p>quoted</p>\n</blockquote>\n"},
		{"---", "<hr>\n"},
		{"[docs](https://example.com/a?b=1&c=2)", `<p><a href="https://example.com/a?b=1&amp;c=2" rel="noopener noreferrer nofollow" target="_blank">docs</a></p>` + "\n"},
	}
	for _, tt := range tests {
		if got := RenderMarkdown(tt.in); got != tt.want {
			t.Errorf("RenderMarkdown(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// Nothing a memory holds becomes markup: raw HTML, event handlers, script
// URLs and attribute breakouts all come out as text.
func TestRenderMarkdownEscapes(t *testing.T) {
	attacks := []string{
		"<script>alert(1)</script>",
		"<img src=x onerror=alert(1)>",
		"[x](javascript:alert(1))",
		"[x](JaVaScRiPt:alert(1))",
		"[x](data:text/html,<script>alert(1)</script>)",
		`[x](https://a.example/" onmouseover="alert(1))`,
		"```\n</code></pre><script>alert(1)</script>\n```",
		"``` \"><script>alert(1)</script>\nx\n```",
		"# <iframe src=//evil>",
		"- <svg onload=alert(1)>",
		"**<b onclick=alert(1)>x</b>**",
		"<a href=\"javascript:alert(1)\">y</a>",
	}
	for _, a := range attacks {
		got := RenderMarkdown(a)
		low := strings.ToLower(got)
		for _, bad := range []string{"<script", "<img", "<iframe", "<svg", "<b ", "onerror=\"", "onclick=\"", "onmouseover=\"", `href="javascript`, `href="data`, "<a href=\"javascript"} {
			if strings.Contains(low, bad) {
				t.Errorf("RenderMarkdown(%q) = %q holds %q", a, got, bad)
			}
		}
		// every tag in the output is one the renderer writes
		for _, tag := range strings.Split(got, "<")[1:] {
			name := strings.TrimPrefix(strings.FieldsFunc(tag, func(r rune) bool { return r == ' ' || r == '>' })[0], "/")
			switch name {
			case "p", "h1", "h2", "h3", "h4", "h5", "h6", "ul", "ol", "li", "pre", "code", "blockquote", "hr", "strong", "em", "a", "span":
			default:
				t.Errorf("RenderMarkdown(%q) = %q writes tag %q", a, got, name)
			}
		}
	}
}
