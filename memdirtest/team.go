package memdirtest

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/team"
)

// TeamMaxEntries is the entry limit the team conformance suite passes in
// team.Update.MaxEntries. A harness whose Repos cannot pass it through (an
// HTTP client) must configure its server with this limit instead.
const TeamMaxEntries = 6

// TestTeamStore runs the conformance suite for a team.Store: every check of
// TestTeamRepos, plus tokens and Ping. newStore must return a fresh, empty
// store and arrange its cleanup with tb.Cleanup.
func TestTeamStore(t *testing.T, newStore func(tb testing.TB) team.Store) {
	t.Run("Repos", func(t *testing.T) {
		TestTeamRepos(t, func(tb testing.TB) team.Repos { return newStore(tb) })
	})
	t.Run("EntryPages", func(t *testing.T) { testEntryPages(t, newStore(t)) })
	t.Run("Tokens", func(t *testing.T) { testTokens(t, newStore(t)) })
	t.Run("Ping", func(t *testing.T) {
		if err := newStore(t).Ping(context.Background()); err != nil {
			t.Fatalf("Ping: %v", err)
		}
	})
}

// TestTeamRepos runs the conformance suite for a team.Repos: a store, or an
// HTTP client talking to a Handler in front of one. newRepos must return a
// fresh, empty instance and arrange its cleanup with tb.Cleanup.
func TestTeamRepos(t *testing.T, newRepos func(tb testing.TB) team.Repos) {
	tests := []struct {
		name string
		fn   func(t *testing.T, r team.Repos)
	}{
		{"Missing", testTeamMissing},
		{"PutGet", testTeamPutGet},
		{"UpsertKeepsOtherKeys", testTeamUpsert},
		{"IfNoneMatch", testTeamIfNoneMatch},
		{"IfMatch", testTeamIfMatch},
		{"IdenticalContent", testTeamIdentical},
		{"Deletes", testTeamDeletes},
		{"OldVersions", testTeamVersions},
		{"History", testTeamHistory},
		{"TooManyEntries", testTeamTooMany},
		{"InvalidKeys", testTeamInvalidKeys},
		{"KeysClientsCannotWrite", testTeamUnwritableKeys},
		{"BinaryContent", testTeamBinary},
		{"RepoIsolation", testTeamIsolation},
		{"UnicodeAndLarge", testTeamUnicode},
		{"ConcurrentIfMatch", testTeamConcurrentIfMatch},
		{"ConcurrentUpserts", testTeamConcurrentUpserts},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { tt.fn(t, newRepos(t)) })
	}
}

const teamRepo = "acme/widgets"

func put(tb testing.TB, r team.Repos, repo string, u *team.Update) *team.Data {
	tb.Helper()
	if u.MaxEntries == 0 {
		u.MaxEntries = TeamMaxEntries
	}
	d, err := r.Put(context.Background(), repo, u)
	if err != nil {
		tb.Fatalf("Put(%s): %v", repo, err)
	}
	return d
}

func get(tb testing.TB, r team.Repos, repo string, opts *team.GetOptions) *team.Data {
	tb.Helper()
	d, err := r.Get(context.Background(), repo, opts)
	if err != nil {
		tb.Fatalf("Get(%s, %+v): %v", repo, opts, err)
	}
	return d
}

func checksums(entries map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range entries {
		out[k] = team.EntryChecksum(v)
	}
	return out
}

// wantData builds the Data a full read should return for entries.
func wantData(repo string, version int64, entries map[string]string) *team.Data {
	sums := checksums(entries)
	return &team.Data{
		Repo:     repo,
		Version:  version,
		Checksum: team.RepoChecksum(sums),
		Content:  team.Content{Entries: entries, EntryChecksums: sums},
	}
}

// ignoreServerFields ignores what a server fills in from its own
// configuration and clock.
var ignoreServerFields = cmpopts.IgnoreFields(team.Data{}, "OrganizationID", "LastModified")

