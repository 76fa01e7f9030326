package agentmem

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/locate"
	"github.com/memdir/memdir/memdirtest"
)

func envMap(m map[string]string) memdir.LookupEnvFunc {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

// dirContents reads every regular file below dir.
func dirContents(tb testing.TB, dir string) map[string]string {
	tb.Helper()
	out := map[string]string{}
	filepath.WalkDir(dir, func(p string, e os.DirEntry, err error) error {
		if err == nil && e.Type().IsRegular() {
			rel, _ := filepath.Rel(dir, p)
			out[filepath.ToSlash(rel)] = memdirtest.ReadFile(tb, p)
		}
		return nil
	})
	return out
}

func agentFile(name, desc, memory string) string {
	s := "---\nname: " + name + "\ndescription: " + desc + "\n"
	if memory != "" {
		s += "memory: " + memory + "\n"
	}
	return s + "---\n\nYou review code.\n"
}

func TestLoadDefs(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	repo := t.TempDir()
	repo, _ = filepath.EvalSymlinks(repo)
	os.Mkdir(filepath.Join(repo, ".git"), 0o700)
	sub := filepath.Join(repo, "services", "api")
	memdirtest.WriteFiles(t, filepath.Join(home, ".claude", "agents"), map[string]string{
		"reviewer.md":      agentFile("reviewer", "reviews diffs", "user"),
		"planner.md":       agentFile("planner", "plans work", ""),
		"nested/triage.md": agentFile("triage", "sorts issues", "local"),
		".hidden/ghost.md": agentFile("ghost", "never loaded", "user"),
		"README.md":        "# My agents\n\nNotes about the agents, no frontmatter.\n",
	})
	memdirtest.WriteFiles(t, filepath.Join(repo, ".claude", "agents"), map[string]string{
		"reviewer.md":   agentFile("reviewer", "the repo's reviewer", "project"),
		"nodesc.md":     "---\nname: nodesc\nmemory: user\n---\nbody\n",
		"badscope.md":   agentFile("badscope", "odd memory", "global"),
		"plugin-rev.md": agentFile("plugin:rev", "from a plugin namespace", "local"),
	})
	memdirtest.WriteFiles(t, filepath.Join(sub, ".claude", "agents"), map[string]string{
		"reviewer.md": agentFile("reviewer", "the api's reviewer", "local"),
	})
	l, err := locate.Locate(&locate.LocateOptions{LookupEnv: envMap(map[string]string{"HOME": home}), Cwd: sub})
	if err != nil {
		t.Fatal(err)
	}
	defs, warnings, err := LoadDefs(l)
	if err != nil {
		t.Fatal(err)
	}
	type brief struct{ Name, Scope, Source, Desc string }
	var got []brief
	for _, d := range defs {
		got = append(got, brief{d.Name, string(d.Scope), d.Source, d.Description})
	}
	want := []brief{
		{"badscope", "", "project", "odd memory"},
		{"planner", "", "user", "plans work"},
		{"plugin:rev", "local", "project", "from a plugin namespace"},
		{"reviewer", "local", "project", "the api's reviewer"}, // the directory nearest the project root wins
		{"triage", "local", "user", "sorts issues"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("agents (-want +got):\n%s", diff)
	}
	joined := strings.Join(warnings, "\n")
	for _, w := range []string{"nodesc.md: agent \"nodesc\" has no description", `memory: "global"`} {
		if !strings.Contains(joined, w) {
			t.Errorf("warnings lack %q:\n%s", w, joined)
		}
	}
	if len(warnings) != 2 {
		t.Errorf("want 2 warnings (README.md without frontmatter is not one), got:\n%s", joined)
	}
}

func TestSnapshotDirRejects(t *testing.T) {
	t.Parallel()
	for _, bad := range []string{"", ".", "..", "a/b", `a\b`, "a\x00"} {
		if _, err := SnapshotDir("/p", bad); !errors.Is(err, memdir.ErrInvalid) {
			t.Errorf("SnapshotDir(%q) err = %v", bad, err)
		}
	}
	if got, _ := SnapshotDir("/p", "plugin:rev"); got != "/p/.claude/agent-memory-snapshots/plugin:rev/" {
		t.Errorf("SnapshotDir kept no ':' = %s", got)
	}
}

func TestCheckActions(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		snapshot map[string]string // "" map: no snapshot directory
		local    map[string]string
		want     Action
		wantNote string
	}{
		{"no snapshot", nil, nil, ActionNone, ""},
		{"snapshot.json without updatedAt", map[string]string{"snapshot.json": `{"version":1}`, "a.md": "x"}, nil, ActionNone, "no updatedAt"},
		{"snapshot.json not JSON", map[string]string{"snapshot.json": `{`, "a.md": "x"}, nil, ActionNone, "no updatedAt"},
		{"empty memory: initialize", map[string]string{"snapshot.json": `{"updatedAt":"2026-04-15T10:23:00Z"}`, "a.md": "x"}, nil, ActionInitialize, ""},
		{"only non-Markdown locally: initialize", map[string]string{"snapshot.json": `{"updatedAt":"2026-04-15T10:23:00Z"}`}, map[string]string{"notes.txt": "x", "sub/deep.md": "x"}, ActionInitialize, ""},
		{"never synced: prompt-update", map[string]string{"snapshot.json": `{"updatedAt":"2026-04-15T10:23:00Z"}`}, map[string]string{"mine.md": "x"}, ActionPromptUpdate, ""},
		{"broken marker: prompt-update", map[string]string{"snapshot.json": `{"updatedAt":"2026-04-15T10:23:00Z"}`}, map[string]string{"mine.md": "x", SnapshotMarkerFile: "{"}, ActionPromptUpdate, ""},
		{"newer snapshot: prompt-update", map[string]string{"snapshot.json": `{"updatedAt":"2026-04-15T10:23:00.500Z"}`}, map[string]string{"mine.md": "x", SnapshotMarkerFile: `{"syncedFrom":"2026-04-15T10:23:00Z"}`}, ActionPromptUpdate, ""},
		{"newer across zones: prompt-update", map[string]string{"snapshot.json": `{"updatedAt":"2026-04-15T12:00:00+02:00"}`}, map[string]string{"mine.md": "x", SnapshotMarkerFile: `{"syncedFrom":"2026-04-15T09:59:59Z"}`}, ActionPromptUpdate, ""},
		{"same timestamp: none", map[string]string{"snapshot.json": `{"updatedAt":"2026-04-15T10:23:00Z"}`}, map[string]string{"mine.md": "x", SnapshotMarkerFile: `{"syncedFrom":"2026-04-15T10:23:00Z"}`}, ActionNone, ""},
		{"older snapshot: none", map[string]string{"snapshot.json": `{"updatedAt":"2026-01-01"}`}, map[string]string{"mine.md": "x", SnapshotMarkerFile: `{"syncedFrom":"2026-04-15T10:23:00Z"}`}, ActionNone, ""},
		{"unreadable date: none, with a note", map[string]string{"snapshot.json": `{"updatedAt":"last Tuesday"}`}, map[string]string{"mine.md": "x", SnapshotMarkerFile: `{"syncedFrom":"2026-04-15T10:23:00Z"}`}, ActionNone, "not a date"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := t.TempDir()
			snap := filepath.Join(base, "snap")
			mem := filepath.Join(base, "mem")
			if tc.snapshot != nil {
				memdirtest.WriteFiles(t, snap, tc.snapshot)
			}
			memdirtest.WriteFiles(t, mem, tc.local)
			st, err := Check(snap, mem)
			if err != nil {
				t.Fatal(err)
			}
			if st.Action != tc.want {
				t.Errorf("action = %s, want %s (%+v)", st.Action, tc.want, st)
			}
			if !strings.Contains(st.Note, tc.wantNote) || (tc.wantNote == "") != (st.Note == "") {
				t.Errorf("note = %q, want one mentioning %q", st.Note, tc.wantNote)
			}
		})
	}
}

