package memdir

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// mustOpen opens a Dir in a temp directory with its journal in another.
func mustOpen(tb testing.TB) *Dir {
	tb.Helper()
	base := tb.TempDir()
	d, err := Open(filepath.Join(base, "memory"), &Options{Journal: NewJournal(filepath.Join(base, "journal"), nil)})
	if err != nil {
		tb.Fatal(err)
	}
	return d
}

func mustSave(tb testing.TB, d *Dir, m *Memory, opts *SaveOptions) *SaveResult {
	tb.Helper()
	res, err := d.Save(context.Background(), m, opts)
	if err != nil {
		tb.Fatal(err)
	}
	return res
}

func readString(tb testing.TB, path string) string {
	tb.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	return string(b)
}

func TestSaveGetRemoveUndo(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := mustOpen(t)
	res := mustSave(t, d, &Memory{Name: "testing policy", Description: "run tests with -race", Type: TypeFeedback, Body: "Always -race.\n\n**Why:** a data race shipped."}, nil)
	if res.Path != "feedback_testing_policy.md" || !res.Created || !res.Changed || res.RunID == "" {
		t.Fatalf("Save = %+v", res)
	}
	wantFile := "---\nname: testing policy\ndescription: run tests with -race\ntype: feedback\n---\n\nAlways -race.\n\n**Why:** a data race shipped.\n"
	if diff := cmp.Diff(wantFile, readString(t, d.Abs(res.Path))); diff != "" {
		t.Errorf("file (-want +got):\n%s", diff)
	}
	if got := readString(t, d.Abs("MEMORY.md")); got != "- [testing policy](feedback_testing_policy.md) — run tests with -race\n" {
		t.Errorf("MEMORY.md = %q", got)
	}
	for _, p := range []string{"", res.Path, "MEMORY.md"} {
		fi, err := os.Stat(d.Abs(p))
		if err != nil {
			t.Fatal(err)
		}
		want := os.FileMode(0o600)
		if fi.IsDir() {
			want = 0o700
		}
		if fi.Mode().Perm() != want {
			t.Errorf("%s mode = %v, want %v", p, fi.Mode().Perm(), want)
		}
	}

	// Saving the same name again updates the same file and its line.
	res2 := mustSave(t, d, &Memory{Name: "testing policy", Description: "run tests with -race and -count=1", Type: TypeFeedback, Body: "Always."}, nil)
	if res2.Path != res.Path || res2.Created {
		t.Fatalf("second Save = %+v", res2)
	}
	if got := readString(t, d.Abs("MEMORY.md")); got != "- [testing policy](feedback_testing_policy.md) — run tests with -race and -count=1\n" {
		t.Errorf("MEMORY.md after update = %q", got)
	}
	// Identical content: nothing changes, no run recorded.
	res3 := mustSave(t, d, &Memory{Name: "testing policy", Description: "run tests with -race and -count=1", Type: TypeFeedback, Body: "Always."}, nil)
	if res3.Changed || res3.RunID != "" {
		t.Errorf("identical Save = %+v", res3)
	}

	for _, ref := range []string{"feedback_testing_policy.md", "feedback_testing_policy", "testing policy", "TESTING POLICY"} {
		m, err := d.Get(ctx, ref)
		if err != nil || m.Body != "Always.\n" || m.Path != res.Path {
			t.Errorf("Get(%q) = %+v, %v", ref, m, err)
		}
	}
	if _, err := d.Get(ctx, "nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Get(nope) = %v, want ErrNotFound", err)
	}

	// Undo the update: the first version comes back byte for byte.
	if _, err := d.Undo(ctx, res2.RunID, nil); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(wantFile, readString(t, d.Abs(res.Path))); diff != "" {
		t.Errorf("after undo (-want +got):\n%s", diff)
	}
	if got := readString(t, d.Abs("MEMORY.md")); got != "- [testing policy](feedback_testing_policy.md) — run tests with -race\n" {
		t.Errorf("MEMORY.md after undo = %q", got)
	}
	if _, err := d.Undo(ctx, res2.RunID, nil); err == nil {
		t.Error("undoing a run twice succeeded")
	}

	// Remove, then undo the removal: file and the exact index line return.
	ix := "# Index\n- [Custom title](feedback_testing_policy.md) — a hand-written hook\n- [Other](other.md) — x\n"
	os.WriteFile(d.Abs("MEMORY.md"), []byte(ix), 0o600)
	rm, err := d.Remove(ctx, "testing policy", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(d.Abs(res.Path)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("file still there after Remove: %v", err)
	}
	if got := readString(t, d.Abs("MEMORY.md")); got != "# Index\n- [Other](other.md) — x\n" {
		t.Errorf("MEMORY.md after Remove = %q", got)
	}
	if _, err := d.Undo(ctx, rm.RunID, nil); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(wantFile, readString(t, d.Abs(res.Path))); diff != "" {
		t.Errorf("after undoing remove (-want +got):\n%s", diff)
	}
	if got := readString(t, d.Abs("MEMORY.md")); got != "# Index\n- [Other](other.md) — x\n- [Custom title](feedback_testing_policy.md) — a hand-written hook\n" {
		t.Errorf("MEMORY.md after undoing remove = %q", got)
	}
}

