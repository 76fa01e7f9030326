package memtool

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/memdir/memdir"
)

// maxViewFileBytes is the largest file view will read. Files the tool writes
// stay under MaxFileBytes, but a user may have put a bigger one in the
// directory; view still shows it page by page up to this size.
const maxViewFileBytes = 64 << 20

func (t *Tool) view(ctx context.Context, c Command) (string, error) {
	rel, err := resolveArg("view", "path", c.Path)
	if err != nil {
		return "", err
	}
	p := MemoryPath(rel)
	fi, err := t.inspect(rel, false)
	if err != nil {
		return "", err
	}
	if fi == nil {
		return "", errNotExistView(p)
	}
	if fi.IsDir() {
		if c.ViewRange != nil {
			return "", errorf(memdir.ErrInvalid, "Error: view_range only applies to files, and %s is a directory.", p)
		}
		return t.viewDir(ctx, rel)
	}
	if !fi.Mode().IsRegular() {
		return "", errNotRegular(p)
	}
	data, err := t.readFile(rel, max(maxViewFileBytes, int64(t.opts.MaxFileBytes)))
	if err != nil {
		return "", err
	}
	if isBinary(data) {
		return "", errBinary(p)
	}
	text := string(data)
	n := countLines(text)
	if n > maxLines {
		return "", errorf(memdir.ErrInvalid, "File %s exceeds maximum line limit of 999,999 lines.", p)
	}
	start, end, err := viewRange(c.ViewRange, n)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Here's the content of %s with line numbers:", p)
	if n == 0 {
		b.WriteString("\n(The file is empty.)")
		return b.String(), nil
	}
	budget := t.opts.MaxViewChars
	shownEnd, cut := numberLines(&b, text, start, min(end, n), budget)
	switch {
	case shownEnd < start:
		fmt.Fprintf(&b, "\n[Output truncated: line %d alone is longer than the %s-character view limit, so only its beginning is shown.]", start, thousands(budget))
	case shownEnd < min(end, n) || cut:
		fmt.Fprintf(&b, "\n[Output truncated at the %s-character view limit: showing lines %d-%d of %d. Use view_range [%d, -1] to read on.]",
			thousands(budget), start, shownEnd, n, shownEnd+1)
	case end > n:
		fmt.Fprintf(&b, "\n[The file has only %d lines.]", n)
	}
	return b.String(), nil
}

// viewRange validates a view_range against a file of n lines and returns the
// 1-based inclusive range to show. An end past the last line is allowed (the
// caller notes it); -1 means the last line.
func viewRange(vr []int, n int) (start, end int, err error) {
	if vr == nil {
		return 1, n, nil
	}
	if len(vr) != 2 {
		return 0, 0, errorf(memdir.ErrInvalid, "Error: Invalid `view_range` parameter: %s. It should be two line numbers [start, end]; an end of -1 means the end of the file.", fmtInts(vr))
	}
	start, end = vr[0], vr[1]
	if start < 1 || start > max(n, 1) {
		return 0, 0, errorf(memdir.ErrInvalid, "Error: Invalid `view_range` parameter: %s. Its start should be within the range of lines of the file: [1, %d].", fmtInts(vr), n)
	}
	if end == -1 {
		return start, n, nil
	}
	if end < start {
		return 0, 0, errorf(memdir.ErrInvalid, "Error: Invalid `view_range` parameter: %s. Its end should be -1 or at least its start, %d.", fmtInts(vr), start)
	}
	return start, end, nil
}

func fmtInts(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.Itoa(x)
	}
	return "[" + strings.Join(s, ", ") + "]"
}

// numberLines appends lines start..end (1-based, inclusive) of text to b,
// each as "\n" + a 6-wide right-aligned line number + TAB + the line, while
// the output stays within budget characters. It returns the last line fully
// shown; cut reports that the first line was shown only in part because it
// alone exceeds the budget.
func numberLines(b *strings.Builder, text string, start, end, budget int) (last int, cut bool) {
	used := utf8.RuneCountInString(b.String())
	last = start - 1
	rest := lineStart(text, start)
	var num [16]byte
	for i := start; i <= end; i++ {
		line, after, _ := strings.Cut(rest, "\n")
		rest = after
		cost := 8 + utf8.RuneCountInString(line) // "\n" + 6 digits + TAB
		if used+cost > budget {
			if i == start {
				b.WriteByte('\n')
				b.Write(padNumber(num[:0], i))
				b.WriteByte('\t')
				b.WriteString(truncateRunes(line, max(budget-used-8, 0)))
			}
			return last, i == start
		}
		b.WriteByte('\n')
		b.Write(padNumber(num[:0], i))
		b.WriteByte('\t')
		b.WriteString(line)
		used += cost
		last = i
	}
	return last, false
}

