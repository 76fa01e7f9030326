package checkpoint

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// trackFiles creates n files of size bytes in e's project and tracks them.
func trackFiles(tb testing.TB, e env, h *History, n, size int) []string {
	tb.Helper()
	snapshot(tb, h, "setup")
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("src/d%02d/f%04d.txt", i%50, i)
		e.write(tb, names[i], fileContent(i, 0, size))
		track(tb, h, names[i], "setup")
	}
	return names
}

// fileContent is size bytes of text lines that differ per file and round.
func fileContent(i, round, size int) string {
	line := fmt.Sprintf("file %d round %d: the quick brown fox\n", i, round)
	return strings.Repeat(line, size/len(line)+1)[:size]
}

// backupDisk sums the disk blocks of the backups in dir (not the log).
func backupDisk(tb testing.TB, dir string) int64 {
	tb.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		tb.Fatal(err)
	}
	var total int64
	for _, de := range ents {
		if de.Name() == LogName || de.Name() == StateName {
			continue
		}
		fi, err := de.Info()
		if err != nil {
			tb.Fatal(err)
		}
		total += diskUsage(fi)
	}
	return total
}

func TestUnchangedSnapshotsAreStatOnlyAndUseNoDisk(t *testing.T) {
	e := newEnv(t)
	h := e.history(t, "statonly")
	// Pretend the files were written long ago, as the fast path's refresh
	// waits until a file's last change is safely in the past.
	h.wall = func() time.Time { return time.Now().Add(time.Hour) }
	names := trackFiles(t, e, h, 50, 4096)
	snapshot(t, h, "warm-up") // compares content at most once per file
	disk := backupDisk(t, h.Dir())
	entriesBefore := entries(t, h)
	before := h.Stats()
	for i := range 20 {
		r := snapshot(t, h, fmt.Sprintf("m%d", i))
		if r.Unchanged != len(names) {
			t.Fatalf("snapshot %d: %d unchanged, want %d", i, r.Unchanged, len(names))
		}
	}
	after := h.Stats()
	if got := after.BytesRead - before.BytesRead; got != 0 {
		t.Errorf("20 snapshots of unchanged files read %d bytes of content, want 0", got)
	}
	if got := backupDisk(t, h.Dir()) - disk; got != 0 {
		t.Errorf("20 snapshots of unchanged files used %d more bytes of disk, want 0", got)
	}
	if got := entries(t, h); len(got) != len(entriesBefore) {
		t.Errorf("entries changed: %d, want %d", len(got), len(entriesBefore))
	}
}

// BenchmarkSnapshotUnchanged1000 is a user turn with 1,000 tracked files,
// none edited: it must stay stat-only (content-bytes-read/op 0).
func BenchmarkSnapshotUnchanged1000(b *testing.B) {
	e := newEnv(b)
	h := e.history(b, "bench")
	trackFiles(b, e, h, 1000, 1024)
	// Let the files' change times fall safely behind the wall clock, then
	// take one snapshot that may compare content (and so makes later checks
	// stat-only), exactly as a real session would.
	time.Sleep(refreshAfter + 200*time.Millisecond)
	snapshot(b, h, "warm-up")
	before := h.Stats()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r, err := h.Snapshot(context.Background(), "m")
		if err != nil || r.Unchanged != 1000 {
			b.Fatalf("snapshot: %v, %d unchanged", err, r.Unchanged)
		}
	}
	b.StopTimer()
	s := h.Stats()
	b.ReportMetric(float64(s.BytesRead-before.BytesRead)/float64(b.N), "content-bytes-read/op")
	b.ReportMetric(float64(s.BytesWritten-before.BytesWritten)/float64(b.N), "backup-bytes-written/op")
	b.ReportMetric(float64(s.LogBytesRead-before.LogBytesRead)/float64(b.N), "log-bytes-read/op")
	b.ReportMetric(float64(s.LogBytesWritten-before.LogBytesWritten)/float64(b.N), "log-bytes-written/op")
}