func wantErr(tb testing.TB, what string, err, target error) {
	tb.Helper()
	if !errors.Is(err, target) {
		tb.Fatalf("%s: err = %v, want %v", what, err, target)
	}
}

func testTeamMissing(t *testing.T, r team.Repos) {
	ctx := context.Background()
	_, err := r.Get(ctx, teamRepo, nil)
	wantErr(t, "Get of a new repository", err, team.ErrNotFound)
	_, err = r.Get(ctx, teamRepo, &team.GetOptions{HashesOnly: true})
	wantErr(t, "Get hashes of a new repository", err, team.ErrNotFound)
	_, err = r.History(ctx, teamRepo, nil)
	wantErr(t, "History of a new repository", err, team.ErrNotFound)
	if !errors.Is(team.ErrNotFound, memdir.ErrNotFound) {
		t.Errorf("team.ErrNotFound does not wrap memdir.ErrNotFound")
	}
}

func testTeamPutGet(t *testing.T, r team.Repos) {
	entries := map[string]string{"MEMORY.md": "- [a](a.md)\n", "sub/b.md": "---\nname: b\n---\nbody\n"}
	d := put(t, r, teamRepo, &team.Update{Entries: entries})
	want := &team.Data{Repo: teamRepo, Version: 1, Checksum: team.RepoChecksum(checksums(entries))}
	if diff := cmp.Diff(want, d, ignoreServerFields, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("Put result (-want +got):\n%s", diff)
	}
	if d.LastModified.IsZero() {
		t.Errorf("Put result has no LastModified")
	}
	got := get(t, r, teamRepo, nil)
	if diff := cmp.Diff(wantData(teamRepo, 1, entries), got, ignoreServerFields); diff != "" {
		t.Errorf("Get (-want +got):\n%s", diff)
	}
	if !got.LastModified.Equal(d.LastModified) {
		t.Errorf("Get LastModified = %v, Put said %v", got.LastModified, d.LastModified)
	}
	hashes := get(t, r, teamRepo, &team.GetOptions{HashesOnly: true})
	want.Content.EntryChecksums = checksums(entries)
	if diff := cmp.Diff(want, hashes, ignoreServerFields); diff != "" {
		t.Errorf("Get hashes (-want +got):\n%s", diff)
	}
}

func testTeamUpsert(t *testing.T, r team.Repos) {
	put(t, r, teamRepo, &team.Update{Entries: map[string]string{"a.md": "A", "b.md": "B"}})
	put(t, r, teamRepo, &team.Update{Entries: map[string]string{"b.md": "B2", "c.md": "C"}})
	got := get(t, r, teamRepo, nil)
	want := wantData(teamRepo, 2, map[string]string{"a.md": "A", "b.md": "B2", "c.md": "C"})
	if diff := cmp.Diff(want, got, ignoreServerFields); diff != "" {
		t.Errorf("Get after two upserts (-want +got):\n%s", diff)
	}
}

func testTeamIfNoneMatch(t *testing.T, r team.Repos) {
	ctx := context.Background()
	d := put(t, r, teamRepo, &team.Update{Entries: map[string]string{"a.md": "A"}})
	_, err := r.Get(ctx, teamRepo, &team.GetOptions{IfNoneMatch: d.Checksum})
	wantErr(t, "Get with the current checksum", err, team.ErrNotModified)
	_, err = r.Get(ctx, teamRepo, &team.GetOptions{IfNoneMatch: d.Checksum, HashesOnly: true})
	wantErr(t, "Get hashes with the current checksum", err, team.ErrNotModified)
	got := get(t, r, teamRepo, &team.GetOptions{IfNoneMatch: "sha256:stale"})
	if got.Checksum != d.Checksum || got.Content.Entries["a.md"] != "A" {
		t.Errorf("Get with a stale checksum = %+v, want the data", got)
	}
}

