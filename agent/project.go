package agent

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// limits bounds what the project tools read and return. The values are the
// defaults below; tests shrink them.
type limits struct {
	fileBytes   int64 // files larger than this are not read or searched
	readLines   int   // read_file lines when no limit is given
	lineChars   int   // read_file cuts longer lines
	matchChars  int   // grep cuts longer matching lines
	outputChars int   // any project tool's result
	matches     int   // grep
	globResults int   // glob
	lsEntries   int   // ls
	walkEntries int   // grep and glob stop walking after this many entries
}

var defaultLimits = limits{
	fileBytes:   10 << 20,
	readLines:   2000,
	lineChars:   2000,
	matchChars:  300,
	outputChars: 50_000,
	matches:     100,
	globResults: 200,
	lsEntries:   500,
	walkEntries: 100_000,
}

// binaryProbe is how much of a file is checked for NUL bytes to tell binary
// files from text, as grep and git do.
const binaryProbe = 8000

// project gives the read-only tools their view of the project directory.
// Every access goes through an os.Root, so neither a path nor a symbolic link
// can lead outside; links that stay inside are followed by read_file and ls,
// while grep and glob never descend through them (a link loop or a link to a
// huge tree cannot stall a search).
type project struct {
	root *os.Root
	fsys fs.FS
	// dirs are absolute spellings of the project directory (as given, and
	// with links resolved), so a model quoting an absolute path inside the
	// project is understood.
	dirs []string
	lim  limits
}

func openProject(dir string) (*project, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("agent: project directory %s: %w", dir, err)
	}
	r, err := os.OpenRoot(abs)
	if err != nil {
		return nil, fmt.Errorf("agent: project directory: %w", err)
	}
	p := &project{root: r, fsys: r.FS(), dirs: []string{abs}, lim: defaultLimits}
	if real, err := filepath.EvalSymlinks(abs); err == nil && real != abs {
		p.dirs = append(p.dirs, real)
	}
	return p, nil
}

func (p *project) Close() error { return p.root.Close() }

// resolve turns a path from the model into a clean slash path relative to
// the project root ("." for the root itself). Relative paths are taken from
// the project root; absolute ones must lie inside the project directory.
//
// The checks are lexical and only make refusals clear: the os.Root is what
// keeps every access inside. Refused are "..", backslashes, NUL and control
// characters, and segments that turn into traversal once percent-decoded
// (%2e%2e, %252e%252e) or NFKC-normalised (fullwidth "．．"), in case some
// layer decodes the name again. Hidden names such as .github are allowed.
func (p *project) resolve(tool, key, name string) (string, error) {
	bad := func(why string) error {
		return fmt.Errorf("%s: the %s %q is refused: %s", tool, key, shorten(name, 200), why)
	}
	switch {
	case name == "":
		return ".", nil
	case len(name) > 4096:
		return "", bad("it is longer than 4096 bytes")
	case !utf8.ValidString(name):
		return "", bad("it is not valid UTF-8")
	case strings.ContainsRune(name, '\\'):
		return "", bad("it contains a backslash; separate directories with /")
	case strings.IndexFunc(name, unicode.IsControl) >= 0:
		return "", bad("it contains a NUL or control character")
	}
	if strings.HasPrefix(name, "/") {
		rel, ok := p.insideProject(path.Clean(name))
		if !ok {
			return "", bad("it is outside the project directory; give paths relative to the project, such as src/main.go")
		}
		name = rel
	}
	var segs []string
	for s := range strings.SplitSeq(name, "/") {
		if s == "" || s == "." {
			continue
		}
		if s == ".." {
			return "", bad("\"..\" segments may not be used; paths stay inside the project directory")
		}
		if disguisedTraversal(s) {
			return "", bad("a segment turns into \"..\" or a separator when decoded or normalised")
		}
		segs = append(segs, s)
	}
	if len(segs) == 0 {
		return ".", nil
	}
	rel := strings.Join(segs, "/")
	if !filepath.IsLocal(filepath.FromSlash(rel)) {
		return "", bad("it is not a local file name on this system")
	}
	return rel, nil
}

