package memtool

import (
	"errors"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/text/unicode/norm"

	"github.com/memdir/memdir"
)

func TestResolveAccepts(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"/memories", "."},
		{"/memories/", "."},
		{"/memories//", "."},
		{"/memories/notes.md", "notes.md"},
		{"/memories//a//b/", "a/b"},
		{"/memories/a/b/c.md", "a/b/c.md"},
		{"/memories/50%.md", "50%.md"},
		{"/memories/%zz.md", "%zz.md"},
		{"/memories/%41.md", "%41.md"}, // decodes to A.md: harmless, kept literally
		{"/memories/a..b.md", "a..b.md"},
		{"/memories/node_modules/x", "node_modules/x"},
		{"/memories/café.md", "café.md"},
		{"/memories/cafe\u0301.md", "cafe\u0301.md"}, // NFD is fine: it normalises to nothing dangerous
		{"/memories/日本語.md", "日本語.md"},
		{"/memories/with space.md", "with space.md"},
		{"/memories/a\u2215b", "a\u2215b"}, // division slash is not a separator anywhere
		// "." and ".." segments are stepped through, as in the reference,
		// as long as the path stays inside /memories.
		{"/memories/./a", "a"},
		{"/memories/x/../a.md", "a.md"},
		{"/memories/a/b/../../c/./d.md", "c/d.md"},
		{"/memories/a/..", "."},
	} {
		got, err := Resolve(tc.in)
		if err != nil {
			t.Errorf("Resolve(%q): %v", tc.in, err)
			continue
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("Resolve(%q) (-want +got):\n%s", tc.in, diff)
		}
		if back := MemoryPath(got); back != strings.TrimRight(path.Clean(tc.in), "/") {
			t.Errorf("MemoryPath(%q) = %q, want %q", got, back, path.Clean(tc.in))
		}
	}
}

func TestResolveRejects(t *testing.T) {
	t.Parallel()
	const escape = "would escape /memories directory"
	for _, tc := range []struct{ in, wantMsg string }{
		{"", "Path must start with /memories, got: "},
		{"memories/a", "Path must start with /memories, got: memories/a"},
		{"/Memories/a", "Path must start with /memories, got: /Memories/a"},
		{"/etc/passwd", "Path must start with /memories, got: /etc/passwd"},
		{"/tmp/outside/secret.md", "Path must start with /memories, got: /tmp/outside/secret.md"},
		{"C:\\Windows\\x", "Path must start with /memories, got: C:\\Windows\\x"},
		// Look-alike prefixes name siblings of /memories.
		{"/memoriesfoo", "Path /memoriesfoo " + escape},
		{"/memoriesfoo/bar", "Path /memoriesfoo/bar " + escape},
		{"/memories.md", "Path /memories.md " + escape},
		{"/memories\\..\\x", escape},
		{"/memories/..", "Path /memories/.. " + escape},
		{"/memories/../x", "Path /memories/../x " + escape},
		{"/memories/a/../../x", "Path /memories/a/../../x " + escape},
		{"/memories/..\\x", escape},
		{"/memories/a\\b", "backslash"},
		{"/memories/a\x00b", "NUL"},
		{"/memories/a\nb", "control character"},
		{"/memories/a\x7fb", "control character"},
		{"/memories/\xff.md", "not valid UTF-8"},
		// Disguised traversal is refused wherever it would land.
		{"/memories/%2e%2e%2fx", escape + " (../x when percent-decoded)"},
		{"/memories/%2E%2E%2Fx", escape},
		{"/memories/%2e%2e/x", escape},
		{"/memories/x/%2e%2e/y", escape},
		{"/memories/%2e", escape},
		{"/memories/..%2fx", escape},
		{"/memories/%2e%2e%5cx", escape},
		{"/memories/a%2fb", "encoded or look-alike slash"},
		{"/memories/a%5cb", "backslash"},
		{"/memories/a%00b", "NUL"},
		{"/memories/%252e%252e%252fx", escape + " (../x when percent-decoded twice)"},
		{"/memories/%25252e%25252e", escape},
		{"/memories/%2525252525252e", "too many layers"},
		{"/memories/．．／x", escape + " (../x after Unicode normalisation)"},
		{"/memories/．．", escape},
		{"/memories/a／b", "encoded or look-alike slash"},
		{"/memories/a＼b", "backslash"},
		{"/memories/\u2025", escape}, // two dot leader
		{"/memories/%EF%BC%8E%EF%BC%8E", escape},
		{"/memories/.hidden", "hidden"},
		{"/memories/a/.git/config", "hidden"},
		{"/memories/%2ehidden", "hidden"},
		{"/memories/．hidden", "hidden"},
		{"/memories/" + strings.Repeat("a", 256), "longer than 255 bytes"},
		{"/memories/" + strings.Repeat("a/", 600), "longer than 1024 bytes"},
	} {
		got, err := Resolve(tc.in)
		if err == nil {
			t.Errorf("Resolve(%q) = %q, want an error", tc.in, got)
			continue
		}
		if !errors.Is(err, memdir.ErrInvalid) {
			t.Errorf("Resolve(%q): error %v does not wrap ErrInvalid", tc.in, err)
		}
		msg := err.Error()
		if !(strings.HasPrefix(msg, "Path ") || strings.HasPrefix(msg, "The path ")) || !strings.Contains(msg, tc.wantMsg) {
			t.Errorf("Resolve(%q) error = %q, want it to start with \"Path \" or \"The path \" and contain %q", tc.in, err, tc.wantMsg)
		}
		if strings.ContainsRune(msg, 0) || strings.ContainsRune(msg, '\n') {
			t.Errorf("Resolve(%q) error %q repeats a control character", tc.in, err)
		}
	}
}

