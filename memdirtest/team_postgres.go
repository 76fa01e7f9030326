package memdirtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

// PostgresDSNEnv names the variable holding the PostgreSQL connection
// string tests use; CI sets it, and tests skip when it is unset.
const PostgresDSNEnv = "MEMDIR_TEST_POSTGRES_DSN"

// RequirePostgresEnv names the variable that, when set to 1 (as .ci/run
// does), makes a missing PostgreSQL DSN fail the test instead of skipping it,
// so CI can never silently skip the PostgreSQL backend.
const RequirePostgresEnv = "MEMDIR_TEST_REQUIRE_POSTGRES"

// PostgresDSN creates a schema of its own for one test (or benchmark), so
// that parallel test packages never see each other's tables, drops it at
// cleanup, and returns a connection string whose search_path selects it.
// It skips tb when MEMDIR_TEST_POSTGRES_DSN is unset.
func PostgresDSN(tb testing.TB) string {
	tb.Helper()
	dsn := os.Getenv(PostgresDSNEnv)
	if dsn == "" {
		msg := PostgresDSNEnv + " is not set; set it (e.g. postgres://postgres@127.0.0.1:5432/test?sslmode=disable) to run the PostgreSQL tests"
		if os.Getenv(RequirePostgresEnv) == "1" {
			tb.Fatal(msg + " (" + RequirePostgresEnv + "=1 forbids skipping them)")
		}
		tb.Skip(msg)
	}
	var b [6]byte
	rand.Read(b[:])
	schema := "memdir_test_" + hex.EncodeToString(b[:])
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		tb.Fatalf("connect to %s: %v", PostgresDSNEnv, err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		tb.Fatalf("create schema %s: %v", schema, err)
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
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		u, err := url.Parse(dsn)
		if err != nil {
			tb.Fatalf("%s is not a URL: %v", PostgresDSNEnv, err)
		}
		q := u.Query()
		q.Set("search_path", schema)
		u.RawQuery = q.Encode()
		return u.String()
	}
	return dsn + " search_path=" + schema
}
