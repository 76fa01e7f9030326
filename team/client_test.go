package team_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/memdir/memdir/memdirtest"
	"github.com/memdir/memdir/team"
)

const repo = "acme/widgets"

// hostileRepos is a Repos fake serving whatever data a test gives it, as a
// hostile or broken server would.
type hostileRepos struct {
	data *team.Data
}

func (h *hostileRepos) Get(_ context.Context, _ string, opts *team.GetOptions) (*team.Data, error) {
	if h.data == nil {
		return nil, team.ErrNotFound
	}
	if opts != nil && opts.IfNoneMatch == h.data.Checksum {
		return nil, team.ErrNotModified
	}
	return h.data, nil
}

func (h *hostileRepos) Put(context.Context, string, *team.Update) (*team.Data, error) {
	return nil, errors.New("read-only fake")
}

func (h *hostileRepos) History(context.Context, string, *team.HistoryOptions) ([]team.VersionInfo, error) {
	return nil, team.ErrNotFound
}

// readTree returns every regular file under dir by slash path.
func readTree(tb testing.TB, dir string) map[string]string {
	tb.Helper()
	out := map[string]string{}
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return nil
		}
		b, _ := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		out[filepath.ToSlash(rel)] = string(b)
		return nil
	})
	return out
}

// newClient returns a client of dir whose sync state lives beside dir (so
// that a second client of the same dir shares it), never in the real
// state directory.
func newClient(tb testing.TB, r team.Repos, dir string, opts *team.ClientOptions) *team.Client {
	tb.Helper()
	o := team.ClientOptions{}
	if opts != nil {
		o = *opts
	}
	if o.StateDir == "" {
		o.StateDir = filepath.Join(filepath.Dir(dir), "."+filepath.Base(dir)+"-sync-state")
	}
	c, err := team.NewClient(r, repo, dir, &o)
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

func TestPullSecurity(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "team")
	outside := filepath.Join(base, "outside")
	os.MkdirAll(outside, 0o700)
	os.MkdirAll(dir, 0o700)
	if err := os.Symlink(outside, filepath.Join(dir, "out")); err != nil {
		t.Skip(err)
	}
	os.Symlink(filepath.Join(base, "nowhere"), filepath.Join(dir, "dangling"))
	entries := map[string]string{
		"ok.md":           "fine",
		"sub/ok.md":       "fine too",
		"../escape.md":    "x",
		"/etc/evil.md":    "x",
		`..\win.md`:       "x",
		"%2e%2e/url.md":   "x",
		"．．／nfkc.md":      "x",
		"nul\x00.md":      "x",
		"out/through.md":  "x",
		"dangling/new.md": "x",
		"dangling":        "x",
		"big.md":          strings.Repeat("b", team.MaxEntryBytes+1),
	}
	r := &hostileRepos{data: &team.Data{Repo: repo, Version: 1, Checksum: "sha256:x", Content: team.Content{Entries: entries}}}
	var hooked []string
	c := newClient(t, r, dir, &team.ClientOptions{BeforeWrite: func(p string) error { hooked = append(hooked, p); return nil }})
	res, err := c.Pull(context.Background(), false)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"ok.md", "sub/ok.md"}, res.Written); diff != "" {
		t.Errorf("written (-want +got):\n%s", diff)
	}
	var skipped []string
	for _, s := range res.Skipped {
		skipped = append(skipped, s.Key+" "+s.Reason)
	}
	want := []string{
		"%2e%2e/url.md invalid_key", "../escape.md invalid_key", `..\win.md invalid_key`, "/etc/evil.md invalid_key",
		"big.md too_large", "dangling invalid_key", "dangling/new.md invalid_key", "nul\x00.md invalid_key",
		"out/through.md invalid_key", "．．／nfkc.md invalid_key",
	}
	if diff := cmp.Diff(want, skipped); diff != "" {
		t.Errorf("skipped (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{}, readTree(t, outside)); diff != "" {
		t.Errorf("files written outside the team directory (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{"ok.md": "fine", "sub/ok.md": "fine too"}, readTree(t, dir)); diff != "" {
		t.Errorf("team directory (-want +got):\n%s", diff)
	}
	if _, err := os.Stat(filepath.Join(base, "escape.md")); err == nil {
		t.Errorf("../escape.md was written")
	}
	wantHooked := []string{filepath.Join(dir, "ok.md"), filepath.Join(dir, "sub", "ok.md")}
	if diff := cmp.Diff(wantHooked, hooked); diff != "" {
		t.Errorf("BeforeWrite calls (-want +got):\n%s", diff)
	}
}

// TestPullKeepsMtimesAndSavesUnsyncedEdits: a pull into a directory this
// client never synced (no bases) puts the server's version of a differing
// key in place and keeps the local one as a conflict, never losing it.
func TestPullKeepsMtimesAndSavesUnsyncedEdits(t *testing.T) {
	dir := t.TempDir()
	memdirtest.WriteFiles(t, dir, map[string]string{"same.md": "same", "changed.md": "local edit", "local-only.md": "mine"})
	old := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	os.Chtimes(filepath.Join(dir, "same.md"), old, old)
	r := &hostileRepos{data: &team.Data{Repo: repo, Version: 3, Checksum: "sha256:v3", Content: team.Content{Entries: map[string]string{
		"same.md": "same", "changed.md": "server", "new/deep.md": "new",
	}}}}
	var hooked []string
	c := newClient(t, r, dir, &team.ClientOptions{BeforeWrite: func(p string) error { hooked = append(hooked, filepath.Base(p)); return nil }})
	res, err := c.Pull(context.Background(), true)
	if err != nil {
		t.Fatal(err)
	}
	want := &team.PullResult{Version: 3, Checksum: "sha256:v3", Written: []string{"changed.md", "new/deep.md"}, Merged: []string{}, Kept: []string{}, Unchanged: 1, Skipped: []team.Skip{},
		Conflicts: []team.Conflict{{Key: "changed.md", Path: filepath.Join(dir, "changed.md"), LocalCopy: filepath.Join(c.ConflictDir(), "changed.md"), NoBase: true}}}
	if diff := cmp.Diff(want, res, cmpopts.IgnoreFields(team.Conflict{}, "At")); diff != "" {
		t.Errorf("Pull (-want +got):\n%s", diff)
	}
	if b, err := os.ReadFile(filepath.Join(c.ConflictDir(), "changed.md")); string(b) != "local edit" {
		t.Errorf("saved local version = %q, %v", b, err)
	}
	if diff := cmp.Diff(map[string]string{"same.md": "same", "changed.md": "server", "local-only.md": "mine", "new/deep.md": "new"}, readTree(t, dir)); diff != "" {
		t.Errorf("team directory (-want +got):\n%s", diff)
	}
	fi, _ := os.Stat(filepath.Join(dir, "same.md"))
	if !fi.ModTime().Equal(old) {
		t.Errorf("identical file rewritten: mtime %v", fi.ModTime())
	}
	for _, p := range []string{"changed.md", "new/deep.md", "new"} {
		fi, _ := os.Stat(filepath.Join(dir, p))
		if want := map[bool]os.FileMode{false: 0o600, true: 0o700 | os.ModeDir}[fi.IsDir()]; fi.Mode() != want {
			t.Errorf("%s: mode %v, want %v", p, fi.Mode(), want)
		}
	}
	if diff := cmp.Diff([]string{"changed.md", "deep.md"}, hooked); diff != "" {
		t.Errorf("BeforeWrite calls (-want +got):\n%s", diff)
	}
	res, err = c.Pull(context.Background(), true)
	if err != nil || !res.NotModified {
		t.Errorf("second Pull with the ETag = %+v, %v; want NotModified", res, err)
	}
}

func TestPullBeforeWriteError(t *testing.T) {
	dir := t.TempDir()
	r := &hostileRepos{data: &team.Data{Repo: repo, Version: 1, Checksum: "sha256:x", Content: team.Content{Entries: map[string]string{"a.md": "A", "b.md": "B"}}}}
	stop := errors.New("journal full")
	c := newClient(t, r, dir, &team.ClientOptions{BeforeWrite: func(p string) error {
		if filepath.Base(p) == "b.md" {
			return stop
		}
		return nil
	}})
	res, err := c.Pull(context.Background(), false)
	if !errors.Is(err, stop) {
		t.Fatalf("Pull err = %v, want the hook's error", err)
	}
	if diff := cmp.Diff([]string{"a.md"}, res.Written); diff != "" {
		t.Errorf("written before the error (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{"a.md": "A"}, readTree(t, dir)); diff != "" {
		t.Errorf("team directory (-want +got):\n%s", diff)
	}
}

// TestPullAfterWrite: the hook sees every key a pull wrote, with the
// content as written; an unchanged key is not reported, and the hook's
// error stops the pull after that file.
func TestPullAfterWrite(t *testing.T) {
	dir := t.TempDir()
	memdirtest.WriteFiles(t, dir, map[string]string{"same.md": "same"})
	r := &hostileRepos{data: &team.Data{Repo: repo, Version: 1, Checksum: "sha256:x", Content: team.Content{Entries: map[string]string{"a.md": "A", "b.md": "B", "same.md": "same"}}}}
	seen := map[string]string{}
	c := newClient(t, r, dir, &team.ClientOptions{AfterWrite: func(p, content string) error {
		seen[filepath.Base(p)] = content
		return nil
	}})
	if _, err := c.Pull(context.Background(), false); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string{"a.md": "A", "b.md": "B"}, seen); diff != "" {
		t.Errorf("AfterWrite calls (-want +got):\n%s", diff)
	}

	dir2 := t.TempDir()
	stop := errors.New("no room for the record")
	c2 := newClient(t, r, dir2, &team.ClientOptions{AfterWrite: func(p, _ string) error {
		if filepath.Base(p) == "a.md" {
			return stop
		}
		return nil
	}})
	if _, err := c2.Pull(context.Background(), false); !errors.Is(err, stop) {
		t.Fatalf("Pull err = %v, want the hook's error", err)
	}
	if diff := cmp.Diff(map[string]string{"a.md": "A"}, readTree(t, dir2)); diff != "" {
		t.Errorf("team directory after the hook failed (-want +got):\n%s", diff)
	}
}

func TestPullEmptyServer(t *testing.T) {
	c := newClient(t, &hostileRepos{}, t.TempDir(), nil)
	res, err := c.Pull(context.Background(), true)
	if err != nil || !res.Empty {
		t.Errorf("Pull from an empty server = %+v, %v; want Empty", res, err)
	}
}

// httpEnv is a client and server pair on loopback over SQLite.
type httpEnv struct {
	srv *memdirtest.TeamServer
	dir string
}

func newHTTPEnv(t *testing.T, opts *team.HandlerOptions) *httpEnv {
	t.Helper()
	return &httpEnv{srv: memdirtest.NewTeamServer(t, newSQLite(t), opts), dir: t.TempDir()}
}

func (e *httpEnv) client(t *testing.T, dir string, readOnly bool) *team.Client {
	t.Helper()
	return newClient(t, e.srv.Remote(t, repo, readOnly, nil), dir, nil)
}

func (e *httpEnv) server(t *testing.T) map[string]string {
	t.Helper()
	d, err := e.srv.Store.Get(context.Background(), repo, nil)
	if errors.Is(err, team.ErrNotFound) {
		return map[string]string{}
	}
	if err != nil {
		t.Fatal(err)
	}
	return d.Content.Entries
}

func TestPushSkipsAndDelta(t *testing.T) {
	e := newHTTPEnv(t, nil)
	dir := e.dir
	secret := fakeGitHubPAT()
	memdirtest.WriteFiles(t, dir, map[string]string{
		"MEMORY.md":             "- [a](a.md)\n",
		"a.md":                  "A",
		"sub/b.md":              "B",
		"leak.md":               "my token is " + secret,
		"huge.md":               strings.Repeat("h", team.MaxEntryBytes+1),
		"bin.md":                "\x00\x01",
		".a.md.tmp-123":         "half a write",
		"sub/.b.md.tmp-9":       "half",
		"exactly-the-limit.md":  strings.Repeat("e", team.MaxEntryBytes),
		"non-utf8.md":           "\xff\xfe",
		`back\slash.md`:         "unix allows it",
		"sub/deeper/z.md":       "Z",
		"sub/deeper/white s.md": "W",
	})
	if err := os.Symlink(filepath.Join(dir, "a.md"), filepath.Join(dir, "link.md")); err != nil {
		t.Skip(err)
	}
	c := e.client(t, dir, false)
	res, err := c.Push(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	wantPushed := []string{"MEMORY.md", "a.md", "exactly-the-limit.md", "sub/b.md", "sub/deeper/white s.md", "sub/deeper/z.md"}
	if diff := cmp.Diff(wantPushed, res.Pushed); diff != "" {
		t.Errorf("pushed (-want +got):\n%s", diff)
	}
	var skipped []string
	for _, s := range res.Skipped {
		skipped = append(skipped, s.Key+" "+s.Reason+" "+s.RuleID+" "+s.Label)
		if strings.Contains(fmt.Sprintf("%+v", s), secret) {
			t.Errorf("skip report holds the secret: %+v", s)
		}
	}
	sort.Strings(skipped)
	wantSkipped := []string{`back\slash.md invalid_key  `, "bin.md not_text  ", "huge.md too_large  ", "leak.md secret github-pat GitHub PAT", "link.md not_regular  ", "non-utf8.md not_text  "}
	if diff := cmp.Diff(wantSkipped, skipped); diff != "" {
		t.Errorf("skipped (-want +got):\n%s", diff)
	}
	if res.Requests < 2 {
		t.Errorf("%d requests for over 250 KB of content, want at least 2 batches", res.Requests)
	}
	server := e.server(t)
	if len(server) != len(wantPushed) || server["sub/deeper/z.md"] != "Z" {
		t.Errorf("server has %d entries: %v", len(server), sortedKeys(server))
	}

	// Nothing changed: no request. One file changed: only it is sent.
	res, err = c.Push(context.Background())
	if err != nil || res.Requests != 0 || len(res.Pushed) != 0 || res.Unchanged != len(wantPushed) {
		t.Errorf("second push = %+v, %v; want no request", res, err)
	}
	memdirtest.WriteFiles(t, dir, map[string]string{"a.md": "A2"})
	os.Remove(filepath.Join(dir, "sub", "b.md")) // deletions never propagate
	res, err = c.Push(context.Background())
	if err != nil || res.Requests != 1 || !cmp.Equal([]string{"a.md"}, res.Pushed) {
		t.Errorf("push after one edit = %+v, %v; want a.md alone", res, err)
	}
	if got := e.server(t); got["a.md"] != "A2" || got["sub/b.md"] != "B" {
		t.Errorf("server after the edit: a.md=%q sub/b.md=%q", got["a.md"], got["sub/b.md"])
	}
}

func sortedKeys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// racingRepos injects a teammate's write before the first n Puts it
// forwards, so each of them meets a 412.
type racingRepos struct {
	team.Repos
	teammate func(i int)
	n        int
	puts     int
}

func (r *racingRepos) Put(ctx context.Context, repo string, u *team.Update) (*team.Data, error) {
	if r.puts < r.n {
		r.teammate(r.puts)
	}
	r.puts++
	return r.Repos.Put(ctx, repo, u)
}

// TestPushConflictResolution: a teammate's push lands between this
// client's probe and its PUT. The 412 makes it refresh; a key both changed
// in separate places is merged, the teammate's new key is brought in, and
// nothing the teammate wrote is overwritten.
func TestPushConflictResolution(t *testing.T) {
	e := newHTTPEnv(t, nil)
	ctx := context.Background()
	e.srv.Store.Put(ctx, repo, &team.Update{Entries: map[string]string{"same.md": "old", "differs.md": "a\nb\nc\n"}})
	remote := e.srv.Remote(t, repo, false, nil)
	r := &racingRepos{Repos: remote, n: 1, teammate: func(int) {
		// A teammate pushes the same content for one key, another edit of
		// a second, and a key of their own.
		if _, err := e.srv.Store.Put(ctx, repo, &team.Update{Entries: map[string]string{"same.md": "new", "differs.md": "a\nb\nC\n", "theirs.md": "T"}}); err != nil {
			t.Fatal(err)
		}
	}}
	c := newClient(t, r, e.dir, nil)
	if _, err := c.Pull(ctx, false); err != nil {
		t.Fatal(err)
	}
	memdirtest.WriteFiles(t, e.dir, map[string]string{"same.md": "new", "differs.md": "A\nb\nc\n", "mine.md": "M"})
	res, err := c.Push(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if res.Retries != 1 {
		t.Errorf("retries = %d, want 1", res.Retries)
	}
	// same.md dropped out of the retried delta: the teammate already sent it.
	if diff := cmp.Diff([]string{"differs.md", "mine.md"}, res.Pushed); diff != "" {
		t.Errorf("pushed (-want +got):\n%s", diff)
	}
	if !cmp.Equal([]string{"differs.md"}, res.Merged) || !cmp.Equal([]string{"theirs.md"}, res.Pulled) || len(res.Conflicts) != 0 {
		t.Errorf("push = %+v; want differs.md merged, theirs.md pulled, no conflict", res)
	}
	want := map[string]string{"same.md": "new", "differs.md": "A\nb\nC\n", "mine.md": "M", "theirs.md": "T"}
	if diff := cmp.Diff(want, e.server(t)); diff != "" {
		t.Errorf("server after the merge (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, readTree(t, e.dir)); diff != "" {
		t.Errorf("team directory after the merge (-want +got):\n%s", diff)
	}
	pr, err := c.Pull(ctx, false)
	if err != nil || len(pr.Written)+len(pr.Merged)+len(pr.Conflicts) != 0 {
		t.Errorf("pull after the push = %+v, %v; want nothing to do", pr, err)
	}
}

func TestPushConflictGivesUp(t *testing.T) {
	e := newHTTPEnv(t, nil)
	ctx := context.Background()
	e.srv.Store.Put(ctx, repo, &team.Update{Entries: map[string]string{"a.md": "v0"}})
	r := &racingRepos{Repos: e.srv.Remote(t, repo, false, nil), n: 100, teammate: func(i int) {
		e.srv.Store.Put(ctx, repo, &team.Update{Entries: map[string]string{"other.md": fmt.Sprint("teammate ", i)}})
	}}
	c := newClient(t, r, e.dir, nil)
	if _, err := c.Pull(ctx, false); err != nil {
		t.Fatal(err)
	}
	memdirtest.WriteFiles(t, e.dir, map[string]string{"a.md": "mine"})
	res, err := c.Push(ctx)
	if !errors.Is(err, team.ErrConflict) || !team.IsPermanent(err) {
		t.Fatalf("Push = %v, want a permanent ErrConflict", err)
	}
	if res.Retries != team.MaxConflictRetries || r.puts != team.MaxConflictRetries+1 {
		t.Errorf("conflicts %d after %d PUTs, want %d after %d", res.Retries, r.puts, team.MaxConflictRetries, team.MaxConflictRetries+1)
	}
}

func TestPushLearnsMaxEntries(t *testing.T) {
	e := newHTTPEnv(t, &team.HandlerOptions{MaxEntries: 3})
	memdirtest.WriteFiles(t, e.dir, map[string]string{"a.md": "a", "b.md": "b", "c.md": "c", "d.md": "d", "e.md": "e"})
	c := e.client(t, e.dir, false)
	_, err := c.Push(context.Background())
	var tm *team.TooManyEntriesError
	if !errors.As(err, &tm) || tm.Max != 3 || tm.Received != 5 {
		t.Fatalf("first push = %v, want a 413 with max 3, received 5", err)
	}
	res, err := c.Push(context.Background())
	if err != nil {
		t.Fatalf("second push: %v", err)
	}
	if diff := cmp.Diff([]string{"a.md", "b.md", "c.md"}, res.Pushed); diff != "" {
		t.Errorf("pushed after learning the limit (-want +got):\n%s", diff)
	}
	var over []string
	for _, s := range res.Skipped {
		if s.Reason == team.SkipOverLimit {
			over = append(over, s.Key)
		}
	}
	if diff := cmp.Diff([]string{"d.md", "e.md"}, over); diff != "" {
		t.Errorf("skipped over the limit (-want +got):\n%s", diff)
	}
}

func TestPushPermanentErrors(t *testing.T) {
	e := newHTTPEnv(t, nil)
	memdirtest.WriteFiles(t, e.dir, map[string]string{"a.md": "a"})
	ro := e.client(t, e.dir, true)
	_, err := ro.Push(context.Background())
	if !errors.Is(err, team.ErrForbidden) || !team.IsPermanent(err) {
		t.Errorf("push with a read-only token = %v, want a permanent ErrForbidden", err)
	}
	bad, _ := team.NewRemote(e.srv.URL, "mdt_wrong", nil)
	_, err = newClient(t, bad, e.dir, nil).Push(context.Background())
	if !errors.Is(err, team.ErrUnauthorized) || !team.IsPermanent(err) {
		t.Errorf("push with a wrong token = %v, want a permanent ErrUnauthorized", err)
	}
	if _, err := team.NewClient(bad, "", e.dir, nil); !errors.Is(err, team.ErrNoRepo) || !team.IsPermanent(err) {
		t.Errorf("NewClient without a repo = %v, want a permanent ErrNoRepo", err)
	}
	if team.IsPermanent(&team.StatusError{StatusCode: 429}) || team.IsPermanent(&team.StatusError{StatusCode: 409}) || team.IsPermanent(&team.StatusError{StatusCode: 503}) {
		t.Errorf("409, 429 or 503 classified as permanent")
	}
}

func TestStatusAndSync(t *testing.T) {
	e := newHTTPEnv(t, nil)
	ctx := context.Background()
	e.srv.Store.Put(ctx, repo, &team.Update{Entries: map[string]string{"both.md": "same", "edited.md": "server", "server.md": "S", "leak.md": "server copy"}})
	memdirtest.WriteFiles(t, e.dir, map[string]string{"both.md": "same", "edited.md": "local", "local.md": "L", "leak.md": fakeGitHubPAT()})
	c := e.client(t, e.dir, false)
	st, err := c.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := &team.Status{
		Repo: repo, TeamDir: e.dir, Version: 1,
		// Never synced here and different: neither side can be said to be
		// newer, so the next sync records a conflict instead of choosing.
		LocalOnly: []string{"local.md"}, Modified: []string{}, ServerChanged: []string{}, BothChanged: []string{"edited.md"},
		ServerOnly: []string{"server.md"}, Conflicts: []team.Conflict{}, InSync: 1,
		Skipped: []team.Skip{{Key: "leak.md", Path: filepath.Join(e.dir, "leak.md"), Reason: team.SkipSecret, RuleID: "github-pat", Label: "GitHub PAT"}},
	}
	if diff := cmp.Diff(want, st, cmpopts.IgnoreFields(team.Status{}, "Checksum")); diff != "" {
		t.Errorf("Status (-want +got):\n%s", diff)
	}
	res, err := c.Sync(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Pull first: edited.md and leak.md get the server's version, the
	// local ones are kept as conflicts; then the push sends local.md only.
	if diff := cmp.Diff([]string{"edited.md", "leak.md", "server.md"}, res.Pull.Written); diff != "" {
		t.Errorf("sync pull wrote (-want +got):\n%s", diff)
	}
	var conflicted []string
	for _, cf := range res.Pull.Conflicts {
		conflicted = append(conflicted, cf.Key)
	}
	if diff := cmp.Diff([]string{"edited.md", "leak.md"}, conflicted); diff != "" {
		t.Errorf("sync pull conflicts (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"local.md"}, res.Push.Pushed); diff != "" {
		t.Errorf("sync pushed (-want +got):\n%s", diff)
	}
	want2 := map[string]string{"both.md": "same", "edited.md": "server", "server.md": "S", "local.md": "L", "leak.md": "server copy"}
	if diff := cmp.Diff(want2, e.server(t)); diff != "" {
		t.Errorf("server after sync (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want2, readTree(t, e.dir)); diff != "" {
		t.Errorf("team directory after sync (-want +got):\n%s", diff)
	}
}

// TestConcurrentClients has 8 clients push overlapping keys at once
// through a real HTTP server. Every acknowledged write must be in the
// history, the final state must be the last acknowledged write of each key,
// and 412s must resolve as specified (refresh, merge or record a conflict,
// retry).
func TestConcurrentClients(t *testing.T) {
	e := newHTTPEnv(t, &team.HandlerOptions{MaxEntries: 100})
	ctx := context.Background()
	const clients = 8
	const rounds = 3
	var wg sync.WaitGroup
	errs := make([]error, clients)
	conflicts := make([]int, clients)
	for i := range clients {
		dir := filepath.Join(t.TempDir(), "team")
		c := e.client(t, dir, false)
		wg.Go(func() {
			for round := range rounds {
				memdirtest.WriteFiles(t, dir, map[string]string{
					"shared/a.md":               fmt.Sprintf("client %d round %d", i, round),
					"shared/b.md":               fmt.Sprintf("client %d", i%2), // identical for half the clients
					fmt.Sprintf("own/%d.md", i): fmt.Sprintf("own %d round %d", i, round),
				})
				// A push may give up after MaxConflictRetries under this
				// much contention; pushing again is what the watcher does.
				var err error
				for range 3 * clients {
					var res *team.PushResult
					res, err = c.Push(ctx)
					if res != nil {
						conflicts[i] += res.Retries
					}
					if !errors.Is(err, team.ErrConflict) {
						break
					}
				}
				if err != nil {
					errs[i] = err
					return
				}
			}
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("client %d: %v", i, err)
		}
	}
	total := 0
	for _, n := range conflicts {
		total += n
	}
	t.Logf("%d conflicts resolved", total)

	// Replay the history: it must reproduce the final state, so no
	// acknowledged write was lost or reordered.
	hist, err := e.srv.Store.History(ctx, repo, &team.HistoryOptions{Limit: team.MaxHistoryLimit})
	if err != nil {
		t.Fatal(err)
	}
	replay := map[string]string{}
	for i := len(hist) - 1; i >= 0; i-- {
		v, err := e.srv.Store.Get(ctx, repo, &team.GetOptions{Version: hist[i].Version})
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range hist[i].Changed {
			replay[k] = v.Content.Entries[k]
		}
	}
	final := e.server(t)
	if diff := cmp.Diff(final, replay); diff != "" {
		t.Errorf("history replay differs from the final state (-final +replay):\n%s", diff)
	}
	for i := range clients {
		if got, want := final[fmt.Sprintf("own/%d.md", i)], fmt.Sprintf("own %d round %d", i, rounds-1); got != want {
			t.Errorf("own/%d.md = %q, want %q (an acknowledged write was lost)", i, got, want)
		}
	}
	if !strings.HasSuffix(final["shared/a.md"], fmt.Sprintf("round %d", rounds-1)) {
		t.Errorf("shared/a.md = %q, want some client's last round", final["shared/a.md"])
	}
	if len(final) != clients+2 {
		t.Errorf("server has %d keys, want %d", len(final), clients+2)
	}
}

// TestPushDoesNotSendStaleCopies checks that after a 412 a client sends the
// keys it changed (local wins) but not its stale copies of keys a teammate
// changed meanwhile, so no acknowledged write is overwritten.
func TestPushDoesNotSendStaleCopies(t *testing.T) {
	e := newHTTPEnv(t, nil)
	ctx := context.Background()
	e.srv.Store.Put(ctx, repo, &team.Update{Entries: map[string]string{"x.md": "v0", "y.md": "v0", "z.md": "v0"}})
	aliceDir, bobDir := filepath.Join(t.TempDir(), "a"), filepath.Join(t.TempDir(), "b")
	alice, bob := e.client(t, aliceDir, false), e.client(t, bobDir, false)
	for _, c := range []*team.Client{alice, bob} {
		if _, err := c.Pull(ctx, false); err != nil {
			t.Fatal(err)
		}
	}
	memdirtest.WriteFiles(t, bobDir, map[string]string{"x.md": "bob", "z.md": "bob"})
	if _, err := bob.Push(ctx); err != nil {
		t.Fatal(err)
	}
	memdirtest.WriteFiles(t, aliceDir, map[string]string{"y.md": "alice", "z.md": "alice"})
	res, err := alice.Push(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// The 412 makes alice refresh: z.md changed on both sides in one
	// line, so it is a conflict (bob's version in place, alice's saved);
	// x.md is bob's; y.md, changed only by alice, goes up.
	if res.Retries != 1 || !cmp.Equal([]string{"y.md"}, res.Pushed) || !cmp.Equal([]string{"x.md", "z.md"}, res.Pulled) ||
		len(res.Conflicts) != 1 || res.Conflicts[0].Key != "z.md" {
		t.Errorf("alice's push = %+v; want one retry, y.md pushed, x.md and z.md pulled, a conflict on z.md", res)
	}
	if diff := cmp.Diff(map[string]string{"x.md": "bob", "y.md": "alice", "z.md": "bob"}, e.server(t)); diff != "" {
		t.Errorf("server (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{"x.md": "bob", "y.md": "alice", "z.md": "bob"}, readTree(t, aliceDir)); diff != "" {
		t.Errorf("alice's team directory (-want +got):\n%s", diff)
	}
	if len(res.Conflicts) == 1 {
		if b, _ := os.ReadFile(res.Conflicts[0].LocalCopy); string(b) != "alice" {
			t.Errorf("alice's saved z.md = %q", b)
		}
	}
	pr, err := alice.Pull(ctx, true)
	if err != nil || len(pr.Written) != 0 {
		t.Errorf("alice's next pull = %+v, %v; want nothing new", pr, err)
	}
}
