package checkpoint

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/memdir/memdir"
)

// seedSession plays the seed's scenario: a file is edited, another created,
// the first deleted, the second edited, one user turn (snapshot) each.
func seedSession(t *testing.T, e env, h *History) {
	t.Helper()
	snapshot(t, h, "m1")
	e.write(t, "a.txt", "one\n")
	track(t, h, "a.txt", "m1")
	e.write(t, "a.txt", "one\ntwo\n") // turn 1 edits a

	r := snapshot(t, h, "m2")
	if diff := cmp.Diff([]string{"a.txt"}, r.Changed); diff != "" {
		t.Errorf("m2 changed (-want +got):\n%s", diff)
	}
	track(t, h, "b.txt", "m2")
	e.write(t, "b.txt", "bee\n") // turn 2 creates b

	r = snapshot(t, h, "m3")
	if diff := cmp.Diff([]string{"b.txt"}, r.Changed); diff != "" {
		t.Errorf("m3 changed (-want +got):\n%s", diff)
	}
	e.remove(t, "a.txt") // turn 3 deletes a

	r = snapshot(t, h, "m4")
	if diff := cmp.Diff([]string{"a.txt"}, r.Deleted); diff != "" {
		t.Errorf("m4 deleted (-want +got):\n%s", diff)
	}
	e.write(t, "b.txt", "bee\nbuzz\n") // turn 4 edits b
}

func TestSeedScenarioRewindToEachPoint(t *testing.T) {
	e := newEnv(t)
	h := e.history(t, "seed")
	seedSession(t, e, h)

	type change struct {
		Path           string
		Action         Action
		Added, Removed int
	}
	steps := []struct {
		msg     string // "undo:N" rewinds to the undo id of step N
		want    map[string]string
		changes []change
	}{
		{"m4", map[string]string{"b.txt": "bee\n"}, []change{{"b.txt", ActionRestore, 0, 1}}},
		{"m3", map[string]string{"a.txt": "one\ntwo\n", "b.txt": "bee\n"}, []change{{"a.txt", ActionCreate, 2, 0}}},
		{"m2", map[string]string{"a.txt": "one\ntwo\n"}, []change{{"b.txt", ActionDelete, 0, 1}}},
		{"m1", map[string]string{"a.txt": "one\n"}, []change{{"a.txt", ActionRestore, 0, 1}}},
		{"m1", map[string]string{"a.txt": "one\n"}, nil},
		// Every rewind can be undone: back to before step 3, then before step 0.
		{"undo:3", map[string]string{"a.txt": "one\ntwo\n"}, []change{{"a.txt", ActionRestore, 1, 0}}},
		{"undo:0", map[string]string{"b.txt": "bee\nbuzz\n"}, []change{{"a.txt", ActionDelete, 0, 2}, {"b.txt", ActionCreate, 2, 0}}},
	}
	var undo []string
	for i, st := range steps {
		msg := st.msg
		if n, ok := strings.CutPrefix(msg, "undo:"); ok {
			var k int
			fmt.Sscan(n, &k)
			msg = undo[k]
		}
		dry := rewind(t, h, msg, true)
		if got := e.files(t, "a.txt", "b.txt"); i > 0 && cmp.Equal(got, st.want) && len(st.changes) > 0 {
			t.Fatalf("step %d: dry run changed the files", i)
		}
		rep := rewind(t, h, msg, false)
		if diff := cmp.Diff(st.want, e.files(t, "a.txt", "b.txt")); diff != "" {
			t.Errorf("step %d: rewind %s: files (-want +got):\n%s", i, msg, diff)
		}
		var got []change
		for _, c := range rep.Changes {
			got = append(got, change{c.Path, c.Action, c.Added, c.Removed})
		}
		if diff := cmp.Diff(st.changes, got); diff != "" {
			t.Errorf("step %d: rewind %s: changes (-want +got):\n%s", i, msg, diff)
		}
		if diff := cmp.Diff(rep.Changes, dry.Changes); diff != "" {
			t.Errorf("step %d: dry run reported differently (-rewind +dry):\n%s", i, diff)
		}
		if (rep.UndoMessageID != "") != (len(st.changes) > 0) {
			t.Errorf("step %d: undo id %q with %d changes", i, rep.UndoMessageID, len(st.changes))
		}
		undo = append(undo, rep.UndoMessageID)
	}
}

