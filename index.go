package memdir

import (
	"fmt"
	"net/url"
	"path"
	"regexp"
	"strings"
	"sync"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/memdir/memdir/internal/mdtext"
	"github.com/memdir/memdir/internal/memfile"
)

// EntrypointName is the index of a memory directory, which agents load into
// every conversation.
const EntrypointName = "MEMORY.md"

// Limits of the loaded MEMORY.md, as Claude Code applies them.
const (
	// MaxIndexLines is how many lines of MEMORY.md are loaded.
	MaxIndexLines = 200
	// MaxIndexChars caps the loaded text. Claude Code calls it bytes but
	// compares it against the JavaScript string length: UTF-16 code units.
	MaxIndexChars = 25_000
	// IndexLineTarget is the length an index line should stay under.
	IndexLineTarget = 150
)

// IndexEntry is one pointer line of MEMORY.md: "- [Title](file.md) — hook".
type IndexEntry struct {
	Title string
	// File is the link target as written, e.g. "feedback_testing.md".
	File string
	Hook string
	// Line is the 1-based line number in MEMORY.md (0 for a new entry).
	Line int
}

// Path returns the entry's target as a clean slash path relative to the
// directory holding MEMORY.md ("./a.md" and "a.md" are the same file;
// percent-encoded targets are decoded).
func (e IndexEntry) Path() string { return cleanLinkTarget(e.File) }

func cleanLinkTarget(t string) string {
	t = strings.TrimSpace(t)
	t = strings.TrimPrefix(strings.TrimSuffix(t, ">"), "<")
	if i := strings.IndexAny(t, "#?"); i >= 0 {
		t = t[:i]
	}
	if strings.Contains(t, "%") {
		if u, err := url.PathUnescape(t); err == nil && utf8.ValidString(u) {
			t = u
		}
	}
	if t == "" {
		return ""
	}
	return path.Clean(t)
}

// String renders the entry as an index line. The hook is shortened at a word
// boundary so the line stays under IndexLineTarget characters.
func (e IndexEntry) String() string {
	title := escapeTitle(mdtext.OneLine(e.Title))
	if title == "" {
		title = escapeTitle(e.File)
	}
	target := e.Path()
	if target == "" {
		target = e.File
	}
	head := "- [" + title + "](" + linkTarget(target) + ")"
	hook := mdtext.OneLine(e.Hook)
	if hook == "" {
		return head
	}
	room := IndexLineTarget - utf8.RuneCountInString(head) - len(" — ")
	return head + " — " + shorten(hook, room)
}

func escapeTitle(s string) string {
	return strings.NewReplacer(`\`, `\\`, "[", `\[`, "]", `\]`).Replace(s)
}

// linkTarget writes a file path as a Markdown link target, escaping what would
// end or confuse the link.
func linkTarget(p string) string {
	var b strings.Builder
	for _, r := range p {
		if r <= ' ' || r == 0x7f || strings.ContainsRune("()<>%", r) {
			fmt.Fprintf(&b, "%%%02X", r)
		} else {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// shorten cuts s to at most n runes, at a word boundary where one is near,
// marking the cut with "…".
func shorten(s string, n int) string {
	if n < 20 {
		n = 20
	}
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)[:n-1]
	cut := string(r)
	if i := strings.LastIndexByte(cut, ' '); i > len(cut)/2 {
		cut = cut[:i]
	}
	return strings.TrimRight(cut, " ,;:.—-") + "…"
}

// indexLineRe matches a pointer line: a list bullet, a bracketed title (with
// backslash escapes), a parenthesised link target, then optionally a dash of
// any common kind and the hook.
var indexLineRe = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^\s*[-*+]\s+\[((?:\\.|[^\\\]])*)\]\(\s*(<[^>]*>|[^)\s]+(?:\([^)\s]*\)[^)\s]*)*)\s*\)\s*(?:(?:—|–|-{1,2}|:)\s*(.*))?$`)
})

