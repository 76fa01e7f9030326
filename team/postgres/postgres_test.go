package postgres_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/memdir/memdir/memdirtest"
	"github.com/memdir/memdir/team"
	"github.com/memdir/memdir/team/postgres"
)

// freshSchema creates a schema of its own for one test, so that parallel
// test packages and runs never see each other's tables, drops it at cleanup
// and returns a DSN whose search_path selects it.
func freshSchema(tb testing.TB) string {
	tb.Helper()
	dsn := os.Getenv("MEMDIR_TEST_POSTGRES_DSN")
	if dsn == "" {
		tb.Skip("MEMDIR_TEST_POSTGRES_DSN is not set; set it (e.g. postgres://postgres@127.0.0.1:5432/test?sslmode=disable) to run the PostgreSQL tests")
	}
	var b [6]byte
	rand.Read(b[:])
	schema := "memdir_test_" + hex.EncodeToString(b[:])
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		tb.Fatalf("connect to MEMDIR_TEST_POSTGRES_DSN: %v", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		tb.Fatalf("create schema: %v", err)
	}
	tb.Cleanup(func() {
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			tb.Errorf("drop schema %s: %v", schema, err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP SCHEMA "+schema+" CASCADE"); err != nil {
			tb.Errorf("drop schema %s: %v", schema, err)
		}
	})
	return withSearchPath(tb, dsn, schema)
}

func withSearchPath(tb testing.TB, dsn, schema string) string {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		u, err := url.Parse(dsn)
		if err != nil {
			tb.Fatalf("MEMDIR_TEST_POSTGRES_DSN is not a URL: %v", err)
		}
		q := u.Query()
		q.Set("search_path", schema)
		u.RawQuery = q.Encode()
		return u.String()
	}
	return dsn + " search_path=" + schema
}

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
