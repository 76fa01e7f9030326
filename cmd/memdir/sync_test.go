package main

import (
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/internal/cli"
	"github.com/memdir/memdir/locate"
	"github.com/memdir/memdir/memdirtest"
	"github.com/memdir/memdir/team"
	"github.com/memdir/memdir/team/sqlite"
)

// lockedBuffer is a bytes.Buffer safe to write from a running command and
// read from the test.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// teamWorld is a sandbox for serve and sync: a home, a project that is a
// git clone of github.com/Acme/Widgets, private data and state directories,
// and an environment holding nothing from the real one.
type teamWorld struct {
	home, project string
	vars          map[string]string
}

func newTeamWorld(tb testing.TB) *teamWorld {
	tb.Helper()
	base := tb.TempDir()
	base, _ = filepath.EvalSymlinks(base)
	w := &teamWorld{home: filepath.Join(base, "home"), project: filepath.Join(base, "project")}
	writeFile(tb, filepath.Join(w.project, ".git", "config"), "[core]\n\tbare = false\n[remote \"origin\"]\n\turl = git@github.com:Acme/Widgets.git\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n")
	os.MkdirAll(w.home, 0o700)
	w.vars = map[string]string{
		"HOME":             w.home,
		"MEMDIR_STATE_DIR": filepath.Join(base, "state"),
		"MEMDIR_DATA_DIR":  filepath.Join(base, "data"),
		"MEMDIR_PROGRESS":  "off", // see newMemWorld
	}
	return w
}

func writeFile(tb testing.TB, path, content string) {
	tb.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		tb.Fatal(err)
	}
}

func (w *teamWorld) env(stdout, stderr interface{ Write([]byte) (int, error) }) *cli.Env {
	return &cli.Env{
		Stdin:     strings.NewReader(""),
		Stdout:    stdout,
		Stderr:    stderr,
		LookupEnv: func(k string) (string, bool) { v, ok := w.vars[k]; return v, ok },
		Cwd:       w.project,
		Now:       func() time.Time { return time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC) },
	}
}

func (w *teamWorld) run(tb testing.TB, args ...string) (stdout, stderr string, code int) {
	tb.Helper()
	var out, errb bytes.Buffer
	code = Main(context.Background(), args, w.env(&out, &errb))
	return out.String(), errb.String(), code
}

func (w *teamWorld) ok(tb testing.TB, args ...string) string {
	tb.Helper()
	out, errOut, code := w.run(tb, args...)
	if code != 0 {
		tb.Fatalf("memdir %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), code, out, errOut)
	}
	return out
}

// teamDir is the located team directory of the project.
func (w *teamWorld) teamDir() string {
	return filepath.Join(w.home, ".claude", "projects", locate.SanitizePath(w.project, locate.HashBun), "memory", "team")
}

// server starts a team server on loopback and points the world at it with
// a token for acme/widgets.
func (w *teamWorld) server(tb testing.TB, readOnly bool) *memdirtest.TeamServer {
	tb.Helper()
	store, err := sqlite.Open(context.Background(), filepath.Join(tb.TempDir(), "team.db"), nil)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { store.Close() })
	srv := memdirtest.NewTeamServer(tb, store, &team.HandlerOptions{})
	w.vars["MEMDIR_TEAM_URL"] = srv.URL
	w.vars["MEMDIR_TEAM_TOKEN"] = srv.Token(tb, "acme/widgets", readOnly)
	return srv
}

