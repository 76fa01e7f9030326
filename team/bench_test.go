package team_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/memdir/memdir/memdirtest"
	"github.com/memdir/memdir/team"
	"github.com/memdir/memdir/team/postgres"
)

const (
	benchEntries = 200
	benchClients = 8
)

// benchContent is a plausible memory file of about 1.5 KB.
func benchContent(i, rev int) string {
	return fmt.Sprintf("---\nname: memory %d\ndescription: what the team learned, revision %d\ntype: project\n---\n", i, rev) +
		strings.Repeat(fmt.Sprintf("Line about subsystem %d: build with make, test with go test -race, deploy on Fridays never.\n", i), 16)
}

// BenchmarkTeam measures pulls and pushes per second, with p50 and p99
// latency, for a 200-entry repository and 8 concurrent clients, through
// the HTTP server on loopback, on SQLite and (with MEMDIR_TEST_POSTGRES_DSN)
// PostgreSQL.
//
//   - pull: a full GET of the repository (no ETag), 200 entries, ~300 KB.
//   - push: a client edits one of its 25 files and runs Client.Push: walk
//     and hash the team directory, send the one-entry delta with If-Match,
//     and on a 412 refresh the hashes and retry. Clients edit disjoint
//     keys, so every push succeeds, but they race for the repository
//     checksum; conflicts/op counts the 412s.
//   - put: the server side of a push alone: an unconditional PUT of one
//     changed entry through the Remote, no client walk and no If-Match.
func BenchmarkTeam(b *testing.B) {
	backends := []struct {
		name string
		open func(b *testing.B) team.Store
	}{
		{"sqlite", func(b *testing.B) team.Store { return newSQLite(b) }},
		{"postgres", func(b *testing.B) team.Store {
			s, err := postgres.Open(context.Background(), memdirtest.PostgresDSN(b), nil)
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { s.Close() })
			return s
		}},
	}
	for _, be := range backends {
		b.Run(be.name+"/pull", func(b *testing.B) { benchPull(b, be.open(b)) })
		b.Run(be.name+"/push", func(b *testing.B) { benchPush(b, be.open(b)) })
		b.Run(be.name+"/put", func(b *testing.B) { benchPut(b, be.open(b)) })
	}
}

func seed(b *testing.B, store team.Store) {
	b.Helper()
	entries := map[string]string{}
	for i := range benchEntries {
		entries[fmt.Sprintf("topic/%03d.md", i)] = benchContent(i, 0)
	}
	if _, err := store.Put(context.Background(), repo, &team.Update{Entries: entries}); err != nil {
		b.Fatal(err)
	}
}

// latencies collects per-operation times from several goroutines.
type latencies struct {
	mu sync.Mutex
	d  []time.Duration
}

func (l *latencies) add(d []time.Duration) {
	l.mu.Lock()
	l.d = append(l.d, d...)
	l.mu.Unlock()
}

func (l *latencies) report(b *testing.B, elapsed time.Duration) {
	slices.Sort(l.d)
	if len(l.d) == 0 {
		return
	}
	pct := func(p float64) float64 {
		return float64(l.d[min(len(l.d)-1, int(p*float64(len(l.d))))].Microseconds()) / 1000
	}
	b.ReportMetric(float64(len(l.d))/elapsed.Seconds(), "ops/s")
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
}

