package recall_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/anchors"
	"github.com/memdir/memdir/memdirtest"
	"github.com/memdir/memdir/recall"
)

// BenchmarkRecallAnchors measures the hook's path (Recall through the
// on-disk index cache, as each hook process does) over 2,000 memories that
// each carry three anchors: anchors off (no project root), on with the code
// unchanged (a stat per anchor), and on after the anchored files changed
// (a hash and a git log per changed anchor of the recalled memories).
func BenchmarkRecallAnchors(b *testing.B) {
	const n = 2000
	ctx := context.Background()
	r := memdirtest.NewGitRepo(b)
	files := map[string]string{}
	for i := range 3 {
		files[fmt.Sprintf("internal/svc%d/handler.go", i)] = fmt.Sprintf("package svc%d\n\nfunc Handle() {}\n", i)
	}
	r.Commit(files)
	as := anchors.Find(ctx, r.Root, "`internal/svc0/handler.go` `internal/svc1/handler.go` `internal/svc2/handler.go`")
	if len(as) != 3 {
		b.Fatalf("anchors: %v", as)
	}
	dir := b.TempDir()
	body := strings.Repeat("Deploys go through the blue/green script; never kubectl apply by hand. ", 9)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range n {
		content := fmt.Sprintf("---\nname: memory-%d\ndescription: Memory number %d about the dispatch service, its Postgres schema and the on-call runbook for Kafka lag\ntype: project\n%s: %s\n---\n\n%s zq%dx tests flaky\n", i, i, anchors.Key, anchors.Format(as), body, i%400)
		p := filepath.Join(dir, fmt.Sprintf("project_memory_%05d.md", i))
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			b.Fatal(err)
		}
		mt := t0.Add(time.Duration(i) * time.Minute)
		os.Chtimes(p, mt, mt)
	}
	cache := filepath.Join(b.TempDir(), "recall.gob")
	if _, err := recall.NewIndex(dir, &recall.IndexOptions{CachePath: cache}).Refresh(ctx); err != nil {
		b.Fatal(err)
	}
	run := func(b *testing.B, root string, wantStale bool) {
		d, err := memdir.Open(dir, &memdir.Options{Journal: memdir.NewJournal(b.TempDir(), nil), ProjectRoot: root})
		if err != nil {
			b.Fatal(err)
		}
		var recalled int
		cpu0 := memdirtest.CPUTime()
		for b.Loop() {
			res, err := recall.Recall(ctx, d, "why are the zq7x tests flaky", &recall.Options{Index: recall.NewIndex(dir, &recall.IndexOptions{CachePath: cache})})
			if err != nil || len(res.Memories) == 0 || (len(res.Memories[0].StaleAnchors) > 0) != wantStale {
				b.Fatalf("recall: %v, %d memories", err, len(res.Memories))
			}
			recalled += len(res.Memories)
		}
		b.ReportMetric(float64(recalled)/float64(b.N), "memories/op")
		b.ReportMetric(float64((memdirtest.CPUTime()-cpu0).Microseconds())/float64(b.N)/1000, "cpu-ms/op")
	}
	b.Run("files=2000/anchors=off", func(b *testing.B) { run(b, "", false) })
	b.Run("files=2000/anchors=on", func(b *testing.B) { run(b, r.Root, false) })
	changed := map[string]string{}
	for p, c := range files {
		changed[p] = c + "\nfunc More() {}\n"
	}
	r.Commit(changed)
	b.Run("files=2000/anchors=on-changed", func(b *testing.B) { run(b, r.Root, true) })
}
