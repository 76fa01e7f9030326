package team_test

import (
	"context"
	"database/sql"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"

	"github.com/memdir/memdir/memdirtest"
	"github.com/memdir/memdir/team"
	"github.com/memdir/memdir/team/postgres"
	"github.com/memdir/memdir/team/sqlite"
)

// hiddenKeys are keys a teammate could use to plant a git repository (or
// any dotfile) in everyone's team/: a core.fsmonitor in .git/config runs a
// command whenever git runs there.
var hiddenKeys = []string{".git/HEAD", ".git/config", "a/.hidden.md", ".hidden.md", "x/.git/hooks/post-checkout"}

// plantStore is a store on which keys can be planted behind the store's
// back, as a server older than the hidden-key check may have stored them.
type plantStore struct {
	name  string
	store team.Store
	// rename changes stored keys in place (old key to new key) with SQL.
	rename func(t *testing.T, renames map[string]string)
}

func plantStores(t *testing.T) []plantStore {
	t.Helper()
	renameSQL := func(t *testing.T, exec func(q string, args ...any) error, renames map[string]string) {
		t.Helper()
		for from, to := range renames {
			for _, table := range []string{"entries", "changes"} {
				if err := exec(`UPDATE `+table+` SET key = $1 WHERE repo = $2 AND key = $3`, to, repo, from); err != nil {
					t.Fatalf("plant %s in %s: %v", to, table, err)
				}
			}
		}
	}
	path := filepath.Join(t.TempDir(), "team.db")
	lite, err := sqlite.Open(context.Background(), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lite.Close() })
	out := []plantStore{{"sqlite", lite, func(t *testing.T, renames map[string]string) {
		db, err := sql.Open("sqlite", path)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		renameSQL(t, func(q string, args ...any) error { _, err := db.Exec(q, args...); return err }, renames)
	}}}
	if os.Getenv(memdirtest.PostgresDSNEnv) == "" && os.Getenv(memdirtest.RequirePostgresEnv) != "1" {
		return out
	}
	dsn := memdirtest.PostgresDSN(t)
	pg, err := postgres.Open(context.Background(), dsn, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pg.Close() })
	return append(out, plantStore{"postgres", pg, func(t *testing.T, renames map[string]string) {
		ctx := context.Background()
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		renameSQL(t, func(q string, args ...any) error { _, err := conn.Exec(ctx, q, args...); return err }, renames)
	}})
}

// TestServerRefusesHiddenKeys: a PUT of a key with a hidden path component
// is a 400 naming the key (by its reference), through the handler and
// through each store directly, and nothing is stored; deleting such a key
// is allowed, so a repository that holds one can be repaired.
func TestServerRefusesHiddenKeys(t *testing.T) {
	for _, ps := range plantStores(t) {
		t.Run(ps.name, func(t *testing.T) {
			ctx := context.Background()
			srv := memdirtest.NewTeamServer(t, ps.store, nil)
			r := srv.Remote(t, repo, false, &team.RemoteOptions{MaxRetries: -1})
			if _, err := r.Put(ctx, repo, &team.Update{Entries: map[string]string{"a.md": "A"}}); err != nil {
				t.Fatal(err)
			}
			for _, key := range append(slices.Clone(hiddenKeys), "GIT~1/config") {
				_, err := r.Put(ctx, repo, &team.Update{Entries: map[string]string{key: "[core]\n\tfsmonitor = touch pwned\n", "b.md": "B"}})
				var se *team.StatusError
				if !errors.As(err, &se) || se.StatusCode != http.StatusBadRequest || !errors.Is(err, team.ErrInvalidKey) {
					t.Errorf("PUT %q: %v, want a 400 invalid key", key, err)
					continue
				}
				if !strings.Contains(se.Message, team.KeyRef(key)) || !strings.Contains(se.Message, "hidden") && !strings.Contains(se.Message, ".git") {
					t.Errorf("PUT %q: message %q does not name the key (%s) and why", key, se.Message, team.KeyRef(key))
				}
				if _, err := ps.store.Put(ctx, repo, &team.Update{Entries: map[string]string{key: "x"}}); !errors.Is(err, team.ErrInvalidKey) {
					t.Errorf("store Put %q: %v, want ErrInvalidKey", key, err)
				}
			}
			if got := serverEntries(t, ps.store); !cmp.Equal(map[string]string{"a.md": "A"}, got) {
				t.Errorf("refused PUTs stored %q", got)
			}
			if _, err := r.Put(ctx, repo, &team.Update{Deletes: hiddenKeys}); err != nil {
				t.Errorf("deleting hidden keys (repairing a repository): %v", err)
			}
		})
	}
}

