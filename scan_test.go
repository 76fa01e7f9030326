package memdir

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func writeMemFile(tb testing.TB, dir, rel, content string, mtime time.Time) {
	tb.Helper()
	p := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		tb.Fatal(err)
	}
	if err := os.Chtimes(p, mtime, mtime); err != nil {
		tb.Fatal(err)
	}
}

func TestScan(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	t0 := time.Date(2026, 3, 5, 10, 0, 0, 0, time.UTC)
	writeMemFile(t, dir, "user_role.md", "---\nname: role\ndescription: backend lead\ntype: user\n---\nx", t0)
	writeMemFile(t, dir, "team/oncall.md", "---\nname: oncall\ndescription: pager rota\ntype: reference\n---\n", t0.Add(time.Hour))
	writeMemFile(t, dir, "notes.md", "just text, no frontmatter", t0.Add(-time.Hour))
	writeMemFile(t, dir, "odd.md", "---\nname: odd\ndescription: weird type\ntype: Idea\n---\n", t0.Add(-2*time.Hour))
	writeMemFile(t, dir, "long.md", "---\nname: long\n"+strings.Repeat("x: y\n", 40)+"---\n", t0.Add(-3*time.Hour))
	writeMemFile(t, dir, "bin.md", "---\x00\x01binary", t0)
	writeMemFile(t, dir, "MEMORY.md", "- [role](user_role.md) — backend lead", t0.Add(5*time.Hour))
	writeMemFile(t, dir, "team/MEMORY.md", "x", t0.Add(5*time.Hour))
	writeMemFile(t, dir, "logs/2026/03/2026-03-05.md", "- 10:00 note", t0.Add(-4*time.Hour))
	writeMemFile(t, dir, "data.json", "{}", t0)
	outside := t.TempDir()
	writeMemFile(t, outside, "secret.md", "---\nname: s\ndescription: outside\n---\n", t0)
	os.Symlink(filepath.Join(outside, "secret.md"), filepath.Join(dir, "escape.md"))

	res, err := ScanDir(context.Background(), dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, h := range res.Memories {
		paths = append(paths, h.Path)
	}
	want := []string{"team/oncall.md", "user_role.md", "notes.md", "odd.md", "long.md", "logs/2026/03/2026-03-05.md"}
	if diff := cmp.Diff(want, paths); diff != "" {
		t.Errorf("scan order (-want +got):\n%s", diff)
	}
	kinds := map[string]ProblemKind{}
	for _, p := range res.Problems {
		if p.Kind != ProblemNoFront || p.Path != "logs/2026/03/2026-03-05.md" {
			kinds[p.Path] = p.Kind
		}
	}
	wantKinds := map[string]ProblemKind{
		"bin.md": ProblemBinary, "notes.md": ProblemNoFront, "odd.md": ProblemUntyped,
		"long.md": ProblemUnclosed, "escape.md": ProblemRead,
	}
	if diff := cmp.Diff(wantKinds, kinds); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
	// Newest first, as the selector's manifest lists them (see package
	// recall for its lines).
	var order []string
	for _, h := range res.Memories {
		order = append(order, h.Path)
	}
	wantOrder := []string{"team/oncall.md", "user_role.md", "notes.md", "odd.md", "long.md", "logs/2026/03/2026-03-05.md"}
	if diff := cmp.Diff(wantOrder, order); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
}

func TestScanCap(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range 230 {
		writeMemFile(t, dir, fmt.Sprintf("m%03d.md", i), fmt.Sprintf("---\nname: m%d\ndescription: d\ntype: user\n---\n", i), t0.Add(time.Duration(i)*time.Minute))
	}
	res, err := ScanDir(context.Background(), dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Memories) != 200 || res.Total != 230 || res.Memories[0].Path != "m229.md" || res.Memories[199].Path != "m030.md" {
		t.Errorf("default cap: %d memories of %d, first %s, last %s", len(res.Memories), res.Total, res.Memories[0].Path, res.Memories[199].Path)
	}
	res, _ = ScanDir(context.Background(), dir, &ScanOptions{Limit: -1})
	if len(res.Memories) != 230 {
		t.Errorf("uncapped scan returned %d", len(res.Memories))
	}
	d, _ := Open(dir, &Options{Journal: NewJournal(t.TempDir(), nil)})
	if res, err := d.Scan(context.Background(), &ScanOptions{Limit: -1}); err != nil || len(res.Memories) != 230 {
		t.Errorf("List returned %d, %v; want every memory", len(res.Memories), err)
	}
	if res, err := ScanDir(context.Background(), filepath.Join(dir, "missing"), nil); err != nil || len(res.Memories) != 0 {
		t.Errorf("missing dir: %v, %v", res, err)
	}
}

func TestScanReadsOnlyFirstLines(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	// A frontmatter that closes on line 31 is not seen, as in Claude Code.
	writeMemFile(t, dir, "a.md", "---\nname: a\n"+strings.Repeat("k: v\n", 28)+"---\n", time.Now())
	// A huge single-line file does not make the scan read it all.
	writeMemFile(t, dir, "b.md", "---\nname: b\ndescription: big\n---\n"+strings.Repeat("z", 10<<20), time.Now())
	res, err := ScanDir(context.Background(), dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range res.Memories {
		switch h.Path {
		case "a.md":
			if h.HasFrontmatter || h.Name != "" {
				t.Errorf("a.md frontmatter read past line 30: %+v", h)
			}
		case "b.md":
			if h.Description != "big" || h.Size < 10<<20 {
				t.Errorf("b.md = %+v", h)
			}
		}
	}
}

func TestScanSameAsThroughRoot(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	dir := filepath.Join(base, "mem")
	t0 := time.Date(2026, 3, 5, 10, 0, 0, 0, time.UTC)
	good := "---\nname: n\ndescription: d\ntype: user\n---\nbody\n"
	files := map[string]string{
		"a.md":                good,
		"a/x.md":              good, // WalkDir order: a/ before a.md
		"b/c/deep.md":         "---\nname: deep\ntype: nonsense\n---\n",
		"b/MEMORY.md":         "- [x](x.md)\n",
		"MEMORY.md":           "- [a](a.md)\n",
		"nofront.md":          "just text\n",
		"binary.md":           "---\nname: b\x00\n---\n",
		"unclosed.md":         "---\nname: u\n" + strings.Repeat("x\n", 40),
		"broken.md":           "---\nname: [unclosed\ndescription: d\n---\n",
		"notes.txt":           "not a memory",
		"dir.md/inside.md":    good,
		"team/MEMORY.md":      "",
		"team/reference_x.md": good,
	}
	for rel, c := range files {
		writeMemFile(t, dir, rel, c, t0)
	}
	outside := filepath.Join(base, "outside.md")
	writeMemFile(t, base, "outside.md", good, t0)
	for name, target := range map[string]string{"link-in.md": "a.md", "link-out.md": outside, "dangling.md": "gone.md", "linkdir": "b"} {
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	got, err := ScanDir(ctx, dir, &ScanOptions{Limit: -1})
	if err != nil {
		t.Fatal(err)
	}
	// Every file through the root, as scans did before.
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	tree, err := walkMemoryFiles(root)
	if err != nil {
		t.Fatal(err)
	}
	want := &ScanResult{}
	for _, rel := range tree.rels {
		h, probs, ok, _ := scanFile(root, rel, nil)
		h.AbsPath = filepath.Join(dir, filepath.FromSlash(rel))
		want.Problems = append(want.Problems, probs...)
		if ok {
			want.Memories = append(want.Memories, h)
		}
	}
	SortHeaders(want.Memories)
	want.Total = len(want.Memories)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("scan differs from reading through the root (-want +got):\n%s", diff)
	}
	if len(got.Memories) < 8 || len(got.Problems) < 5 {
		t.Errorf("the tree should give many memories and problems: %d, %d", len(got.Memories), len(got.Problems))
	}
}