func TestSyncPushPullUndo(t *testing.T) {
	alice := newTeamWorld(t)
	srv := alice.server(t, false)
	secret := "ghp_" + strings.Repeat("x7Kq", 9)
	writeFile(t, filepath.Join(alice.teamDir(), "MEMORY.md"), "- [Build](build.md) — how to build\n")
	writeFile(t, filepath.Join(alice.teamDir(), "build.md"), "---\nname: build\n---\nmake all\n")
	writeFile(t, filepath.Join(alice.teamDir(), "leak.md"), "token "+secret)

	out := alice.ok(t, "sync", "push")
	for _, want := range []string{"Pushed 2 entries to acme/widgets", "pushed   build.md", "skipped  leak.md: potential secret: GitHub PAT (rule github-pat)"} {
		if !strings.Contains(out, want) {
			t.Errorf("push output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, secret) {
		t.Errorf("push output shows the secret")
	}
	var st team.Status
	if err := json.Unmarshal([]byte(alice.ok(t, "sync", "status", "--json")), &st); err != nil {
		t.Fatal(err)
	}
	if st.Repo != "acme/widgets" || st.InSync != 2 || len(st.Skipped) != 1 || len(st.LocalOnly)+len(st.Modified)+len(st.ServerOnly) != 0 {
		t.Errorf("status after push = %+v", st)
	}

	// Bob has an edited copy of build.md he never synced: a pull puts the
	// server's in team/, keeps his as a conflict (exit 5), and is
	// journaled, so undo brings his back.
	bob := newTeamWorld(t)
	bob.vars["MEMDIR_TEAM_URL"] = srv.URL
	bob.vars["MEMDIR_TEAM_TOKEN"] = srv.Token(t, "acme/widgets", true)
	writeFile(t, filepath.Join(bob.teamDir(), "build.md"), "bob's version")
	var pr team.PullResult
	out, errOut, code := bob.run(t, "sync", "pull", "--json")
	if code != cli.ExitExists {
		t.Fatalf("pull over an unsynced edit: exit %d, want %d\n%s%s", code, cli.ExitExists, out, errOut)
	}
	if err := json.Unmarshal([]byte(out), &pr); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"MEMORY.md", "build.md"}, pr.Written); diff != "" {
		t.Errorf("pull wrote (-want +got):\n%s", diff)
	}
	if len(pr.Conflicts) != 1 || pr.Conflicts[0].Key != "build.md" || !pr.Conflicts[0].NoBase {
		t.Fatalf("pull conflicts = %+v, want build.md without a base", pr.Conflicts)
	}
	if got, _ := os.ReadFile(pr.Conflicts[0].LocalCopy); string(got) != "bob's version" {
		t.Errorf("bob's saved version = %q", got)
	}
	if got, _ := os.ReadFile(filepath.Join(bob.teamDir(), "build.md")); string(got) != "---\nname: build\n---\nmake all\n" {
		t.Errorf("after pull build.md = %q", got)
	}
	bob.ok(t, "undo")
	if got, _ := os.ReadFile(filepath.Join(bob.teamDir(), "build.md")); string(got) != "bob's version" {
		t.Errorf("after undo build.md = %q, want bob's version back", got)
	}
	if _, err := os.Stat(filepath.Join(bob.teamDir(), "MEMORY.md")); !os.IsNotExist(err) {
		t.Errorf("undo left the pulled MEMORY.md: %v", err)
	}
	// A read-only token cannot push: exit 1 with the reason.
	_, errOut, code = bob.run(t, "sync", "push")
	if code != cli.ExitFailure || !strings.Contains(errOut, "read-only") {
		t.Errorf("read-only push: exit %d, stderr %q", code, errOut)
	}
}

func TestSyncTeamDirFlagAndRepoFlag(t *testing.T) {
	w := newTeamWorld(t)
	srv := w.server(t, false)
	w.vars["MEMDIR_TEAM_TOKEN"] = srv.Token(t, "other/repo", false)
	dir := filepath.Join(t.TempDir(), "shared")
	writeFile(t, filepath.Join(dir, "a.md"), "A")
	out := w.ok(t, "sync", "push", "--team-dir", dir, "--repo", "Other/Repo", "--url", srv.URL)
	if !strings.Contains(out, "Pushed 1 entry to other/repo in 1 request") {
		t.Errorf("push output:\n%s", out)
	}
	// A relative --team-dir is taken from the working directory; -v logs
	// to stderr.
	writeFile(t, filepath.Join(w.project, "shared", "b.md"), "B")
	out, errOut, code := w.run(t, "sync", "push", "-v", "--team-dir", "shared", "--repo", "other/repo", "--url", srv.URL)
	if code != 0 || !strings.Contains(out, "Pushed 1 entry to other/repo in 1 request") || !strings.Contains(errOut, "level=INFO msg=pushed repo=other/repo entries=1") {
		t.Errorf("push -v from a relative --team-dir: exit %d\n%s\n%s", code, out, errOut)
	}
}