func testTeamIfMatch(t *testing.T, r team.Repos) {
	ctx := context.Background()
	_, err := r.Put(ctx, teamRepo, &team.Update{Entries: map[string]string{"a.md": "A"}, IfMatch: "sha256:nothing-yet"})
	wantErr(t, "Put with If-Match on a new repository", err, team.ErrConflict)
	if _, err := r.Get(ctx, teamRepo, nil); !errors.Is(err, team.ErrNotFound) {
		t.Fatalf("a rejected first Put left data behind: Get err = %v", err)
	}
	d1 := put(t, r, teamRepo, &team.Update{Entries: map[string]string{"a.md": "A"}})
	d2 := put(t, r, teamRepo, &team.Update{Entries: map[string]string{"a.md": "A2"}, IfMatch: d1.Checksum})
	if d2.Version != 2 {
		t.Errorf("Put with the current checksum: version %d, want 2", d2.Version)
	}
	_, err = r.Put(ctx, teamRepo, &team.Update{Entries: map[string]string{"a.md": "A3", "b.md": "B"}, IfMatch: d1.Checksum})
	wantErr(t, "Put with a stale checksum", err, team.ErrConflict)
	if !errors.Is(err, memdir.ErrExists) {
		t.Errorf("ErrConflict does not wrap memdir.ErrExists: %v", err)
	}
	got := get(t, r, teamRepo, nil)
	if diff := cmp.Diff(wantData(teamRepo, 2, map[string]string{"a.md": "A2"}), got, ignoreServerFields); diff != "" {
		t.Errorf("a conflicting Put changed the data (-want +got):\n%s", diff)
	}
}

func testTeamIdentical(t *testing.T, r team.Repos) {
	d1 := put(t, r, teamRepo, &team.Update{Entries: map[string]string{"a.md": "A"}})
	d2 := put(t, r, teamRepo, &team.Update{Entries: map[string]string{"a.md": "A"}})
	if d2.Version != 2 || d2.Checksum != d1.Checksum {
		t.Errorf("identical Put: version %d checksum %s, want version 2 and the same checksum %s", d2.Version, d2.Checksum, d1.Checksum)
	}
	h, err := r.History(context.Background(), teamRepo, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(h) != 2 || len(h[0].Changed) != 0 {
		t.Errorf("history after an identical Put = %+v, want 2 versions, the newest changing nothing", h)
	}
}

func testTeamDeletes(t *testing.T, r team.Repos) {
	ctx := context.Background()
	put(t, r, teamRepo, &team.Update{Entries: map[string]string{"a.md": "A", "b.md": "B"}})
	d := put(t, r, teamRepo, &team.Update{Deletes: []string{"a.md", "never-existed.md"}})
	if d.Version != 2 {
		t.Errorf("delete Put version = %d, want 2", d.Version)
	}
	if diff := cmp.Diff(wantData(teamRepo, 2, map[string]string{"b.md": "B"}), get(t, r, teamRepo, nil), ignoreServerFields); diff != "" {
		t.Errorf("Get after a delete (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantData(teamRepo, 1, map[string]string{"a.md": "A", "b.md": "B"}), get(t, r, teamRepo, &team.GetOptions{Version: 1}), ignoreServerFields); diff != "" {
		t.Errorf("the version before the delete (-want +got):\n%s", diff)
	}
	put(t, r, teamRepo, &team.Update{Entries: map[string]string{"a.md": "A again"}})
	if diff := cmp.Diff(wantData(teamRepo, 2, map[string]string{"b.md": "B"}), get(t, r, teamRepo, &team.GetOptions{Version: 2}), ignoreServerFields); diff != "" {
		t.Errorf("the version with the tombstone (-want +got):\n%s", diff)
	}
	h, err := r.History(ctx, teamRepo, nil)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"a.md"}, h[1].Deleted); diff != "" {
		t.Errorf("history of the delete (-want +got):\n%s", diff)
	}
	_, err = r.Put(ctx, teamRepo, &team.Update{Entries: map[string]string{"b.md": "x"}, Deletes: []string{"b.md"}})
	wantErr(t, "Put writing and deleting one key", err, team.ErrInvalidKey)
}