func TestUndoRefusesToClobberLaterEdits(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := mustOpen(t)
	res := mustSave(t, d, &Memory{Name: "a", Description: "d", Type: TypeUser, Body: "v1"}, nil)
	os.WriteFile(d.Abs(res.Path), []byte("edited by hand"), 0o600)
	_, err := d.Undo(ctx, res.RunID, nil)
	var ce *ConflictError
	if !errors.As(err, &ce) || !errors.Is(err, ErrExists) {
		t.Fatalf("Undo = %v, want a ConflictError", err)
	}
	undo, err := d.Undo(ctx, res.RunID, &UndoOptions{Force: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(d.Abs(res.Path)); !errors.Is(err, os.ErrNotExist) {
		t.Error("forced undo of a create left the file")
	}
	// The hand edit is journaled by the undo and comes back when it is undone.
	if _, err := d.Undo(ctx, undo.ID, nil); err != nil {
		t.Fatal(err)
	}
	if got := readString(t, d.Abs(res.Path)); got != "edited by hand" {
		t.Errorf("after undoing the undo: %q", got)
	}
}

func TestTeamSaveAndRename(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := mustOpen(t)
	res := mustSave(t, d, &Memory{Name: "oncall", Description: "pager rotation", Type: TypeReference}, &SaveOptions{Team: true})
	if res.Path != "team/reference_oncall.md" {
		t.Fatalf("team Save path = %q", res.Path)
	}
	if got := readString(t, d.Abs("team/MEMORY.md")); got != "- [oncall](reference_oncall.md) — pager rotation\n" {
		t.Errorf("team/MEMORY.md = %q", got)
	}
	if _, err := os.Stat(d.Abs("MEMORY.md")); !errors.Is(err, os.ErrNotExist) {
		t.Error("team save touched the private index")
	}
	// Move it out of team/: the line moves between indexes, title kept.
	mv, err := d.Rename(ctx, "team/reference_oncall.md", "reference_oncall", nil)
	if err != nil {
		t.Fatal(err)
	}
	if mv.To != "reference_oncall.md" {
		t.Errorf("Rename to %q", mv.To)
	}
	if got := readString(t, d.Abs("team/MEMORY.md")); got != "" {
		t.Errorf("team/MEMORY.md after move = %q", got)
	}
	if got := readString(t, d.Abs("MEMORY.md")); got != "- [oncall](reference_oncall.md) — pager rotation\n" {
		t.Errorf("MEMORY.md after move = %q", got)
	}
	mustSave(t, d, &Memory{Name: "other", Description: "x", Type: TypeUser}, nil)
	if _, err := d.Rename(ctx, "reference_oncall.md", "user_other.md", nil); !errors.Is(err, ErrExists) {
		t.Errorf("Rename onto an existing file = %v, want ErrExists", err)
	}
	if _, err := d.Undo(ctx, mv.RunID, nil); err != nil {
		t.Fatal(err)
	}
	if got := readString(t, d.Abs("team/MEMORY.md")); got != "- [oncall](reference_oncall.md) — pager rotation\n" {
		t.Errorf("team/MEMORY.md after undoing the move = %q", got)
	}
}

func TestSaveRejectsHostilePaths(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := mustOpen(t)
	d.Ensure()
	outside := t.TempDir()
	if err := os.Symlink(outside, d.Abs("link")); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"../x.md", "/etc/x.md", "a\\b.md", "MEMORY.md", "team/MEMORY.md", "x.txt", "%2e%2e/x.md", "．．/x.md", ".hidden.md", "a\x00.md"} {
		if _, err := d.Save(ctx, &Memory{Path: p, Name: "n", Description: "d"}, nil); !errors.Is(err, ErrInvalid) {
			t.Errorf("Save(%q) = %v, want ErrInvalid", p, err)
		}
	}
	if _, err := d.Save(ctx, &Memory{Path: "link/evil.md", Name: "n", Description: "d"}, nil); err == nil {
		t.Error("Save through a symlink out of the directory succeeded")
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Errorf("files written outside the directory: %v", entries)
	}
	if _, err := d.Save(ctx, &Memory{Name: "n"}, nil); !errors.Is(err, ErrInvalid) {
		t.Errorf("Save without description = %v", err)
	}
}

func TestSaveReportsIndexOverLimit(t *testing.T) {
	t.Parallel()
	d := mustOpen(t)
	d.Ensure()
	var b strings.Builder
	for i := range 200 {
		fmt.Fprintf(&b, "- [M%d](m%d.md) — hook\n", i, i)
	}
	os.WriteFile(d.Abs("MEMORY.md"), []byte(b.String()), 0o600)
	res := mustSave(t, d, &Memory{Name: "one more", Description: "the 201st", Type: TypeUser}, nil)
	if !res.Index.LineTruncated || res.Index.Lines != 201 || !strings.Contains(res.Index.Warning(), "201 lines") {
		t.Errorf("Save into a full index: status %+v, warning %q", res.Index, res.Index.Warning())
	}
}

func TestSaveKeepsForeignFrontmatter(t *testing.T) {
	t.Parallel()
	d := mustOpen(t)
	d.Ensure()
	os.WriteFile(d.Abs("x.md"), []byte("---\nname: x\ndescription: old\nmetadata:\n  type: user\nmodified: 2026-01-01\n---\nbody\n"), 0o600)
	mustSave(t, d, &Memory{Path: "x.md", Name: "x", Description: "new", Type: TypeProject, Body: "body2"}, nil)
	got := readString(t, d.Abs("x.md"))
	want := "---\nname: x\ndescription: new\ntype: project\nmetadata:\n  type: project\nmodified: 2026-01-01\n---\n\nbody2\n"
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func FuzzCleanMemoryFilePath(f *testing.F) {
	for _, s := range []string{"a.md", "team/x.md", "../a.md", "a/../../b.md", "%2e%2e/a.md", "．．／a.md", "a\\b.md", "/abs.md", "MEMORY.md", "x/./y.md"} {
		f.Add(s)
	}
	root := f.TempDir()
	f.Fuzz(func(t *testing.T, name string) {
		clean, err := CleanMemoryFilePath(name)
		if err != nil {
			return
		}
		full := filepath.Join(root, filepath.FromSlash(clean))
		rel, rerr := filepath.Rel(root, full)
		if rerr != nil || strings.HasPrefix(rel, "..") || !filepath.IsLocal(rel) {
			t.Fatalf("CleanMemoryFilePath(%q) = %q escapes the root", name, clean)
		}
		if !strings.HasSuffix(clean, ".md") || strings.EqualFold(filepath.Base(clean), "MEMORY.md") {
			t.Fatalf("CleanMemoryFilePath(%q) = %q is not a memory file", name, clean)
		}
		if strings.ContainsAny(clean, "\\\x00") {
			t.Fatalf("CleanMemoryFilePath(%q) = %q has a forbidden character", name, clean)
		}
	})
}

// TestConcurrentProcesses has 8 processes each save 100 memories into one
// directory at once: every file and every index line must survive.
func TestConcurrentProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	const procs, each = 8, 100
	base := t.TempDir()
	dir := filepath.Join(base, "memory")
	cmds := make([]*exec.Cmd, procs)
	for p := range procs {
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(), "MEMDIR_TEST_SAVER=1", "MEMDIR_TEST_DIR="+dir,
			"MEMDIR_TEST_PROC="+strconv.Itoa(p), "MEMDIR_TEST_EACH="+strconv.Itoa(each),
			"MEMDIR_STATE_DIR="+filepath.Join(base, "state"))
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds[p] = cmd
	}
	for p, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("saver %d: %v", p, err)
		}
	}
	d, err := Open(dir, &Options{Journal: NewJournal(filepath.Join(base, "state"), nil)})
	if err != nil {
		t.Fatal(err)
	}
	res, err := d.Scan(context.Background(), &ScanOptions{Limit: -1})
	if err != nil {
		t.Fatal(err)
	}
	if res.Total != procs*each || len(res.Problems) != 0 {
		t.Fatalf("scan found %d memories and problems %v, want %d and none", res.Total, res.Problems, procs*each)
	}
	ix, err := d.ReadIndex(false)
	if err != nil {
		t.Fatal(err)
	}
	lines := ix.Lines()
	if len(lines) != procs*each || len(ix.Entries()) != procs*each {
		t.Fatalf("MEMORY.md has %d lines, %d entries; want %d", len(lines), len(ix.Entries()), procs*each)
	}
	seen := map[string]bool{}
	for _, e := range ix.Entries() {
		if seen[e.Path()] {
			t.Fatalf("duplicate index line for %s", e.Path())
		}
		seen[e.Path()] = true
		if _, err := os.Stat(d.Abs(e.Path())); err != nil {
			t.Fatalf("index points at a missing file: %v", err)
		}
	}
	if leftovers, _ := filepath.Glob(filepath.Join(dir, ".*tmp*")); len(leftovers) > 0 {
		t.Errorf("temp files left behind: %v", leftovers)
	}
}