func TestSyncConfigurationErrors(t *testing.T) {
	w := newTeamWorld(t)
	srv := w.server(t, false)
	tests := []struct {
		name     string
		vars     map[string]string
		args     []string
		code     int
		contains string
	}{
		{"no url", map[string]string{"MEMDIR_TEAM_URL": ""}, []string{"sync", "status"}, cli.ExitInvalid, "--url"},
		{"url from TEAM_MEMORY_SYNC_URL", map[string]string{"MEMDIR_TEAM_URL": "", "TEAM_MEMORY_SYNC_URL": srv.URL}, []string{"sync", "status"}, cli.ExitOK, ""},
		{"bad url", map[string]string{"MEMDIR_TEAM_URL": "ftp://x"}, []string{"sync", "status"}, cli.ExitInvalid, "http"},
		{"no token", map[string]string{"MEMDIR_TEAM_TOKEN": ""}, []string{"sync", "push"}, cli.ExitInvalid, "MEMDIR_TEAM_TOKEN"},
		{"wrong token", map[string]string{"MEMDIR_TEAM_TOKEN": "mdt_wrong"}, []string{"sync", "pull"}, cli.ExitFailure, "401"},
		{"bad repo", nil, []string{"sync", "pull", "--repo", "not a repo"}, cli.ExitInvalid, "owner/name"},
		{"repo from MEMDIR_TEAM_REPO", map[string]string{"MEMDIR_TEAM_REPO": "github.com/Acme/Widgets"}, []string{"sync", "status"}, cli.ExitOK, ""},
		{"MEMDIR_TEAM_REPO names another repo", map[string]string{"MEMDIR_TEAM_REPO": "acme/other"}, []string{"sync", "status"}, cli.ExitFailure, "403"},
		{"no action", nil, []string{"sync"}, cli.ExitUsage, "pull, push, status, watch"},
		{"bad action", nil, []string{"sync", "merge"}, cli.ExitUsage, "merge"},
		{"agent", nil, []string{"sync", "pull", "--agent", "x"}, cli.ExitUsage, "agent"},
		{"extra argument", nil, []string{"sync", "pull", "now"}, cli.ExitUsage, "sync pull takes no arguments"},
		{"resolve without a key", nil, []string{"sync", "resolve", "--ours"}, cli.ExitUsage, "sync resolve needs one KEY"},
		{"resolve without a side", nil, []string{"sync", "resolve", "a.md"}, cli.ExitUsage, "exactly one of --ours, --theirs, --edit"},
		{"resolve with two sides", nil, []string{"sync", "resolve", "a.md", "--ours", "--edit"}, cli.ExitUsage, "exactly one of --ours, --theirs, --edit"},
		{"resolve needs no server", map[string]string{"MEMDIR_TEAM_URL": "", "MEMDIR_TEAM_TOKEN": ""}, []string{"sync", "resolve", "a.md", "--theirs"}, cli.ExitNotFound, "a.md"},
		{"bad url flag", nil, []string{"sync", "status", "--url", "ftp://x"}, cli.ExitInvalid, "http"},
		{"relative project", nil, []string{"sync", "status", "--project", "."}, cli.ExitOK, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			saved := map[string]string{}
			maps.Copy(saved, w.vars)
			defer func() { w.vars = saved }()
			maps.Copy(w.vars, tt.vars)
			_, errOut, code := w.run(t, tt.args...)
			if code != tt.code || !strings.Contains(errOut, tt.contains) {
				t.Errorf("exit %d, want %d; stderr %q should mention %q", code, tt.code, errOut, tt.contains)
			}
		})
	}
	// Outside a git repository, without --repo: say to pass --repo.
	os.RemoveAll(filepath.Join(w.project, ".git"))
	_, errOut, code := w.run(t, "sync", "status")
	if code != cli.ExitInvalid || !strings.Contains(errOut, "--repo") {
		t.Errorf("no git: exit %d, stderr %q", code, errOut)
	}
}