// insideProject maps a clean absolute path to its project-relative form.
func (p *project) insideProject(abs string) (string, bool) {
	for _, d := range p.dirs {
		if abs == d {
			return ".", true
		}
		if rest, ok := strings.CutPrefix(abs, d+"/"); ok {
			return rest, true
		}
	}
	return "", false
}

var percentEscape = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`%[0-9A-Fa-f]{2}`) })

// disguisedTraversal reports whether a segment hides "..", "." or a
// separator under up to four layers of percent-encoding or under Unicode
// compatibility normalisation.
func disguisedTraversal(seg string) bool {
	s := seg
	for round := 0; round <= 4; round++ {
		for _, form := range []string{s, norm.NFKC.String(s)} {
			if form != seg && (strings.ContainsAny(form, "/\\\x00") || form == ".." || form == ".") {
				return true
			}
		}
		next := percentEscape().ReplaceAllStringFunc(s, func(m string) string {
			b, _ := strconv.ParseUint(m[1:], 16, 8)
			return string([]byte{byte(b)})
		})
		if next == s {
			return false
		}
		s = next
	}
	return true // still changing after four rounds: no honest name does that
}

// shown is how a project-relative path appears in messages.
func shown(rel string) string {
	if rel == "." {
		return "the project directory"
	}
	return rel
}

// openError explains why rel could not be opened or listed. It never shows
// the host path (only the project-relative one) and tells a link leading out
// of the project apart from a missing file.
func (p *project) openError(tool, rel string, err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%s: %s does not exist; use ls or glob to see what is there", tool, rel)
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("%s: %s cannot be read: permission denied", tool, rel)
	}
	if link := p.linkOnPath(rel); link != "" {
		return fmt.Errorf("%s: %s is refused: the symbolic link %s leads outside the project directory", tool, rel, link)
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return fmt.Errorf("%s: %s cannot be read: %v", tool, rel, err)
}

// linkOnPath returns the first component of rel that is a symbolic link, or
// "" when there is none.
func (p *project) linkOnPath(rel string) string {
	segs := strings.Split(rel, "/")
	for i := range segs {
		prefix := strings.Join(segs[:i+1], "/")
		fi, err := p.root.Lstat(prefix)
		if err != nil {
			return ""
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			return prefix
		}
	}
	return ""
}

// stat follows links inside the project and explains failures.
func (p *project) stat(tool, rel string) (fs.FileInfo, error) {
	fi, err := p.root.Stat(rel)
	if err != nil {
		return nil, p.openError(tool, rel, err)
	}
	return fi, nil
}

