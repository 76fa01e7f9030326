package team_test

import (
	"bufio"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memdir/memdir/memdirtest"
	"github.com/memdir/memdir/team"
)

// pullWords are the vocabulary of the generated memories: plain notes
// that injection screening passes, with characters JSON must escape.
var pullWords = strings.Fields(`the build uses make and go test with the race detector we deploy on fridays database migration
	schema index latency cache memory review release branch main feature flag config yaml json handler store postgres
	sqlite design decision prefer small commits tests first docs "quoted" <tag> & back\slash é 日本 😀`)

// largeRepo returns about mb megabytes of entries of varied sizes (log-
// uniform from 300 bytes to 240 KB: many small notes, some large ones) in
// nested directories, and a MEMORY.md pointing at every twentieth.
func largeRepo(mb int) map[string]string {
	r := rand.New(rand.NewPCG(42, 7))
	out := map[string]string{}
	var index strings.Builder
	index.WriteString("# Team\n")
	for i, total := 0, 0; total < mb<<20; i++ {
		size := int(math.Exp(math.Log(300) + r.Float64()*(math.Log(240_000)-math.Log(300))))
		var b strings.Builder
		fmt.Fprintf(&b, "---\nname: note %d\ndescription: what we learned\ntype: project\n---\n", i)
		for b.Len() < size {
			for range 4 + r.IntN(16) {
				b.WriteString(pullWords[r.IntN(len(pullWords))])
				b.WriteByte(' ')
			}
			b.WriteByte('\n')
		}
		key := fmt.Sprintf("topic-%02d/sub-%d/note-%05d.md", i%37, i%5, i)
		out[key] = b.String()
		total += b.Len()
		if i%20 == 0 {
			fmt.Fprintf(&index, "- [Note %d](%s) — what we learned\n", i, key)
		}
	}
	out[team.IndexKey] = index.String()
	return out
}

// procStatusKB reads a field of /proc/self/status, in kB; 0 without /proc.
func procStatusKB(field string) int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if name, rest, ok := strings.Cut(sc.Text(), ":"); ok && name == field {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return n
		}
	}
	return 0
}

// BenchmarkPullLarge runs the real Client against the real Handler over
// loopback (SQLite store) and pulls a repository of MEMDIR_BENCH_PULL_MB
// megabytes (default 100) into an empty team directory, then again into
// the same one (every entry unchanged). It reports the process's peak RSS
// above its RSS just before the pull (Linux: VmHWM, reset through
// /proc/self/clear_refs; the in-process server streams, so most of it is
// the client's) and the peak Go heap in use, sampled every 5 ms.
func BenchmarkPullLarge(b *testing.B) {
	mb := 100
	if v := os.Getenv("MEMDIR_BENCH_PULL_MB"); v != "" {
		var err error
		if mb, err = strconv.Atoi(v); err != nil || mb <= 0 {
			b.Fatalf("MEMDIR_BENCH_PULL_MB=%q: want a positive number of megabytes", v)
		}
	}
	store := newSQLite(b)
	entries := largeRepo(mb)
	keys := make([]string, 0, len(entries))
	for k := range entries {
		keys = append(keys, k)
	}
	for len(keys) > 0 {
		batch := map[string]string{}
		for n := 0; len(keys) > 0 && n < 4<<20; keys = keys[1:] {
			batch[keys[0]] = entries[keys[0]]
			n += len(entries[keys[0]])
		}
		if _, err := store.Put(context.Background(), repo, &team.Update{Entries: batch}); err != nil {
			b.Fatal(err)
		}
	}
	n := len(entries)
	entries = nil
	srv := memdirtest.NewTeamServer(b, store, &team.HandlerOptions{MaxEntries: 100_000})
	for _, run := range []string{"empty", "unchanged"} {
		b.Run(run, func(b *testing.B) {
			for b.Loop() {
				b.StopTimer()
				dir := filepath.Join(b.TempDir(), "team")
				c := newClient(b, srv.Remote(b, repo, true, nil), dir, nil)
				if run == "unchanged" {
					if _, err := c.Pull(context.Background(), false); err != nil {
						b.Fatal(err)
					}
				}
				runtime.GC()
				debug.FreeOSMemory()
				idle := procStatusKB("VmRSS")
				os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) // resets VmHWM
				stop, peakHeap := sampleHeap()
				b.StartTimer()
				res, err := c.Pull(context.Background(), false)
				b.StopTimer()
				heap := peakHeap(stop)
				if err != nil {
					b.Fatal(err)
				}
				if got := len(res.Written) + res.Unchanged; got != n {
					b.Fatalf("pull wrote %d and left %d unchanged of %d entries (skipped %v)", len(res.Written), res.Unchanged, n, res.Skipped)
				}
				if peak := procStatusKB("VmHWM"); peak > 0 {
					b.ReportMetric(float64(peak-idle)/1024, "peak-rss-MB-above-idle")
				}
				b.ReportMetric(float64(heap)/(1<<20), "peak-heap-MB")
				b.StartTimer()
			}
			b.ReportMetric(float64(mb), "repo-MB")
		})
	}
}

// sampleHeap samples the Go heap in use until stop is closed; the second
// result waits for the sampler and returns the largest sample.
func sampleHeap() (chan struct{}, func(chan struct{}) uint64) {
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var peak uint64
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	wg.Go(func() {
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for {
			metrics.Read(sample)
			peak = max(peak, sample[0].Value.Uint64())
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	})
	return stop, func(stop chan struct{}) uint64 {
		close(stop)
		wg.Wait()
		return peak
	}
}