func TestDryRunTouchesNothing(t *testing.T) {
	e := newEnv(t)
	h := e.history(t, "dry")
	seedSession(t, e, h)
	before := e.files(t, "a.txt", "b.txt")
	n := len(snapshots(t, h))
	dirBefore := listDir(t, h.Dir())
	for _, msg := range []string{"m1", "m2", "m3", "m4"} {
		rep := rewind(t, h, msg, true)
		if !rep.DryRun || rep.UndoMessageID != "" || len(rep.Changes) == 0 {
			t.Errorf("dry run %s: %+v", msg, rep)
		}
	}
	if diff := cmp.Diff(before, e.files(t, "a.txt", "b.txt")); diff != "" {
		t.Errorf("files changed (-before +after):\n%s", diff)
	}
	if got := len(snapshots(t, h)); got != n {
		t.Errorf("dry runs recorded snapshots: %d, want %d", got, n)
	}
	if diff := cmp.Diff(dirBefore, listDir(t, h.Dir())); diff != "" {
		t.Errorf("session directory changed (-before +after):\n%s", diff)
	}
}

func listDir(tb testing.TB, dir string) map[string]string {
	tb.Helper()
	out := map[string]string{}
	ents, err := os.ReadDir(dir)
	if err != nil {
		tb.Fatal(err)
	}
	for _, de := range ents {
		fi, err := de.Info()
		if err != nil {
			tb.Fatal(err)
		}
		out[de.Name()] = fmt.Sprintf("%d %v", fi.Size(), fi.ModTime().UnixNano())
	}
	return out
}

func TestBackupLayoutAndMode(t *testing.T) {
	e := newEnv(t)
	h := e.history(t, "0f8fad5b-d9cb-469f-a165-70867728950e")
	e.write(t, "run.sh", "#!/bin/sh\necho hi\n")
	if err := os.Chmod(e.path("run.sh"), 0o751); err != nil {
		t.Fatal(err)
	}
	r := track(t, h, "run.sh", "m1")
	sum := sha256.Sum256([]byte(e.path("run.sh")))
	wantName := hex.EncodeToString(sum[:])[:16] + "@v1"
	want := &TrackResult{Path: "run.sh", Backup: Backup{Name: wantName, Version: 1}, Sequence: 1}
	if diff := cmp.Diff(want, r, cmpopts.IgnoreFields(Backup{}, "Time")); diff != "" {
		t.Errorf("Track (-want +got):\n%s", diff)
	}
	bpath := filepath.Join(e.config, "file-history", "0f8fad5b-d9cb-469f-a165-70867728950e", wantName)
	fi, err := os.Stat(bpath)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o751 {
		t.Errorf("backup mode %v, want 0751 (the source's)", fi.Mode().Perm())
	}
	if got, _ := os.ReadFile(bpath); string(got) != "#!/bin/sh\necho hi\n" {
		t.Errorf("backup content %q", got)
	}
	// A mode change alone is a change, and a rewind restores the mode.
	snapshot(t, h, "m2")
	if err := os.Chmod(e.path("run.sh"), 0o600); err != nil {
		t.Fatal(err)
	}
	rep := rewind(t, h, "m2", false)
	if len(rep.Changes) != 1 || rep.Changes[0].Action != ActionRestore {
		t.Errorf("changes after chmod: %+v", rep.Changes)
	}
	if fi, _ := os.Stat(e.path("run.sh")); fi.Mode().Perm() != 0o751 {
		t.Errorf("restored mode %v, want 0751", fi.Mode().Perm())
	}
}

