// Package mdtext holds the small Markdown text helpers the root package
// and the packages built on it share: how a file's text is normalised, where
// its frontmatter ends, and how prose is folded onto one line.
package mdtext

import (
	"bytes"
	"regexp"
	"strings"
	"sync"
	"unicode/utf16"
	"unicode/utf8"
)

// Normalize strips a byte order mark, turns CRLF into LF and replaces
// invalid UTF-8 with U+FFFD, as a JavaScript runtime decoding the file would.
func Normalize(b []byte) string {
	b = bytes.TrimPrefix(b, []byte("\xef\xbb\xbf"))
	if bytes.IndexByte(b, '\r') >= 0 {
		b = bytes.ReplaceAll(b, []byte("\r\n"), []byte("\n"))
	}
	if !utf8.Valid(b) {
		return strings.ToValidUTF8(string(b), "\uFFFD")
	}
	return string(b)
}

// IsNormal reports whether Normalize(b) is b's text unchanged: no byte
// order mark, no CR and valid UTF-8. A reader can then take any prefix
// of b that ends a line as normalised too.
func IsNormal(b []byte) bool {
	return !bytes.HasPrefix(b, []byte("\xef\xbb\xbf")) && bytes.IndexByte(b, '\r') < 0 && utf8.Valid(b)
}

// SplitFrontmatter matches Claude Code's frontmatter pattern
// /^---\s*\n([\s\S]*?)---\s*\n?/ by hand (it runs for every file of every
// scan): "---" at the very start, whitespace up to and including its last line
// break, then everything up to the first "---" that follows, which closes the
// block wherever it stands, then any whitespace after it. It returns the
// frontmatter text and the offset where the body starts.
func SplitFrontmatter(text string) (front string, bodyStart int, ok bool) {
	if !strings.HasPrefix(text, "---") {
		return "", 0, false
	}
	ws := 3
	for ws < len(text) && isJSSpace(text[ws]) {
		ws++
	}
	nl := strings.LastIndexByte(text[3:ws], '\n')
	if nl < 0 {
		return "", 0, false
	}
	start := 3 + nl + 1
	end := strings.Index(text[start:], "---")
	if end < 0 {
		return "", 0, false
	}
	front = text[start : start+end]
	p := start + end + 3
	for p < len(text) && isJSSpace(text[p]) {
		p++
	}
	return front, p, true
}

// isJSSpace reports the ASCII characters JavaScript's \s matches.
func isJSSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

// OneLine collapses runs of whitespace, line breaks included, into one space.
func OneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// HTMLComment matches an HTML comment, line breaks included.
var HTMLComment = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?s)<!--.*?-->`) })

// UTF16Len returns the length of s as JavaScript measures a string, in
// UTF-16 code units: the unit of Claude Code's limits (MEMORY.md's 25,000
// characters, a hook's 10,000). Invalid UTF-8 counts as U+FFFD, one unit.
func UTF16Len(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}
