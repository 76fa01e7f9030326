package team_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/memdir/memdir/memdirtest"
	"github.com/memdir/memdir/team"
	"github.com/memdir/memdir/team/postgres"
)

// syncStores are the stores the sync scenarios run on, behind a real
// Handler on loopback: SQLite always, PostgreSQL when
// MEMDIR_TEST_POSTGRES_DSN is set (CI requires it).
var syncStores = []struct {
	name string
	open func(tb testing.TB) team.Store
}{
	{"sqlite", func(tb testing.TB) team.Store { return newSQLite(tb) }},
	{"postgres", func(tb testing.TB) team.Store {
		s, err := postgres.Open(context.Background(), memdirtest.PostgresDSN(tb), nil)
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(func() { s.Close() })
		return s
	}},
}

// member is one teammate: a team directory and a client for it, talking
// HTTP to the shared server.
type member struct {
	dir string
	c   *team.Client
}

func newMember(t *testing.T, srv *memdirtest.TeamServer) *member {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "team")
	return &member{dir: dir, c: newClient(t, srv.Remote(t, repo, false, nil), dir, nil)}
}

// restart gives the member a new client, as a new memdir process would
// get: nothing is remembered but what is on disk.
func (m *member) restart(t *testing.T, srv *memdirtest.TeamServer) {
	t.Helper()
	m.c = newClient(t, srv.Remote(t, repo, false, nil), m.dir, nil)
}

func (m *member) write(t *testing.T, files map[string]string) {
	t.Helper()
	memdirtest.WriteFiles(t, m.dir, files)
}

func (m *member) push(t *testing.T) *team.PushResult {
	t.Helper()
	res, err := m.c.Push(context.Background())
	if err != nil {
		t.Fatalf("push from %s: %v", m.dir, err)
	}
	return res
}

func (m *member) pull(t *testing.T) *team.PullResult {
	t.Helper()
	res, err := m.c.Pull(context.Background(), false)
	if err != nil {
		t.Fatalf("pull into %s: %v", m.dir, err)
	}
	return res
}

func serverEntries(t *testing.T, s team.Store) map[string]string {
	t.Helper()
	d, err := s.Get(context.Background(), repo, nil)
	if err != nil {
		t.Fatal(err)
	}
	return d.Content.Entries
}

