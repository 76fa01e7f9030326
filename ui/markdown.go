package ui

import (
	"html"
	"net/url"
	"strings"
)

// RenderMarkdown turns a memory body into HTML for the page. It knows the
// Markdown memories use (headings, paragraphs, lists, block quotes, fenced
// and indented code, rules, emphasis, inline code and links) and nothing
// else: every character of text is HTML-escaped, raw HTML in the body is
// shown as text, and links are kept only for http, https and mailto URLs,
// so nothing in a memory can become live markup or script.
func RenderMarkdown(src string) string {
	src = strings.ReplaceAll(src, "\r\n", "\n")
	lines := strings.Split(src, "\n")
	var b strings.Builder
	var para []string
	flushPara := func() {
		if len(para) > 0 {
			b.WriteString("<p>")
			for i, l := range para {
				if i > 0 {
					b.WriteString("\n")
				}
				b.WriteString(inline(l))
			}
			b.WriteString("</p>\n")
			para = nil
		}
	}
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		trim := strings.TrimSpace(line)
		switch {
		case trim == "":
			flushPara()
		case strings.HasPrefix(trim, "```") || strings.HasPrefix(trim, "~~~"):
			flushPara()
			fence := trim[:3]
			lang := strings.TrimSpace(trim[3:])
			var code []string
			for i++; i < len(lines) && !strings.HasPrefix(strings.TrimSpace(lines[i]), fence); i++ {
				code = append(code, lines[i])
			}
			b.WriteString("<pre><code")
			if lang != "" {
				b.WriteString(` data-lang="` + html.EscapeString(lang) + `"`)
			}
			b.WriteString(">")
			b.WriteString(html.EscapeString(strings.Join(code, "\n")))
			b.WriteString("</code></pre>\n")
		case strings.HasPrefix(line, "    ") && len(para) == 0:
			var code []string
			for ; i < len(lines) && (strings.HasPrefix(lines[i], "    ") || strings.TrimSpace(lines[i]) == ""); i++ {
				code = append(code, strings.TrimPrefix(lines[i], "    "))
			}
			i--
			b.WriteString("<pre><code>" + html.EscapeString(strings.TrimRight(strings.Join(code, "\n"), "\n")) + "</code></pre>\n")
		case heading(trim) > 0:
			flushPara()
			n := heading(trim)
			text := strings.TrimSpace(strings.TrimRight(strings.TrimSpace(trim[n:]), "#"))
			tag := string(rune('0' + n))
			b.WriteString("<h" + tag + ">" + inline(text) + "</h" + tag + ">\n")
		case isRule(trim):
			flushPara()
			b.WriteString("<hr>\n")
		case strings.HasPrefix(trim, ">"):
			flushPara()
			var quote []string
			for ; i < len(lines) && strings.HasPrefix(strings.TrimSpace(lines[i]), ">"); i++ {
				q := strings.TrimPrefix(strings.TrimSpace(lines[i]), ">")
				quote = append(quote, strings.TrimPrefix(q, " "))
			}
			i--
			b.WriteString("<blockquote>\n" + RenderMarkdown(strings.Join(quote, "\n")) + "</blockquote>\n")
		case listItem(trim) != "":
			flushPara()
			tag := "ul"
			if listItem(trim) == "ol" {
				tag = "ol"
			}
			b.WriteString("<" + tag + ">\n")
			for ; i < len(lines); i++ {
				t := strings.TrimSpace(lines[i])
				if listItem(t) == "" {
					if t != "" && strings.HasPrefix(lines[i], "  ") {
						// a continuation line of the item
						b.WriteString(" " + inline(t))
						continue
					}
					break
				}
				b.WriteString("<li>" + inline(itemText(t)))
				b.WriteString("</li>\n")
			}
			i--
			b.WriteString("</" + tag + ">\n")
		default:
			para = append(para, trim)
		}
	}
	flushPara()
	return b.String()
}

func heading(t string) int {
	n := 0
	for n < len(t) && n < 6 && t[n] == '#' {
		n++
	}
	if n == 0 || n == len(t) || t[n] != ' ' {
		return 0
	}
	return n
}

func isRule(t string) bool {
	if len(t) < 3 {
		return false
	}
	c := t[0]
	if c != '-' && c != '*' && c != '_' {
		return false
	}
	for i := 0; i < len(t); i++ {
		if t[i] != c && t[i] != ' ' {
			return false
		}
	}
	return true
}

// listItem returns "ul" or "ol" for a list item line, "" otherwise.
func listItem(t string) string {
	if len(t) >= 2 && (t[0] == '-' || t[0] == '*' || t[0] == '+') && t[1] == ' ' {
		return "ul"
	}
	i := 0
	for i < len(t) && i < 9 && t[i] >= '0' && t[i] <= '9' {
		i++
	}
	if i > 0 && i+1 < len(t) && (t[i] == '.' || t[i] == ')') && t[i+1] == ' ' {
		return "ol"
	}
	return ""
}

func itemText(t string) string {
	if listItem(t) == "ul" {
		t = t[2:]
	} else {
		t = t[strings.IndexAny(t, ".)")+2:]
	}
	switch {
	case strings.HasPrefix(t, "[ ] "):
		return "☐ " + t[4:]
	case strings.HasPrefix(t, "[x] "), strings.HasPrefix(t, "[X] "):
		return "☑ " + t[4:]
	}
	return t
}

// inline renders one line of text: code spans, links, strong and emphasis;
// everything else is escaped.
func inline(s string) string {
	var b strings.Builder
	for len(s) > 0 {
		switch {
		case s[0] == '`':
			if end := strings.IndexByte(s[1:], '`'); end >= 0 {
				b.WriteString("<code>" + html.EscapeString(s[1:1+end]) + "</code>")
				s = s[2+end:]
				continue
			}
		case s[0] == '[':
			if text, target, rest, ok := link(s); ok {
				if href, safe := safeURL(target); safe {
					b.WriteString(`<a href="` + html.EscapeString(href) + `" rel="noopener noreferrer nofollow" target="_blank">` + inline(text) + "</a>")
				} else {
					b.WriteString(inline(text) + ` <span class="link-target">(` + html.EscapeString(target) + ")</span>")
				}
				s = rest
				continue
			}
		case strings.HasPrefix(s, "**") || strings.HasPrefix(s, "__"):
			if end := strings.Index(s[2:], s[:2]); end > 0 {
				b.WriteString("<strong>" + inline(s[2:2+end]) + "</strong>")
				s = s[4+end:]
				continue
			}
		case s[0] == '*' || s[0] == '_':
			if end := strings.IndexByte(s[1:], s[0]); end > 0 && s[1] != ' ' {
				b.WriteString("<em>" + inline(s[1:1+end]) + "</em>")
				s = s[2+end:]
				continue
			}
		}
		// plain text up to the next special character
		n := 1
		for n < len(s) && !strings.ContainsRune("`[*_", rune(s[n])) {
			n++
		}
		b.WriteString(html.EscapeString(s[:n]))
		s = s[n:]
	}
	return b.String()
}

// link parses "[text](target)" at the start of s.
func link(s string) (text, target, rest string, ok bool) {
	depth := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '[':
			depth++
		case ']':
			depth--
			if depth == 0 {
				if i+1 < len(s) && s[i+1] == '(' {
					if end := strings.IndexByte(s[i+2:], ')'); end >= 0 {
						return s[1:i], strings.TrimSpace(s[i+2 : i+2+end]), s[i+3+end:], true
					}
				}
				return "", "", "", false
			}
		}
	}
	return "", "", "", false
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
