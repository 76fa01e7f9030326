package team_test

import (
	"path/filepath"
	"testing"

	"github.com/memdir/memdir/memdirtest"
	"github.com/memdir/memdir/team"
	"github.com/memdir/memdir/team/sqlite"
)

func newSQLite(tb testing.TB) *sqlite.Store {
	tb.Helper()
	s, err := sqlite.Open(tb.Context(), filepath.Join(tb.TempDir(), "team.db"), nil)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { s.Close() })
	return s
}

// TestConformanceHTTP runs the Repos conformance suite through the Remote,
// the Handler and a SQLite store.
func TestConformanceHTTP(t *testing.T) {
	memdirtest.TestTeamRepos(t, func(tb testing.TB) team.Repos {
		return memdirtest.NewTeamServer(tb, newSQLite(tb), nil).Repos(tb)
	})
}
