package memtool

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/memdir/memdir"
)

// Prefix is the virtual directory the model sees. Every path the model sends
// must be Prefix itself or start with Prefix followed by a slash.
const Prefix = "/memories"

// Limits on path sizes. They keep error messages short and stay under the
// common filesystem limits, so a long name fails with a clear message instead
// of ENAMETOOLONG.
const (
	maxPathBytes    = 1024
	maxSegmentBytes = 255
	// maxDecodeRounds bounds how many layers of percent-encoding are peeled
	// off when looking for disguised traversal. A name still changing after
	// that many rounds is refused.
	maxDecodeRounds = 4
)

// Resolve maps a model-supplied path ("/memories" or "/memories/...") to a
// slash-separated path relative to the memory root: "." for the root itself,
// otherwise a clean local path such as "notes/user.md". Empty segments, "."
// segments and a trailing slash are ignored, and a ".." segment steps back
// out of the segment before it, as in the reference SDK helpers, as long as
// the result stays inside /memories.
//
// Resolve refuses, with an error wrapping [memdir.ErrInvalid] whose text is
// meant for the model:
//   - paths that do not start with /memories ("Path must start with
//     /memories, got: ..."), and look-alikes such as /memoriesfoo, which name
//     a sibling of the directory ("Path ... would escape /memories
//     directory");
//   - ".." segments that walk above /memories, and any disguised "." or ".."
//     (percent-encoded once or repeatedly, so %2e%2e%2f and %252e%252e%252f
//     are caught, or turned into one by Unicode NFKC normalisation, so
//     fullwidth "．．／" is caught), wherever it would land ("Path ... would
//     escape /memories directory");
//   - backslashes, NUL and other control characters, and invalid UTF-8;
//   - hidden names (a segment starting with "."), which the tool keeps for its
//     own temporary files and which listings never show;
//   - names that are not local on this OS ([filepath.IsLocal]).
//
// Resolve is purely lexical. Symbolic links are dealt with when a [Tool] opens
// the path through its os.Root.
func Resolve(p string) (rel string, err error) {
	if len(p) > maxPathBytes {
		return "", pathError(p, fmt.Sprintf("it is longer than %d bytes", maxPathBytes))
	}
	if !utf8.ValidString(p) {
		return "", pathError(p, "it is not valid UTF-8")
	}
	if !strings.HasPrefix(p, Prefix) {
		return "", errOutside(p)
	}
	if p != Prefix && !strings.HasPrefix(p, Prefix+"/") {
		return "", errEscape(p, "")
	}
	var segs []string
	for s := range strings.SplitSeq(p[len(Prefix):], "/") {
		switch s {
		case "", ".":
			continue
		case "..":
			if len(segs) == 0 {
				return "", errEscape(p, "")
			}
			segs = segs[:len(segs)-1]
			continue
		}
		if reason, how := checkSegment(s); reason != "" {
			if reason == traversal {
				return "", errEscape(p, how)
			}
			return "", pathError(p, reason+how)
		}
		segs = append(segs, s)
	}
	if len(segs) == 0 {
		return ".", nil
	}
	rel = strings.Join(segs, "/")
	if !filepath.IsLocal(filepath.FromSlash(rel)) {
		return "", pathError(p, "it is not a local file name on this system")
	}
	return rel, nil
}

// MemoryPath is the inverse of [Resolve]: it turns a root-relative slash path
// ("." or "notes/user.md") into the path the model sees ("/memories",
// "/memories/notes/user.md").
func MemoryPath(rel string) string {
	rel = strings.Trim(rel, "/")
	if rel == "" || rel == "." {
		return Prefix
	}
	return Prefix + "/" + rel
}

// traversal is the reason checkForm gives for a disguised "." or ".."; Resolve
// words it as an escape.
const traversal = "traversal"

