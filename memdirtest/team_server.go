package memdirtest

import (
	"context"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/memdir/memdir/team"
)

// TeamServer is a team memory server on loopback for tests: a
// team.Handler over Store behind an httptest.Server, closed at cleanup.
type TeamServer struct {
	*httptest.Server
	Store   team.Store
	Handler *team.Handler
}

// NewTeamServer starts a TeamServer over store. A nil opts configures the
// handler with MaxEntries = TeamMaxEntries, the limit the conformance suite
// expects.
func NewTeamServer(tb testing.TB, store team.Store, opts *team.HandlerOptions) *TeamServer {
	tb.Helper()
	if opts == nil {
		opts = &team.HandlerOptions{MaxEntries: TeamMaxEntries}
	}
	h := team.NewHandler(store, opts)
	s := &TeamServer{Server: httptest.NewServer(h), Store: store, Handler: h}
	tb.Cleanup(s.Close)
	return s
}

// Token issues a token for repo and returns its secret.
func (s *TeamServer) Token(tb testing.TB, repo string, readOnly bool) string {
	tb.Helper()
	secret, _, err := team.IssueToken(context.Background(), s.Store, repo, readOnly, "test", time.Now())
	if err != nil {
		tb.Fatalf("issue token for %s: %v", repo, err)
	}
	return secret
}

// Remote issues a token for repo and returns a Remote that uses it. A nil
// opts retries quickly, so tests of retries stay fast.
func (s *TeamServer) Remote(tb testing.TB, repo string, readOnly bool, opts *team.RemoteOptions) *team.Remote {
	tb.Helper()
	if opts == nil {
		opts = &team.RemoteOptions{Backoff: func(int) time.Duration { return time.Millisecond }}
	}
	r, err := team.NewRemote(s.URL, s.Token(tb, repo, readOnly), opts)
	if err != nil {
		tb.Fatal(err)
	}
	return r
}

// Repos returns a team.Repos that reaches the server over HTTP, issuing a
// token for each repository on first use. It is what TestTeamRepos runs
// against to check the Handler and the Remote together.
func (s *TeamServer) Repos(tb testing.TB) team.Repos {
	return &remoteRepos{tb: tb, s: s, remotes: map[string]*team.Remote{}}
}

type remoteRepos struct {
	tb      testing.TB
	s       *TeamServer
	mu      sync.Mutex
	remotes map[string]*team.Remote
}

func (m *remoteRepos) remote(repo string) *team.Remote {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.remotes[repo]
	if !ok {
		r = m.s.Remote(m.tb, repo, false, nil)
		m.remotes[repo] = r
	}
	return r
}

func (m *remoteRepos) Get(ctx context.Context, repo string, opts *team.GetOptions) (*team.Data, error) {
	return m.remote(repo).Get(ctx, repo, opts)
}

func (m *remoteRepos) Put(ctx context.Context, repo string, u *team.Update) (*team.Data, error) {
	return m.remote(repo).Put(ctx, repo, u)
}

func (m *remoteRepos) History(ctx context.Context, repo string, opts *team.HistoryOptions) ([]team.VersionInfo, error) {
	return m.remote(repo).History(ctx, repo, opts)
}