// BenchmarkSnapshotUnchanged1000NewProcess is the user's case: each user
// turn runs 'memdir hook' in a new process, so each snapshot starts from a
// new History that has to read the session's state, after 1 and after 100
// snapshots. Each iteration puts the session's log and state back as they
// were, so the count stays exact. stat-µs/op is an lstat of the same 1,000
// files, and stat-ratio the snapshot's time over it; state-bytes-read/op is
// what the new History read of the log and state file, and cpu-µs/op the
// process's CPU time (user and system, from getrusage) per snapshot, which
// a shared machine's load disturbs less than wall time.
func BenchmarkSnapshotUnchanged1000NewProcess(b *testing.B) {
	e := newEnv(b)
	h := e.history(b, "bench")
	names := trackFiles(b, e, h, 1000, 1024)
	time.Sleep(refreshAfter + 200*time.Millisecond)
	snapshot(b, h, "warm-up")
	statCost := func() float64 {
		t0 := time.Now()
		for range 20 {
			for _, n := range names {
				if _, err := os.Lstat(e.path(n)); err != nil {
					b.Fatal(err)
				}
			}
		}
		return float64(time.Since(t0).Nanoseconds()) / 20 / 1e3
	}
	taken := 1
	for _, after := range []int{1, 100} {
		for ; taken < after; taken++ {
			snapshot(b, h, fmt.Sprintf("fill-%d", taken))
		}
		saved := sessionState(b, h.Dir())
		b.Run(fmt.Sprintf("snapshots=%d", after), func(b *testing.B) {
			var read int64
			var spent, cpu time.Duration
			for b.Loop() {
				t0, c0 := time.Now(), cpuTime()
				fresh := e.history(b, "bench")
				r, err := fresh.Snapshot(context.Background(), "m")
				spent += time.Since(t0)
				cpu += cpuTime() - c0
				if err != nil || r.Unchanged != 1000 {
					b.Fatalf("snapshot: %v, %d unchanged", err, r.Unchanged)
				}
				read += fresh.Stats().LogBytesRead
				b.StopTimer()
				restoreSessionState(b, h.Dir(), saved)
				b.StartTimer()
			}
			st := statCost()
			b.ReportMetric(st, "stat-µs/op")
			b.ReportMetric(float64(spent.Nanoseconds())/float64(b.N)/1e3/st, "stat-ratio")
			b.ReportMetric(float64(read)/float64(b.N), "state-bytes-read/op")
			b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N)/1e3, "cpu-µs/op")
		})
	}
}

// BenchmarkSnapshotCompacting1000 is the turn, once in 133 after the first
// 100, whose snapshot also compacts the log: 1,000 unchanged files, 232
// snapshots in the log, a new History.
func BenchmarkSnapshotCompacting1000(b *testing.B) {
	e := newEnv(b)
	h := e.history(b, "bench")
	trackFiles(b, e, h, 1000, 1024)
	time.Sleep(refreshAfter + 200*time.Millisecond)
	// Up to the last snapshot before the one that compacts.
	for i := 0; h.cache.st.retained() < maxSnapshots || h.cache.st.dead() < h.cache.st.retained()+32; i++ {
		snapshot(b, h, fmt.Sprintf("fill-%d", i))
	}
	saved := sessionState(b, h.Dir())
	logSize := len(saved[LogName])
	for b.Loop() {
		fresh := e.history(b, "bench")
		if _, err := fresh.Snapshot(context.Background(), "m"); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		fi, err := os.Stat(filepath.Join(h.Dir(), LogName))
		if err != nil {
			b.Fatal(err)
		}
		if fi.Size() >= int64(logSize) {
			b.Fatalf("the log was not compacted: %d bytes, %d before", fi.Size(), logSize)
		}
		restoreSessionState(b, h.Dir(), saved)
		b.StartTimer()
	}
	b.ReportMetric(float64(logSize), "log-bytes")
}

