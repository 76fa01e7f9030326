package memdir_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/anchors"
	"github.com/memdir/memdir/doctor"
	"github.com/memdir/memdir/memdirtest"
	"github.com/memdir/memdir/recall"
)

const tokenGo = "package auth\n\n// RefreshToken renews a session token.\nfunc RefreshToken(old string) (string, error) {\n\treturn old, nil\n}\n"

func TestAnchorsSaveRecallCheckRefresh(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := memdirtest.NewGitRepo(t)
	r.Commit(map[string]string{"internal/auth/token.go": tokenGo, "main.go": "package main\n"})
	d, err := memdir.Open(filepath.Join(t.TempDir(), "memory"), &memdir.Options{ProjectRoot: r.Root, Journal: memdir.NewJournal(t.TempDir(), nil)})
	if err != nil {
		t.Fatal(err)
	}
	m := &memdir.Memory{Name: "token refresh", Description: "how session tokens are renewed", Type: memdir.TypeProject,
		Body: "Tokens are renewed by `RefreshToken` in `internal/auth/token.go`; it never rotates the signing key."}
	res, err := d.Save(ctx, m, nil)
	if err != nil {
		t.Fatal(err)
	}
	saved, err := d.Get(ctx, res.Path)
	if err != nil {
		t.Fatal(err)
	}
	as, err := saved.Anchors()
	if err != nil || len(as) != 1 || as[0].Path != "internal/auth/token.go" {
		t.Fatalf("saved anchors = %v, %v", as, err)
	}
	recall := func() recall.Recalled {
		t.Helper()
		rr, err := recall.Recall(ctx, d, "session tokens renewed", nil)
		if err != nil || len(rr.Memories) != 1 {
			t.Fatalf("recall: %v, %+v", err, rr)
		}
		return rr.Memories[0]
	}
	if got := recall(); len(got.StaleAnchors) != 0 || strings.Contains(got.Header, "changed since") {
		t.Errorf("fresh memory reported stale: %+v", got)
	}
	// A touch without a change is not stale.
	abs := filepath.Join(r.Root, "internal", "auth", "token.go")
	later := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	os.Chtimes(abs, later, later)
	if got := recall(); len(got.StaleAnchors) != 0 {
		t.Errorf("touched file reported stale: %+v", got.StaleAnchors)
	}

	r.Commit(map[string]string{"internal/auth/token.go": strings.Replace(tokenGo, "return old, nil", "return rotate(old)", 1)})
	r.Commit(map[string]string{"internal/auth/token.go": tokenGo + "\nfunc rotate(s string) (string, error) { return s, nil }\n"})
	got := recall()
	if len(got.StaleAnchors) != 1 || got.StaleAnchors[0].State != anchors.Changed || got.StaleAnchors[0].Commits != 2 {
		t.Fatalf("stale anchors = %+v", got.StaleAnchors)
	}
	if !strings.Contains(got.Header, "changed since this memory was written: internal/auth/token.go (2 commits)") {
		t.Errorf("header does not report the change:\n%s", got.Header)
	}
	rep, err := doctor.Check(ctx, d)
	if err != nil {
		t.Fatal(err)
	}
	if f := findingOf(rep, doctor.FindStaleAnchor); f == nil || f.Path != res.Path || !strings.Contains(f.Message, "internal/auth/token.go") {
		t.Errorf("doctor: no stale-anchor finding: %+v", rep.Findings)
	}
	ch := anchors.Changes(ctx, r.Root, as)
	if len(ch) != 1 || !strings.Contains(ch[0].Summary, "2 commit(s)") || !strings.HasPrefix(ch[0].Summary, "+") {
		t.Errorf("change summary = %+v", ch)
	}

	r.Commit(map[string]string{"internal/auth/token.go": ""})
	got = recall()
	if len(got.StaleAnchors) != 1 || got.StaleAnchors[0].State != anchors.Gone || !strings.Contains(got.Header, "no longer exist: internal/auth/token.go") {
		t.Errorf("deleted file: %+v\n%s", got.StaleAnchors, got.Header)
	}
	rep, _ = doctor.Check(ctx, d)
	if f := findingOf(rep, doctor.FindAnchorGone); f == nil {
		t.Errorf("doctor: no anchor-gone finding: %+v", rep.Findings)
	}

	// The file returns under a new form; a person checks the memory and
	// refreshes its anchors, in a journaled run.
	r.Commit(map[string]string{"internal/auth/token.go": tokenGo + "// v2\n"})
	before, _ := os.ReadFile(d.Abs(res.Path))
	ref, err := doctor.RefreshAnchors(ctx, d, res.Path)
	if err != nil {
		t.Fatal(err)
	}
	if ref.RunID == "" || len(ref.Anchors) != 1 {
		t.Fatalf("refresh = %+v", ref)
	}
	if got := recall(); len(got.StaleAnchors) != 0 {
		t.Errorf("after refresh still stale: %+v", got.StaleAnchors)
	}
	after, _ := d.Get(ctx, res.Path)
	if after.Body != saved.Body || after.Description != saved.Description {
		t.Errorf("refresh changed the memory's meaning")
	}
	if _, err := d.Undo(ctx, ref.RunID, nil); err != nil {
		t.Fatal(err)
	}
	if undone, _ := os.ReadFile(d.Abs(res.Path)); string(undone) != string(before) {
		t.Errorf("undo did not restore the anchors")
	}
}