func TestSyncConfigFile(t *testing.T) {
	w := newTeamWorld(t)
	srv := w.server(t, false)
	token := w.vars["MEMDIR_TEAM_TOKEN"]
	delete(w.vars, "MEMDIR_TEAM_URL")
	delete(w.vars, "MEMDIR_TEAM_TOKEN")
	conf := filepath.Join(t.TempDir(), "config.yaml")
	writeFile(t, conf, "team:\n  url: "+srv.URL+"\n  token: "+token+"\n  repo: github.com/acme/widgets\n")
	w.vars["MEMDIR_CONFIG"] = conf
	writeFile(t, filepath.Join(w.teamDir(), "a.md"), "A")
	if out := w.ok(t, "sync", "push"); !strings.Contains(out, "Pushed 1 entry to acme/widgets") {
		t.Errorf("push configured by file:\n%s", out)
	}
	// The environment wins over the file, a flag over both.
	w.vars["MEMDIR_TEAM_URL"] = (&teamWorld{vars: map[string]string{}}).server(t, false).URL // knows no token of ours
	if _, errOut, code := w.run(t, "sync", "status"); code == 0 || !strings.Contains(errOut, "401") {
		t.Errorf("MEMDIR_TEAM_URL did not override the file: %s", errOut)
	}
	w.ok(t, "sync", "status", "--url", srv.URL)
}

func TestSyncWatch(t *testing.T) {
	w := newTeamWorld(t)
	srv := w.server(t, false)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out, errb := &lockedBuffer{}, &lockedBuffer{}
	done := make(chan int, 1)
	os.MkdirAll(w.teamDir(), 0o700)
	go func() { done <- Main(ctx, []string{"sync", "watch", "--json", "--debounce", "20ms"}, w.env(out, errb)) }()
	waitFor(t, out, `"event":"pull"`)
	writeFile(t, filepath.Join(w.teamDir(), "note.md"), "watched")
	waitFor(t, out, `"pushed":["note.md"]`)
	cancel()
	if code := <-done; code != 0 {
		t.Errorf("watch exit %d; stderr %s", code, errb)
	}
	d, err := srv.Store.Get(context.Background(), "acme/widgets", nil)
	if err != nil || d.Content.Entries["note.md"] != "watched" {
		t.Errorf("server after watch: %v %v", d, err)
	}
}