func testTeamVersions(t *testing.T, r team.Repos) {
	ctx := context.Background()
	v1 := map[string]string{"a.md": "A1", "b.md": "B1"}
	put(t, r, teamRepo, &team.Update{Entries: v1})
	put(t, r, teamRepo, &team.Update{Entries: map[string]string{"a.md": "A2"}})
	put(t, r, teamRepo, &team.Update{Entries: map[string]string{"c.md": "C3"}})
	for _, tt := range []struct {
		version int64
		entries map[string]string
	}{
		{1, v1},
		{2, map[string]string{"a.md": "A2", "b.md": "B1"}},
		{3, map[string]string{"a.md": "A2", "b.md": "B1", "c.md": "C3"}},
	} {
		got := get(t, r, teamRepo, &team.GetOptions{Version: tt.version})
		if diff := cmp.Diff(wantData(teamRepo, tt.version, tt.entries), got, ignoreServerFields); diff != "" {
			t.Errorf("version %d (-want +got):\n%s", tt.version, diff)
		}
		hashes := get(t, r, teamRepo, &team.GetOptions{Version: tt.version, HashesOnly: true})
		if hashes.Content.Entries != nil || hashes.Checksum != got.Checksum {
			t.Errorf("version %d hashes view = %+v", tt.version, hashes)
		}
		_, err := r.Get(ctx, teamRepo, &team.GetOptions{Version: tt.version, IfNoneMatch: got.Checksum})
		wantErr(t, fmt.Sprintf("version %d with its own checksum", tt.version), err, team.ErrNotModified)
	}
	_, err := r.Get(ctx, teamRepo, &team.GetOptions{Version: 4})
	wantErr(t, "a version that does not exist", err, team.ErrNotFound)
}

func testTeamHistory(t *testing.T, r team.Repos) {
	ctx := context.Background()
	var puts []*team.Data
	counts := []int{2, 2, 3, 4}
	for i, e := range []map[string]string{
		{"a.md": "1", "b.md": "1"},
		{"b.md": "2"},
		{"c.md": "3", "a.md": "1"},
		{"d.md": "4"},
	} {
		d := put(t, r, teamRepo, &team.Update{Entries: e})
		if d.Version != int64(i+1) {
			t.Fatalf("Put %d: version %d", i+1, d.Version)
		}
		puts = append(puts, d)
	}
	info := func(i int, changed ...string) team.VersionInfo {
		return team.VersionInfo{
			Version:    puts[i].Version,
			Checksum:   puts[i].Checksum,
			EntryCount: counts[i],
			Changed:    changed,
		}
	}
	opts := cmp.Options{cmpopts.IgnoreFields(team.VersionInfo{}, "LastModified", "Author"), cmpopts.EquateEmpty()}
	tests := []struct {
		opts *team.HistoryOptions
		want []team.VersionInfo
	}{
		{nil, []team.VersionInfo{info(3, "d.md"), info(2, "c.md"), info(1, "b.md"), info(0, "a.md", "b.md")}},
		{&team.HistoryOptions{Limit: 2}, []team.VersionInfo{info(3, "d.md"), info(2, "c.md")}},
		{&team.HistoryOptions{Before: 3, Limit: 1}, []team.VersionInfo{info(1, "b.md")}},
		{&team.HistoryOptions{Before: 1}, nil},
	}
	for _, tt := range tests {
		got, err := r.History(ctx, teamRepo, tt.opts)
		if err != nil {
			t.Fatalf("History(%+v): %v", tt.opts, err)
		}
		if diff := cmp.Diff(tt.want, got, opts); diff != "" {
			t.Errorf("History(%+v) (-want +got):\n%s", tt.opts, diff)
		}
	}
	got, _ := r.History(ctx, teamRepo, &team.HistoryOptions{Limit: 1})
	if len(got) == 1 && !got[0].LastModified.Equal(puts[3].LastModified) {
		t.Errorf("History LastModified = %v, Put said %v", got[0].LastModified, puts[3].LastModified)
	}
}