// ParseIndexLine parses one MEMORY.md line. ok is false for lines that are not
// pointer lines (headings, prose, blank lines).
func ParseIndexLine(line string) (e IndexEntry, ok bool) {
	line = strings.TrimRight(line, "\r")
	if !utf8.ValidString(line) {
		line = strings.ToValidUTF8(line, "\uFFFD")
	}
	m := indexLineRe().FindStringSubmatch(line)
	if m == nil {
		return IndexEntry{}, false
	}
	title := strings.NewReplacer(`\\`, `\`, `\[`, "[", `\]`, "]").Replace(m[1])
	return IndexEntry{Title: title, File: m[2], Hook: strings.TrimSpace(m[3])}, true
}

// Index is the text of a MEMORY.md, line by line. Edits change only the lines
// they are about; every other line, blank lines and order included, is kept
// byte for byte.
type Index struct {
	lines []string
	// trailingNewline records whether the text ended with "\n".
	trailingNewline bool
}

// ParseIndex splits MEMORY.md content into lines. It accepts CRLF and a byte
// order mark, and writes LF back.
func ParseIndex(content []byte) *Index {
	text := mdtext.Normalize(content)
	ix := &Index{trailingNewline: strings.HasSuffix(text, "\n") || text == ""}
	text = strings.TrimSuffix(text, "\n")
	if text != "" {
		ix.lines = strings.Split(text, "\n")
	}
	return ix
}

// Bytes returns the index text.
func (ix *Index) Bytes() []byte {
	s := strings.Join(ix.lines, "\n")
	if len(ix.lines) > 0 && ix.trailingNewline {
		s += "\n"
	}
	return []byte(s)
}

// Lines returns the index's lines.
func (ix *Index) Lines() []string { return append([]string(nil), ix.lines...) }

// Entries returns the pointer lines, in order.
func (ix *Index) Entries() []IndexEntry {
	var out []IndexEntry
	for i, l := range ix.lines {
		if e, ok := ParseIndexLine(l); ok {
			e.Line = i + 1
			out = append(out, e)
		}
	}
	return out
}

// Find returns the entries pointing at file (a slash path relative to the
// directory of MEMORY.md).
func (ix *Index) Find(file string) []IndexEntry {
	file = path.Clean(file)
	var out []IndexEntry
	for _, e := range ix.Entries() {
		if e.Path() == file {
			out = append(out, e)
		}
	}
	return out
}

// Upsert makes line the pointer for file: the first line already pointing at
// file is replaced in place and any further ones are removed; otherwise the
// line is appended. It reports whether the text changed.
func (ix *Index) Upsert(file, line string) bool {
	file = path.Clean(file)
	replaced := false
	changed := false
	kept := ix.lines[:0:0]
	for _, l := range ix.lines {
		if e, ok := ParseIndexLine(l); ok && e.Path() == file {
			if replaced {
				changed = true
				continue
			}
			replaced = true
			if l != line {
				changed = true
			}
			kept = append(kept, line)
			continue
		}
		kept = append(kept, l)
	}
	if !replaced {
		// Append after the last non-blank line so trailing blank lines stay
		// at the end.
		end := len(kept)
		for end > 0 && strings.TrimSpace(kept[end-1]) == "" {
			end--
		}
		kept = append(kept[:end], append([]string{line}, kept[end:]...)...)
		changed = true
		ix.trailingNewline = true
	}
	ix.lines = kept
	return changed
}

// Remove deletes every pointer line for file and returns the lines removed.
func (ix *Index) Remove(file string) []string {
	file = path.Clean(file)
	var removed []string
	kept := ix.lines[:0:0]
	for _, l := range ix.lines {
		if e, ok := ParseIndexLine(l); ok && e.Path() == file {
			removed = append(removed, l)
			continue
		}
		kept = append(kept, l)
	}
	ix.lines = kept
	return removed
}

// Status measures the index against the limits it is loaded with.
func (ix *Index) Status() IndexStatus {
	return MeasureIndex(string(ix.Bytes()))
}

// IndexStatus says how MEMORY.md measures against the load limits.
type IndexStatus struct {
	Lines int // lines of the trimmed text
	Chars int // UTF-16 code units of the trimmed text
	// LineTruncated and CharTruncated report which limit the text exceeds.
	LineTruncated bool
	CharTruncated bool
}

// Truncated reports whether loading drops part of the index.
func (s IndexStatus) Truncated() bool { return s.LineTruncated || s.CharTruncated }

// Warning describes an over-limit index for a person: how much of it
// agents do not see. It is "" when the index fits.
func (s IndexStatus) Warning() string {
	if p := s.Problem(); p != "" {
		return "MEMORY.md " + p
	}
	return ""
}

// Problem is Warning without the file's name, for a report that names
// the file already ("team/MEMORY.md: the index has 210 lines; …"). It is
// "" when the index fits.
func (s IndexStatus) Problem() string {
	switch {
	case s.LineTruncated && s.CharTruncated:
		return fmt.Sprintf("has %d lines and %s; only the first %d lines and %s are loaded, so agents do not see the rest", s.Lines, FormatFileSize(s.Chars), MaxIndexLines, FormatFileSize(MaxIndexChars))
	case s.LineTruncated:
		return fmt.Sprintf("has %d lines; only the first %d are loaded, so agents do not see the last %d", s.Lines, MaxIndexLines, s.Lines-MaxIndexLines)
	case s.CharTruncated:
		return fmt.Sprintf("is %s; only the first %s are loaded, so agents do not see the rest", FormatFileSize(s.Chars), FormatFileSize(MaxIndexChars))
	}
	return ""
}

// MeasureIndex measures raw MEMORY.md text as Claude Code does: after
// trimming surrounding whitespace, lines split on "\n" and length in UTF-16
// code units.
func MeasureIndex(raw string) IndexStatus {
	trimmed := strings.TrimSpace(raw)
	s := IndexStatus{Chars: utf16Len(trimmed)}
	if trimmed != "" {
		// An empty index has no lines (not the one empty line a split gives).
		s.Lines = strings.Count(trimmed, "\n") + 1
	}
	s.LineTruncated = s.Lines > MaxIndexLines
	s.CharTruncated = s.Chars > MaxIndexChars
	return s
}

func utf16Len(s string) int { return mdtext.UTF16Len(s) }

// TruncateIndex returns MEMORY.md content as an agent loads it, exactly as
// Claude Code's truncateEntrypointContent does: trimmed; past 200 lines, cut to
// 200; then, past 25,000 UTF-16 units, cut at the last newline before that
// point; and, when anything was cut, followed by a warning line.
func TruncateIndex(raw string) (string, IndexStatus) {
	trimmed := strings.TrimSpace(raw)
	st := MeasureIndex(raw)
	if !st.Truncated() {
		return trimmed, st
	}
	out := trimmed
	if st.LineTruncated {
		out = strings.Join(strings.SplitN(trimmed, "\n", MaxIndexLines+1)[:MaxIndexLines], "\n")
	}
	if utf16Len(out) > MaxIndexChars {
		units := utf16.Encode([]rune(out))
		cut := -1
		for i := MaxIndexChars; i >= 0; i-- {
			if i < len(units) && units[i] == '\n' {
				cut = i
				break
			}
		}
		if cut <= 0 {
			cut = MaxIndexChars
		}
		out = string(utf16.Decode(units[:cut]))
	}
	var reason string
	switch {
	case st.CharTruncated && !st.LineTruncated:
		reason = fmt.Sprintf("%s (limit: %s) — index entries are too long", FormatFileSize(st.Chars), FormatFileSize(MaxIndexChars))
	case st.LineTruncated && !st.CharTruncated:
		reason = fmt.Sprintf("%d lines (limit: %d)", st.Lines, MaxIndexLines)
	default:
		reason = fmt.Sprintf("%d lines and %s", st.Lines, FormatFileSize(st.Chars))
	}
	return out + "\n\n> WARNING: " + EntrypointName + " is " + reason + ". Only part of it was loaded. Keep index entries to one line under ~200 chars; move detail into topic files.", st
}

// FormatFileSize formats a size the way Claude Code's formatFileSize does:
// "N bytes" under 1 KiB, else one decimal of KB, MB or GB with a trailing ".0"
// dropped (25000 → "24.4KB"). Rounding is half-up, like JavaScript's toFixed.
func FormatFileSize(n int) string { return memfile.FormatSize(n) }

// LoadIndexText turns MEMORY.md content into the text an agent sees: any
// frontmatter and HTML comments removed, then truncated with the warning.
func LoadIndexText(content []byte) (string, IndexStatus) {
	text := mdtext.Normalize(content)
	if _, bodyStart, ok := mdtext.SplitFrontmatter(text); ok {
		text = text[bodyStart:]
	}
	text = mdtext.HTMLComment().ReplaceAllString(text, "")
	return TruncateIndex(text)
}