func TestSync(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	base := t.TempDir()
	snap := filepath.Join(base, "project", ".claude", "agent-memory-snapshots", "reviewer")
	memdirtest.WriteFiles(t, snap, map[string]string{
		"snapshot.json":     `{"updatedAt":"2026-04-15T10:23:00Z"}`,
		"MEMORY.md":         "- [Style](style.md) — house style\n",
		"style.md":          "---\nname: Style\ndescription: house style\ntype: feedback\n---\n\nTabs.\n",
		"notes.txt":         "seed notes",
		"sub/ignored.md":    "subdirectories are not copied",
		SnapshotMarkerFile:  `{"syncedFrom":"forged"}`,
		"snapshot.json.bak": "copied: only snapshot.json itself is skipped",
	})
	if err := os.Symlink(filepath.Join(base, "secret"), filepath.Join(snap, "link.md")); err != nil {
		t.Skip("symlinks unavailable:", err)
	}
	os.WriteFile(filepath.Join(base, "secret"), []byte("do not copy"), 0o600)
	memPath := filepath.Join(base, "agent-memory", "reviewer")
	d, err := memdir.Open(memPath, &memdir.Options{Journal: memdir.NewJournal(filepath.Join(base, "journal"), nil)})
	if err != nil {
		t.Fatal(err)
	}

	// initialize
	res, err := Sync(ctx, d, snap, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Done != "initialize" || res.RunID == "" {
		t.Errorf("result = %+v", res)
	}
	want := map[string]string{
		"MEMORY.md":         "- [Style](style.md) — house style\n",
		"style.md":          "---\nname: Style\ndescription: house style\ntype: feedback\n---\n\nTabs.\n",
		"notes.txt":         "seed notes",
		"snapshot.json.bak": "copied: only snapshot.json itself is skipped",
		SnapshotMarkerFile:  `{"syncedFrom":"2026-04-15T10:23:00Z"}`,
	}
	if diff := cmp.Diff(want, dirContents(t, memPath)); diff != "" {
		t.Errorf("after initialize (-want +got):\n%s", diff)
	}
	if fi, _ := os.Stat(filepath.Join(memPath, "style.md")); fi.Mode().Perm() != 0o600 {
		t.Errorf("copied file mode %v", fi.Mode().Perm())
	}
	if st, _ := Check(snap, memPath); st.Action != ActionNone {
		t.Errorf("after initialize the action is %s, want none", st.Action)
	}
	if res, err := Sync(ctx, d, snap, nil); err != nil || res.Done != "none" || res.RunID != "" {
		t.Errorf("second sync: %+v, %v", res, err)
	}

	// The local memory grows; the project ships a newer snapshot.
	memdirtest.WriteFiles(t, memPath, map[string]string{
		"MEMORY.md":  "- [Style](style.md) — house style\n- [Mine](mine.md) — learned locally\n",
		"mine.md":    "---\nname: Mine\ndescription: learned locally\ntype: project\n---\n\nLocal lesson.\n",
		"style.md":   "---\nname: Style\ndescription: house style\ntype: feedback\n---\n\nTabs, edited locally.\n",
		"keep.json":  "not Markdown: a replace leaves it",
		"sub/old.md": "not top level: a replace leaves it",
	})
	before := dirContents(t, memPath)
	memdirtest.WriteFiles(t, snap, map[string]string{
		"snapshot.json": `{"updatedAt":"2026-05-01T08:00:00Z"}`,
		"MEMORY.md":     "- [Style](style.md) — house style, v2\n",
		"style.md":      "---\nname: Style\ndescription: house style, v2\ntype: feedback\n---\n\nTabs; gofmt.\n",
	})

	// prompt-update without consent changes nothing and says what it would do.
	_, err = Sync(ctx, d, snap, nil)
	if !errors.Is(err, memdir.ErrExists) || !strings.Contains(err.Error(), "MEMORY.md, mine.md, style.md") {
		t.Errorf("unconfirmed replace: %v", err)
	}
	if diff := cmp.Diff(before, dirContents(t, memPath)); diff != "" {
		t.Errorf("an unconfirmed replace changed files (-want +got):\n%s", diff)
	}

	// replace
	res, err = Sync(ctx, d, snap, &SyncOptions{Replace: true})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"MEMORY.md", "mine.md", "style.md"}, res.Removed); diff != "" {
		t.Errorf("removed (-want +got):\n%s", diff)
	}
	after := dirContents(t, memPath)
	if _, ok := after["mine.md"]; ok {
		t.Error("replace kept a local memory the snapshot does not have")
	}
	for _, kept := range []string{"keep.json", "sub/old.md"} {
		if after[kept] != before[kept] {
			t.Errorf("replace touched %s", kept)
		}
	}
	if after["style.md"] != "---\nname: Style\ndescription: house style, v2\ntype: feedback\n---\n\nTabs; gofmt.\n" || after[SnapshotMarkerFile] != `{"syncedFrom":"2026-05-01T08:00:00Z"}` {
		t.Errorf("after replace: %v", after)
	}

	// Undo restores every replaced and removed file byte for byte.
	if _, err := d.Undo(ctx, res.RunID, nil); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(before, dirContents(t, memPath)); diff != "" {
		t.Errorf("after undo (-want +got):\n%s", diff)
	}

	// keep: only the marker moves.
	res, err = Sync(ctx, d, snap, &SyncOptions{Keep: true})
	if err != nil || res.Done != "keep" {
		t.Fatalf("keep: %+v, %v", res, err)
	}
	got := dirContents(t, memPath)
	want = before
	want[SnapshotMarkerFile] = `{"syncedFrom":"2026-05-01T08:00:00Z"}`
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("after keep (-want +got):\n%s", diff)
	}
}