func testTeamTooMany(t *testing.T, r team.Repos) {
	ctx := context.Background()
	entries := map[string]string{}
	for i := range TeamMaxEntries - 1 {
		entries[fmt.Sprintf("m%02d.md", i)] = "x"
	}
	d := put(t, r, teamRepo, &team.Update{Entries: entries})
	_, err := r.Put(ctx, teamRepo, &team.Update{Entries: map[string]string{"new1.md": "y", "new2.md": "y"}, MaxEntries: TeamMaxEntries})
	var tm *team.TooManyEntriesError
	if !errors.As(err, &tm) {
		t.Fatalf("Put over the limit: err = %v, want a *TooManyEntriesError", err)
	}
	if diff := cmp.Diff(&team.TooManyEntriesError{Max: TeamMaxEntries, Received: TeamMaxEntries + 1}, tm); diff != "" {
		t.Errorf("TooManyEntriesError (-want +got):\n%s", diff)
	}
	wantErr(t, "Put over the limit", err, team.ErrTooManyEntries)
	if got := get(t, r, teamRepo, &team.GetOptions{HashesOnly: true}); got.Checksum != d.Checksum {
		t.Errorf("a rejected Put changed the checksum")
	}
	put(t, r, teamRepo, &team.Update{Entries: map[string]string{"new1.md": "y", "m00.md": "changed"}, MaxEntries: TeamMaxEntries})
}

func testTeamInvalidKeys(t *testing.T, r team.Repos) {
	ctx := context.Background()
	for _, key := range []string{"../escape.md", "a/../../b.md", `sub\x.md`, "/etc/passwd", "", "a//b.md", "./a.md", "a/", "%2e%2e/x.md", "．．／x.md", "a\x00b.md", "a\nb.md"} {
		_, err := r.Put(ctx, teamRepo, &team.Update{Entries: map[string]string{key: "x", "fine.md": "y"}, MaxEntries: TeamMaxEntries})
		if !errors.Is(err, team.ErrInvalidKey) {
			t.Errorf("Put with key %q: err = %v, want ErrInvalidKey", key, err)
		}
		_, err = r.Put(ctx, teamRepo, &team.Update{Deletes: []string{key}, MaxEntries: TeamMaxEntries})
		if !errors.Is(err, team.ErrInvalidKey) {
			t.Errorf("Put deleting key %q: err = %v, want ErrInvalidKey", key, err)
		}
	}
	if _, err := r.Get(ctx, teamRepo, nil); !errors.Is(err, team.ErrNotFound) {
		t.Errorf("rejected Puts left data behind: Get err = %v", err)
	}
}

// testTeamUnwritableKeys checks the keys no client could write as files: a
// path segment over 255 bytes, and a key that is a directory of another
// key, in one update or against what is stored.
func testTeamUnwritableKeys(t *testing.T, r team.Repos) {
	ctx := context.Background()
	long := strings.Repeat("n", team.MaxSegmentBytes+1) + ".md"
	put(t, r, teamRepo, &team.Update{Entries: map[string]string{"file": "f", "dir/x.md": "x"}})
	before := get(t, r, teamRepo, &team.GetOptions{HashesOnly: true})
	for _, entries := range []map[string]string{
		{long: "x"},
		{"sub/" + long: "x"},
		{"sub": "s", "sub/x.md": "x"},
		{"file/x.md": "x"},
		{"dir": "x"},
	} {
		_, err := r.Put(ctx, teamRepo, &team.Update{Entries: entries, MaxEntries: TeamMaxEntries})
		if !errors.Is(err, team.ErrInvalidKey) {
			t.Errorf("Put of keys %v: err = %v, want ErrInvalidKey", keysOf(entries), err)
		}
		if err != nil && strings.Contains(err.Error(), long) {
			t.Errorf("the error repeats the whole key: %v", err)
		}
	}
	if got := get(t, r, teamRepo, &team.GetOptions{HashesOnly: true}); got.Checksum != before.Checksum || got.Version != before.Version {
		t.Errorf("refused Puts changed the repository: version %d, want %d", got.Version, before.Version)
	}
	// Deleting the file in the same update makes room for the directory.
	put(t, r, teamRepo, &team.Update{Entries: map[string]string{"file/x.md": "x"}, Deletes: []string{"file"}})
}

