package recall

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/memdir/memdir"
)

// TestBatchReadSameAsOneByOne holds the batches a first build reads
// through io_uring to readNew, file by file: the same records, stamps,
// bodies and problems, and the same files left out, for every kind of
// file (readFixture), in batches of every length up to a full one.
func TestBatchReadSameAsOneByOne(t *testing.T) {
	t.Parallel()
	dir, rels := readFixture(t)
	// Plain files, enough for a full batch and then some.
	front := "---\nname: n%d\ndescription: plain %d\ntype: user\n---\n"
	for i := range batchFiles + 10 {
		rel := filepath.Join(dir, "plain", strings.Repeat("p", 1+i%5)+string(rune('a'+i%26))+string(rune('a'+i/26))+".md")
		os.MkdirAll(filepath.Dir(rel), 0o700)
		if err := os.WriteFile(rel, []byte(strings.ReplaceAll(front, "%d", string(rune('0'+i%10)))+strings.Repeat("body ", i)), 0o600); err != nil {
			t.Fatal(err)
		}
		r, _ := filepath.Rel(dir, rel)
		rels = append(rels, filepath.ToSlash(r))
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	fr := newFileReader(root, rels)
	defer fr.close()
	br := newBatchReader(nil)
	if br == nil {
		b, _ := os.ReadFile("/proc/sys/kernel/io_uring_disabled")
		if strings.TrimSpace(string(b)) == "0" {
			t.Fatal("io_uring is offered here, and no ring could be set up")
		}
		t.Skipf("io_uring is not offered here (io_uring_disabled %q)", b)
	}
	defer br.close()
	var hr memdir.HeaderReader
	var buf []byte
	for _, n := range []int{1, 7, batchFiles} {
		for start := 0; start < len(rels); start += n {
			part := rels[start:min(len(rels), start+n)]
			got := make([]readResult, len(part))
			if !br.readNew(fr, part, got, &hr, &buf) {
				t.Fatal("the ring failed")
			}
			for i, rel := range part {
				var want readResult
				want.f, want.body, want.probs, want.gone = fr.readNew(rel, &hr, &buf)
				if diff := cmp.Diff(want, got[i], cmp.AllowUnexported(readResult{}, recallFile{})); diff != "" {
					t.Errorf("batches of %d, %s (-one by one +batch):\n%s", n, rel, diff)
				}
			}
		}
	}
	// The plain files and most of the fixture's went through the ring.
	if min := 3 * (batchFiles + 10); br.served < min {
		t.Errorf("%d files read through the ring, want at least %d", br.served, min)
	}
}

// TestLenderGivesBack holds a lent buffer to coming back once, when its
// last borrowing body is done (or at once when none borrows it), and to
// being lent again after.
func TestLenderGivesBack(t *testing.T) {
	l := newLender()
	h := l.get()
	first := &h.data[0]
	h.users = 2
	h.lent()
	if len(l.free) != 0 {
		t.Fatal("given back while two bodies borrow it")
	}
	h.done()
	if len(l.free) != 0 {
		t.Fatal("given back while a body borrows it")
	}
	h.done()
	if len(l.free) != 1 {
		t.Fatalf("%d buffers free after the last body, want 1", len(l.free))
	}
	if again := l.get(); &again.data[0] != first {
		t.Error("the buffer given back was not lent again")
	} else if again.lent(); len(l.free) != 1 {
		t.Error("a buffer no body borrows was not given back at once")
	}
}
