package memdir

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// benchDir makes n realistic memory files: short frontmatter, a one-line
// description of about 120 characters and a body of about 600.
func benchDir(b *testing.B, n int) string {
	b.Helper()
	dir := b.TempDir()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	types := []Type{TypeUser, TypeFeedback, TypeProject, TypeReference}
	body := strings.Repeat("Deploys go through the blue/green script; never kubectl apply by hand. ", 9)
	for i := 0; i < n; i++ {
		typ := types[i%4]
		content := fmt.Sprintf("---\nname: memory-%d\ndescription: Memory number %d about the dispatch service, its Postgres schema and the on-call runbook for Kafka lag\ntype: %s\n---\n\n%s\n", i, i, typ, body)
		p := filepath.Join(dir, fmt.Sprintf("%s_memory_%05d.md", typ, i))
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			b.Fatal(err)
		}
		mt := t0.Add(time.Duration(i) * time.Minute)
		os.Chtimes(p, mt, mt)
	}
	return dir
}

func BenchmarkScanManifest(b *testing.B) {
	for _, n := range []int{200, 2000, 20000} {
		b.Run(fmt.Sprintf("files=%d", n), func(b *testing.B) {
			dir := benchDir(b, n)
			ctx := context.Background()
			// Warm the page cache once.
			if _, err := ScanDir(ctx, dir, &ScanOptions{Limit: -1}); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			cpu0 := cpuTime()
			for b.Loop() {
				res, err := ScanDir(ctx, dir, &ScanOptions{Limit: -1})
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

func BenchmarkSaveIntoLargeIndex(b *testing.B) {
	base := b.TempDir()
	d, err := Open(filepath.Join(base, "memory"), &Options{Journal: NewJournal(filepath.Join(base, "journal"), nil)})
	if err != nil {
		b.Fatal(err)
	}
	d.Ensure()
	var ix strings.Builder
	for i := 0; i < 2000; i++ {
		fmt.Fprintf(&ix, "- [memory %d](project_memory_%d.md) — a one-line hook of typical length for entry %d\n", i, i, i)
	}
	os.WriteFile(d.Abs("MEMORY.md"), []byte(ix.String()), 0o600)
	ctx := context.Background()
	i := 0
	for b.Loop() {
		i++
		m := &Memory{Path: fmt.Sprintf("bench_%d.md", i), Name: fmt.Sprintf("bench %d", i), Description: "a memory saved by the benchmark", Type: TypeProject, Body: "body"}
		if _, err := d.Save(ctx, m, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// cpuTime returns the process's user plus system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func BenchmarkRecallLexical(b *testing.B) {
	queries := []string{
		"the integration tests for the dispatch postgres schema are flaky",
		"where is the on-call runbook for kafka lag alerts",
		"部署流程需要注意什么",
	}
	for _, n := range []int{2000, 20000} {
		dir := benchDir(b, n)
		d, err := Open(dir, &Options{Journal: NewJournal(b.TempDir(), nil)})
		if err != nil {
			b.Fatal(err)
		}
		ctx := context.Background()
		cache := filepath.Join(b.TempDir(), "recall.gob")
		// Warm the page cache and write the on-disk index cache once.
		if _, err := NewRecallIndex(dir, cache).Refresh(ctx); err != nil {
			b.Fatal(err)
		}
		run := func(b *testing.B, idx func() *RecallIndex) {
			i := 0
			cpu0 := cpuTime()
			for b.Loop() {
				res, err := d.Recall(ctx, queries[i%len(queries)], &RecallOptions{Index: idx()})
				if err != nil || res.Candidates != n {
					b.Fatalf("recall: %v (%d candidates)", err, res.Candidates)
				}
				i++
			}
			b.ReportMetric(float64((cpuTime()-cpu0).Milliseconds())/float64(b.N), "cpu-ms/op")
		}
		b.Run(fmt.Sprintf("files=%d/cold", n), func(b *testing.B) {
			run(b, func() *RecallIndex { return NewRecallIndex(dir, "") })
		})
		b.Run(fmt.Sprintf("files=%d/cache-file", n), func(b *testing.B) {
			run(b, func() *RecallIndex { return NewRecallIndex(dir, cache) })
		})
		b.Run(fmt.Sprintf("files=%d/reused", n), func(b *testing.B) {
			idx := NewRecallIndex(dir, "")
			run(b, func() *RecallIndex { return idx })
		})
	}
}

// BenchmarkSelectorTokens reports the size of what the model selector is
// sent per query: memdir's manifest, filled to its default budget, against
// Claude Code's manifest of the 200 newest files (tokens estimated as
// bytes/4), and how many of memdir's lines came from the ranking.
func BenchmarkSelectorTokens(b *testing.B) {
	dir := benchDir(b, 2000)
	d, err := Open(dir, &Options{Journal: NewJournal(b.TempDir(), nil)})
	if err != nil {
		b.Fatal(err)
	}
	idx := NewRecallIndex(dir, "")
	var res *RecallResult
	for b.Loop() {
		res, err = d.Recall(context.Background(), "the integration tests for the dispatch postgres schema are flaky", &RecallOptions{Index: idx})
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(res.ManifestTokens), "manifest-tokens")
	b.ReportMetric(float64(res.BaselineTokens), "newest200-tokens")
	b.ReportMetric(float64(res.Ranked), "ranked-lines")
}
