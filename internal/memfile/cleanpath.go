package memfile

import (
	"fmt"
	"path"
	"path/filepath"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/memdir/memdir/internal/errs"
	"golang.org/x/text/unicode/norm"
)

// CleanPath validates a memory file path supplied by a caller (a user,
// a model, a client) and returns it clean and slash-separated, relative to the
// memory directory. It rejects anything that could name a file outside the
// directory or confuse Claude Code:
//
//   - empty paths, NUL and control characters, backslashes;
//   - absolute paths and drive letters;
//   - ".." components, also when percent-encoded ("%2e%2e%2f") or when Unicode
//     normalisation (NFKC) would produce one (fullwidth "．．／");
//   - hidden components (".x"), components over 255 bytes;
//   - names not ending in ".md", and MEMORY.md itself, which is the index.
//
// Symlinks are not checked here; the store opens files through os.Root, which
// refuses to follow a link out of the directory.
func CleanPath(name string) (string, error) {
	bad := func(why string) (string, error) {
		return "", fmt.Errorf("memory path %q %s: %w", name, why, errs.ErrInvalid)
	}
	if name == "" {
		return bad("is empty")
	}
	if !utf8.ValidString(name) {
		return bad("is not valid UTF-8")
	}
	for _, r := range name {
		if r == 0 || unicode.IsControl(r) {
			return bad("contains a control character")
		}
	}
	if strings.Contains(name, `\`) {
		return bad(`contains a backslash; use "/" between directories`)
	}
	if strings.HasPrefix(name, "/") || filepath.IsAbs(name) || len(name) >= 2 && name[1] == ':' {
		return bad("is absolute; give a path relative to the memory directory")
	}
	lower := strings.ToLower(name)
	for _, enc := range []string{"%2e", "%2f", "%5c", "%00"} {
		if strings.Contains(lower, enc) {
			return bad("contains a percent-encoded dot, slash or NUL")
		}
	}
	if n := norm.NFKC.String(name); n != name {
		if strings.Count(n, "/") != strings.Count(name, "/") || strings.Count(n, "..") != strings.Count(name, "..") ||
			strings.ContainsAny(n, "\\\x00") {
			return bad("turns into a different path under Unicode normalisation")
		}
	}
	clean := path.Clean(name)
	for part := range strings.SplitSeq(name, "/") {
		switch {
		case part == "..":
			return bad("climbs out of the memory directory")
		case part == "" || part == ".":
			continue
		case strings.HasPrefix(part, "."):
			return bad("has a hidden component")
		case len(part) > 255:
			return bad("has a component longer than 255 bytes")
		}
	}
	if !filepath.IsLocal(filepath.FromSlash(clean)) {
		return bad("is not inside the memory directory")
	}
	if !strings.HasSuffix(clean, ".md") || clean == ".md" || strings.HasSuffix(clean, "/.md") {
		return bad(`does not name a Markdown file ending in ".md"`)
	}
	if strings.EqualFold(path.Base(clean), "MEMORY.md") {
		return bad("is the index, not a memory; the store maintains MEMORY.md itself")
	}
	return clean, nil
}