// TestSyncUndoKeepsIndexLines covers a replace where MEMORY.md is
// the same in the snapshot and locally, so the run does not change it: the
// undo must leave MEMORY.md exactly as it was.
func TestSyncUndoKeepsIndexLines(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	base := t.TempDir()
	snap := filepath.Join(base, "snap")
	index := "- [A](a.md) — first\n- [B](b.md) — second\n"
	memdirtest.WriteFiles(t, snap, map[string]string{"snapshot.json": `{"updatedAt":"2026-05-01"}`, "MEMORY.md": index, "a.md": "new a", "b.md": "b"})
	mem := filepath.Join(base, "mem")
	memdirtest.WriteFiles(t, mem, map[string]string{"MEMORY.md": index, "a.md": "old a", "b.md": "b", SnapshotMarkerFile: `{"syncedFrom":"2026-04-01"}`})
	d, _ := memdir.Open(mem, &memdir.Options{Journal: memdir.NewJournal(filepath.Join(base, "journal"), nil)})
	res, err := Sync(ctx, d, snap, &SyncOptions{Replace: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Undo(ctx, res.RunID, nil); err != nil {
		t.Fatal(err)
	}
	if got := memdirtest.ReadFile(t, filepath.Join(mem, "a.md")); got != "old a" {
		t.Errorf("a.md = %q", got)
	}
	if diff := cmp.Diff(index, memdirtest.ReadFile(t, filepath.Join(mem, "MEMORY.md"))); diff != "" {
		t.Errorf("MEMORY.md after undo (-want +got):\n%s", diff)
	}
}

func TestSyncRefusesOversizedFiles(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	snap := filepath.Join(base, "snap")
	memdirtest.WriteFiles(t, snap, map[string]string{"snapshot.json": `{"updatedAt":"2026-05-01"}`, "a.md": "a", "huge.md": strings.Repeat("x", memdir.MaxMemoryFileBytes+1)})
	d, _ := memdir.Open(filepath.Join(base, "mem"), &memdir.Options{Journal: memdir.NewJournal(filepath.Join(base, "journal"), nil)})
	_, err := Sync(context.Background(), d, snap, nil)
	if !errors.Is(err, memdir.ErrInvalid) || !strings.Contains(err.Error(), "huge.md") {
		t.Errorf("err = %v", err)
	}
	if got := dirContents(t, d.Path()); len(got) != 0 {
		t.Errorf("a refused snapshot wrote %v", got)
	}
}