func keysOf(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, team.KeyRef(k))
	}
	return out
}

func testTeamBinary(t *testing.T, r team.Repos) {
	_, err := r.Put(context.Background(), teamRepo, &team.Update{Entries: map[string]string{"bin.md": "a\x00b"}, MaxEntries: TeamMaxEntries})
	wantErr(t, "Put with a NUL byte in content", err, memdir.ErrInvalid)
	if strings.Contains(fmt.Sprint(err), "a\x00b") {
		t.Errorf("error echoes the content: %v", err)
	}
}

func testTeamIsolation(t *testing.T, r team.Repos) {
	put(t, r, "acme/one", &team.Update{Entries: map[string]string{"a.md": "one"}})
	put(t, r, "acme/two", &team.Update{Entries: map[string]string{"b.md": "two"}})
	put(t, r, "acme/two", &team.Update{Entries: map[string]string{"a.md": "two"}})
	if diff := cmp.Diff(wantData("acme/one", 1, map[string]string{"a.md": "one"}), get(t, r, "acme/one", nil), ignoreServerFields); diff != "" {
		t.Errorf("acme/one (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantData("acme/two", 2, map[string]string{"a.md": "two", "b.md": "two"}), get(t, r, "acme/two", nil), ignoreServerFields); diff != "" {
		t.Errorf("acme/two (-want +got):\n%s", diff)
	}
}

func testTeamUnicode(t *testing.T, r team.Repos) {
	big := strings.Repeat("ünïcödé 🎉 line\n", 100_000/20)
	entries := map[string]string{
		"notes/日本語.md":      "本文 — “quotes” <b>&amp;</b>\r\n",
		"deep/a/b/c/d.md":   big,
		"spaces in name.md": "",
	}
	put(t, r, teamRepo, &team.Update{Entries: entries})
	if diff := cmp.Diff(wantData(teamRepo, 1, entries), get(t, r, teamRepo, nil), ignoreServerFields); diff != "" {
		t.Errorf("Get (-want +got):\n%s", diff)
	}
}

// testTeamConcurrentIfMatch checks that the If-Match comparison happens under
// the write lock: of writers racing from one checksum, exactly one wins.
func testTeamConcurrentIfMatch(t *testing.T, r team.Repos) {
	ctx := context.Background()
	base := put(t, r, teamRepo, &team.Update{Entries: map[string]string{"a.md": "base"}})
	const n = 8
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			_, errs[i] = r.Put(ctx, teamRepo, &team.Update{
				Entries: map[string]string{"a.md": fmt.Sprintf("writer %d", i)}, IfMatch: base.Checksum, MaxEntries: TeamMaxEntries,
			})
		})
	}
	wg.Wait()
	winner := -1
	for i, err := range errs {
		switch {
		case err == nil && winner >= 0:
			t.Errorf("writers %d and %d both succeeded from the same checksum", winner, i)
		case err == nil:
			winner = i
		case !errors.Is(err, team.ErrConflict):
			t.Errorf("writer %d: err = %v, want nil or ErrConflict", i, err)
		}
	}
	if winner < 0 {
		t.Fatalf("no writer succeeded")
	}
	got := get(t, r, teamRepo, nil)
	if want := fmt.Sprintf("writer %d", winner); got.Version != 2 || got.Content.Entries["a.md"] != want {
		t.Errorf("after the race: version %d, a.md = %q; want version 2, %q", got.Version, got.Content.Entries["a.md"], want)
	}
}

