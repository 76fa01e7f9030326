package memdir_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/memdir/memdir"
)

// TestHeaderOfMatchesHeaderReader holds HeaderOf, which takes a file's
// content, to what a scan reads from the file.
func TestHeaderOfMatchesHeaderReader(t *testing.T) {
	t.Parallel()
	front := "---\nname: Kafka lag\ndescription: where the runbook is\ntype: project\n---\n"
	lines := func(n int, s string) string { return strings.Repeat(s+"\n", n) }
	cases := map[string]string{
		"empty":          "",
		"plain":          front + "body\n",
		"no newline":     front + "body",
		"no frontmatter": "just text\n",
		"unclosed":       "---\nname: x\n" + lines(40, "a: b"),
		"closed late":    "---\nname: x\n" + lines(28, "a: b") + "---\nbody\n",
		"closed at 30":   "---\nname: x\n" + lines(27, "a: b") + "---\nbody\n",
		"bom crlf":       "\xef\xbb\xbf---\r\nname: x\r\ndescription: y\r\n---\r\nbody\r\n",
		"binary":         front + "a\x00b\n",
		"bad yaml":       "---\nname: [x\n---\n",
		"no type":        "---\nname: x\ndescription: y\n---\n",
		"long lines":     front + lines(40, strings.Repeat("w", 3000)),
		"long head":      "---\nname: x\n" + strings.Repeat("y", 70<<10) + "\n---\n",
		"few long lines": front + strings.Repeat("z", 70<<10),
	}
	dir := t.TempDir()
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	var hr memdir.HeaderReader
	for name, content := range cases {
		rel := strings.ReplaceAll(name, " ", "_") + ".md"
		if err := os.WriteFile(filepath.Join(dir, rel), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		want, wantProbs, wantOK := hr.Read(root, rel)
		got, gotProbs, gotOK, exact := memdir.HeaderOf(rel, want.ModTime, []byte(content))
		if !exact {
			if len(content) <= 64<<10 {
				t.Errorf("%s: not exact for a file of %d bytes", name, len(content))
			}
			continue
		}
		if diff := cmp.Diff(want, got); diff != "" || wantOK != gotOK {
			t.Errorf("%s: ok %v, want %v (-scan +HeaderOf):\n%s", name, gotOK, wantOK, diff)
		}
		if diff := cmp.Diff(wantProbs, gotProbs); diff != "" {
			t.Errorf("%s: problems (-scan +HeaderOf):\n%s", name, diff)
		}
	}
}

// TestHeaderAndBody holds HeaderAndBody, which normalises a file's text
// once, to HeaderOf and MemoryBody, which each normalise their part.
func TestHeaderAndBody(t *testing.T) {
	t.Parallel()
	front := "---\nname: Kafka lag\ndescription: where the runbook is\ntype: project\n---\n"
	for name, content := range map[string]string{
		"empty":          "",
		"plain":          front + "body\n",
		"no frontmatter": "just text\n",
		"closed late":    "---\nname: x\n" + strings.Repeat("a: b\n", 28) + "---\nbody\n",
		"bom crlf":       "\xef\xbb\xbf---\r\nname: x\r\ndescription: y\r\n---\r\nbody\r\n",
		"invalid utf-8":  front + "caf\xe9 au lait\n",
		"binary":         front + "a\x00b\n",
		"quoted":         "---\nname: 'it''s'\ndescription: \"a: b\"\nmetadata:\n  type: user\n---\nbody",
		"cut in a rune":  front + strings.Repeat("é", 40),
		"long head":      "---\nname: x\n" + strings.Repeat("y", 70<<10) + "\n---\n",
	} {
		checkHeaderAndBody(t, name, []byte(content), 64)
		checkHeaderAndBody(t, name, []byte(content), 1<<20)
	}
}

func FuzzHeaderAndBody(f *testing.F) {
	f.Add("---\nname: a\ndescription: b\ntype: user\n---\nbody", 8)
	f.Add("\ufeff---\r\nname: x\r\n---\r\n\xff", 100)
	f.Fuzz(func(t *testing.T, content string, bodyMax int) {
		if bodyMax < 0 {
			bodyMax = -bodyMax
		}
		checkHeaderAndBody(t, "fuzz", []byte(content), bodyMax%(1<<16))
	})
}

func checkHeaderAndBody(t *testing.T, name string, data []byte, bodyMax int) {
	t.Helper()
	mtime := time.Unix(1700000000, 0)
	h, body, probs, ok, exact := memdir.HeaderAndBody("m.md", mtime, data, bodyMax)
	wantH, wantProbs, wantOK, wantExact := memdir.HeaderOf("m.md", mtime, data)
	if exact != wantExact {
		t.Fatalf("%s: exact %v, HeaderOf's %v", name, exact, wantExact)
	}
	if !exact {
		return
	}
	wantBody := ""
	if wantOK {
		wantBody = memdir.MemoryBody(data[:min(len(data), bodyMax)])
	}
	if diff := cmp.Diff(wantH, h); diff != "" || ok != wantOK || body != wantBody {
		t.Errorf("%s (body max %d): ok %v want %v, body %q want %q, header (-HeaderOf +HeaderAndBody):\n%s", name, bodyMax, ok, wantOK, body, wantBody, diff)
	}
	if diff := cmp.Diff(wantProbs, probs); diff != "" {
		t.Errorf("%s: problems (-HeaderOf +HeaderAndBody):\n%s", name, diff)
	}
	// Borrowing gives the same; then the buffer is overwritten, and only
	// the body may change with it.
	buf := bytes.Clone(data)
	bh, bbody, bprobs, bok, _ := memdir.HeaderAndBodyBorrowing("m.md", mtime, buf, bodyMax)
	if diff := cmp.Diff(h, bh); diff != "" || bok != ok || bbody != body || !cmp.Equal(probs, bprobs) {
		t.Errorf("%s: borrowing: ok %v, body %q, problems %v; header (-copying +borrowing):\n%s", name, bok, bbody, bprobs, diff)
	}
	for i := range buf {
		buf[i] = 'X'
	}
	if diff := cmp.Diff(h, bh); diff != "" || !cmp.Equal(probs, bprobs) {
		t.Errorf("%s: the borrowed header or problems changed with the buffer (-before +after):\n%s", name, diff)
	}
}
