package usage

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestUseLogRecordAndStats(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	u := New(filepath.Join(t.TempDir(), "uses", "d.log"), &Options{Now: func() time.Time { return now }})
	st, err := u.Stats(ctx)
	if err != nil || len(st.Memories) != 0 || !st.Since.IsZero() {
		t.Fatalf("fresh log: %+v, %v", st, err)
	}
	if err := u.Record(ctx, Recall, "a.md", "team/b.md"); err != nil {
		t.Fatal(err)
	}
	now = now.Add(time.Hour)
	if err := u.Record(ctx, Hook, "a.md"); err != nil {
		t.Fatal(err)
	}
	st, err = u.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := st.Get("a.md"); got.Uses != 2 || !got.LastUsed.Equal(now) {
		t.Errorf("a.md = %+v, want 2 uses, last %v", got, now)
	}
	if got := st.Get("team/b.md"); got.Uses != 1 {
		t.Errorf("team/b.md = %+v", got)
	}
	if !st.Since.Equal(now.Add(-time.Hour)) {
		t.Errorf("since = %v", st.Since)
	}
	// Compaction keeps every count and empties the log.
	if err := u.Compact(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(u.Path()); !os.IsNotExist(err) {
		t.Errorf("log still there after compaction: %v", err)
	}
	if err := u.Record(ctx, View, "a.md"); err != nil {
		t.Fatal(err)
	}
	st, err = u.Stats(ctx)
	if err != nil || st.Get("a.md").Uses != 3 || st.Get("team/b.md").Uses != 1 {
		t.Fatalf("after compaction: %+v, %v", st, err)
	}
	// Bad paths are refused and nothing of the call is recorded.
	for _, bad := range []string{"../x.md", "/abs.md", "MEMORY.md", "notes.txt", "a/./b.md"} {
		if err := u.Record(ctx, Recall, "c.md", bad); err == nil || !strings.Contains(err.Error(), bad) {
			t.Errorf("Record(%q) = %v, want an error naming it", bad, err)
		}
	}
	if st, _ := u.Stats(ctx); st.Get("c.md").Uses != 0 {
		t.Errorf("c.md counted from a refused call")
	}
}

// TestUseLogCrashedCompaction: a fold left behind is counted exactly once,
// whether the crash came before or after the summary was written.
func TestUseLogCrashedCompaction(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	u := New(filepath.Join(t.TempDir(), "d.log"), nil)
	if err := u.Record(ctx, Recall, "a.md", "b.md"); err != nil {
		t.Fatal(err)
	}
	// Crash after the rename, before the summary: the fold is pending.
	if err := os.Rename(u.Path(), u.foldPath()); err != nil {
		t.Fatal(err)
	}
	if err := u.Record(ctx, Recall, "a.md"); err != nil {
		t.Fatal(err)
	}
	if st, _ := u.Stats(ctx); st.Get("a.md").Uses != 2 || st.Get("b.md").Uses != 1 {
		t.Fatalf("pending fold: %+v", st.Memories)
	}
	if err := u.Compact(ctx); err != nil {
		t.Fatal(err)
	}
	// Crash after the summary was written, before the fold was removed.
	if err := u.Record(ctx, Recall, "b.md"); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(u.Path(), u.foldPath()); err != nil {
		t.Fatal(err)
	}
	fold, err := os.ReadFile(u.foldPath())
	if err != nil {
		t.Fatal(err)
	}
	if err := u.fold(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(u.foldPath(), fold, 0o600); err != nil {
		t.Fatal(err)
	}
	st, err := u.Stats(ctx)
	if err != nil || st.Get("a.md").Uses != 2 || st.Get("b.md").Uses != 2 {
		t.Fatalf("already-folded fold counted again: %+v, %v", st.Memories, err)
	}
	if err := u.Compact(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(u.foldPath()); !os.IsNotExist(err) {
		t.Errorf("fold left behind: %v", err)
	}
	if st, _ := u.Stats(ctx); st.Get("a.md").Uses != 2 || st.Get("b.md").Uses != 2 {
		t.Errorf("after finishing the fold: %+v", st.Memories)
	}
	// A torn last line (full disk) is skipped, not fatal.
	if err := os.WriteFile(u.Path(), []byte(`{"t":1,"p":"a.md"}`+"\n"+`{"t":17000`), 0o600); err != nil {
		t.Fatal(err)
	}
	if st, err := u.Stats(ctx); err != nil || st.Skipped != 1 || st.Get("a.md").Uses != 3 {
		t.Errorf("torn line: %+v, %v", st, err)
	}
}

func TestUseLogBadSummaryNamesTheFile(t *testing.T) {
	t.Parallel()
	u := New(filepath.Join(t.TempDir(), "d.log"), nil)
	if err := os.WriteFile(u.SummaryPath(), []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := u.Stats(context.Background())
	if err == nil || !strings.Contains(err.Error(), u.SummaryPath()) {
		t.Fatalf("Stats = %v, want an error naming %s", err, u.SummaryPath())
	}
	if data, _ := os.ReadFile(u.SummaryPath()); string(data) != "{not json" {
		t.Errorf("the bad summary was changed: %q", data)
	}
}

// TestUseLogConcurrentGoroutines: 16 goroutines record at once while the
// log is compacted every few KiB; no use is lost.
func TestUseLogConcurrentGoroutines(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	u := New(filepath.Join(t.TempDir(), "d.log"), nil)
	u.compactAt = 4 << 10
	const workers, each = 16, 100
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Go(func() {
			for i := range each {
				if err := u.Record(ctx, Hook, fmt.Sprintf("w%d.md", w), "shared.md"); err != nil {
					errs <- err
					return
				}
				if i%25 == 0 {
					if _, err := u.Stats(ctx); err != nil {
						errs <- err
						return
					}
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	st, err := u.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := st.Get("shared.md").Uses; got != workers*each {
		t.Errorf("shared.md: %d uses, want %d", got, workers*each)
	}
	for w := range workers {
		if got := st.Get(fmt.Sprintf("w%d.md", w)).Uses; got != each {
			t.Errorf("w%d.md: %d uses, want %d", w, got, each)
		}
	}
	if _, err := os.Stat(u.SummaryPath()); err != nil {
		t.Errorf("no compaction happened (the test must exercise it): %v", err)
	}
}

// BenchmarkRecordUse is the cost counting adds to one hook run: one Record
// of the 5 memories a recall surfaces (lock, one append, unlock), with the
// log compacting as it grows.
func BenchmarkRecordUse(b *testing.B) {
	ctx := context.Background()
	u := New(filepath.Join(b.TempDir(), "d.log"), nil)
	rels := []string{"feedback_testing.md", "project_deploy.md", "user_role.md", "reference_dashboards.md", "team/oncall.md"}
	for b.Loop() {
		if err := u.Record(ctx, Hook, rels...); err != nil {
			b.Fatal(err)
		}
	}
}