// testTeamConcurrentUpserts checks that unconditional writers to different
// keys lose nothing, and that every write got its own version.
func testTeamConcurrentUpserts(t *testing.T, r team.Repos) {
	ctx := context.Background()
	const n = TeamMaxEntries
	versions := make([]int64, n)
	var wg sync.WaitGroup
	var failed error
	var mu sync.Mutex
	for i := range n {
		wg.Go(func() {
			d, err := r.Put(ctx, teamRepo, &team.Update{Entries: map[string]string{fmt.Sprintf("k%d.md", i): "v"}, MaxEntries: TeamMaxEntries})
			if err != nil {
				mu.Lock()
				failed = err
				mu.Unlock()
				return
			}
			versions[i] = d.Version
		})
	}
	wg.Wait()
	if failed != nil {
		t.Fatalf("concurrent Put: %v", failed)
	}
	got := get(t, r, teamRepo, &team.GetOptions{HashesOnly: true})
	if len(got.Content.EntryChecksums) != n || got.Version != n {
		t.Errorf("after %d concurrent upserts: %d entries, version %d", n, len(got.Content.EntryChecksums), got.Version)
	}
	seen := map[int64]bool{}
	for _, v := range versions {
		if seen[v] {
			t.Errorf("two writes got version %d", v)
		}
		seen[v] = true
	}
}

// readPages reads every page of version, checking the bounds of each.
func readPages(tb testing.TB, s team.Store, repo string, version int64, opts team.PageOptions, between func(page int)) map[string]string {
	tb.Helper()
	out := map[string]string{}
	after := ""
	for i := 0; ; i++ {
		page, err := s.EntryPage(context.Background(), repo, version, after, opts)
		if err != nil {
			tb.Fatalf("EntryPage(%s, %d, after %q): %v", repo, version, after, err)
		}
		if len(page) == 0 {
			return out
		}
		if len(page) > opts.PageLimit() {
			tb.Errorf("page of %d entries, over the limit %d", len(page), opts.PageLimit())
		}
		size := 0
		for j, e := range page {
			if j > 0 && size >= opts.PageMaxBytes() {
				tb.Errorf("page goes on after %d bytes, MaxBytes %d", size, opts.PageMaxBytes())
			}
			size += len(e.Content)
			if _, dup := out[e.Key]; dup {
				tb.Fatalf("key %q on two pages", e.Key)
			}
			out[e.Key] = e.Content
		}
		after = page[len(page)-1].Key
		if between != nil {
			between(i)
		}
	}
}

