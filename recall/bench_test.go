package recall

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/memdir/memdir"
)

func BenchmarkScanManifest(b *testing.B) {
	for _, n := range []int{200, 2000, 20000} {
		b.Run(fmt.Sprintf("files=%d", n), func(b *testing.B) {
			dir := benchDir(b, n)
			ctx := context.Background()
			// Warm the page cache once.
			if _, err := memdir.ScanDir(ctx, dir, &memdir.ScanOptions{Limit: -1}); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			cpu0 := cpuTime()
			for b.Loop() {
				res, err := memdir.ScanDir(ctx, dir, &memdir.ScanOptions{Limit: -1})
				if err != nil || res.Total != n {
					b.Fatalf("scan: %v, %d", err, res.Total)
				}
				_ = Manifest(res.Memories)
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/float64(n), "µs/file")
			// CPU time is steadier than wall time on a shared machine.
			b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/float64(b.N)/float64(n), "cpu-µs/file")
		})
	}
}

// BenchmarkSaveIntoLargeIndex saves a new memory by name into directories
// of real memory files, as 'memdir save' does in a new process: a new Dir
// each time, finding the name through the persisted recall index.
func BenchmarkSaveIntoLargeIndex(b *testing.B) {
	for _, n := range []int{200, 2000, 20000} {
		b.Run(fmt.Sprintf("files=%d", n), func(b *testing.B) {
			base := b.TempDir()
			dir := filepath.Join(base, "memory")
			if err := exec.Command("cp", "-a", benchDir(b, n), dir).Run(); err != nil {
				b.Fatal(err)
			}
			opts := &memdir.Options{Journal: memdir.NewJournal(filepath.Join(base, "journal"), nil), Names: NewNames(dir, filepath.Join(base, "recall.idx"))}
			ctx := context.Background()
			save := func(i int) {
				d, err := memdir.Open(dir, opts)
				if err != nil {
					b.Fatal(err)
				}
				m := &memdir.Memory{Name: fmt.Sprintf("bench %d", i), Description: "a memory saved by the benchmark", Type: memdir.TypeProject, Body: "body"}
				if _, err := d.Save(ctx, m, nil); err != nil {
					b.Fatal(err)
				}
			}
			save(0) // builds the recall index, as the first hook of a session would
			i := 0
			cpu0 := cpuTime()
			for b.Loop() {
				i++
				save(i)
			}
			b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/1000/float64(b.N), "cpu-ms/op")
		})
	}
}

func BenchmarkRecallLexical(b *testing.B) {
	queries := []string{
		"the integration tests for the dispatch postgres schema are flaky",
		"where is the on-call runbook for kafka lag alerts",
		"部署流程需要注意什么",
		"TestInvoiceSettlement failed again on CI last night, can you take a look?",
	}
	for _, n := range []int{2000, 20000} {
		dir := benchDir(b, n)
		d, err := memdir.Open(dir, &memdir.Options{Journal: memdir.NewJournal(b.TempDir(), nil)})
		if err != nil {
			b.Fatal(err)
		}
		ctx := context.Background()
		cache := filepath.Join(b.TempDir(), "recall.idx")
		// Warm the page cache and write the on-disk index cache once.
		if _, err := NewIndex(dir, &IndexOptions{CachePath: cache}).Refresh(ctx); err != nil {
			b.Fatal(err)
		}
		run := func(b *testing.B, idx func() *Index) {
			i := 0
			cpu0 := cpuTime()
			for b.Loop() {
				res, err := Recall(ctx, d, queries[i%len(queries)], &Options{Index: idx()})
				if err != nil || res.Candidates != n {
					b.Fatalf("recall: %v (%d candidates)", err, res.Candidates)
				}
				i++
			}
			b.ReportMetric(float64((cpuTime()-cpu0).Milliseconds())/float64(b.N), "cpu-ms/op")
		}
		b.Run(fmt.Sprintf("files=%d/cold", n), func(b *testing.B) {
			run(b, func() *Index { return NewIndex(dir, nil) })
		})
		// A new process each prompt, opening the persisted index: the
		// hook's case.
		b.Run(fmt.Sprintf("files=%d/cache-file", n), func(b *testing.B) {
			run(b, func() *Index { return NewIndex(dir, &IndexOptions{CachePath: cache}) })
		})
		b.Run(fmt.Sprintf("files=%d/reused", n), func(b *testing.B) {
			idx := NewIndex(dir, nil)
			run(b, func() *Index { return idx })
		})
	}
}

// BenchmarkSelectorTokens reports the size of what the model selector is
// sent per query: memdir's manifest, filled to its default budget, against
// Claude Code's manifest of the 200 newest files (tokens estimated as
// bytes/4), and how many of memdir's lines came from the ranking.
func BenchmarkSelectorTokens(b *testing.B) {
	dir := benchDir(b, 2000)
	d, err := memdir.Open(dir, &memdir.Options{Journal: memdir.NewJournal(b.TempDir(), nil)})
	if err != nil {
		b.Fatal(err)
	}
	idx := NewIndex(dir, nil)
	var res *Result
	for b.Loop() {
		res, err = Recall(context.Background(), d, "the integration tests for the dispatch postgres schema are flaky", &Options{Index: idx, ShowManifest: true})
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(res.ManifestTokens), "manifest-tokens")
	b.ReportMetric(float64(res.BaselineTokens), "newest200-tokens")
	b.ReportMetric(float64(res.Ranked), "ranked-lines")
}