func TestTrackingPaths(t *testing.T) {
	e := newEnv(t)
	outside := filepath.Join(t.TempDir(), "elsewhere.txt")
	if err := os.WriteFile(outside, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	e.write(t, "sub/deep.go", "package sub\n")
	h := e.history(t, "paths")
	for _, tc := range []struct{ arg, want string }{
		{"sub/deep.go", filepath.Join("sub", "deep.go")},
		{e.path("sub/../sub/deep.go"), filepath.Join("sub", "deep.go")},
		{outside, outside},
		{"new/file.txt", filepath.Join("new", "file.txt")},
	} {
		r, err := h.Track(context.Background(), tc.arg, "m1")
		if err != nil {
			t.Errorf("Track(%q): %v", tc.arg, err)
			continue
		}
		if r.Path != tc.want {
			t.Errorf("Track(%q) path = %q, want %q", tc.arg, r.Path, tc.want)
		}
	}
	// A later process started in a subdirectory still resolves the
	// session's relative paths against the original directory.
	h2, err := New(e.config, "paths", &Options{Cwd: e.path("sub")})
	if err != nil {
		t.Fatal(err)
	}
	e.write(t, "sub/deep.go", "package changed\n")
	rep := rewind(t, h2, "m1", false)
	if got := e.files(t, "sub/deep.go"); got["sub/deep.go"] != "package sub\n" {
		t.Errorf("after rewind from a subdirectory: %q (report %+v)", got, rep)
	}
	if cwd, _ := h2.OriginalCwd(context.Background()); cwd != e.cwd {
		t.Errorf("OriginalCwd = %q, want %q", cwd, e.cwd)
	}
}

func TestTrackTwiceKeepsFirstVersion(t *testing.T) {
	e := newEnv(t)
	h := e.history(t, "twice")
	e.write(t, "f", "v1\n")
	first := track(t, h, "f", "m1")
	e.write(t, "f", "edited\n")
	again := track(t, h, "f", "m1")
	if !again.AlreadyTracked || again.Backup.Name != first.Backup.Name {
		t.Errorf("second Track = %+v, want the first backup %+v", again, first)
	}
	b, _ := os.ReadFile(filepath.Join(h.Dir(), first.Backup.Name))
	if string(b) != "v1\n" {
		t.Errorf("v1 backup was overwritten: %q", b)
	}
}

func TestSnapshotEntries(t *testing.T) {
	e := newEnv(t)
	h := e.history(t, "entries")
	e.write(t, "same", "same\n")
	e.write(t, "edit", "before\n")
	e.write(t, "gone", "bye\n")
	snapshot(t, h, "m1")
	for _, f := range []string{"same", "edit", "gone", "later"} {
		track(t, h, f, "m1")
	}
	e.write(t, "edit", "after\n")
	e.remove(t, "gone")
	e.write(t, "later", "new\n")
	r := snapshot(t, h, "m2")
	name := func(f string, v int) string { return BackupName(e.path(f), v) }
	want := map[string]Backup{
		"same":  {Name: name("same", 1), Version: 1},
		"edit":  {Name: name("edit", 2), Version: 2},
		"gone":  {Version: 2},
		"later": {Name: name("later", 2), Version: 2},
	}
	if diff := cmp.Diff(want, entries(t, h)); diff != "" {
		t.Errorf("m2 entries (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"edit", "later"}, r.Changed); diff != "" {
		t.Errorf("changed (-want +got):\n%s", diff)
	}
	if r.Unchanged != 1 || len(r.Deleted) != 1 {
		t.Errorf("unchanged %d deleted %v", r.Unchanged, r.Deleted)
	}
	// Still missing: the null entry is reused, not renumbered.
	snapshot(t, h, "m3")
	if got := entries(t, h)["gone"]; got.Version != 2 || got.Exists() {
		t.Errorf("still-missing file entry %+v, want null v2", got)
	}
}

func TestChangeDetection(t *testing.T) {
	for _, tc := range []struct {
		name    string
		content string        // written after tracking "aaaa\n"; "" leaves the file alone
		mtime   time.Duration // then the mtime is set this far from now; 0 leaves it
		changed bool
	}{
		{"untouched", "", 0, false},
		{"touched, same content", "", time.Hour, false},
		{"rewritten with the same content", "aaaa\n", 0, false},
		{"same size, new content", "bbbb\n", 0, true},
		// Only the inode change time shows this edit.
		{"same size, new content, old mtime put back", "bbbb\n", -24 * time.Hour, true},
		{"new size", "aaaaa\n", 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			h := e.history(t, "detect")
			begin(t, e, h, "f", "aaaa\n", "m1")
			if tc.content != "" {
				e.write(t, "f", tc.content)
			}
			if tc.mtime != 0 {
				when := time.Now().Add(tc.mtime)
				if err := os.Chtimes(e.path("f"), when, when); err != nil {
					t.Fatal(err)
				}
			}
			r := snapshot(t, h, "m2")
			if got := len(r.Changed) == 1; got != tc.changed || r.Unchanged+len(r.Changed) != 1 {
				t.Errorf("changed = %v (%+v), want %v", got, r, tc.changed)
			}
		})
	}
}

func TestEvictionAt100(t *testing.T) {
	e := newEnv(t)
	h := e.history(t, "evict")
	begin(t, e, h, "f", "0\n", "m0")
	for i := 1; i <= 104; i++ {
		e.write(t, "f", fmt.Sprintf("%d\n", i))
		r := snapshot(t, h, fmt.Sprintf("m%d", i))
		wantEvicted := 0
		if i >= 100 {
			wantEvicted = 1
		}
		if r.Evicted != wantEvicted {
			t.Fatalf("snapshot %d evicted %d, want %d", i, r.Evicted, wantEvicted)
		}
	}
	all := snapshots(t, h)
	if len(all) != 100 {
		t.Fatalf("%d snapshots kept, want 100", len(all))
	}
	if all[0].MessageID != "m5" || all[0].Sequence != 6 || all[99].Sequence != 105 {
		t.Errorf("kept %s (seq %d) .. seq %d, want m5 (seq 6) .. seq 105", all[0].MessageID, all[0].Sequence, all[99].Sequence)
	}
	// A fresh reader of the (compacted) log sees the same.
	fresh := snapshots(t, e.history(t, "evict"))
	if diff := cmp.Diff(all, fresh, cmpopts.EquateApproxTime(0)); diff != "" {
		t.Errorf("fresh reader (-cached +fresh):\n%s", diff)
	}
	_, err := h.Rewind(context.Background(), "m4", nil)
	if !errors.Is(err, memdir.ErrNotFound) {
		t.Errorf("rewind to evicted snapshot: %v, want ErrNotFound", err)
	}
	rewind(t, h, "m5", false)
	if got := e.files(t, "f")["f"]; got != "5\n" {
		t.Errorf("after rewind to m5: %q, want what m5 recorded", got)
	}
}

func TestRewindUsesLastSnapshotWithMessage(t *testing.T) {
	e := newEnv(t)
	h := e.history(t, "dup")
	begin(t, e, h, "f", "first\n", "same")
	e.write(t, "f", "second\n")
	snapshot(t, h, "same")
	e.write(t, "f", "third\n")
	rewind(t, h, "same", false)
	if got := e.files(t, "f")["f"]; got != "second\n" {
		t.Errorf("got %q, want the last snapshot's content", got)
	}
}

func TestRewindUnknownMessage(t *testing.T) {
	e := newEnv(t)
	h := e.history(t, "unknown")
	if _, err := h.Rewind(context.Background(), "m1", nil); !errors.Is(err, memdir.ErrNotFound) {
		t.Errorf("rewind in a session without history: %v, want ErrNotFound", err)
	}
	if _, err := os.Stat(h.Dir()); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a read created the session directory: %v", err)
	}
	snapshot(t, h, "m1")
	_, err := h.Rewind(context.Background(), "nope", nil)
	if !errors.Is(err, memdir.ErrNotFound) || !strings.Contains(err.Error(), `"nope"`) {
		t.Errorf("rewind to unknown message: %v", err)
	}
}