// sessionState returns the content of the files in a session directory that
// are not backups (the log and whatever memdir keeps beside it).
func sessionState(tb testing.TB, dir string) map[string][]byte {
	tb.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		tb.Fatal(err)
	}
	out := map[string][]byte{}
	for _, de := range ents {
		if strings.Contains(de.Name(), "@v") || strings.HasPrefix(de.Name(), ".") {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, de.Name()))
		if err != nil {
			tb.Fatal(err)
		}
		out[de.Name()] = data
	}
	return out
}

// restoreSessionState writes the files back in place (keeping their
// inodes, as if nothing had been appended) and removes any others.
func restoreSessionState(tb testing.TB, dir string, saved map[string][]byte) {
	tb.Helper()
	now := sessionState(tb, dir)
	for name := range now {
		if _, ok := saved[name]; !ok {
			if err := os.Remove(filepath.Join(dir, name)); err != nil {
				tb.Fatal(err)
			}
		}
	}
	for name, data := range saved {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			tb.Fatal(err)
		}
	}
	restateLogIdentity(tb, dir)
}

// restateLogIdentity points the state file at the log now in dir: a
// compaction replaced the log the state file named, and its content was put
// back in the new file.
func restateLogIdentity(tb testing.TB, dir string) {
	tb.Helper()
	data, err := os.ReadFile(filepath.Join(dir, StateName))
	if err != nil {
		tb.Fatal(err)
	}
	lf, err := decodeState(data)
	if err != nil {
		tb.Fatal(err)
	}
	fi, err := os.Lstat(filepath.Join(dir, LogName))
	if err != nil {
		tb.Fatal(err)
	}
	lf.id = statID(fi)
	if data, err = encodeState(lf); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, StateName), data, 0o600); err != nil {
		tb.Fatal(err)
	}
}

// BenchmarkSnapshotChanged1000x10KB is a user turn after an edit of every one
// of 1,000 tracked 10 KB files: each gets a new backup version.
func BenchmarkSnapshotChanged1000x10KB(b *testing.B) {
	const n, size = 1000, 10 << 10
	e := newEnv(b)
	h := e.history(b, "bench")
	names := trackFiles(b, e, h, n, size)
	before := h.Stats()
	b.SetBytes(n * size)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		for j, name := range names {
			e.write(b, name, fileContent(j, i+1, size))
		}
		b.StartTimer()
		r, err := h.Snapshot(context.Background(), "m")
		if err != nil || len(r.Changed) != n {
			b.Fatalf("snapshot: %v, %d changed", err, len(r.Changed))
		}
	}
	b.StopTimer()
	s := h.Stats()
	b.ReportMetric(float64(s.BytesRead-before.BytesRead)/float64(b.N), "content-bytes-read/op")
	b.ReportMetric(float64(s.BytesWritten-before.BytesWritten)/float64(b.N), "backup-bytes-written/op")
}

// BenchmarkDiskUnchanged100Snapshots takes 100 snapshots of 100 unchanged
// 10 KB files and reports the disk the backups gained: it must be zero,
// every snapshot reusing the existing backup entries.
func BenchmarkDiskUnchanged100Snapshots(b *testing.B) {
	var extra, logBytes int64
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		e := newEnv(b)
		h := e.history(b, "bench")
		trackFiles(b, e, h, 100, 10<<10)
		snapshot(b, h, "first")
		disk := backupDisk(b, h.Dir())
		b.StartTimer()
		for j := range 100 {
			if _, err := h.Snapshot(context.Background(), fmt.Sprintf("m%d", j)); err != nil {
				b.Fatal(err)
			}
		}
		b.StopTimer()
		extra += backupDisk(b, h.Dir()) - disk
		fi, err := os.Stat(filepath.Join(h.Dir(), LogName))
		if err != nil {
			b.Fatal(err)
		}
		logBytes += fi.Size()
	}
	b.ReportMetric(float64(extra)/float64(b.N), "extra-backup-disk-bytes/op")
	b.ReportMetric(float64(logBytes)/float64(b.N), "log-bytes")
}
