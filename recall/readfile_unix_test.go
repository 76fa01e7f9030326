//go:build unix

package recall

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/memdir/memdir"
)

// readFixture writes a directory of every kind of memory file a reader
// meets (plain, CRLF, binary, unclosed, large, nested, links in and out
// of it, a FIFO) and returns it with the paths to read, missing ones
// included.
func readFixture(t *testing.T) (string, []string) {
	t.Helper()
	dir := t.TempDir()
	outside := t.TempDir()
	front := "---\nname: Kafka lag\ndescription: where the runbook is\ntype: project\n---\n"
	files := map[string]string{
		"a.md":             front + "the body\n",
		"crlf.md":          strings.ReplaceAll(front+"body\n", "\n", "\r\n"),
		"nofront.md":       "no frontmatter at all\n",
		"unclosed.md":      "---\nname: x\n" + strings.Repeat("k: v\n", 40),
		"binary.md":        front + "a\x00b",
		"empty.md":         "",
		"big.md":           front + strings.Repeat("word ", 40<<10),
		"manylines.md":     front + strings.Repeat(strings.Repeat("line ", 200)+"\n", 60),
		"longhead.md":      "---\nname: x\n" + strings.Repeat("y", 70<<10) + "\n---\nbody\n",
		"sub/b.md":         front + "nested\n",
		"sub/deeper/c.md":  "---\nname: deep\n---\n",
		"sub/deeper/d.md":  front,
		"other/target.txt": front + "reached through a link\n",
	}
	for rel, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(outside, "secret.md"), []byte(front+"outside\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	links := map[string]string{
		"inlink.md":       "other/target.txt",
		"outlink.md":      filepath.Join(outside, "secret.md"),
		"dangling.md":     "nowhere.md",
		"linkdir":         "sub",
		"escape":          outside,
		"sub/uplink.md":   "../a.md",
		"sub/deeper/x.md": "../../inlink.md",
	}
	for rel, target := range links {
		if err := os.Symlink(target, filepath.Join(dir, filepath.FromSlash(rel))); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo.md"), 0o600); err != nil {
		t.Fatal(err)
	}
	rels := []string{"missing.md", "fifo.md", "linkdir/b.md", "escape/secret.md", "sub"}
	for rel := range files {
		rels = append(rels, rel)
	}
	for rel := range links {
		rels = append(rels, rel)
	}
	return dir, rels
}

// TestFastReadSameAsThroughRoot holds the reader of a refresh, which reads
// files through descriptors of their directories, to readRecallFile, which
// reads them through the root: the same records, bodies and problems for
// every kind of file, links and nested directories included.
func TestFastReadSameAsThroughRoot(t *testing.T) {
	t.Parallel()
	dir, rels := readFixture(t)
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	fr := newFileReader(root, rels)
	defer fr.close()
	var buf []byte
	var hr memdir.HeaderReader
	sd, err := openStatDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer sd.Close()
	fast := 0
	for _, rel := range rels {
		wf, wb, wp := readRecallFile(root, rel, &memdir.HeaderReader{})
		if _, _, _, ok := fr.readFast(rel, &buf, nil); ok {
			fast++
		}
		gf, gb, gp := fr.read(rel, &hr, &buf)
		if diff := cmp.Diff(wf, gf, cmp.AllowUnexported(recallFile{})); diff != "" || wb != gb {
			t.Errorf("%s: record (-root +fast):\n%s\nbodies equal: %v", rel, diff, wb == gb)
		}
		if diff := cmp.Diff(wp, gp); diff != "" {
			t.Errorf("%s: problems (-root +fast):\n%s", rel, diff)
		}
		// A new file read without a stat first (staleFile.fromRead) is
		// left out where the stat would have left it out, and otherwise
		// recorded with the stamp the stat gives.
		nf, nb, np, gone := fr.readNew(rel, &hr, &buf)
		st, _, isReg, err := sd.stat(rel)
		if wantGone := err != nil || !isReg; gone != wantGone {
			t.Errorf("%s: read new, gone %v; the stat says gone %v", rel, gone, wantGone)
			continue
		} else if gone {
			continue
		}
		wf.stamp = st
		if diff := cmp.Diff(wf, nf, cmp.AllowUnexported(recallFile{})); diff != "" || wb != nb {
			t.Errorf("%s: record (-stat, then root +read new):\n%s\nbodies equal: %v", rel, diff, wb == nb)
		}
		if diff := cmp.Diff(wp, np); diff != "" {
			t.Errorf("%s: problems (-root +read new):\n%s", rel, diff)
		}
	}
	if fast < 8 {
		t.Errorf("%d files read the fast way, want the plain files of the tree (8 at least)", fast)
	}
}