func TestRefuseHugeFile(t *testing.T) {
	e := newEnv(t)
	h, err := New(e.config, "huge", &Options{Cwd: e.cwd, MaxFileSize: 10})
	if err != nil {
		t.Fatal(err)
	}
	e.write(t, "big", strings.Repeat("x", 11))
	_, err = h.Track(context.Background(), "big", "m1")
	if err == nil || !strings.Contains(err.Error(), "big") || !strings.Contains(err.Error(), "limit") {
		t.Errorf("Track of an 11-byte file with a 10-byte limit: %v", err)
	}
}

func TestInvalidIDs(t *testing.T) {
	for _, id := range []string{"", ".", "..", "a/b", `a\b`, "a b", strings.Repeat("x", 129)} {
		if _, err := New(t.TempDir(), id, nil); !errors.Is(err, memdir.ErrInvalid) {
			t.Errorf("New(session %q) = %v, want ErrInvalid", id, err)
		}
	}
	e := newEnv(t)
	h := e.history(t, "ids")
	for _, msg := range []string{"", "a\nb", strings.Repeat("x", 257)} {
		if _, err := h.Snapshot(context.Background(), msg); !errors.Is(err, memdir.ErrInvalid) {
			t.Errorf("Snapshot(%q) = %v, want ErrInvalid", msg, err)
		}
	}
}

