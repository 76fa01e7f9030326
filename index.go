package memdir

import (
	"bytes"
	"fmt"
	"net/url"
	"path"
	"slices"
	"strings"
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

func escapeTitle(s string) string { return titleEscaper.Replace(s) }

// titleEscaper and titleUnescaper are made once: a Replacer is safe for
// concurrent use, and building one per line cost more than the line.
var (
	titleEscaper   = strings.NewReplacer(`\`, `\\`, "[", `\[`, "]", `\]`)
	titleUnescaper = strings.NewReplacer(`\\`, `\`, `\[`, "[", `\]`, "]")
)

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

// ParseIndexLine parses one MEMORY.md line. ok is false for lines that are not
// pointer lines (headings, prose, blank lines).
//
// A pointer line is a list bullet, a bracketed title (with backslash
// escapes), a parenthesised link target, then optionally a dash of any
// common kind and the hook. The parser is written by hand to match exactly
// what the regular expression
//
//	^\s*[-*+]\s+\[((?:\\.|[^\\\]])*)\]\(\s*(<[^>]*>|[^)\s]+(?:\([^)\s]*\)[^)\s]*)*)\s*\)\s*(?:(?:—|–|-{1,2}|:)\s*(.*))?$
//
// matches and captures (Go's leftmost-first semantics; indexmodel_test.go
// checks the two against each other): a regular expression per line was most
// of what reading a large index cost.
func ParseIndexLine(line string) (e IndexEntry, ok bool) {
	line = strings.TrimRight(line, "\r")
	if !utf8.ValidString(line) {
		line = strings.ToValidUTF8(line, "\uFFFD")
	}
	title, file, hook, ok := splitIndexLine(line)
	if !ok {
		return IndexEntry{}, false
	}
	if strings.IndexByte(title, '\\') >= 0 {
		title = titleUnescaper.Replace(title)
	}
	return IndexEntry{Title: title, File: file, Hook: strings.TrimSpace(hook)}, true
}

// isReSpace reports whether c is in the \s class of Go's regular
// expressions: tab, line feed, form feed, carriage return and space.
func isReSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r' }

// skipReSpace returns the first index at or after i that is not \s.
func skipReSpace(s string, i int) int {
	for i < len(s) && isReSpace(s[i]) {
		i++
	}
	return i
}

// bareEnd returns the end of the run of [^)\s] that starts at i.
func bareEnd(s string, i int) int {
	for i < len(s) && s[i] != ')' && !isReSpace(s[i]) {
		i++
	}
	return i
}

// splitIndexLine returns the three groups the pointer-line pattern
// captures: the raw title, the link target and the hook (untrimmed).
func splitIndexLine(s string) (title, file, hook string, ok bool) {
	i := skipReSpace(s, 0)
	if i >= len(s) || (s[i] != '-' && s[i] != '*' && s[i] != '+') {
		return "", "", "", false
	}
	j := skipReSpace(s, i+1)
	if j == i+1 || j >= len(s) || s[j] != '[' {
		return "", "", "", false
	}
	// The title runs to the first ] not escaped by a backslash; a
	// backslash escapes any character but a line feed.
	start := j + 1
	i = start
	for i < len(s) && s[i] != ']' {
		if s[i] == '\\' {
			if i+1 >= len(s) || s[i+1] == '\n' {
				return "", "", "", false
			}
			i++
		}
		i++
	}
	if i+1 >= len(s) || s[i+1] != '(' {
		return "", "", "", false
	}
	title = s[start:i]
	t := skipReSpace(s, i+2)
	// <target>, when what follows it closes the line as the pattern
	// wants; otherwise the bare form, which may start with < too.
	if t < len(s) && s[t] == '<' {
		if k := strings.IndexByte(s[t+1:], '>'); k >= 0 {
			end := t + 1 + k + 1
			if h, ok := indexLineTail(s, end); ok {
				return title, s[t:end], h, true
			}
		}
	}
	end, h, ok := bareTarget(s, t)
	if !ok {
		return "", "", "", false
	}
	return title, s[t:end], h, true
}

// bareTarget matches [^)\s]+(?:\([^)\s]*\)[^)\s]*)* at s[start:] followed
// by the rest of a pointer line, returning where the target ends and the
// hook. The regular expression's backtracking tries the ends in order
// from the shortest: the end of the first run of [^)\s], then, each time
// a parenthesised group can close at the ) that stopped the run (it needs
// a "(" earlier in the run, after the first character of the target), the
// end of the run after that ). Which "(" opens the group does not change
// where the target ends, so one pass suffices.
func bareTarget(s string, start int) (end int, hook string, ok bool) {
	end = bareEnd(s, start)
	if end == start {
		return 0, "", false
	}
	runStart := start + 1 // the first run needs one character before its "("
	for {
		if h, ok := indexLineTail(s, end); ok {
			return end, h, true
		}
		if end >= len(s) || s[end] != ')' || strings.IndexByte(s[runStart:end], '(') < 0 {
			return 0, "", false
		}
		runStart = end + 1
		end = bareEnd(s, end+1)
	}
}

// indexLineTail matches \s*\)\s*(?:(?:—|–|-{1,2}|:)\s*(.*))?$ at s[i:],
// returning the hook group.
func indexLineTail(s string, i int) (hook string, ok bool) {
	i = skipReSpace(s, i)
	if i >= len(s) || s[i] != ')' {
		return "", false
	}
	i = skipReSpace(s, i+1)
	if i == len(s) {
		return "", true
	}
	switch {
	case strings.HasPrefix(s[i:], "—"):
		i += len("—")
	case strings.HasPrefix(s[i:], "–"):
		i += len("–")
	case strings.HasPrefix(s[i:], "--"):
		i += 2
	case s[i] == '-' || s[i] == ':':
		i++
	default:
		return "", false
	}
	i = skipReSpace(s, i)
	if strings.IndexByte(s[i:], '\n') >= 0 {
		return "", false // . does not match a line feed
	}
	return s[i:], true
}

// Index is the text of a MEMORY.md, line by line. Edits change only the lines
// they are about; every other line, blank lines and order included, is kept
// byte for byte.
//
// An Index parses each line at most once, when first asked about it, and
// keeps the parse in step with its edits: lookups by link target and by
// title go through maps built on the second lookup (the first scans only
// the lines that can hold the target), so an operation that finds, edits
// and measures one index (a save) parses it once. An Index is not safe for
// concurrent use.
type Index struct {
	lines []string
	// trailingNewline records whether the text ended with "\n".
	trailingNewline bool

	// parsed is the parse of each line, parallel to lines; nil until a
	// line is first asked about.
	parsed []parsedLine
	// byPath and byTitle map each entry's Path and Title to its lines
	// (0-based, ascending); nil until built (see find). lookups counts the
	// lookups made before byPath was built.
	byPath, byTitle map[string][]int
	lookups         int
	// last is the answer of the one lookup made before byPath, kept until
	// the next edit: a save asks about its file twice, then edits it.
	last *lastLookup
}

type lastLookup struct {
	file string
	at   []int
}

// parsedLine is the parse of one line: unknown until parsed.
type parsedLine struct {
	state parseState
	e     IndexEntry // without Line
	path  string     // e.Path()
}

type parseState uint8

const (
	unparsed parseState = iota
	notEntry
	isEntry
)

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
	n := 0
	for _, l := range ix.lines {
		n += len(l) + 1
	}
	b := make([]byte, 0, n)
	for i, l := range ix.lines {
		if i > 0 {
			b = append(b, '\n')
		}
		b = append(b, l...)
	}
	if len(ix.lines) > 0 && ix.trailingNewline {
		b = append(b, '\n')
	}
	return b
}

// Lines returns the index's lines.
func (ix *Index) Lines() []string { return append([]string(nil), ix.lines...) }

// Len returns the number of lines.
func (ix *Index) Len() int { return len(ix.lines) }

// Line returns line n (1-based), as Lines()[n-1] would without the copy.
func (ix *Index) Line(n int) string { return ix.lines[n-1] }

// at returns the parse of line i (0-based), parsing it the first time.
func (ix *Index) at(i int) *parsedLine {
	if ix.parsed == nil {
		ix.parsed = make([]parsedLine, len(ix.lines))
	}
	p := &ix.parsed[i]
	if p.state == unparsed {
		if e, ok := ParseIndexLine(ix.lines[i]); ok {
			*p = parsedLine{state: isEntry, e: e, path: e.Path()}
		} else {
			*p = parsedLine{state: notEntry}
		}
	}
	return p
}

// entry returns line i as an entry, and whether it is one.
func (ix *Index) entry(i int) (IndexEntry, bool) {
	p := ix.at(i)
	if p.state != isEntry {
		return IndexEntry{}, false
	}
	e := p.e
	e.Line = i + 1
	return e, true
}

// Entries returns the pointer lines, in order.
func (ix *Index) Entries() []IndexEntry {
	var out []IndexEntry
	for i := range ix.lines {
		if e, ok := ix.entry(i); ok {
			out = append(out, e)
		}
	}
	return out
}

// Find returns the entries pointing at file (a slash path relative to the
// directory of MEMORY.md).
func (ix *Index) Find(file string) []IndexEntry {
	return ix.entriesAt(ix.find(path.Clean(file)))
}

// FindTitle returns the entries whose title is title, as written after
// unescaping (for memdir's lines, the memory's name).
func (ix *Index) FindTitle(title string) []IndexEntry {
	if ix.byTitle == nil {
		ix.byTitle = map[string][]int{}
		for i := range ix.lines {
			if p := ix.at(i); p.state == isEntry {
				ix.byTitle[p.e.Title] = append(ix.byTitle[p.e.Title], i)
			}
		}
	}
	return ix.entriesAt(ix.byTitle[title])
}

func (ix *Index) entriesAt(at []int) []IndexEntry {
	if len(at) == 0 {
		return nil
	}
	out := make([]IndexEntry, 0, len(at))
	for _, i := range at {
		e, _ := ix.entry(i)
		out = append(out, e)
	}
	return out
}

// find returns the lines (0-based, ascending) whose entry points at file,
// a clean path; the slice must not be modified. The first lookup parses
// only the lines that can point at file; the second builds byPath, which
// every later lookup and edit uses.
func (ix *Index) find(file string) []int {
	if ix.byPath != nil {
		return ix.byPath[file]
	}
	if ix.last != nil && ix.last.file == file {
		return ix.last.at
	}
	ix.lookups++
	if ix.lookups > 1 {
		ix.indexPaths()
		return ix.byPath[file]
	}
	var out []int
	base, ok := linkBase(file)
	if !ok {
		base = ""
	}
	for i, l := range ix.lines {
		if mayLink(l, base) {
			if p := ix.at(i); p.state == isEntry && p.path == file {
				out = append(out, i)
			}
		}
	}
	ix.last = &lastLookup{file, out}
	return out
}

// indexPaths builds byPath from every line.
func (ix *Index) indexPaths() {
	ix.byPath = make(map[string][]int, len(ix.lines))
	for i := range ix.lines {
		if p := ix.at(i); p.state == isEntry {
			ix.byPath[p.path] = append(ix.byPath[p.path], i)
		}
	}
}

// mayLink reports whether line can hold a link to file (a clean path)
// whose last element is base (see linkBase): without percent-encoding, the
// last element of a link's cleaned target is written in the line as it is,
// so a line without it or a "%" links elsewhere.
func mayLink(line, base string) bool {
	return base == "" || strings.Contains(line, base) || strings.IndexByte(line, '%') >= 0
}

// mayLinkData is mayLink for the raw content of an index file, before
// ParseIndex (neither its byte order mark, its CRs nor invalid UTF-8 can
// hide a target), made exact for the lines holding a "%" but not the name,
// which are parsed: hooks mention percentages.
func mayLinkData(data []byte, file string) bool {
	base, ok := linkBase(file)
	if !ok || bytes.Contains(data, []byte(base)) {
		return true
	}
	for off := 0; ; {
		i := bytes.IndexByte(data[off:], '%')
		if i < 0 {
			return false
		}
		i += off
		start := bytes.LastIndexByte(data[:i], '\n') + 1
		end := len(data)
		if j := bytes.IndexByte(data[i:], '\n'); j >= 0 {
			end = i + j
		}
		line := string(data[start:end])
		if start == 0 {
			line = strings.TrimPrefix(line, "\ufeff")
		}
		if e, ok := ParseIndexLine(line); ok && e.Path() == file {
			return true
		}
		off = end
	}
}

// linkBase returns the last element of file, which a line linking file
// without percent-encoding holds as it is; ok is false when it cannot tell.
func linkBase(file string) (string, bool) {
	base := path.Base(file)
	if base == "." || base == "/" || base == ".." || strings.ContainsAny(base, "\r\n\ufeff\ufffd") {
		return "", false
	}
	return base, true
}

// setLine replaces line i, keeping the parse and the maps in step.
func (ix *Index) setLine(i int, line string) {
	if ix.lines[i] == line {
		return
	}
	var old parsedLine
	if ix.parsed != nil {
		old = *ix.at(i)
		ix.parsed[i] = parsedLine{}
	}
	ix.lines[i] = line
	ix.byTitle, ix.last = nil, nil
	if ix.byPath == nil {
		return
	}
	if old.state == isEntry {
		ix.byPath[old.path] = removeInt(ix.byPath[old.path], i)
		if len(ix.byPath[old.path]) == 0 {
			delete(ix.byPath, old.path)
		}
	}
	if p := ix.at(i); p.state == isEntry {
		ix.byPath[p.path] = insertInt(ix.byPath[p.path], i)
	}
}

// insertLine inserts line before line i. Every line from i on must be
// blank (no entry moves), which is where Upsert appends.
func (ix *Index) insertLine(i int, line string) {
	ix.lines = slices.Insert(ix.lines, i, line)
	ix.byTitle, ix.last = nil, nil
	if ix.parsed != nil {
		ix.parsed = slices.Insert(ix.parsed, i, parsedLine{})
	}
	if ix.byPath != nil {
		if p := ix.at(i); p.state == isEntry {
			ix.byPath[p.path] = insertInt(ix.byPath[p.path], i)
		}
	}
}

// deleteLines removes the lines for which gone returns true, in one pass.
// The maps are rebuilt when next needed, from the parses kept.
func (ix *Index) deleteLines(gone func(i int) bool) {
	kept := 0
	for i := range ix.lines {
		if gone(i) {
			continue
		}
		ix.lines[kept] = ix.lines[i]
		if ix.parsed != nil {
			ix.parsed[kept] = ix.parsed[i]
		}
		kept++
	}
	clear(ix.lines[kept:])
	ix.lines = ix.lines[:kept]
	if ix.parsed != nil {
		ix.parsed = ix.parsed[:kept]
	}
	if ix.byPath != nil {
		ix.byPath = nil
		ix.lookups = 1 // the next lookup rebuilds byPath
	}
	ix.byTitle, ix.last = nil, nil
}

// insertInt inserts v into the ascending slice s.
func insertInt(s []int, v int) []int {
	k, found := slices.BinarySearch(s, v)
	if found {
		return s
	}
	return slices.Insert(s, k, v)
}

// removeInt removes v from the ascending slice s.
func removeInt(s []int, v int) []int {
	if k, found := slices.BinarySearch(s, v); found {
		return slices.Delete(s, k, k+1)
	}
	return s
}

// Upsert makes line the pointer for file: the first line already pointing at
// file is replaced in place and any further ones are removed; otherwise the
// line is appended. It reports whether the text changed.
func (ix *Index) Upsert(file, line string) bool {
	at := ix.find(path.Clean(file))
	if len(at) == 0 {
		// Append after the last non-blank line so trailing blank lines stay
		// at the end.
		end := len(ix.lines)
		for end > 0 && strings.TrimSpace(ix.lines[end-1]) == "" {
			end--
		}
		ix.insertLine(end, line)
		ix.trailingNewline = true
		return true
	}
	first, extra := at[0], slices.Clone(at[1:])
	changed := ix.lines[first] != line || len(extra) > 0
	ix.setLine(first, line)
	if len(extra) > 0 {
		ix.deleteLines(func(i int) bool { _, ok := slices.BinarySearch(extra, i); return ok })
	}
	return changed
}

// Remove deletes every pointer line for file and returns the lines removed.
func (ix *Index) Remove(file string) []string {
	at := slices.Clone(ix.find(path.Clean(file)))
	if len(at) == 0 {
		return nil
	}
	removed := make([]string, 0, len(at))
	for _, i := range at {
		removed = append(removed, ix.lines[i])
	}
	ix.deleteLines(func(i int) bool { _, ok := slices.BinarySearch(at, i); return ok })
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
