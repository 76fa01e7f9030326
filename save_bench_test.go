package memdir_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/internal/benchcorpus"
	"github.com/memdir/memdir/memdirtest"
)

// indexedCorpus returns a function giving a directory of n memories,
// every one indexed as a user's directory is after 'memdir doctor --fix
// --compact' (the newest in MEMORY.md, the rest in MEMORY-more.md),
// written under root the first time it is asked for, for sub-benchmarks to
// copy before writing into it.
func indexedCorpus(root string, n int) func(b *testing.B) string {
	var dir string
	return func(b *testing.B) string {
		b.Helper()
		if dir != "" {
			return dir
		}
		c, err := benchcorpus.Load("testdata/eval/recall-dev.json")
		if err != nil {
			b.Fatal(err)
		}
		d := filepath.Join(root, fmt.Sprint(n))
		if err := c.WriteIndexed(context.Background(), d, n); err != nil {
			b.Fatal(err)
		}
		dir = d
		return dir
	}
}

// copyCorpus copies the generated directory src into a new temporary
// directory, for a benchmark that writes into it.
func copyCorpus(b *testing.B, src string) string {
	b.Helper()
	dst := filepath.Join(b.TempDir(), "memory")
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		b.Fatal(err)
	}
	return dst
}

// BenchmarkSaveIndexed is a save into a directory of n memories, every one
// indexed, as users have them: "new" writes a new memory (its line goes
// into MEMORY.md after the overflow file was checked for it), "update"
// rewrites an old memory whose line compaction moved into MEMORY-more.md.
// What a save costs should not grow with n.
func BenchmarkSaveIndexed(b *testing.B) {
	root := b.TempDir()
	for _, n := range []int{200, 2000, 20000} {
		src := indexedCorpus(root, n)
		ctx := context.Background()
		open := func(b *testing.B) *memdir.Dir {
			b.Helper()
			dir := copyCorpus(b, src(b))
			d, err := memdir.Open(dir, &memdir.Options{Journal: memdir.NewJournal(filepath.Join(filepath.Dir(dir), "journal"), nil), NoUses: true})
			if err != nil {
				b.Fatal(err)
			}
			return d
		}
		b.Run(fmt.Sprintf("new/n=%d", n), func(b *testing.B) {
			d := open(b)
			i := 0
			var cpu time.Duration
			for b.Loop() {
				i++
				t0 := memdirtest.CPUTime()
				rel := fmt.Sprintf("project_bench_save_%d.md", i)
				m := &memdir.Memory{Path: rel, Name: fmt.Sprintf("bench-save-%d", i), Type: memdir.TypeProject,
					Description: "a memory the benchmark saves, with a description of usual length",
					Body:        "Deploys go through the blue/green script; never kubectl apply by hand."}
				if _, err := d.Save(ctx, m, nil); err != nil {
					b.Fatal(err)
				}
				cpu += memdirtest.CPUTime() - t0
				b.StopTimer()
				// Keep MEMORY.md as long as it was, so every save sees
				// the same directory.
				if _, err := d.Remove(ctx, rel, nil); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
			reportCPU(b, cpu)
		})
		b.Run(fmt.Sprintf("update/n=%d", n), func(b *testing.B) {
			d := open(b)
			// The oldest memory: its line is in the overflow file.
			old := fmt.Sprintf("user_mem_%06d.md", (n-1)/4*4)
			m, err := d.Get(ctx, old)
			if err != nil {
				b.Fatal(err)
			}
			desc := m.Description
			i := 0
			t0 := memdirtest.CPUTime()
			for b.Loop() {
				i++
				m.Description = fmt.Sprintf("%s (rev %d)", desc, i%2)
				if _, err := d.Save(ctx, m, nil); err != nil {
					b.Fatal(err)
				}
			}
			reportCPU(b, memdirtest.CPUTime()-t0)
		})
	}
}

// reportCPU reports the process CPU time (user and system) per save, which
// the machine's other work and fsync's waits disturb less than wall time.
func reportCPU(b *testing.B, cpu time.Duration) {
	b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms/op")
}
