package recall

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/memdir/memdir/internal/benchcorpus"
)

// promptBenchSizes are the corpus sizes of BenchmarkPromptIndex:
// MEMDIR_BENCH_SIZES (comma-separated) or 200, 2,000 and 20,000.
func promptBenchSizes(b *testing.B) []int {
	s := os.Getenv("MEMDIR_BENCH_SIZES")
	if s == "" {
		return []int{200, 2000, 20000}
	}
	var out []int
	for f := range strings.SplitSeq(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			b.Fatal(err)
		}
		out = append(out, n)
	}
	return out
}

// BenchmarkPromptIndex is what a prompt's new process spends on the
// persisted index (open, refresh, search) in the user's three cases, on a
// corpus with every memory indexed (benchcorpus.WriteIndexed, up to 2,000
// memories; larger corpora index the newest 150 in MEMORY.md): warm
// (nothing changed), the first prompt after one memory was rewritten (by
// rename, as memdir and editors write: its directory changes, so it is
// listed), and the first prompt ever (no index file: a full build).
// bench/run measures the same cases as whole processes.
func BenchmarkPromptIndex(b *testing.B) {
	c, err := benchcorpus.Load("../testdata/eval/recall-dev.json")
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	queries := []string{"where is the on-call runbook for kafka lag alerts", "部署流程需要注意什么"}
	for _, n := range promptBenchSizes(b) {
		dir := filepath.Join(b.TempDir(), "memory")
		write := func() error { return c.WriteIndexed(ctx, dir, n) }
		if n > 2000 {
			// doctor --compact, which WriteIndexed runs, is quadratic in
			// MEMORY.md today; the index does not read MEMORY.md.
			write = func() error { return c.Write(dir, n) }
		}
		if err := write(); err != nil {
			b.Fatal(err)
		}
		cache := filepath.Join(b.TempDir(), "idx")
		prompt := func(b *testing.B, i int) {
			x := NewIndex(dir, &IndexOptions{CachePath: cache})
			st, err := x.Refresh(ctx)
			if err != nil || st.Files < n {
				b.Fatalf("refresh: %+v, %v", st, err)
			}
			x.Search(queries[i%len(queries)], 30)
		}
		run := func(b *testing.B, prepare func(i int)) {
			prompt(b, 0)
			i := 0
			var cpu int64
			for b.Loop() {
				b.StopTimer()
				prepare(i)
				b.StartTimer()
				c0 := cpuTime()
				prompt(b, i)
				cpu += int64(cpuTime() - c0)
				i++
			}
			b.ReportMetric(float64(cpu)/1e6/float64(b.N), "cpu-ms/op")
		}
		victim := filepath.Join(dir, c.Memory(n/2, n).File)
		orig, err := os.ReadFile(victim)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("files=%d/warm", n), func(b *testing.B) { run(b, func(int) {}) })
		b.Run(fmt.Sprintf("files=%d/after-one-change", n), func(b *testing.B) {
			run(b, func(i int) {
				data := fmt.Appendf(append([]byte{}, orig...), "\nedited %d: the zebra crossing\n", i)
				if err := os.WriteFile(victim+".tmp", data, 0o600); err != nil {
					b.Fatal(err)
				}
				if err := os.Rename(victim+".tmp", victim); err != nil {
					b.Fatal(err)
				}
			})
		})
		b.Run(fmt.Sprintf("files=%d/first-ever", n), func(b *testing.B) {
			run(b, func(int) {
				for _, f := range append(stateFiles(cache), cache+".lock") {
					os.Remove(f)
				}
			})
		})
	}
}
