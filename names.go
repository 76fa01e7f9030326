package memdir

import (
	"strings"
	"unicode"

	"github.com/memdir/memdir/internal/memfile"
)

// CleanMemoryFilePath validates a memory file path supplied by a caller (a user,
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
func CleanMemoryFilePath(name string) (string, error) { return memfile.CleanPath(name) }

// Slug turns a memory name into a file-name stem: lower case, letters and
// digits kept (any script), every other run of characters made one '_'.
func Slug(name string) string {
	var b strings.Builder
	pending := false
	for _, r := range strings.ToLower(name) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			if pending && b.Len() > 0 {
				b.WriteByte('_')
			}
			pending = false
			b.WriteRune(r)
			if b.Len() >= 80 {
				break
			}
			continue
		}
		pending = true
	}
	if b.Len() == 0 {
		return "memory"
	}
	return b.String()
}

// FileNameFor returns the file name memdir gives a new memory: "<type>_<slug>.md"
// following Claude Code's examples (user_role.md, feedback_testing.md), without
// repeating a type the name already starts with.
func FileNameFor(name string, t Type) string {
	s := Slug(name)
	if t != "" && s != string(t) && !strings.HasPrefix(s, string(t)+"_") {
		s = string(t) + "_" + s
	}
	return s + ".md"
}