// runClients runs b.N operations spread over benchClients goroutines; op
// gets the client index.
func runClients(b *testing.B, op func(client int) error) {
	var next atomic.Int64
	var lat latencies
	var wg sync.WaitGroup
	var failed atomic.Pointer[error]
	b.ResetTimer()
	start := time.Now()
	for c := range benchClients {
		wg.Go(func() {
			var mine []time.Duration
			for next.Add(1) <= int64(b.N) {
				t0 := time.Now()
				if err := op(c); err != nil {
					failed.Store(&err)
					return
				}
				mine = append(mine, time.Since(t0))
			}
			lat.add(mine)
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	if err := failed.Load(); err != nil {
		b.Fatal(*err)
	}
	lat.report(b, elapsed)
}

func benchPull(b *testing.B, store team.Store) {
	seed(b, store)
	srv := memdirtest.NewTeamServer(b, store, &team.HandlerOptions{})
	remotes := make([]*team.Remote, benchClients)
	for i := range remotes {
		remotes[i] = srv.Remote(b, repo, true, nil)
	}
	runClients(b, func(c int) error {
		d, err := remotes[c].Get(context.Background(), repo, nil)
		if err == nil && len(d.Content.Entries) != benchEntries {
			err = fmt.Errorf("pulled %d entries", len(d.Content.Entries))
		}
		return err
	})
}

func benchPush(b *testing.B, store team.Store) {
	seed(b, store)
	srv := memdirtest.NewTeamServer(b, store, &team.HandlerOptions{})
	clients := make([]*team.Client, benchClients)
	dirs := make([]string, benchClients)
	revs := make([]int, benchClients)
	for i := range clients {
		dirs[i] = filepath.Join(b.TempDir(), "team")
		clients[i] = newClient(b, srv.Remote(b, repo, false, nil), dirs[i], nil)
		if _, err := clients[i].Pull(context.Background(), false); err != nil {
			b.Fatal(err)
		}
	}
	var conflicts atomic.Int64
	perClient := benchEntries / benchClients
	runClients(b, func(c int) error {
		revs[c]++
		k := c*perClient + revs[c]%perClient
		path := filepath.Join(dirs[c], "topic", fmt.Sprintf("%03d.md", k))
		if err := os.WriteFile(path, []byte(benchContent(k, revs[c])), 0o600); err != nil {
			return err
		}
		for {
			res, err := clients[c].Push(context.Background())
			if res != nil {
				conflicts.Add(int64(res.Retries))
			}
			if errors.Is(err, team.ErrConflict) {
				continue // out of retries under contention: push again, as the watcher would
			}
			if err == nil && len(res.Pushed) != 1 {
				err = fmt.Errorf("pushed %v, want one key", res.Pushed)
			}
			return err
		}
	})
	b.ReportMetric(float64(conflicts.Load())/float64(b.N), "conflicts/op")
}

func benchPut(b *testing.B, store team.Store) {
	seed(b, store)
	srv := memdirtest.NewTeamServer(b, store, &team.HandlerOptions{})
	remotes := make([]*team.Remote, benchClients)
	for i := range remotes {
		remotes[i] = srv.Remote(b, repo, false, nil)
	}
	revs := make([]int, benchClients)
	perClient := benchEntries / benchClients
	runClients(b, func(c int) error {
		revs[c]++
		k := c*perClient + revs[c]%perClient
		_, err := remotes[c].Put(context.Background(), repo, &team.Update{
			Entries: map[string]string{fmt.Sprintf("topic/%03d.md", k): benchContent(k, revs[c])},
		})
		return err
	})
}

// BenchmarkTeamPutP99 runs the put workload of BenchmarkTeam on SQLite and
// PostgreSQL in one benchmark, alternating the two in rounds so both see
// the same machine load, and reports each store's p99 and their ratio
// (sqlite-p99 / postgres-p99; the target is at most 2). It needs
// MEMDIR_TEST_POSTGRES_DSN.
func BenchmarkTeamPutP99(b *testing.B) {
	pg, err := postgres.Open(context.Background(), memdirtest.PostgresDSN(b), nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { pg.Close() })
	stores := []team.Store{newSQLite(b), pg}
	var remotes [2][]*team.Remote
	for s, store := range stores {
		seed(b, store)
		srv := memdirtest.NewTeamServer(b, store, &team.HandlerOptions{})
		for range benchClients {
			remotes[s] = append(remotes[s], srv.Remote(b, repo, false, nil))
		}
	}
	var lat [2]latencies
	revs := make([]int, benchClients)
	perClient := benchEntries / benchClients
	const rounds = 4
	b.ResetTimer()
	for round := range rounds {
		for s := range stores {
			var next atomic.Int64
			var wg sync.WaitGroup
			var failed atomic.Pointer[error]
			n := int64(max(1, b.N/rounds))
			for c := range benchClients {
				wg.Go(func() {
					var mine []time.Duration
					for next.Add(1) <= n {
						revs[c]++ // each client goroutine owns revs[c]; rounds run one after another
						k := c*perClient + revs[c]%perClient
						t0 := time.Now()
						_, err := remotes[s][c].Put(context.Background(), repo, &team.Update{
							Entries: map[string]string{fmt.Sprintf("topic/%03d.md", k): benchContent(k, revs[c]+round)},
						})
						if err != nil {
							failed.Store(&err)
							return
						}
						mine = append(mine, time.Since(t0))
					}
					lat[s].add(mine)
				})
			}
			wg.Wait()
			if err := failed.Load(); err != nil {
				b.Fatal(*err)
			}
		}
	}
	b.StopTimer()
	p99 := func(l *latencies) float64 {
		slices.Sort(l.d)
		return float64(l.d[min(len(l.d)-1, int(0.99*float64(len(l.d))))].Microseconds()) / 1000
	}
	sq, pq := p99(&lat[0]), p99(&lat[1])
	b.ReportMetric(sq, "sqlite-p99-ms")
	b.ReportMetric(pq, "postgres-p99-ms")
	b.ReportMetric(sq/pq, "p99-ratio")
}