// testEntryPages checks Store.EntryPage, which the Handler streams full
// GETs with: pages cover the version exactly, respect their bounds, and
// stay on their version while other writes come in between pages.
func testEntryPages(t *testing.T, s team.Store) {
	ctx := context.Background()
	if _, err := s.EntryPage(ctx, teamRepo, 1, "", team.PageOptions{}); !errors.Is(err, team.ErrNotFound) {
		t.Errorf("EntryPage of a new repository: err = %v, want ErrNotFound", err)
	}
	v1 := map[string]string{}
	for i := range 23 {
		v1[fmt.Sprintf("k/%02d.md", i)] = strings.Repeat(string(rune('a'+i)), 10*i)
	}
	v1["ünï/cödé.md"] = "x"
	v1["Z.md"] = "upper"
	d1 := put(t, s, teamRepo, &team.Update{Entries: v1, MaxEntries: 100})
	for _, opts := range []team.PageOptions{{}, {Limit: 1}, {Limit: 4}, {MaxBytes: 1}, {Limit: 7, MaxBytes: 150}} {
		if diff := cmp.Diff(v1, readPages(t, s, teamRepo, d1.Version, opts, nil)); diff != "" {
			t.Errorf("pages %+v (-want +got):\n%s", opts, diff)
		}
	}
	// Writes between pages: change a key, delete one, add one (on both
	// sides of the cursor). The pages still read version 1.
	v2 := map[string]string{}
	maps.Copy(v2, v1)
	got := readPages(t, s, teamRepo, d1.Version, team.PageOptions{Limit: 5}, func(page int) {
		if page != 1 {
			return
		}
		put(t, s, teamRepo, &team.Update{
			Entries:    map[string]string{"k/20.md": "changed", "k/99.md": "new", "a.md": "new"},
			Deletes:    []string{"k/22.md", "k/00.md"},
			MaxEntries: 100,
		})
		v2["k/20.md"], v2["k/99.md"], v2["a.md"] = "changed", "new", "new"
		delete(v2, "k/22.md")
		delete(v2, "k/00.md")
	})
	if diff := cmp.Diff(v1, got); diff != "" {
		t.Errorf("pages of version 1 read across a write (-want +got):\n%s", diff)
	}
	d2 := get(t, s, teamRepo, &team.GetOptions{HashesOnly: true})
	if diff := cmp.Diff(v2, readPages(t, s, teamRepo, d2.Version, team.PageOptions{Limit: 3}, nil)); diff != "" {
		t.Errorf("pages of version 2 (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(v1, readPages(t, s, teamRepo, d1.Version, team.PageOptions{Limit: 3}, nil)); diff != "" {
		t.Errorf("pages of old version 1 (-want +got):\n%s", diff)
	}
	if _, err := s.EntryPage(ctx, teamRepo, d2.Version+1, "", team.PageOptions{}); !errors.Is(err, team.ErrNotFound) {
		t.Errorf("EntryPage of a version that does not exist: err = %v, want ErrNotFound", err)
	}
}

func testTokens(t *testing.T, s team.Store) {
	ctx := context.Background()
	now := time.Date(2026, 5, 1, 12, 0, 0, 123456789, time.UTC)
	secret, tok, err := team.IssueToken(ctx, s, "Acme/Widgets", true, "ci", now)
	if err != nil {
		t.Fatalf("IssueToken: %v", err)
	}
	want := &team.Token{ID: tok.ID, Repo: "acme/widgets", ReadOnly: true, Name: "ci", CreatedAt: now.Truncate(time.Millisecond)}
	if diff := cmp.Diff(want, tok); diff != "" {
		t.Errorf("IssueToken (-want +got):\n%s", diff)
	}
	got, err := s.LookupToken(ctx, team.HashToken(secret))
	if err != nil {
		t.Fatalf("LookupToken: %v", err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("LookupToken (-want +got):\n%s", diff)
	}
	_, err = s.LookupToken(ctx, team.HashToken(secret+"x"))
	wantErr(t, "LookupToken of an unknown token", err, team.ErrNotFound)

	secret2, tok2, err := team.IssueToken(ctx, s, "acme/other", false, "", now.Add(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	err = s.CreateToken(ctx, tok2, team.HashToken(secret2+"other"))
	wantErr(t, "CreateToken with a duplicate id", err, memdir.ErrExists)

	revokedAt := now.Add(time.Hour)
	if err := s.RevokeToken(ctx, tok.ID, revokedAt); err != nil {
		t.Fatalf("RevokeToken: %v", err)
	}
	if err := s.RevokeToken(ctx, tok.ID, revokedAt.Add(time.Hour)); err != nil {
		t.Fatalf("RevokeToken twice: %v", err)
	}
	_, err = s.LookupToken(ctx, team.HashToken(secret))
	wantErr(t, "LookupToken of a revoked token", err, team.ErrNotFound)
	err = s.RevokeToken(ctx, "tok_unknown", revokedAt)
	wantErr(t, "RevokeToken of an unknown id", err, team.ErrNotFound)
	if _, err := s.LookupToken(ctx, team.HashToken(secret2)); err != nil {
		t.Errorf("revoking one token affected another: %v", err)
	}

	list, err := s.ListTokens(ctx)
	if err != nil {
		t.Fatal(err)
	}
	revoked := *want
	at := revokedAt.Truncate(time.Millisecond)
	revoked.RevokedAt = &at
	if diff := cmp.Diff([]team.Token{revoked, *tok2}, list); diff != "" {
		t.Errorf("ListTokens (-want +got):\n%s", diff)
	}
}
