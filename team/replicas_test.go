package team_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/memdir/memdir/memdirtest"
	"github.com/memdir/memdir/team"
	"github.com/memdir/memdir/team/postgres"
	"github.com/memdir/memdir/team/sqlite"
)

// TestReplicas runs two Handlers, each over its own connection pool to one
// database, as two `memdir serve` replicas would, with clients alternating
// between them; then revokes a token through one and checks that the
// other refuses it at once (no replica caches tokens).
func TestReplicas(t *testing.T) {
	for _, tt := range []struct {
		name string
		open func(t *testing.T) (team.Store, team.Store)
	}{
		{"postgres", func(t *testing.T) (team.Store, team.Store) {
			dsn := memdirtest.PostgresDSN(t)
			var out [2]team.Store
			for i := range out {
				s, err := postgres.Open(context.Background(), dsn, nil)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { s.Close() })
				out[i] = s
			}
			return out[0], out[1]
		}},
		{"sqlite", func(t *testing.T) (team.Store, team.Store) {
			path := filepath.Join(t.TempDir(), "team.db")
			var out [2]team.Store
			for i := range out {
				s, err := sqlite.Open(context.Background(), path, nil)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { s.Close() })
				out[i] = s
			}
			return out[0], out[1]
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s1, s2 := tt.open(t)
			a := memdirtest.NewTeamServer(t, s1, &team.HandlerOptions{})
			b := memdirtest.NewTeamServer(t, s2, &team.HandlerOptions{})
			secret, tok, err := team.IssueToken(context.Background(), s1, repo, false, "replicas", time.Now())
			if err != nil {
				t.Fatal(err)
			}
			remote := func(url string) *team.Remote {
				r, err := team.NewRemote(url, secret, &team.RemoteOptions{MaxRetries: -1})
				if err != nil {
					t.Fatal(err)
				}
				return r
			}
			ra, rb := remote(a.URL), remote(b.URL)
			memdirtest.TestTeamReplicas(t, repo, ra, rb)
			if err := s1.RevokeToken(context.Background(), tok.ID, time.Now()); err != nil {
				t.Fatal(err)
			}
			if _, err := rb.Get(context.Background(), repo, &team.GetOptions{HashesOnly: true}); !errors.Is(err, team.ErrUnauthorized) {
				t.Errorf("a token revoked through one replica, used on the other: %v, want ErrUnauthorized", err)
			}
		})
	}
}