// checkSegment returns why one path segment is refused ("" if it is fine)
// and, when it is a decoded or normalised form that is at fault, how that
// form was reached. It checks the segment as given, every percent-decoded
// form of it, and the NFKC normalisation of each, because any layer between
// the model and the filesystem (a proxy, a URL router, a macOS or Windows
// filesystem) might decode or normalise the name before it is used.
func checkSegment(s string) (reason, how string) {
	if len(s) > maxSegmentBytes {
		return fmt.Sprintf("the name %s is longer than %d bytes", shown(s), maxSegmentBytes), ""
	}
	forms := []string{s}
	for d := s; ; {
		next := percentDecode(d)
		if next == d {
			break
		}
		if len(forms) > maxDecodeRounds {
			return "it has too many layers of percent-encoding", ""
		}
		forms = append(forms, next)
		d = next
	}
	// Hidden names are checked last, so that "..%2f" is reported as the
	// traversal it is rather than as a hidden name.
	for _, check := range []func(string) string{checkForm, checkHidden} {
		if r, how := checkForms(forms, check); r != "" {
			return r, how
		}
	}
	return "", ""
}

// checkForms applies check to every form and to its NFKC normalisation.
func checkForms(forms []string, check func(string) string) (reason, how string) {
	for i, f := range forms {
		switch i {
		case 0:
		case 1:
			how = fmt.Sprintf(" (%s when percent-decoded)", shown(f))
		case 2:
			how = fmt.Sprintf(" (%s when percent-decoded twice)", shown(f))
		default:
			how = fmt.Sprintf(" (%s when percent-decoded %d times)", shown(f), i)
		}
		if r := check(f); r != "" {
			return r, how
		}
		if n := norm.NFKC.String(f); n != f {
			if r := check(n); r != "" {
				return r, fmt.Sprintf(" (%s after Unicode normalisation)", shown(n))
			}
		}
	}
	return "", ""
}

// checkForm applies the traversal and character rules to one form of a
// segment. A plain "." or ".." segment never gets here (Resolve steps
// through it); one that appears only once the segment is decoded, or inside
// it next to a backslash, is refused as traversal.
func checkForm(f string) string {
	for _, part := range strings.FieldsFunc(f, func(r rune) bool { return r == '/' || r == '\\' }) {
		if part == "." || part == ".." {
			return traversal
		}
	}
	switch {
	case strings.ContainsRune(f, '/'):
		return "a name contains an encoded or look-alike slash"
	case strings.ContainsRune(f, '\\'):
		return "it contains a backslash; use / to separate directories"
	case strings.ContainsRune(f, 0):
		return "it contains a NUL byte"
	case strings.IndexFunc(f, unicode.IsControl) >= 0:
		return "it contains a control character"
	case !utf8.ValidString(f):
		return "it is not valid UTF-8"
	}
	return ""
}

func checkHidden(f string) string {
	if strings.HasPrefix(f, ".") {
		return "names starting with \".\" are hidden and reserved for the tool's own files"
	}
	return ""
}

// percentDecode replaces every valid %XX escape in s with the byte it stands
// for and leaves anything else (a lone %, %zz) as it is, so names like
// "50%.md" survive.
func percentDecode(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) {
			if hi, ok := unhex(s[i+1]); ok {
				if lo, ok := unhex(s[i+2]); ok {
					b.WriteByte(hi<<4 | lo)
					i += 2
					continue
				}
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func unhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// shown renders a model-supplied string for a message: as is when it is
// printable, quoted otherwise so NULs and newlines cannot garble the result.
func shown(s string) string {
	if utf8.ValidString(s) && strings.IndexFunc(s, func(r rune) bool { return !unicode.IsPrint(r) && r != ' ' }) < 0 {
		return s
	}
	return strconv.Quote(s)
}

// pathError refuses a path for a reason of memdir's own (the reference
// helpers have no such rule, so there is no reference wording to follow).
func pathError(p, reason string) error {
	return &Error{
		Msg: fmt.Sprintf("The path %s is not allowed: %s.", shown(p), reason),
		Err: memdir.ErrInvalid,
	}
}

// errOutside is the reference's refusal of a path outside /memories.
func errOutside(p string) error {
	return &Error{
		Msg: fmt.Sprintf("Path must start with %s, got: %s", Prefix, shown(p)),
		Err: memdir.ErrInvalid,
	}
}

// errEscape is the reference's refusal of a path that would lead out of
// /memories (through "..", a look-alike prefix or a symbolic link); how,
// when not empty, says in parentheses what disguised the traversal.
func errEscape(p, how string) error {
	return &Error{
		Msg: fmt.Sprintf("Path %s would escape %s directory%s", shown(p), Prefix, how),
		Err: memdir.ErrInvalid,
	}
}