func TestDiff(t *testing.T) {
	e := newEnv(t)
	h := e.history(t, "diff")
	seedSession(t, e, h)
	rep, err := h.Diff(context.Background(), "m2")
	if err != nil {
		t.Fatal(err)
	}
	want := []FileDiff{
		{Path: "a.txt", Status: "deleted", Removed: 2, Patch: "--- a/a.txt\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-one\n-two\n"},
		{Path: "b.txt", Status: "added", Added: 2, Patch: "--- /dev/null\n+++ b/b.txt\n@@ -0,0 +1,2 @@\n+bee\n+buzz\n"},
	}
	if diff := cmp.Diff(want, rep.Files); diff != "" {
		t.Errorf("Diff(m2) (-want +got):\n%s", diff)
	}
}

func TestResume(t *testing.T) {
	for _, tc := range []struct {
		name     string
		linkFail bool
	}{{"link", false}, {"copy", true}} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.linkFail {
				linkFile = func(string, string) error { return &os.LinkError{Op: "link", Err: syscall.EXDEV} }
				t.Cleanup(func() { linkFile = os.Link })
			}
			e := newEnv(t)
			old := e.history(t, "old")
			seedSession(t, e, old)
			h := e.history(t, "new")
			res, err := h.ResumeFrom(context.Background(), "old")
			if err != nil {
				t.Fatal(err)
			}
			// a@v1, a@v2, b@v2 (null entries have no file).
			want := &ResumeResult{From: "old", Snapshots: 4, Linked: 3}
			if tc.linkFail {
				want.Linked, want.Copied = 0, 3
			}
			if diff := cmp.Diff(want, res); diff != "" {
				t.Errorf("ResumeFrom (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(snapshots(t, old), snapshots(t, h)); diff != "" {
				t.Errorf("new session's snapshots (-old +new):\n%s", diff)
			}
			name := BackupName(e.path("a.txt"), 1)
			ofi, _ := os.Stat(filepath.Join(old.Dir(), name))
			nfi, err := os.Stat(filepath.Join(h.Dir(), name))
			if err != nil {
				t.Fatal(err)
			}
			if os.SameFile(ofi, nfi) == tc.linkFail {
				t.Errorf("backup shared with the old session = %v, want %v", os.SameFile(ofi, nfi), !tc.linkFail)
			}
			if !ofi.ModTime().Equal(nfi.ModTime()) || ofi.Mode() != nfi.Mode() {
				t.Errorf("carried backup mtime/mode %v %v, want %v %v", nfi.ModTime(), nfi.Mode(), ofi.ModTime(), ofi.Mode())
			}
			rewind(t, h, "m1", false)
			if diff := cmp.Diff(map[string]string{"a.txt": "one\n"}, e.files(t, "a.txt", "b.txt")); diff != "" {
				t.Errorf("rewind in the resumed session (-want +got):\n%s", diff)
			}
			// Snapshots keep working on linked backups (nlink 2).
			snapshot(t, h, "m5")
			if _, err := h.ResumeFrom(context.Background(), "old"); !errors.Is(err, memdir.ErrExists) {
				t.Errorf("second resume: %v, want ErrExists", err)
			}
		})
	}
}

func TestResumeDropsSnapshotWithMissingBackup(t *testing.T) {
	e := newEnv(t)
	old := e.history(t, "old")
	seedSession(t, e, old)
	loseBackup(t, e, old, "b.txt", 2)
	h := e.history(t, "new")
	res, err := h.ResumeFrom(context.Background(), "old")
	if err != nil {
		t.Fatal(err)
	}
	if res.Snapshots != 2 || res.Dropped != 2 || len(res.Problems) != 1 {
		t.Errorf("ResumeFrom = %+v, want m1 and m2 carried, m3 and m4 dropped", res)
	}
}

func TestRewindSkipsFileWithMissingBackup(t *testing.T) {
	e := newEnv(t)
	h := e.history(t, "missing")
	seedSession(t, e, h)
	loseBackup(t, e, h, "a.txt", 1)
	rep, err := h.Rewind(context.Background(), "m1", nil)
	if err == nil || rep == nil || len(rep.Skipped) != 1 || rep.Skipped[0].Path != "a.txt" || !strings.Contains(err.Error(), "a.txt") {
		t.Fatalf("rewind with a lost backup: report %+v, err %v", rep, err)
	}
	// The other file was still rewound (b did not exist at m1).
	if diff := cmp.Diff(map[string]string{}, e.files(t, "a.txt", "b.txt")); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
}