func TestAnchorsOffWithoutProjectRoot(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := memdirtest.NewGitRepo(t)
	r.Commit(map[string]string{"internal/auth/token.go": tokenGo})
	d, err := memdir.Open(filepath.Join(t.TempDir(), "memory"), &memdir.Options{Journal: memdir.NewJournal(t.TempDir(), nil)})
	if err != nil {
		t.Fatal(err)
	}
	res, err := d.Save(ctx, &memdir.Memory{Name: "n", Description: "d", Body: "`internal/auth/token.go`"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(d.Abs(res.Path))
	if strings.Contains(string(b), anchors.Key) {
		t.Errorf("anchors recorded without a project root:\n%s", b)
	}
}

func TestAnchorsKeyKeptOnRewrite(t *testing.T) {
	t.Parallel()
	src := "---\nname: n\ndescription: d\ntype: user\nanchors: a.go git:0123 5 6\nowner: me\n---\n\nbody\n"
	m, _ := memdir.ParseMemory([]byte(src))
	m.Body = "changed"
	out := string(m.Format())
	if !strings.Contains(out, "anchors: a.go git:0123 5 6\nowner: me\n") {
		t.Errorf("rewrite lost the anchors key:\n%s", out)
	}
	m.SetAnchors(nil)
	if out := string(m.Format()); strings.Contains(out, "anchors") || !strings.Contains(out, "owner: me") {
		t.Errorf("SetAnchors(nil):\n%s", out)
	}
}

func findingOf(rep *doctor.Report, k doctor.FindingKind) *doctor.Finding {
	for i := range rep.Findings {
		if rep.Findings[i].Kind == k {
			return &rep.Findings[i]
		}
	}
	return nil
}

func TestAnchorContentKeepsTheRestAsWritten(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := memdirtest.NewGitRepo(t)
	r.Commit(map[string]string{"internal/auth/token.go": tokenGo})
	src := "---\nname: token\ndescription:   renewal via `RefreshToken`\ntype: project\nowner: 'me'\n---\nBody names internal/auth/token.go.\n\n\n"
	out := string(memdir.AnchorContent(ctx, r.Root, []byte(src)))
	want := "---\nname: token\ndescription:   renewal via `RefreshToken`\ntype: project\nowner: 'me'\nanchors: internal/auth/token.go:4#RefreshToken git:"
	if !strings.HasPrefix(out, want) || !strings.HasSuffix(out, "\n---\nBody names internal/auth/token.go.\n\n\n") {
		t.Fatalf("AnchorContent:\n%s", out)
	}
	// Written again unchanged, it is stable; with the names gone, the line goes.
	if again := string(memdir.AnchorContent(ctx, r.Root, []byte(out))); again != out {
		t.Errorf("not stable:\n%s\n---\n%s", out, again)
	}
	gone := strings.ReplaceAll(strings.ReplaceAll(out, "`RefreshToken`", "it"), "Body names internal/auth/token.go.", "Body.")
	if got := string(memdir.AnchorContent(ctx, r.Root, []byte(gone))); strings.Contains(got, "anchors:") {
		t.Errorf("stale anchors line kept:\n%s", got)
	}
	if got := memdir.AnchorContent(ctx, r.Root, []byte("no frontmatter `internal/auth/token.go`\n")); string(got) != "no frontmatter `internal/auth/token.go`\n" {
		t.Errorf("content without frontmatter changed: %q", got)
	}
}
func TestTeamMemoryWithAnchorsPassesSecretScan(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := memdirtest.NewGitRepo(t)
	r.Commit(map[string]string{"internal/auth/token.go": tokenGo, "internal/auth/keys.go": "package auth\n"})
	d, err := memdir.Open(filepath.Join(t.TempDir(), "memory"), &memdir.Options{ProjectRoot: r.Root, Journal: memdir.NewJournal(t.TempDir(), nil)})
	if err != nil {
		t.Fatal(err)
	}
	res, err := d.Save(ctx, &memdir.Memory{Name: "tok", Description: "renewal", Type: memdir.TypeProject,
		Body: "`RefreshToken` and internal/auth/keys.go"}, &memdir.SaveOptions{Team: true})
	if err != nil {
		t.Fatalf("team save with anchors: %v", err)
	}
	m, _ := d.Get(ctx, res.Path)
	if as, _ := m.Anchors(); len(as) != 2 {
		t.Errorf("anchors = %v", as)
	}
}
