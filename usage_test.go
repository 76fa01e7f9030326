package memdir

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestUseLogRecordAndStats(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	u := NewUseLog(filepath.Join(t.TempDir(), "uses", "d.log"), func() time.Time { return now })
	st, err := u.Stats(ctx)
	if err != nil || len(st.Memories) != 0 || !st.Since.IsZero() {
		t.Fatalf("fresh log: %+v, %v", st, err)
	}
	if err := u.Record(ctx, UseRecall, "a.md", "team/b.md"); err != nil {
		t.Fatal(err)
	}
	now = now.Add(time.Hour)
	if err := u.Record(ctx, UseHook, "a.md"); err != nil {
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
	if err := u.Record(ctx, UseView, "a.md"); err != nil {
		t.Fatal(err)
	}
	st, err = u.Stats(ctx)
	if err != nil || st.Get("a.md").Uses != 3 || st.Get("team/b.md").Uses != 1 {
		t.Fatalf("after compaction: %+v, %v", st, err)
	}
	// Bad paths are refused and nothing of the call is recorded.
	for _, bad := range []string{"../x.md", "/abs.md", "MEMORY.md", "notes.txt", "a/./b.md"} {
		if err := u.Record(ctx, UseRecall, "c.md", bad); err == nil || !strings.Contains(err.Error(), bad) {
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
	ctx := context.Background()
	u := NewUseLog(filepath.Join(t.TempDir(), "d.log"), nil)
	if err := u.Record(ctx, UseRecall, "a.md", "b.md"); err != nil {
		t.Fatal(err)
	}
	// Crash after the rename, before the summary: the fold is pending.
	if err := os.Rename(u.Path(), u.foldPath()); err != nil {
		t.Fatal(err)
	}
	if err := u.Record(ctx, UseRecall, "a.md"); err != nil {
		t.Fatal(err)
	}
	if st, _ := u.Stats(ctx); st.Get("a.md").Uses != 2 || st.Get("b.md").Uses != 1 {
		t.Fatalf("pending fold: %+v", st.Memories)
	}
	if err := u.Compact(ctx); err != nil {
		t.Fatal(err)
	}
	// Crash after the summary was written, before the fold was removed.
	if err := u.Record(ctx, UseRecall, "b.md"); err != nil {
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
	u := NewUseLog(filepath.Join(t.TempDir(), "d.log"), nil)
	if err := os.WriteFile(u.summaryPath(), []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := u.Stats(context.Background())
	if err == nil || !strings.Contains(err.Error(), u.summaryPath()) {
		t.Fatalf("Stats = %v, want an error naming %s", err, u.summaryPath())
	}
	if data, _ := os.ReadFile(u.summaryPath()); string(data) != "{not json" {
		t.Errorf("the bad summary was changed: %q", data)
	}
}

// usageFixture saves n memories named m0..m(n-1), all about "deploy
// pipeline", and backdates them so freshness would show any mtime change.
func usageFixture(t *testing.T, n int) (*Dir, map[string]time.Time) {
	t.Helper()
	d := mustOpen(t)
	mtimes := map[string]time.Time{}
	old := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	for i := range n {
		res := mustSave(t, d, &Memory{Name: fmt.Sprintf("m%d", i), Description: fmt.Sprintf("deploy pipeline note %d", i), Type: TypeProject, Body: "the deploy pipeline runs on Fridays"}, nil)
		if err := os.Chtimes(d.Abs(res.Path), old, old); err != nil {
			t.Fatal(err)
		}
		mtimes[res.Path] = old
	}
	return d, mtimes
}

func checkMtimes(t *testing.T, d *Dir, want map[string]time.Time) {
	t.Helper()
	for rel, mt := range want {
		fi, err := os.Stat(d.Abs(rel))
		if err != nil {
			t.Fatal(err)
		}
		if !fi.ModTime().Equal(mt) {
			t.Errorf("%s: mtime %v, want %v (counting touched the memory)", rel, fi.ModTime(), mt)
		}
	}
}

func TestRecallCountsSurfacedMemories(t *testing.T) {
	ctx := context.Background()
	d, mtimes := usageFixture(t, 3)
	entries, _ := os.ReadDir(d.Path())
	before := len(entries)
	res, err := d.Recall(ctx, "how does the deploy pipeline run", nil)
	if err != nil || len(res.Memories) == 0 {
		t.Fatalf("recall: %+v, %v", res, err)
	}
	if _, err := d.Recall(ctx, "how does the deploy pipeline run", &RecallOptions{NoCount: true}); err != nil {
		t.Fatal(err)
	}
	st, err := d.UseStats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range res.Memories {
		if got := st.Get(m.Path); got.Uses != 1 || got.LastUsed.IsZero() {
			t.Errorf("%s: %+v, want 1 use (NoCount must not count)", m.Path, got)
		}
	}
	checkMtimes(t, d, mtimes)
	if entries, _ := os.ReadDir(d.Path()); len(entries) != before {
		t.Errorf("counting added files to the memory directory: %d entries, had %d", len(entries), before)
	}
	if strings.HasPrefix(d.Uses().Path(), d.Path()+string(filepath.Separator)) {
		t.Errorf("use log %s is inside the memory directory", d.Uses().Path())
	}
	if d2, _ := Open(d.Path(), &Options{Journal: d.Journal(), NoUses: true}); d2.Uses() != nil {
		t.Error("NoUses still counts")
	}
}

func TestDefaultUseLogPathIsInTheStateDir(t *testing.T) {
	state := t.TempDir()
	lookup := func(k string) (string, bool) { return state, k == "MEMDIR_STATE_DIR" }
	d, err := Open(filepath.Join(t.TempDir(), "memory"), &Options{LookupEnv: lookup})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(d.Uses().Path(), filepath.Join(state, "uses")+string(filepath.Separator)) {
		t.Errorf("use log at %s, want under %s/uses", d.Uses().Path(), state)
	}
}

// TestUseLogConcurrentGoroutines: 16 goroutines record at once while the
// log is compacted every few KiB; no use is lost.
func TestUseLogConcurrentGoroutines(t *testing.T) {
	ctx := context.Background()
	u := NewUseLog(filepath.Join(t.TempDir(), "d.log"), nil)
	u.compactAt = 4 << 10
	const workers, each = 16, 100
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Go(func() {
			for i := range each {
				if err := u.Record(ctx, UseHook, fmt.Sprintf("w%d.md", w), "shared.md"); err != nil {
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
	if _, err := os.Stat(u.summaryPath()); err != nil {
		t.Errorf("no compaction happened (the test must exercise it): %v", err)
	}
}

// TestUseLogConcurrentProcesses runs 6 processes that each recall 40 times
// from one directory, as concurrent Claude Code hooks do, with compactions
// in between: every surfaced memory is counted, and no memory file's mtime
// changes.
func TestUseLogConcurrentProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	d, mtimes := usageFixture(t, 4)
	const procs, each = 6, 40
	cmds := make([]*exec.Cmd, procs)
	outs := make([]strings.Builder, procs)
	for p := range procs {
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(), "MEMDIR_TEST_RECALLER=1", "MEMDIR_TEST_DIR="+d.Path(),
			"MEMDIR_TEST_USES="+d.Uses().Path(), "MEMDIR_TEST_EACH="+strconv.Itoa(each))
		cmd.Stdout = &outs[p]
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds[p] = cmd
	}
	want := map[string]int{}
	for p, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("recaller %d: %v", p, err)
		}
		for line := range strings.Lines(outs[p].String()) {
			want[strings.TrimSpace(line)]++
		}
	}
	if len(want) == 0 {
		t.Fatal("the recallers surfaced nothing")
	}
	st, err := d.UseStats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for rel, n := range want {
		total += n
		if got := st.Get(rel).Uses; got != n {
			t.Errorf("%s: %d uses counted, %d surfaced", rel, got, n)
		}
	}
	if total < procs*each {
		t.Errorf("only %d memories surfaced in %d recalls", total, procs*each)
	}
	if _, err := os.Stat(d.Uses().summaryPath()); err != nil {
		t.Errorf("no compaction happened (the test must exercise it): %v", err)
	}
	checkMtimes(t, d, mtimes)
}

// runRecaller is one process of TestUseLogConcurrentProcesses: it recalls
// MEMDIR_TEST_EACH times and prints the path of every memory surfaced.
func runRecaller() error {
	u := NewUseLog(os.Getenv("MEMDIR_TEST_USES"), nil)
	u.compactAt = 2 << 10
	d, err := Open(os.Getenv("MEMDIR_TEST_DIR"), &Options{Journal: NewJournal(os.TempDir(), nil), Uses: u})
	if err != nil {
		return err
	}
	n, _ := strconv.Atoi(os.Getenv("MEMDIR_TEST_EACH"))
	for range n {
		res, err := d.Recall(context.Background(), "how does the deploy pipeline run", &RecallOptions{Via: UseHook})
		if err != nil {
			return err
		}
		for _, m := range res.Memories {
			fmt.Println(m.Path)
		}
	}
	return nil
}

// BenchmarkRecordUse is the cost counting adds to one hook run: one Record
// of the 5 memories a recall surfaces (lock, one append, unlock), with the
// log compacting as it grows.
func BenchmarkRecordUse(b *testing.B) {
	ctx := context.Background()
	u := NewUseLog(filepath.Join(b.TempDir(), "d.log"), nil)
	rels := []string{"feedback_testing.md", "project_deploy.md", "user_role.md", "reference_dashboards.md", "team/oncall.md"}
	for b.Loop() {
		if err := u.Record(ctx, UseHook, rels...); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRecallCounting compares a recall over 2,000 memories with and
// without counting the memories it surfaces.
func BenchmarkRecallCounting(b *testing.B) {
	ctx := context.Background()
	base := b.TempDir()
	dir := filepath.Join(base, "memory")
	d, err := Open(dir, &Options{Journal: NewJournal(filepath.Join(base, "journal"), nil)})
	if err != nil {
		b.Fatal(err)
	}
	for i := range 2000 {
		if _, err := d.Save(ctx, &Memory{Path: fmt.Sprintf("m%04d.md", i), Name: fmt.Sprintf("memory %d", i), Description: fmt.Sprintf("note %d about topic%d and the deploy pipeline", i, i%50), Type: TypeProject, Body: "body text"}, nil); err != nil {
			b.Fatal(err)
		}
	}
	idx := NewRecallIndex(dir, "")
	for _, tc := range []struct {
		name    string
		noCount bool
	}{{"counted", false}, {"uncounted", true}} {
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				res, err := d.Recall(ctx, "what about topic7 and the deploy pipeline", &RecallOptions{Index: idx, NoCount: tc.noCount})
				if err != nil || len(res.Memories) == 0 {
					b.Fatalf("%v %v", res, err)
				}
			}
		})
	}
}
