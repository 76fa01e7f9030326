package team_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"time"

	"github.com/memdir/memdir/team"
	"github.com/memdir/memdir/team/sqlite"
)

// Example runs a team memory server over SQLite, issues a token, and has a
// client push a team directory and another pull it.
func Example() {
	ctx := context.Background()
	tmp, _ := os.MkdirTemp("", "team-example")
	defer os.RemoveAll(tmp)

	store, err := sqlite.Open(ctx, filepath.Join(tmp, "team.db"), nil)
	if err != nil {
		panic(err)
	}
	defer store.Close()
	srv := httptest.NewServer(team.NewHandler(store, nil))
	defer srv.Close()
	secret, _, err := team.IssueToken(ctx, store, "acme/widgets", false, "example", time.Now())
	if err != nil {
		panic(err)
	}
	remote, err := team.NewRemote(srv.URL, secret, nil)
	if err != nil {
		panic(err)
	}

	alice := filepath.Join(tmp, "alice", "team")
	os.MkdirAll(alice, 0o700)
	os.WriteFile(filepath.Join(alice, "MEMORY.md"), []byte("- [Deploys](deploys.md) — how we ship\n"), 0o600)
	os.WriteFile(filepath.Join(alice, "deploys.md"), []byte("Never on Fridays.\n"), 0o600)
	// Each client keeps its sync state (the bases of its three-way
	// merges) outside the team directory.
	a, _ := team.NewClient(remote, "acme/widgets", alice, &team.ClientOptions{StateDir: filepath.Join(tmp, "alice", "state")})
	pushed, err := a.Push(ctx)
	if err != nil {
		panic(err)
	}
	fmt.Println("pushed:", pushed.Pushed, "version", pushed.Version)

	b, _ := team.NewClient(remote, "acme/widgets", filepath.Join(tmp, "bob", "team"), &team.ClientOptions{StateDir: filepath.Join(tmp, "bob", "state")})
	pulled, err := b.Pull(ctx, false)
	if err != nil {
		panic(err)
	}
	fmt.Println("pulled:", pulled.Written)
	// Output:
	// pushed: [MEMORY.md deploys.md] version 1
	// pulled: [MEMORY.md deploys.md]
}