// readSmall reads a regular file of at most lim.fileBytes. A file that grew
// past the limit since it was checked is cut at the limit.
func (p *project) readSmall(tool, rel string) ([]byte, error) {
	f, err := p.root.OpenFile(rel, openFlags, 0)
	if err != nil {
		return nil, p.openError(tool, rel, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, p.openError(tool, rel, err)
	}
	if !fi.Mode().IsRegular() {
		// Checked again on the open file: a FIFO swapped in would block.
		return nil, fmt.Errorf("%s: %s is not a regular file", tool, rel)
	}
	if fi.Size() > p.lim.fileBytes {
		return nil, errTooBig
	}
	data, err := io.ReadAll(io.LimitReader(f, p.lim.fileBytes))
	if err != nil {
		return nil, p.openError(tool, rel, err)
	}
	return data, nil
}

var errTooBig = errors.New("file too big")

func isBinary(data []byte) bool {
	return bytes.IndexByte(data[:min(len(data), binaryProbe)], 0) >= 0
}

// readFile is the read_file tool.
func (p *project) readFile(ctx context.Context, input []byte) (string, error) {
	a := parseArgs(ToolReadFile, input, "path", "offset", "limit")
	name := a.str("path", true)
	offset := a.int("offset", 1, 1)
	limit := a.int("limit", p.lim.readLines, 1)
	if a.err != nil {
		return "", a.err
	}
	rel, err := p.resolve(ToolReadFile, "path", name)
	if err != nil {
		return "", err
	}
	fi, err := p.stat(ToolReadFile, rel)
	if err != nil {
		return "", err
	}
	switch {
	case fi.IsDir():
		return "", fmt.Errorf("read_file: %s is a directory; use ls to list it or glob to find files in it", shown(rel))
	case !fi.Mode().IsRegular():
		return "", fmt.Errorf("read_file: %s is not a regular file", rel)
	}
	data, err := p.readSmall(ToolReadFile, rel)
	if err == errTooBig {
		return "", fmt.Errorf("read_file: %s is %d bytes, over the %d-byte limit for reading; use grep to find the lines you need", rel, fi.Size(), p.lim.fileBytes)
	}
	if err != nil {
		return "", err
	}
	if isBinary(data) {
		return "", fmt.Errorf("read_file: %s is a binary file; only text files can be read", rel)
	}
	if err := ctx.Err(); err != nil {
		return "", err
	}
	text := strings.TrimSuffix(string(data), "\n")
	if len(data) == 0 {
		return fmt.Sprintf("%s is empty.", rel), nil
	}
	lines := strings.Split(text, "\n")
	n := len(lines)
	if offset > n {
		return "", fmt.Errorf("read_file: %s has %s; offset %d is past the end", rel, plural(n, "line", "lines"), offset)
	}
	end := min(n, offset+limit-1)
	var b strings.Builder
	for i := offset; i <= end; i++ {
		line := strings.ToValidUTF8(strings.TrimSuffix(lines[i-1], "\r"), "\uFFFD")
		if cut := cutRunes(line, p.lim.lineChars); cut != line {
			line = cut + " [line cut at " + strconv.Itoa(p.lim.lineChars) + " characters]"
		}
		entry := fmt.Sprintf("%6d\t%s\n", i, line)
		if b.Len()+len(entry) > p.lim.outputChars && i > offset {
			fmt.Fprintf(&b, "[Output stopped at the %d-character limit after line %d of %d; call read_file with offset %d to read on.]", p.lim.outputChars, i-1, n, i)
			return b.String(), nil
		}
		b.WriteString(entry)
	}
	if end < n {
		fmt.Fprintf(&b, "[Lines %d-%d of %d shown; call read_file with offset %d to read on.]", offset, end, n, end+1)
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}

// ls is the ls tool: one directory, not recursive.
func (p *project) ls(ctx context.Context, input []byte) (string, error) {
	a := parseArgs(ToolLs, input, "path")
	name := a.str("path", false)
	if a.err != nil {
		return "", a.err
	}
	rel, err := p.resolve(ToolLs, "path", name)
	if err != nil {
		return "", err
	}
	fi, err := p.stat(ToolLs, rel)
	if err != nil {
		return "", err
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("ls: %s is a file, not a directory; use read_file to read it", rel)
	}
	entries, err := fs.ReadDir(p.fsys, rel)
	if err != nil {
		return "", p.openError(ToolLs, rel, err)
	}
	if err := ctx.Err(); err != nil {
		return "", err
	}
	if len(entries) == 0 {
		return fmt.Sprintf("%s is empty.", upperFirst(shown(rel))), nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s holds %s (directories end in /, symbolic links in @):\n", upperFirst(shown(rel)), plural(len(entries), "entry", "entries"))
	for i, e := range entries {
		if i == p.lim.lsEntries {
			fmt.Fprintf(&b, "[%d more entries not shown; use glob with a pattern to find specific files.]\n", len(entries)-i)
			break
		}
		switch t := e.Type(); {
		case t.IsDir():
			b.WriteString(e.Name() + "/\n")
		case t&fs.ModeSymlink != 0:
			b.WriteString(e.Name() + "@\n")
		case t.IsRegular():
			size := ""
			if info, err := e.Info(); err == nil {
				size = fmt.Sprintf("  (%d bytes)", info.Size())
			}
			b.WriteString(e.Name() + size + "\n")
		default:
			b.WriteString(e.Name() + "\n")
		}
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}

// cutRunes returns s cut to at most n runes.
func cutRunes(s string, n int) string {
	for i := range s {
		if n == 0 {
			return s[:i]
		}
		n--
	}
	return s
}

// shorten cuts s for quoting in a message, marking the cut.
func shorten(s string, n int) string {
	if c := cutRunes(s, n); c != s {
		return c + "…"
	}
	return s
}

func upperFirst(s string) string {
	r, size := utf8.DecodeRuneInString(s)
	return string(unicode.ToUpper(r)) + s[size:]
}
