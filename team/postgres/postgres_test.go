package postgres_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/memdir/memdir/memdirtest"
	"github.com/memdir/memdir/team"
	"github.com/memdir/memdir/team/postgres"
)

func freshSchema(tb testing.TB) string { return memdirtest.PostgresDSN(tb) }

func open(tb testing.TB, dsn string) *postgres.Store {
	tb.Helper()
	s, err := postgres.Open(context.Background(), dsn, nil)
	if err != nil {
		tb.Fatalf("Open: %v", err)
	}
	tb.Cleanup(func() { s.Close() })
	return s
}

func TestConformance(t *testing.T) {
	memdirtest.TestTeamStore(t, func(tb testing.TB) team.Store { return open(tb, freshSchema(tb)) })
}

// TestConcurrentOpen starts several stores on one new schema at once, as
// replicas starting together would: every Open succeeds and each migration
// is recorded once.
func TestConcurrentOpen(t *testing.T) {
	dsn := freshSchema(t)
	const n = 4
	stores := make([]*postgres.Store, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { stores[i], errs[i] = postgres.Open(context.Background(), dsn, nil) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("Open %d: %v", i, err)
		}
		defer stores[i].Close()
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var count int
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM memdir_schema_migrations").Scan(&count); err != nil {
		t.Fatal(err)
	}
	if count != 1 {
		t.Errorf("migrations recorded %d times, want 1", count)
	}
	if _, err := stores[0].Put(ctx, "a/b", &team.Update{Entries: map[string]string{"x.md": "x"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := stores[n-1].Get(ctx, "a/b", nil); err != nil {
		t.Fatal(err)
	}
}

func TestBadDSNHidesPassword(t *testing.T) {
	_, err := postgres.Open(context.Background(), "postgres://user:hunter2@[bad", nil)
	if err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("Open with a bad DSN: err = %v; want an error without the password", err)
	}
}