// TestSyncStalePushKeepsTeammatesWrite is the A/B scenario of issue 12: A
// pushes k1 and k2, B pulls, changes k1 and pushes, A (a new process)
// changes k2 only and pushes. B's k1 must survive, and only k2 may be
// reported as changed.
func TestSyncStalePushKeepsTeammatesWrite(t *testing.T) {
	for _, st := range syncStores {
		t.Run(st.name, func(t *testing.T) {
			srv := memdirtest.NewTeamServer(t, st.open(t), nil)
			a, b := newMember(t, srv), newMember(t, srv)
			a.write(t, map[string]string{"MEMORY.md": "- [K1](k1.md) — one\n- [K2](k2.md) — two\n", "k1.md": "k1 v1\n", "k2.md": "k2 v1\n"})
			a.push(t)
			b.pull(t)
			b.write(t, map[string]string{"k1.md": "k1 by B\n"})
			if res := b.push(t); !cmp.Equal([]string{"k1.md"}, res.Pushed) {
				t.Fatalf("B pushed %v, want k1.md", res.Pushed)
			}

			a.restart(t, srv)
			a.write(t, map[string]string{"k2.md": "k2 by A\n"})
			status, err := a.c.Status(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if !cmp.Equal([]string{"k2.md"}, status.Modified) || !cmp.Equal([]string{"k1.md"}, status.ServerChanged) || len(status.BothChanged) != 0 {
				t.Errorf("A's status: modified %v, server changed %v, both %v; want k2.md changed here, k1.md on the server", status.Modified, status.ServerChanged, status.BothChanged)
			}
			res := a.push(t)
			if !cmp.Equal([]string{"k2.md"}, res.Pushed) || !cmp.Equal([]string{"k1.md"}, res.Stale) {
				t.Errorf("A's push: pushed %v, stale %v; want k2.md pushed, k1.md left for a pull", res.Pushed, res.Stale)
			}
			want := map[string]string{"MEMORY.md": "- [K1](k1.md) — one\n- [K2](k2.md) — two\n", "k1.md": "k1 by B\n", "k2.md": "k2 by A\n"}
			if diff := cmp.Diff(want, serverEntries(t, srv.Store)); diff != "" {
				t.Errorf("server (-want +got):\n%s", diff)
			}
			a.pull(t)
			if diff := cmp.Diff(want, readTree(t, a.dir)); diff != "" {
				t.Errorf("A after a pull (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSyncBothChangedMergesOrConflicts: when both sides changed one key,
// separate edits merge and overlapping ones become a conflict that keeps
// both versions and can be resolved.
func TestSyncBothChangedMergesOrConflicts(t *testing.T) {
	for _, st := range syncStores {
		t.Run(st.name, func(t *testing.T) {
			ctx := context.Background()
			srv := memdirtest.NewTeamServer(t, st.open(t), nil)
			a, b := newMember(t, srv), newMember(t, srv)
			doc := "# Build\n\nmake all\n\n## Test\n\ngo test ./...\n"
			a.write(t, map[string]string{"build.md": doc, "deploy.md": "ship on tuesdays\n"})
			a.push(t)
			b.pull(t)
			b.write(t, map[string]string{"build.md": strings.Replace(doc, "make all", "make -j8 all", 1), "deploy.md": "ship on wednesdays\n"})
			b.push(t)
			a.write(t, map[string]string{"build.md": strings.Replace(doc, "go test ./...", "go test -race ./...", 1), "deploy.md": "ship on thursdays\n"})
			res := a.push(t)
			merged := "# Build\n\nmake -j8 all\n\n## Test\n\ngo test -race ./...\n"
			if !cmp.Equal([]string{"build.md"}, res.Merged) || !cmp.Equal([]string{"build.md"}, res.Pushed) {
				t.Errorf("A's push: merged %v, pushed %v; want build.md merged and pushed", res.Merged, res.Pushed)
			}
			if len(res.Conflicts) != 1 || res.Conflicts[0].Key != "deploy.md" || res.Conflicts[0].NoBase {
				t.Fatalf("A's push conflicts = %+v, want deploy.md", res.Conflicts)
			}
			cf := res.Conflicts[0]
			server := serverEntries(t, srv.Store)
			if server["build.md"] != merged || server["deploy.md"] != "ship on wednesdays\n" {
				t.Errorf("server build.md %q, deploy.md %q: want the merge and B's untouched", server["build.md"], server["deploy.md"])
			}
			if got := readTree(t, a.dir)["deploy.md"]; got != "ship on wednesdays\n" {
				t.Errorf("A's team/deploy.md = %q, want the server's", got)
			}
			if b, _ := os.ReadFile(cf.LocalCopy); string(b) != "ship on thursdays\n" {
				t.Errorf("A's saved version = %q", b)
			}
			if strings.HasPrefix(cf.LocalCopy, a.dir+string(filepath.Separator)) {
				t.Errorf("the local copy %s is inside the team directory", cf.LocalCopy)
			}
			// Nothing unmerged goes up, however often A pushes; status
			// lists the conflict.
			if res := a.push(t); len(res.Pushed) != 0 {
				t.Errorf("second push sent %v", res.Pushed)
			}
			status, err := a.c.Status(ctx)
			if err != nil || len(status.Conflicts) != 1 || status.Conflicts[0].Key != "deploy.md" {
				t.Fatalf("status conflicts = %+v, %v", status, err)
			}
			base, yours, theirs, err := a.c.ConflictTexts(ctx, "deploy.md")
			if err != nil || base != "ship on tuesdays\n" || yours != "ship on thursdays\n" || theirs != "ship on wednesdays\n" {
				t.Errorf("ConflictTexts = %q, %q, %q, %v", base, yours, theirs, err)
			}
			// The teammate changes it again: A's pull brings the newer
			// version in and the conflict stays open against it.
			b.write(t, map[string]string{"deploy.md": "ship on saturdays\n"})
			b.push(t)
			if pr := a.pull(t); !cmp.Equal([]string{"deploy.md"}, pr.Written) {
				t.Errorf("A's pull of B's newer deploy.md wrote %v", pr.Written)
			}
			if cs, _ := a.c.Conflicts(ctx); len(cs) != 1 || readTree(t, a.dir)["deploy.md"] != "ship on saturdays\n" {
				t.Errorf("after B's second change: conflicts %+v, team/deploy.md %q", cs, readTree(t, a.dir)["deploy.md"])
			}
			// A second pull keeps the conflict open and changes nothing.
			if pr := a.pull(t); len(pr.Written)+len(pr.Merged) != 0 {
				t.Errorf("pull during the conflict wrote %v, merged %v", pr.Written, pr.Merged)
			}
			if _, err := a.c.Resolve(ctx, "deploy.md", team.ResolveText, "ship on fridays\n"+team.MarkerSplit+"\n"); err == nil {
				t.Errorf("Resolve accepted a text with conflict markers")
			}
			if _, err := a.c.Resolve(ctx, "deploy.md", team.ResolveOurs, ""); err != nil {
				t.Fatal(err)
			}
			if cs, _ := a.c.Conflicts(ctx); len(cs) != 0 {
				t.Errorf("conflicts after resolve: %+v", cs)
			}
			if _, err := a.c.Resolve(ctx, "deploy.md", team.ResolveOurs, ""); err == nil || !strings.Contains(err.Error(), "no open sync conflict") {
				t.Errorf("second resolve = %v, want no open conflict", err)
			}
			if res := a.push(t); !cmp.Equal([]string{"deploy.md"}, res.Pushed) {
				t.Errorf("push after resolve sent %v, want deploy.md", res.Pushed)
			}
			if got := serverEntries(t, srv.Store)["deploy.md"]; got != "ship on thursdays\n" {
				t.Errorf("server deploy.md after resolve = %q", got)
			}
			// B, who had not touched it since, just takes it.
			if pr := b.pull(t); !cmp.Equal([]string{"build.md", "deploy.md"}, pr.Written) || len(pr.Conflicts) != 0 {
				t.Errorf("B's pull = %+v", pr)
			}
		})
	}
}

// TestSyncConcurrentPushesKeepIndexLines: two teammates each save new
// team memories and push at once; no MEMORY.md line may be lost, on the
// server or in either directory.
func TestSyncConcurrentPushesKeepIndexLines(t *testing.T) {
	for _, st := range syncStores {
		t.Run(st.name, func(t *testing.T) {
			srv := memdirtest.NewTeamServer(t, st.open(t), &team.HandlerOptions{MaxEntries: 200})
			a, b := newMember(t, srv), newMember(t, srv)
			a.write(t, map[string]string{"MEMORY.md": "# Team\n- [Base](base.md) — shared\n", "base.md": "base\n"})
			a.push(t)
			b.pull(t)
			const rounds = 4
			var wg sync.WaitGroup
			errs := make(chan error, 2*rounds)
			for _, m := range []struct {
				who string
				m   *member
			}{{"a", a}, {"b", b}} {
				wg.Go(func() {
					for i := range rounds {
						name := m.who + string(rune('0'+i)) + ".md"
						ix, _ := os.ReadFile(filepath.Join(m.m.dir, "MEMORY.md"))
						memdirtest.WriteFiles(t, m.m.dir, map[string]string{
							name:        "memory " + name + "\n",
							"MEMORY.md": string(ix) + "- [" + name + "](" + name + ") — by " + m.who + "\n",
						})
						// Pushing again after running out of retries is what
						// the watcher does; it must get through well before 20.
						var err error
						for range 20 {
							if _, err = m.m.c.Push(context.Background()); !errors.Is(err, team.ErrConflict) {
								break
							}
						}
						if err != nil {
							errs <- err
							return
						}
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
			a.pull(t)
			b.pull(t)
			final := serverEntries(t, srv.Store)
			for _, who := range []string{"a", "b"} {
				for i := range rounds {
					name := who + string(rune('0'+i)) + ".md"
					line := "- [" + name + "](" + name + ") — by " + who
					for where, ix := range map[string]string{"server": final["MEMORY.md"], "a": readTree(t, a.dir)["MEMORY.md"], "b": readTree(t, b.dir)["MEMORY.md"]} {
						if !strings.Contains(ix, line) {
							t.Errorf("%s's MEMORY.md lost %q:\n%s", where, line, ix)
						}
					}
				}
			}
			if !strings.Contains(final["MEMORY.md"], "- [Base](base.md) — shared") {
				t.Errorf("the base line is gone:\n%s", final["MEMORY.md"])
			}
		})
	}
}

// TestSyncInterleavedIndexPush forces the worst interleaving: B's push
// lands between A's probe and A's PUT. A's 412 must end in a merge.
func TestSyncInterleavedIndexPush(t *testing.T) {
	srv := memdirtest.NewTeamServer(t, newSQLite(t), nil)
	a, b := newMember(t, srv), newMember(t, srv)
	a.write(t, map[string]string{"MEMORY.md": "- [Base](base.md) — shared\n", "base.md": "base\n"})
	a.push(t)
	b.pull(t)
	a.write(t, map[string]string{"MEMORY.md": "- [Base](base.md) — shared\n- [A](a.md) — by a\n", "a.md": "a\n"})
	b.write(t, map[string]string{"MEMORY.md": "- [Base](base.md) — shared\n- [B](b.md) — by b\n", "b.md": "b\n"})
	once := false
	a.c = newClient(t, &racingRepos{Repos: srv.Remote(t, repo, false, nil), n: 1, teammate: func(int) {
		if !once {
			once = true
			b.push(t)
		}
	}}, a.dir, nil)
	res := a.push(t)
	if res.Retries != 1 || !cmp.Equal([]string{"MEMORY.md"}, res.Merged) {
		t.Errorf("A's push = %+v; want one retry and MEMORY.md merged", res)
	}
	want := "- [Base](base.md) — shared\n- [B](b.md) — by b\n- [A](a.md) — by a\n"
	if got := serverEntries(t, srv.Store)["MEMORY.md"]; got != want {
		t.Errorf("server MEMORY.md = %q, want %q", got, want)
	}
	if pr := b.pull(t); readTree(t, b.dir)["MEMORY.md"] != want || !cmp.Equal([]string{"MEMORY.md", "a.md"}, pr.Written) {
		t.Errorf("B after a pull: MEMORY.md %q, wrote %v", readTree(t, b.dir)["MEMORY.md"], pr.Written)
	}
}

// TestPullSkipsUnwritableKeys plants keys no client can write (a file name
// over 255 bytes; both sub and sub/x.md) straight into the store, as a
// hostile token holder might have before the server refused them: the
// pull writes every other key, later ones included, and reports each skip.
func TestPullSkipsUnwritableKeys(t *testing.T) {
	for _, st := range syncStores {
		t.Run(st.name, func(t *testing.T) {
			store := st.open(t)
			long := strings.Repeat("n", 300) + ".md"
			if _, err := store.Put(context.Background(), repo, &team.Update{Entries: map[string]string{
				"a.md": "A", long: "too long", "sub": "a file", "sub/x.md": "under the file", "zz.md": "Z",
			}}); err != nil {
				t.Skipf("the store refuses the planted keys itself: %v", err)
			}
			srv := memdirtest.NewTeamServer(t, store, nil)
			m := newMember(t, srv)
			res := m.pull(t)
			if diff := cmp.Diff([]string{"a.md", "sub", "zz.md"}, res.Written); diff != "" {
				t.Errorf("written (-want +got):\n%s", diff)
			}
			var skipped []string
			for _, s := range res.Skipped {
				skipped = append(skipped, s.Key[:min(len(s.Key), 8)]+" "+s.Reason)
				if s.Detail == "" {
					t.Errorf("skip of %.20s… gives no reason", s.Key)
				}
			}
			if diff := cmp.Diff([]string{"nnnnnnnn invalid_key", "sub/x.md unwritable"}, skipped); diff != "" {
				t.Errorf("skipped (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(map[string]string{"a.md": "A", "sub": "a file", "zz.md": "Z"}, readTree(t, m.dir)); diff != "" {
				t.Errorf("team directory (-want +got):\n%s", diff)
			}
			// A push that has to bring the server's entries in (a.md changed
			// on both sides) reports the same skips and still sends the rest.
			if _, err := store.Put(context.Background(), repo, &team.Update{Entries: map[string]string{"a.md": "A by a teammate", "zz.md": "Z by a teammate"}}); err != nil {
				t.Fatal(err)
			}
			m.write(t, map[string]string{"a.md": "A by me", "new.md": "N"})
			pres := m.push(t)
			var pskipped []string
			for _, s := range pres.Skipped {
				pskipped = append(pskipped, s.Key[:min(len(s.Key), 8)]+" "+s.Reason)
			}
			if !cmp.Equal([]string{"nnnnnnnn invalid_key", "sub/x.md unwritable"}, pskipped) || !cmp.Equal([]string{"a.md", "zz.md"}, pres.Pulled) ||
				!cmp.Equal([]string{"new.md"}, pres.Pushed) || len(pres.Conflicts) != 1 {
				t.Errorf("push: skipped %v, pulled %v, pushed %v, conflicts %v", pskipped, pres.Pulled, pres.Pushed, pres.Conflicts)
			}
		})
	}
}

// TestSyncMigratesOldTeamDir: a team directory an older memdir synced has
// no bases. Keys equal to the server's get one on the first push or pull;
// a differing key is never pushed over the server's copy blindly.
func TestSyncMigratesOldTeamDir(t *testing.T) {
	srv := memdirtest.NewTeamServer(t, newSQLite(t), nil)
	ctx := context.Background()
	if _, err := srv.Store.Put(ctx, repo, &team.Update{Entries: map[string]string{"same.md": "same", "teammate.md": "teammate's newer\n", "MEMORY.md": "- [Same](same.md)\n- [T](teammate.md)\n"}}); err != nil {
		t.Fatal(err)
	}
	m := newMember(t, srv)
	m.write(t, map[string]string{"same.md": "same", "teammate.md": "my old copy\n", "MEMORY.md": "- [Same](same.md)\n- [Mine](mine.md)\n", "mine.md": "mine\n"})
	res := m.push(t)
	if len(res.Conflicts) != 1 || res.Conflicts[0].Key != "teammate.md" || !res.Conflicts[0].NoBase {
		t.Fatalf("push conflicts = %+v, want teammate.md without a base", res.Conflicts)
	}
	if !cmp.Equal([]string{"MEMORY.md", "mine.md"}, res.Pushed) {
		t.Errorf("pushed %v, want MEMORY.md (merged) and mine.md", res.Pushed)
	}
	want := map[string]string{"same.md": "same", "teammate.md": "teammate's newer\n", "mine.md": "mine\n", "MEMORY.md": "- [Same](same.md)\n- [T](teammate.md)\n- [Mine](mine.md)\n"}
	if diff := cmp.Diff(want, serverEntries(t, srv.Store)); diff != "" {
		t.Errorf("server (-want +got):\n%s", diff)
	}
	// The bases are recorded: the next push has nothing to do.
	if res := m.push(t); len(res.Pushed)+len(res.Conflicts)+len(res.Stale) != 0 {
		t.Errorf("second push = %+v", res)
	}
}

// TestSyncStateIsOutsideTeamDir checks the default state location: under
// MEMDIR_STATE_DIR, never inside the team directory.
func TestSyncStateIsOutsideTeamDir(t *testing.T) {
	state := t.TempDir()
	dir := filepath.Join(t.TempDir(), "memory", "team")
	c, err := team.NewClient(&hostileRepos{}, repo, dir, &team.ClientOptions{LookupEnv: func(k string) (string, bool) {
		if k == "MEMDIR_STATE_DIR" {
			return state, true
		}
		return "", false
	}})
	if err != nil {
		t.Fatal(err)
	}
	want, _ := team.SyncStateDir(dir, func(k string) (string, bool) { return state, k == "MEMDIR_STATE_DIR" })
	if c.StateDir() != want || !strings.HasPrefix(c.StateDir(), state) {
		t.Errorf("StateDir = %s, want %s", c.StateDir(), want)
	}
	if !strings.HasPrefix(c.ConflictDir(), c.StateDir()) {
		t.Errorf("ConflictDir %s is not under the state dir", c.ConflictDir())
	}
}

// TestPushKeepsIndexLinesOfExistingFiles: an index sent over an unchanged
// server copy still loses a line only with its file, so an old MEMORY.md
// (restored by undo, or edited by hand) cannot drop a teammate's line.
func TestPushKeepsIndexLinesOfExistingFiles(t *testing.T) {
	srv := memdirtest.NewTeamServer(t, newSQLite(t), nil)
	a, b := newMember(t, srv), newMember(t, srv)
	a.write(t, map[string]string{"MEMORY.md": "- [A](a.md) — a\n- [T](t.md) — t\n- [G](gone.md) — g\n", "a.md": "a\n", "t.md": "t\n", "gone.md": "g\n"})
	a.push(t)
	b.pull(t)
	if err := os.Remove(filepath.Join(b.dir, "gone.md")); err != nil {
		t.Fatal(err)
	}
	b.write(t, map[string]string{"MEMORY.md": "- [A](a.md) — a\n- [N](n.md) — new\n", "n.md": "n\n"})
	res := b.push(t)
	want := "- [A](a.md) — a\n- [T](t.md) — t\n- [N](n.md) — new\n"
	if got := serverEntries(t, srv.Store)["MEMORY.md"]; got != want {
		t.Errorf("server MEMORY.md = %q, want %q", got, want)
	}
	if got := readTree(t, b.dir)["MEMORY.md"]; got != want {
		t.Errorf("B's MEMORY.md = %q, want %q", got, want)
	}
	if !cmp.Equal([]string{"MEMORY.md", "n.md"}, res.Pushed) {
		t.Errorf("pushed %v", res.Pushed)
	}
}

// TestSyncIndexSameLineConflicts: two teammates change the same line of
// team/MEMORY.md. The second one's push must not take the first one's line
// silently: it is a conflict, reported, with the local index kept aside
// and resolvable as for any key. Edits of different lines still merge.
func TestSyncIndexSameLineConflicts(t *testing.T) {
	for _, st := range syncStores {
		t.Run(st.name, func(t *testing.T) {
			ctx := context.Background()
			srv := memdirtest.NewTeamServer(t, st.open(t), nil)
			a, b := newMember(t, srv), newMember(t, srv)
			index := "# Team\n- [Build](build.md) — how to build\n- [Deploy](deploy.md) — how to deploy\n"
			a.write(t, map[string]string{"MEMORY.md": index, "build.md": "make\n", "deploy.md": "ship\n"})
			a.push(t)
			b.pull(t)

			// Different lines: merged, as before.
			b.write(t, map[string]string{"MEMORY.md": strings.Replace(index, "how to build", "make all, then test", 1)})
			b.push(t)
			a.write(t, map[string]string{"MEMORY.md": strings.Replace(index, "how to deploy", "ship on tuesdays", 1)})
			res := a.push(t)
			both := "# Team\n- [Build](build.md) — make all, then test\n- [Deploy](deploy.md) — ship on tuesdays\n"
			if len(res.Conflicts) != 0 || !cmp.Equal([]string{"MEMORY.md"}, res.Merged) || serverEntries(t, srv.Store)["MEMORY.md"] != both {
				t.Fatalf("edits of different lines: conflicts %+v, merged %v, server %q; want merged into %q", res.Conflicts, res.Merged, serverEntries(t, srv.Store)["MEMORY.md"], both)
			}
			b.pull(t)

			// The same line: a conflict.
			theirs := strings.Replace(both, "make all, then test", "make -j8 all", 1)
			b.write(t, map[string]string{"MEMORY.md": theirs})
			b.push(t)
			ours := strings.Replace(both, "make all, then test", "bazel build //...", 1)
			a.write(t, map[string]string{"MEMORY.md": ours})
			res = a.push(t)
			if len(res.Conflicts) != 1 || res.Conflicts[0].Key != "MEMORY.md" {
				t.Fatalf("push of a same-line edit: conflicts %+v, pulled %v, merged %v, pushed %v; want a conflict on MEMORY.md", res.Conflicts, res.Pulled, res.Merged, res.Pushed)
			}
			if slices.Contains(res.Pushed, "MEMORY.md") {
				t.Errorf("the conflicting MEMORY.md was pushed")
			}
			if got := serverEntries(t, srv.Store)["MEMORY.md"]; got != theirs {
				t.Errorf("server MEMORY.md = %q, want B's %q", got, theirs)
			}
			if got := readTree(t, a.dir)["MEMORY.md"]; got != theirs {
				t.Errorf("A's team/MEMORY.md = %q, want the server's %q", got, theirs)
			}
			if got, _ := os.ReadFile(res.Conflicts[0].LocalCopy); string(got) != ours {
				t.Errorf("A's saved MEMORY.md = %q, want %q", got, ours)
			}
			cs, err := a.c.Conflicts(ctx)
			if err != nil || len(cs) != 1 || cs[0].Key != "MEMORY.md" {
				t.Fatalf("open conflicts = %+v, %v", cs, err)
			}
			if _, err := a.c.Resolve(ctx, "MEMORY.md", team.ResolveOurs, ""); err != nil {
				t.Fatal(err)
			}
			if res := a.push(t); !cmp.Equal([]string{"MEMORY.md"}, res.Pushed) {
				t.Errorf("push after resolve sent %v, want MEMORY.md", res.Pushed)
			}
			if got := serverEntries(t, srv.Store)["MEMORY.md"]; got != ours {
				t.Errorf("server MEMORY.md after resolve = %q, want %q", got, ours)
			}

			// A pull meets the same conflict the same way.
			b.pull(t)
			b.write(t, map[string]string{"MEMORY.md": strings.Replace(ours, "ship on tuesdays", "ship on fridays", 1)})
			b.push(t)
			a.write(t, map[string]string{"MEMORY.md": strings.Replace(ours, "ship on tuesdays", "never ship", 1)})
			pr := a.pull(t)
			if len(pr.Conflicts) != 1 || pr.Conflicts[0].Key != "MEMORY.md" {
				t.Errorf("pull of a same-line edit: conflicts %+v, merged %v, kept %v", pr.Conflicts, pr.Merged, pr.Kept)
			}
		})
	}
}