// runSaver is the body of one saver process in TestConcurrentProcesses,
// entered from TestMain.
func runSaver() error {
	d, err := Open(os.Getenv("MEMDIR_TEST_DIR"), nil)
	if err != nil {
		return err
	}
	p := os.Getenv("MEMDIR_TEST_PROC")
	n, _ := strconv.Atoi(os.Getenv("MEMDIR_TEST_EACH"))
	for i := range n {
		m := &Memory{Path: fmt.Sprintf("p%s_m%03d.md", p, i), Name: fmt.Sprintf("p%s m%d", p, i), Description: "saved concurrently at " + time.Now().Format(time.RFC3339Nano), Type: TypeProject, Body: "body"}
		if _, err := d.Save(context.Background(), m, nil); err != nil {
			return err
		}
	}
	return nil
}

func TestMain(m *testing.M) {
	if os.Getenv("MEMDIR_TEST_SAVER") == "1" {
		if err := runSaver(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func TestUndoKeepsIndexLinesInPlace(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := mustOpen(t)
	for _, n := range []string{"a", "b", "c"} {
		mustSave(t, d, &Memory{Name: n, Description: n + " v1", Type: TypeUser, Body: n}, nil)
	}
	before := readString(t, d.Abs("MEMORY.md"))
	res := mustSave(t, d, &Memory{Name: "b", Description: "b v2", Type: TypeUser, Body: "b2"}, nil)
	if _, err := d.Undo(ctx, res.RunID, nil); err != nil {
		t.Fatal(err)
	}
	if got := readString(t, d.Abs("MEMORY.md")); got != before {
		t.Errorf("undo moved or changed index lines:\n got %q\nwant %q", got, before)
	}
}

func TestUndoLeavesUnnotedIndexLinesAlone(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := mustOpen(t)
	mustSave(t, d, &Memory{Name: "a", Description: "first", Type: TypeUser, Body: "a"}, nil)
	index := readString(t, d.Abs("MEMORY.md"))
	// A run that journals a memory without noting its index lines, as an
	// agent run does when it edits a file and leaves MEMORY.md alone.
	rec, _ := d.Journal().Begin("extract", d.Path())
	if err := rec.Before("user_a.md"); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(d.Abs("user_a.md"), []byte("---\nname: a\ndescription: edited\ntype: user\n---\nx\n"), 0o600)
	run, err := rec.Finish(nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Undo(ctx, run.ID, nil); err != nil {
		t.Fatal(err)
	}
	if got := readString(t, d.Abs("MEMORY.md")); got != index {
		t.Errorf("undo changed a line it knew nothing about: %q, want %q", got, index)
	}
}

func TestUndoDoesNotCreateAnEmptyIndex(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := mustOpen(t)
	d.Ensure()
	rec, _ := d.Journal().Begin("mcp", d.Path())
	rec.Before("new.md")
	os.WriteFile(d.Abs("new.md"), []byte("---\nname: n\ndescription: d\n---\n"), 0o600)
	run, _ := rec.Finish(nil)
	if _, err := d.Undo(ctx, run.ID, nil); err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(d.Path()); len(entries) != 0 {
		t.Errorf("undo of a create left %v behind", entries)
	}
}
