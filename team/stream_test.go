package team_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/memdir/memdir/memdirtest"
	"github.com/memdir/memdir/team"
	"github.com/memdir/memdir/team/postgres"
)

// TestConformanceHTTPPostgres runs the Repos conformance suite through the
// Remote, the Handler and a PostgreSQL store.
func TestConformanceHTTPPostgres(t *testing.T) {
	memdirtest.TestTeamRepos(t, func(tb testing.TB) team.Repos {
		s, err := postgres.Open(context.Background(), memdirtest.PostgresDSN(tb), nil)
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(func() { s.Close() })
		return memdirtest.NewTeamServer(tb, s, nil).Repos(tb)
	})
}

// pageCounter counts the pages a Handler reads, and fails the page
// failAt (1-based) when set.
type pageCounter struct {
	team.Store
	pages  atomic.Int64
	failAt int64
}

func (p *pageCounter) EntryPage(ctx context.Context, repo string, version int64, after string, opts team.PageOptions) ([]team.Entry, error) {
	if n := p.pages.Add(1); n == p.failAt {
		return nil, errors.New("database went away")
	}
	return p.Store.EntryPage(ctx, repo, version, after, opts)
}

// TestStreamedGet checks that a full GET of a repository larger than a
// page is read in pages and arrives whole, and that a store failure in the
// middle cuts the response short instead of sending a complete-looking
// partial one.
func TestStreamedGet(t *testing.T) {
	store := newSQLite(t)
	entries := map[string]string{}
	for i := range 250 {
		entries[fmt.Sprintf("n/%03d.md", i)] = fmt.Sprintf("note %d <&> \"quoted\" \\ \u2028\n", i)
	}
	entries["big.md"] = strings.Repeat("é", 120_000)
	entries["big2.md"] = strings.Repeat("b", 240_000)
	if _, err := store.Put(context.Background(), repo, &team.Update{Entries: entries}); err != nil {
		t.Fatal(err)
	}
	pc := &pageCounter{Store: store}
	logs := &bytes.Buffer{}
	srv := memdirtest.NewTeamServer(t, pc, &team.HandlerOptions{Logger: slog.New(slog.NewJSONHandler(logs, nil))})
	r := srv.Remote(t, repo, true, nil)
	got, err := r.Get(context.Background(), repo, nil)
	if err != nil {
		t.Fatal(err)
	}
	want, err := store.Get(context.Background(), repo, nil)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("streamed GET (-want +got):\n%s", diff)
	}
	if n := pc.pages.Load(); n < 4 {
		t.Errorf("the GET read %d pages; want the repository read in several pages", n)
	}
	hashes, err := r.Get(context.Background(), repo, &team.GetOptions{HashesOnly: true})
	if err != nil || hashes.Content.Entries != nil || len(hashes.Content.EntryChecksums) != len(entries) {
		t.Errorf("view=hashes = %+v, %v", hashes, err)
	}

	pc.pages.Store(0)
	pc.failAt = 2
	noRetry := srv.Remote(t, repo, true, &team.RemoteOptions{MaxRetries: -1})
	if d, err := noRetry.Get(context.Background(), repo, nil); err == nil {
		t.Fatalf("GET with a store failing mid-stream succeeded with %d entries", len(d.Content.Entries))
	}
	if !strings.Contains(logs.String(), "database went away") || !strings.Contains(logs.String(), `"aborted":true`) {
		t.Errorf("the cut-short GET is not logged with its error:\n%s", logs)
	}
}