// waitFor waits until buf contains s. The deadline only guards against a
// hung test.
func waitFor(t *testing.T, buf *lockedBuffer, s string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(buf.String(), s) {
		if time.Now().After(deadline) {
			t.Fatalf("no %q in output within 30 s:\n%s", s, buf.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestSyncPushFailureDoesNotClaimNothingToPush checks that a push refused
// before it did anything reports only the error.
func TestSyncPushFailureDoesNotClaimNothingToPush(t *testing.T) {
	w := newMemWorld(t)
	w.ok(t, "save", "--team", "--name", "oncall", "--type", "reference", "--description", "pager rota", "--body", "x")
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		rw.Header().Set("Content-Type", "application/json")
		rw.WriteHeader(http.StatusUnauthorized)
		rw.Write([]byte(`{"error":{"type":"authentication_error","message":"missing, unknown or revoked team memory token"}}`))
	}))
	defer srv.Close()
	out, errOut, code := w.run(t, "sync", "push", "--url", srv.URL, "--token", "mdt_bad", "--repo", "acme/app")
	if code == 0 || strings.Contains(out, "nothing to push") || !strings.Contains(errOut, "401") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

// TestSyncConflictResolveUndo walks a conflict through the CLI: push
// reports it (exit 5), status, --json and doctor list it, resolve --ours,
// --theirs and --edit finish it, and undo reopens it.
func TestSyncConflictResolveUndo(t *testing.T) {
	alice := newTeamWorld(t)
	srv := alice.server(t, false)
	bob := newTeamWorld(t)
	bob.vars["MEMDIR_TEAM_URL"] = srv.URL
	bob.vars["MEMDIR_TEAM_TOKEN"] = srv.Token(t, "acme/widgets", false)
	build := filepath.Join(alice.teamDir(), "build.md")
	writeFile(t, filepath.Join(alice.teamDir(), "MEMORY.md"), "- [Build](build.md) — how to build\n")
	writeFile(t, build, "---\nname: build\n---\nmake all\n")
	alice.ok(t, "sync", "push")
	bob.ok(t, "sync", "pull")
	writeFile(t, filepath.Join(bob.teamDir(), "build.md"), "---\nname: build\n---\nmake -j8 all\n")
	bob.ok(t, "sync", "push")

	mine := "---\nname: build\n---\nmake all && make test\n"
	writeFile(t, build, mine)
	out, errOut, code := alice.run(t, "sync", "push")
	if code != cli.ExitExists {
		t.Fatalf("conflicting push: exit %d, want %d\n%s%s", code, cli.ExitExists, out, errOut)
	}
	for _, want := range []string{"CONFLICT build.md: you and a teammate changed the same lines.", "server's version: " + build, "memdir sync resolve build.md --ours|--theirs|--edit"} {
		if !strings.Contains(out, want) {
			t.Errorf("push output lacks %q:\n%s", want, out)
		}
	}
	theirs := "---\nname: build\n---\nmake -j8 all\n"
	if got := memdirtest.ReadFile(t, build); got != theirs {
		t.Errorf("team/build.md = %q, want the server's", got)
	}
	var st team.Status
	if err := json.Unmarshal([]byte(alice.ok(t, "sync", "status", "--json")), &st); err != nil {
		t.Fatal(err)
	}
	if len(st.Conflicts) != 1 || st.Conflicts[0].Key != "build.md" {
		t.Fatalf("status --json conflicts = %+v", st.Conflicts)
	}
	copyPath := st.Conflicts[0].LocalCopy
	if got := memdirtest.ReadFile(t, copyPath); got != mine {
		t.Errorf("saved copy = %q, want alice's version", got)
	}
	if out := alice.ok(t, "sync", "status"); !strings.Contains(out, "Unresolved conflicts:\n  CONFLICT build.md") {
		t.Errorf("status output:\n%s", out)
	}
	out, _, code = alice.run(t, "doctor")
	if code != cli.ExitProblems || !strings.Contains(out, "sync-conflict") || !strings.Contains(out, "team/build.md") {
		t.Errorf("doctor: exit %d\n%s", code, out)
	}

	// --ours, then undo: the conflict is back.
	alice.ok(t, "sync", "resolve", "build.md", "--ours")
	if got := memdirtest.ReadFile(t, build); got != mine {
		t.Errorf("after --ours team/build.md = %q", got)
	}
	if out := alice.ok(t, "sync", "status"); strings.Contains(out, "CONFLICT") {
		t.Errorf("status after resolve still lists a conflict:\n%s", out)
	}
	alice.ok(t, "undo")
	if got := memdirtest.ReadFile(t, build); got != theirs {
		t.Errorf("after undo team/build.md = %q", got)
	}
	if out := alice.ok(t, "sync", "status"); !strings.Contains(out, "CONFLICT build.md") {
		t.Errorf("undo did not reopen the conflict:\n%s", out)
	}

	// --theirs removes the copy; undo brings it back.
	alice.ok(t, "sync", "resolve", "team/build.md", "--theirs")
	if _, err := os.Stat(copyPath); !os.IsNotExist(err) {
		t.Errorf("--theirs left the copy: %v", err)
	}
	if _, _, code := alice.run(t, "sync", "resolve", "build.md", "--theirs"); code != cli.ExitNotFound {
		t.Errorf("resolve without a conflict: exit %d, want %d", code, cli.ExitNotFound)
	}
	alice.ok(t, "undo")
	if got := memdirtest.ReadFile(t, copyPath); got != mine {
		t.Errorf("undo of --theirs: copy = %q", got)
	}

	// --edit: markers left are refused and change nothing; a clean text
	// is taken, and push shares it.
	script, seen := fakeEditor(t, writeWith("left as is\n"+team.MarkerSplit+"\n"))
	alice.vars["EDITOR"] = script
	if _, errOut, code := alice.run(t, "sync", "resolve", "build.md", "--edit"); code != cli.ExitInvalid || !strings.Contains(errOut, "conflict markers") {
		t.Errorf("edit leaving markers: exit %d, %s", code, errOut)
	}
	if got := memdirtest.ReadFile(t, seen); !strings.Contains(got, team.MarkerOurs+"\nmake all && make test\n"+team.MarkerBase+"\nmake all\n"+team.MarkerSplit+"\nmake -j8 all\n"+team.MarkerTheirs) {
		t.Errorf("the editor was given:\n%s", got)
	}
	if got := memdirtest.ReadFile(t, build); got != theirs {
		t.Errorf("a refused edit changed team/build.md: %q", got)
	}
	merged := "---\nname: build\n---\nmake -j8 all && make test\n"
	script, _ = fakeEditor(t, writeWith(merged))
	alice.vars["EDITOR"] = script
	alice.ok(t, "sync", "resolve", "build.md", "--edit")
	if out := alice.ok(t, "sync", "push"); !strings.Contains(out, "pushed   build.md") {
		t.Errorf("push after resolve:\n%s", out)
	}
	d, err := srv.Store.Get(context.Background(), "acme/widgets", nil)
	if err != nil || d.Content.Entries["build.md"] != merged {
		t.Errorf("server build.md = %q, %v", d.Content.Entries["build.md"], err)
	}
	if out, _, code := alice.run(t, "doctor"); strings.Contains(out, "sync-conflict") {
		t.Errorf("doctor after resolve: exit %d\n%s", code, out)
	}
}

// TestSyncPullBadTokenPrintsNothing: a refused pull reports its error on
// stderr only; stdout must not claim a pull happened.
func TestSyncPullBadTokenPrintsNothing(t *testing.T) {
	w := newTeamWorld(t)
	w.server(t, false)
	w.vars["MEMDIR_TEAM_TOKEN"] = "mdt_not_a_real_token"
	out, errOut, code := w.run(t, "sync", "pull")
	if code != cli.ExitFailure || out != "" || !strings.Contains(errOut, "401") {
		t.Errorf("pull with a bad token: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

// TestSyncPullSkipsBadKeys: keys planted in the store that no client can
// write are skipped and listed (exit 6); every other key is written.
func TestSyncPullSkipsBadKeys(t *testing.T) {
	w := newTeamWorld(t)
	srv := w.server(t, false)
	long := strings.Repeat("x", 256) + ".md"
	if _, err := srv.Store.Put(context.Background(), "acme/widgets", &team.Update{Entries: map[string]string{"a.md": "A", long: "L", "sub": "file", "sub/x.md": "X", "z.md": "Z"}}); err != nil {
		t.Skipf("the store refuses the planted keys itself: %v", err)
	}
	out, _, code := w.run(t, "sync", "pull")
	if code != cli.ExitProblems {
		t.Errorf("pull with unwritable keys: exit %d, want %d\n%s", code, cli.ExitProblems, out)
	}
	for _, want := range []string{"3 written", "skipped  sub/x.md: cannot be written here:", "skipped  " + long + ": unsafe name: a path segment is 259 bytes"} {
		if !strings.Contains(out, want) {
			t.Errorf("pull output lacks %q:\n%s", want, out)
		}
	}
	if got := memdirtest.ReadFile(t, filepath.Join(w.teamDir(), "z.md")); got != "Z" {
		t.Errorf("z.md = %q", got)
	}
}

// TestSyncPullRecordsProvenanceOutsideTheFile: a pulled memory's provenance
// (by sync, with the server and the entry's checksum) is recorded, but
// outside the file, which stays the server's byte for byte: a push right
// after the pull uploads nothing and a second pull writes nothing. An edit
// of the file lets the record lapse.
func TestSyncPullRecordsProvenanceOutsideTheFile(t *testing.T) {
	alice := newTeamWorld(t)
	srv := alice.server(t, false)
	build := "---\nname: build\ndescription: how to build\ntype: project\n---\n\nmake all\n"
	writeFile(t, filepath.Join(alice.teamDir(), "build.md"), build)
	writeFile(t, filepath.Join(alice.teamDir(), "MEMORY.md"), "- [build](build.md) — how to build\n")
	alice.ok(t, "sync", "push")

	bob := newTeamWorld(t)
	bob.vars["MEMDIR_TEAM_URL"] = srv.URL
	bob.vars["MEMDIR_TEAM_TOKEN"] = srv.Token(t, "acme/widgets", false)
	var pr team.PullResult
	if err := json.Unmarshal([]byte(bob.ok(t, "sync", "pull", "--json")), &pr); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"MEMORY.md", "build.md"}, pr.Written); diff != "" {
		t.Fatalf("pull wrote (-want +got):\n%s", diff)
	}
	file := filepath.Join(bob.teamDir(), "build.md")
	if got := memdirtest.ReadFile(t, file); got != build {
		t.Fatalf("pulled build.md = %q, want the server's bytes %q", got, build)
	}
	var shown struct {
		Provenance *memdir.Provenance `json:"provenance"`
	}
	if err := json.Unmarshal([]byte(bob.ok(t, "show", "team/build.md", "--json")), &shown); err != nil {
		t.Fatal(err)
	}
	p := shown.Provenance
	if p == nil || p.By != memdir.BySync || p.Server != srv.URL+"/acme/widgets" || p.Version != team.EntryChecksum(build) || p.At == "" {
		t.Fatalf("show --json provenance = %+v, want by sync from %s/acme/widgets, version %s", p, srv.URL, team.EntryChecksum(build))
	}

	// No push-back: nothing to upload, and a pull again changes nothing.
	var push team.PushResult
	if err := json.Unmarshal([]byte(bob.ok(t, "sync", "push", "--json")), &push); err != nil {
		t.Fatal(err)
	}
	if len(push.Pushed) != 0 || push.Requests != 0 {
		t.Errorf("push after pull = %+v, want nothing uploaded", push)
	}
	pr = team.PullResult{}
	if err := json.Unmarshal([]byte(bob.ok(t, "sync", "pull", "--json")), &pr); err != nil {
		t.Fatal(err)
	}
	if len(pr.Written)+len(pr.Merged) != 0 || memdirtest.ReadFile(t, file) != build {
		t.Errorf("second pull wrote %v, merged %v; want nothing", pr.Written, pr.Merged)
	}

	// Bob edits the file: the sync record no longer describes it.
	writeFile(t, file, strings.Replace(build, "make all", "make all -j8", 1))
	shown.Provenance = nil
	if err := json.Unmarshal([]byte(bob.ok(t, "show", "team/build.md", "--json")), &shown); err != nil {
		t.Fatal(err)
	}
	if shown.Provenance != nil {
		t.Errorf("after an edit the provenance is still %+v, want none known", shown.Provenance)
	}
}
