package recall

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/internal/benchcorpus"
	"github.com/memdir/memdir/memdirtest"
)

// mustOpen opens a Dir in a temp directory with its journal in another.
func mustOpen(tb testing.TB) *memdir.Dir {
	tb.Helper()
	base := tb.TempDir()
	d, err := memdir.Open(filepath.Join(base, "memory"), &memdir.Options{Journal: memdir.NewJournal(filepath.Join(base, "journal"), nil)})
	if err != nil {
		tb.Fatal(err)
	}
	return d
}

func mustSave(tb testing.TB, d *memdir.Dir, m *memdir.Memory, opts *memdir.SaveOptions) *memdir.SaveResult {
	tb.Helper()
	res, err := d.Save(context.Background(), m, opts)
	if err != nil {
		tb.Fatal(err)
	}
	return res
}

func cpuTime() time.Duration { return memdirtest.CPUTime() }

// benchDir makes n memory files from the corpus generator: varied
// bodies recombined from the recall set's sentences, with a long-tailed
// vocabulary, file i modified i minutes before benchcorpus.Ref. Corpora are
// cached per process and removed by TestMain.
func benchDir(b *testing.B, n int) string {
	b.Helper()
	benchMu.Lock()
	defer benchMu.Unlock()
	if d, ok := benchDirs[n]; ok {
		return d
	}
	c, err := benchcorpus.Load("../testdata/eval/recall-dev.json")
	if err != nil {
		b.Fatal(err)
	}
	if benchRoot == "" {
		if benchRoot, err = os.MkdirTemp("", "memdir-bench-"); err != nil {
			b.Fatal(err)
		}
	}
	dir := filepath.Join(benchRoot, fmt.Sprint(n))
	if err := c.Write(dir, n); err != nil {
		b.Fatal(err)
	}
	benchDirs[n] = dir
	return dir
}

var (
	benchMu   sync.Mutex
	benchDirs = map[int]string{}
	benchRoot string
)

func TestMain(m *testing.M) {
	if os.Getenv("MEMDIR_TEST_RECALLER") == "1" {
		if err := runRecaller(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	code := m.Run()
	if benchRoot != "" {
		os.RemoveAll(benchRoot)
	}
	os.Exit(code)
}