func TestMemoryPath(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{".", "/memories"},
		{"", "/memories"},
		{"a.md", "/memories/a.md"},
		{"a/b.md", "/memories/a/b.md"},
	} {
		if got := MemoryPath(tc.in); got != tc.want {
			t.Errorf("MemoryPath(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// FuzzResolve checks that whatever Resolve accepts is a clean path inside
// the root, free of every disguise of traversal, and maps back to itself.
func FuzzResolve(f *testing.F) {
	for _, s := range []string{
		"/memories", "/memories/a.md", "/memories/../x", "/memories/%2e%2e%2f", "/memories/%252e%252e",
		"/memories/．．／", "/memoriesfoo", "/memories/a\\b", "/memories/a\x00", "/memories//a/./b",
	} {
		f.Add(s)
	}
	root := filepath.FromSlash("/srv/mem")
	f.Fuzz(func(t *testing.T, p string) {
		rel, err := Resolve(p)
		if err != nil {
			if !errors.Is(err, memdir.ErrInvalid) {
				t.Fatalf("Resolve(%q): error %v does not wrap ErrInvalid", p, err)
			}
			return
		}
		if p != Prefix && !strings.HasPrefix(p, Prefix+"/") {
			t.Fatalf("Resolve(%q) accepted a path outside %s", p, Prefix)
		}
		if rel != "." {
			if !filepath.IsLocal(filepath.FromSlash(rel)) {
				t.Fatalf("Resolve(%q) = %q, not local", p, rel)
			}
			if path.Clean(rel) != rel {
				t.Fatalf("Resolve(%q) = %q, not clean", p, rel)
			}
			for seg := range strings.SplitSeq(rel, "/") {
				for _, form := range []string{seg, percentDecode(seg), percentDecode(percentDecode(seg)), norm.NFKC.String(seg)} {
					if form == ".." || form == "." || strings.HasPrefix(form, ".") ||
						strings.ContainsAny(form, "\\\x00/") || !utf8.ValidString(form) {
						t.Fatalf("Resolve(%q) = %q: segment %q has a dangerous form %q", p, rel, seg, form)
					}
				}
			}
		}
		joined := filepath.Join(root, filepath.FromSlash(rel))
		if r, err := filepath.Rel(root, joined); err != nil || !(r == "." || filepath.IsLocal(r)) {
			t.Fatalf("Resolve(%q) = %q escapes the root: %q", p, rel, joined)
		}
		again, err := Resolve(MemoryPath(rel))
		if err != nil || again != rel {
			t.Fatalf("Resolve(MemoryPath(%q)) = %q, %v; want it back", rel, again, err)
		}
	})
}
