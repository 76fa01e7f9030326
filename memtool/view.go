package memtool

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"math"
	"math/bits"
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
		return "", errNotExistLong(p)
	}
	if fi.IsDir() {
		// As in the reference, a view_range on a directory is ignored.
		return t.viewDir(ctx, rel)
	}
	if !fi.Mode().IsRegular() {
		return "", errUnsupported(p)
	}
	data, err := t.readFile(rel, max(maxViewFileBytes, int64(t.opts.MaxFileBytes)))
	if err != nil {
		return "", err
	}
	if err := checkText(p, data); err != nil {
		return "", err
	}
	text := string(data)
	// Lines are what splitting on "\n" gives, as in the reference: a final
	// newline is followed by an empty last line, and an empty file has one
	// empty line.
	n := strings.Count(text, "\n") + 1
	if n > maxLines {
		return "", errorf(memdir.ErrInvalid, "File %s exceeds maximum line limit of 999,999 lines.", p)
	}
	start, end := viewRange(c.ViewRange, n)
	if t.opts.AfterView != nil {
		defer t.opts.AfterView(rel)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Here's the content of %s with line numbers:", p)
	if start > end {
		// An empty range shows the header and nothing else, as the
		// reference's join of no lines does.
		b.WriteByte('\n')
		return b.String(), nil
	}
	budget := t.opts.MaxViewChars
	shownEnd, cut := numberLines(&b, text, start, end, budget)
	switch {
	case shownEnd < start:
		fmt.Fprintf(&b, "\n[Output truncated: line %d alone is longer than the %s-character view limit, so only its beginning is shown.]", start, thousands(budget))
	case shownEnd < end || cut:
		fmt.Fprintf(&b, "\n[Output truncated at the %s-character view limit: showing lines %d-%d of %d. Use view_range [%d, -1] to read on.]",
			thousands(budget), start, shownEnd, n, shownEnd+1)
	}
	return b.String(), nil
}

// viewRange turns a view_range into the 1-based inclusive lines to show of
// a file of n lines, the way the reference slices its list of lines: the
// start is raised to at least 1, an end of -1 means the last line, another
// negative end counts back from the end, an end past the last line stops
// there, and a range that ends before it starts is empty (start > end).
// Anything but two numbers is ignored and the whole file is shown.
func viewRange(vr []int, n int) (start, end int) {
	if len(vr) != 2 {
		return 1, n
	}
	start, end = max(1, vr[0]), vr[1]
	switch {
	case end == -1:
		end = n
	case end < 0:
		end = max(n+end, 0)
	}
	return start, min(end, n)
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

// checkText refuses content the tool will not show or edit as text: invalid
// UTF-8 (in the reference's words) and, memdir's own rule, NUL bytes.
func checkText(p string, data []byte) error {
	if !utf8.Valid(data) {
		return errorf(memdir.ErrInvalid, "The file %s is not a valid UTF-8 text file and cannot be read as memory.", p)
	}
	if bytes.IndexByte(data, 0) >= 0 {
		return errorf(memdir.ErrInvalid, "The file %s is a binary file (it contains NUL bytes) and cannot be read as memory.", p)
	}
	return nil
}

// isBinary reports content the tool will not write as text: anything with a
// NUL byte or that is not valid UTF-8.
func isBinary(data []byte) bool {
	return bytes.IndexByte(data, 0) >= 0 || !utf8.Valid(data)
}

func errUnsupported(p string) error {
	return errorf(memdir.ErrInvalid, "Unsupported file type for %s", p)
}

// viewDir lists rel and its entries up to two levels deep, in the
// reference's format: a header, then one "SIZE<TAB>PATH" line for rel itself
// and for each entry, depth first in name order, with a "/" after
// subdirectories. Sizes are what the filesystem reports (for a directory,
// its own size, not its contents'). Hidden names and node_modules are
// skipped; the header mentions node_modules only when there was one.
// Symbolic links and special files are not listed (the tool does not follow
// links); a trailing note counts them.
func (t *Tool) viewDir(ctx context.Context, rel string) (string, error) {
	top, err := t.root.Lstat(native(rel))
	if err != nil {
		return "", ioError("list", MemoryPath(rel), err)
	}
	out := []listed{{rel: rel, size: top.Size()}}
	var w walker
	if err := t.walk(ctx, rel, 1, &out, &w, true); err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString("Here're the files and directories up to 2 levels deep in " + MemoryPath(rel) + ", excluding hidden items")
	if w.nodeModules {
		b.WriteString(" and node_modules")
	}
	b.WriteByte(':')
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
	if w.skipped > 0 {
		fmt.Fprintf(&b, "\n[%d symbolic link(s) or special file(s) not shown; the memory tool does not follow links.]", w.skipped)
	}
	return b.String(), nil
}

// listed is one line of a directory listing.
type listed struct {
	rel  string
	dir  bool
	size int64
}

// walker collects what a listing left out.
type walker struct {
	skipped     int  // links and special files
	nodeModules bool // a node_modules entry was skipped
}

// walk appends the visible entries of rel, which is at depth-1 below the
// listed directory, to out, and recurses into subdirectories down to depth
// 2. A subdirectory that cannot be read is listed without its contents, as
// the reference does; only the listed directory itself (top) must be
// readable.
func (t *Tool) walk(ctx context.Context, rel string, depth int, out *[]listed, w *walker, top bool) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	d, err := t.root.Open(native(rel))
	if err != nil {
		if top {
			return ioError("list", MemoryPath(rel), err)
		}
		return nil
	}
	entries, err := d.ReadDir(-1)
	d.Close()
	if err != nil {
		if top {
			return ioError("list", MemoryPath(rel), err)
		}
		return nil
	}
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".") {
			continue
		}
		if name == "node_modules" {
			w.nodeModules = true
			continue
		}
		child := path.Join(rel, name)
		if !e.IsDir() && !e.Type().IsRegular() {
			w.skipped++
			continue
		}
		fi, err := e.Info()
		if err != nil {
			continue // removed while listing
		}
		*out = append(*out, listed{rel: child, dir: e.IsDir(), size: fi.Size()})
		if e.IsDir() && depth < 2 {
			if err := t.walk(ctx, child, depth+1, out, w, false); err != nil {
				return err
			}
		}
	}
	return nil
}

// humanSize formats a byte count the way the reference's listings do: the
// largest of B, K, M and G (powers of 1024) that is at most n, whole when
// the value is whole ("0B", "812B", "1K", "4K") and with one decimal
// otherwise ("1.5K", "1024.0K").
func humanSize(n int64) string {
	if n <= 0 {
		return strconv.FormatInt(n, 10) + "B"
	}
	units := []string{"B", "K", "M", "G"}
	i := min((bits.Len64(uint64(n))-1)/10, len(units)-1)
	v := float64(n) / math.Pow(1024, float64(i))
	if v == math.Trunc(v) {
		return strconv.FormatFloat(v, 'f', 0, 64) + units[i]
	}
	return strconv.FormatFloat(v, 'f', 1, 64) + units[i]
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