// lineStart returns text from the start of 1-based line n (or "" past the
// end).
func lineStart(text string, n int) string {
	for range n - 1 {
		i := strings.IndexByte(text, '\n')
		if i < 0 {
			return ""
		}
		text = text[i+1:]
	}
	return text
}

// padNumber formats n right-aligned in six columns, like "%6d".
func padNumber(dst []byte, n int) []byte {
	d := strconv.AppendInt(nil, int64(n), 10)
	for range 6 - len(d) {
		dst = append(dst, ' ')
	}
	return append(dst, d...)
}

func truncateRunes(s string, n int) string {
	i := 0
	for j := range s {
		if i == n {
			return s[:j]
		}
		i++
	}
	return s
}

// countLines counts the lines of text. A final newline ends the last line
// rather than starting an empty one, so "a\nb\n" has two lines and "" has
// none.
func countLines(text string) int {
	n := strings.Count(text, "\n")
	if text != "" && !strings.HasSuffix(text, "\n") {
		n++
	}
	return n
}

// isBinary reports content the tool will not show or edit as text: anything
// with a NUL byte or that is not valid UTF-8.
func isBinary(data []byte) bool {
	return bytes.IndexByte(data, 0) >= 0 || !utf8.Valid(data)
}

func errBinary(p string) error {
	return errorf(memdir.ErrInvalid, "Error: %s is a binary file (it is not UTF-8 text); the memory tool only reads and edits text files.", p)
}

// listed is one line of a directory listing.
type listed struct {
	rel   string
	dir   bool
	size  int64
	depth int
}

// viewDir lists rel and its entries up to two levels deep, skipping hidden
// names and node_modules. A directory's size is the total of the visible
// files beneath it, at any depth. Links and special files are not listed
// (the tool does not follow them); a trailing note counts them.
func (t *Tool) viewDir(ctx context.Context, rel string) (string, error) {
	var out []listed
	skipped := 0
	if _, err := t.walk(ctx, rel, 0, &out, &skipped); err != nil {
		return "", err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Here're the files and directories up to 2 levels deep in %s, excluding hidden items and node_modules:", MemoryPath(rel))
	used := utf8.RuneCountInString(b.String())
	for i, e := range out {
		name := MemoryPath(e.rel)
		if e.dir {
			name += "/"
		}
		line := "\n" + humanSize(e.size) + "\t" + name
		if n := utf8.RuneCountInString(line); used+n > t.opts.MaxViewChars {
			fmt.Fprintf(&b, "\n[Listing truncated at the %s-character view limit after %d of %d entries. View a subdirectory to see the rest.]", thousands(t.opts.MaxViewChars), i, len(out))
			break
		} else {
			used += n
		}
		b.WriteString(line)
	}
	if skipped > 0 {
		fmt.Fprintf(&b, "\n[%d symbolic link(s) or special file(s) not shown; the memory tool does not follow links.]", skipped)
	}
	return b.String(), nil
}

// walk appends rel (at depth) and, down to depth 2, its visible entries to
// out, and returns the total size of the visible regular files beneath rel.
func (t *Tool) walk(ctx context.Context, rel string, depth int, out *[]listed, skipped *int) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	idx := -1
	if depth <= 2 {
		idx = len(*out)
		*out = append(*out, listed{rel: rel, dir: true, depth: depth})
	}
	d, err := t.root.Open(native(rel))
	if err != nil {
		return 0, ioError("list", MemoryPath(rel), err)
	}
	entries, err := d.ReadDir(-1)
	d.Close()
	if err != nil {
		return 0, ioError("list", MemoryPath(rel), err)
	}
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	var total int64
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".") || name == "node_modules" {
			continue
		}
		child := path.Join(rel, name)
		switch {
		case e.IsDir():
			n, err := t.walk(ctx, child, depth+1, out, skipped)
			if err != nil {
				return 0, err
			}
			total += n
		case e.Type().IsRegular():
			fi, err := e.Info()
			if err != nil {
				continue // removed while listing
			}
			total += fi.Size()
			if depth+1 <= 2 {
				*out = append(*out, listed{rel: child, size: fi.Size(), depth: depth + 1})
			}
		default:
			if depth+1 <= 2 {
				*skipped++
			}
		}
	}
	if idx >= 0 {
		(*out)[idx].size = total
	}
	return total, nil
}

// humanSize formats a byte count the way the memory tool's listings do:
// whole bytes below 1 KiB ("0B", "812B"), then one decimal with K, M, G or T.
func humanSize(n int64) string {
	if n < 1024 {
		return strconv.FormatInt(n, 10) + "B"
	}
	v := float64(n)
	for _, unit := range []string{"K", "M", "G", "T"} {
		v /= 1024
		if v < 1023.95 || unit == "T" {
			return strconv.FormatFloat(v, 'f', 1, 64) + unit
		}
	}
	panic("unreachable")
}

// thousands formats n with comma separators, as the documented messages do
// ("999,999").
func thousands(n int) string {
	s := strconv.Itoa(n)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}