// TestPullRefusesHiddenKeys plants keys with hidden components in the
// store, as a server before the check could hold them: a pull writes none
// of them, reports each by its key, and writes every other entry; status
// reports them too instead of offering them as keys a pull would create.
func TestPullRefusesHiddenKeys(t *testing.T) {
	for _, ps := range plantStores(t) {
		t.Run(ps.name, func(t *testing.T) {
			ctx := context.Background()
			srv := memdirtest.NewTeamServer(t, ps.store, nil)
			entries := map[string]string{"MEMORY.md": "- [Ok](ok.md) — fine\n", "ok.md": "fine\n", "a/ok.md": "also fine\n"}
			renames := map[string]string{}
			for i, k := range hiddenKeys {
				from := "planted" + string(rune('a'+i)) + ".md"
				entries[from] = "[core]\n\tfsmonitor = touch pwned\n"
				renames[from] = k
			}
			if _, err := ps.store.Put(ctx, repo, &team.Update{Entries: entries}); err != nil {
				t.Fatal(err)
			}
			ps.rename(t, renames)

			m := newMember(t, srv)
			res, err := m.c.Pull(ctx, false)
			if err != nil {
				t.Fatalf("pull: %v", err)
			}
			var refused []string
			for _, s := range res.Skipped {
				if s.Reason == team.SkipInvalidKey && strings.Contains(s.Detail, "hidden") {
					refused = append(refused, s.Key)
				}
			}
			slices.Sort(refused)
			want := slices.Sorted(slices.Values(hiddenKeys))
			if !cmp.Equal(want, refused) {
				t.Errorf("pull refused %v (skipped %+v), want %v", refused, res.Skipped, want)
			}
			if diff := cmp.Diff([]string{"MEMORY.md", "a/ok.md", "ok.md"}, res.Written); diff != "" {
				t.Errorf("pull wrote (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(map[string]string{"MEMORY.md": entries["MEMORY.md"], "ok.md": "fine\n", "a/ok.md": "also fine\n"}, readTree(t, m.dir)); diff != "" {
				t.Errorf("team directory after the pull (-want +got):\n%s", diff)
			}
			for _, k := range hiddenKeys {
				if _, err := os.Lstat(filepath.Join(m.dir, filepath.FromSlash(k))); err == nil {
					t.Errorf("the pull wrote %s", k)
				}
			}
			if _, err := os.Lstat(filepath.Join(m.dir, ".git")); err == nil {
				t.Errorf("the pull created team/.git")
			}
			st, err := m.c.Status(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(st.ServerOnly) != 0 {
				t.Errorf("status offers %v as keys a pull would create", st.ServerOnly)
			}
			var reported []string
			for _, s := range st.Skipped {
				reported = append(reported, s.Key)
			}
			slices.Sort(reported)
			if !cmp.Equal(want, reported) {
				t.Errorf("status reports %v as skipped, want %v", reported, want)
			}
		})
	}
}

// TestPushSkipsHiddenFiles: files and directories with hidden names in
// team/ are not pushed (the server would refuse them) but reported; a
// hidden directory is reported once, not file by file.
func TestPushSkipsHiddenFiles(t *testing.T) {
	e := newHTTPEnv(t, nil)
	memdirtest.WriteFiles(t, e.dir, map[string]string{
		"a.md":              "A",
		".hidden.md":        "H",
		"sub/.x.md":         "X",
		".git/config":       "[core]\n\tbare = false\n",
		".git/HEAD":         "ref: refs/heads/main\n",
		".git/refs/heads/x": "0000\n",
	})
	res, err := e.client(t, e.dir, false).Push(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !cmp.Equal([]string{"a.md"}, res.Pushed) {
		t.Errorf("pushed %v, want only a.md", res.Pushed)
	}
	var skipped []string
	for _, s := range res.Skipped {
		skipped = append(skipped, s.Key+" "+s.Reason)
	}
	slices.Sort(skipped)
	want := []string{".git invalid_key", ".hidden.md invalid_key", "sub/.x.md invalid_key"}
	if diff := cmp.Diff(want, skipped); diff != "" {
		t.Errorf("skipped (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{"a.md": "A"}, e.server(t)); diff != "" {
		t.Errorf("server (-want +got):\n%s", diff)
	}
}
