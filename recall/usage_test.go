package recall

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/usage"
)

// usageFixture saves n memories named m0..m(n-1), all about "deploy
// pipeline", and backdates them so freshness would show any mtime change.
func usageFixture(t *testing.T, n int) (*memdir.Dir, map[string]time.Time) {
	t.Helper()
	d := mustOpen(t)
	mtimes := map[string]time.Time{}
	old := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	for i := range n {
		res := mustSave(t, d, &memdir.Memory{Name: fmt.Sprintf("m%d", i), Description: fmt.Sprintf("deploy pipeline note %d", i), Type: memdir.TypeProject, Body: "the deploy pipeline runs on Fridays"}, nil)
		if err := os.Chtimes(d.Abs(res.Path), old, old); err != nil {
			t.Fatal(err)
		}
		mtimes[res.Path] = old
	}
	return d, mtimes
}

func checkMtimes(t *testing.T, d *memdir.Dir, want map[string]time.Time) {
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
	t.Parallel()
	ctx := context.Background()
	d, mtimes := usageFixture(t, 3)
	entries, _ := os.ReadDir(d.Path())
	before := len(entries)
	res, err := Recall(ctx, d, "how does the deploy pipeline run", nil)
	if err != nil || len(res.Memories) == 0 {
		t.Fatalf("recall: %+v, %v", res, err)
	}
	if _, err := Recall(ctx, d, "how does the deploy pipeline run", &Options{NoCount: true}); err != nil {
		t.Fatal(err)
	}
	st, err := d.Uses().Stats(ctx)
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
	if d2, _ := memdir.Open(d.Path(), &memdir.Options{Journal: d.Journal(), NoUses: true}); d2.Uses() != nil {
		t.Error("NoUses still counts")
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
	st, err := d.Uses().Stats(context.Background())
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
	if _, err := os.Stat(d.Uses().SummaryPath()); err != nil {
		t.Errorf("no compaction happened (the test must exercise it): %v", err)
	}
	checkMtimes(t, d, mtimes)
}

// runRecaller is one process of TestUseLogConcurrentProcesses: it recalls
// MEMDIR_TEST_EACH times and prints the path of every memory surfaced.
func runRecaller() error {
	u := usage.New(os.Getenv("MEMDIR_TEST_USES"), &usage.Options{CompactBytes: 2 << 10})
	d, err := memdir.Open(os.Getenv("MEMDIR_TEST_DIR"), &memdir.Options{Journal: memdir.NewJournal(os.TempDir(), nil), Uses: u})
	if err != nil {
		return err
	}
	n, _ := strconv.Atoi(os.Getenv("MEMDIR_TEST_EACH"))
	for range n {
		res, err := Recall(context.Background(), d, "how does the deploy pipeline run", &Options{Via: usage.Hook})
		if err != nil {
			return err
		}
		for _, m := range res.Memories {
			fmt.Println(m.Path)
		}
	}
	return nil
}

// BenchmarkRecallCounting compares a recall over 2,000 memories with and
// without counting the memories it surfaces.
func BenchmarkRecallCounting(b *testing.B) {
	ctx := context.Background()
	base := b.TempDir()
	dir := filepath.Join(base, "memory")
	d, err := memdir.Open(dir, &memdir.Options{Journal: memdir.NewJournal(filepath.Join(base, "journal"), nil)})
	if err != nil {
		b.Fatal(err)
	}
	for i := range 2000 {
		if _, err := d.Save(ctx, &memdir.Memory{Path: fmt.Sprintf("m%04d.md", i), Name: fmt.Sprintf("memory %d", i), Description: fmt.Sprintf("note %d about topic%d and the deploy pipeline", i, i%50), Type: memdir.TypeProject, Body: "body text"}, nil); err != nil {
			b.Fatal(err)
		}
	}
	idx := NewIndex(dir, nil)
	for _, tc := range []struct {
		name    string
		noCount bool
	}{{"counted", false}, {"uncounted", true}} {
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				res, err := Recall(ctx, d, "what about topic7 and the deploy pipeline", &Options{Index: idx, NoCount: tc.noCount})
				if err != nil || len(res.Memories) == 0 {
					b.Fatalf("%v %v", res, err)
				}
			}
		})
	}
}
