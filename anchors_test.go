package memdir

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// gitRepo is a fixture repository in a temporary directory.
type gitRepo struct {
	tb   testing.TB
	root string
	n    int
}

func newGitRepo(tb testing.TB) *gitRepo {
	tb.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		tb.Fatalf("git is needed for the anchor fixtures: %v", err)
	}
	root, _ := filepath.EvalSymlinks(tb.TempDir())
	r := &gitRepo{tb: tb, root: root}
	r.git("init", "-q", "-b", "main")
	return r
}

func (r *gitRepo) git(args ...string) string {
	r.tb.Helper()
	cmd := exec.Command("git", append([]string{"-C", r.root}, args...)...)
	cmd.Env = append(os.Environ(),
		"GIT_AUTHOR_NAME=Fixture", "GIT_AUTHOR_EMAIL=fixture@example.com",
		"GIT_COMMITTER_NAME=Fixture", "GIT_COMMITTER_EMAIL=fixture@example.com",
		"GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		r.tb.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// commit writes files (path → content; "" deletes) and commits them.
func (r *gitRepo) commit(files map[string]string) {
	r.tb.Helper()
	for p, c := range files {
		abs := filepath.Join(r.root, filepath.FromSlash(p))
		if c == "" {
			r.git("rm", "-q", p)
			continue
		}
		if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
			r.tb.Fatal(err)
		}
		if err := os.WriteFile(abs, []byte(c), 0o644); err != nil {
			r.tb.Fatal(err)
		}
		// A distinct mtime for every write, so the stat check sees it.
		r.n++
		mt := time.Date(2026, 1, 1, 0, 0, r.n, 0, time.UTC)
		os.Chtimes(abs, mt, mt)
		r.git("add", p)
	}
	r.git("commit", "-q", "-m", "change")
}

const tokenGo = "package auth\n\n// RefreshToken renews a session token.\nfunc RefreshToken(old string) (string, error) {\n\treturn old, nil\n}\n"

func TestFindAnchors(t *testing.T) {
	r := newGitRepo(t)
	r.commit(map[string]string{
		"internal/auth/token.go": tokenGo,
		"internal/auth/other.go": "package auth\n\ntype (s *Store) Lookup() {}\n",
		"tools/gen.py":           "import os\n\nclass Generator:\n    def emit_all(self):\n        pass\n",
		"web/src/api.ts":         "export async function fetchUser(id: string) {}\nexport interface UserRecord {}\n",
		"cmd/a.go":               "package main\n\nfunc Shared() {}\n",
		"cmd/b.go":               "package main\n\nfunc Shared() {}\n",
		"README.md":              "hi\n",
	})
	text := "Tokens are renewed by `RefreshToken`; see internal/auth/other.go:3 and `README.md`. " +
		"The `Generator` class and `fetchUser` live elsewhere; `Shared` is ambiguous; docs/missing.md does not exist. UserRecord too."
	as := FindAnchors(context.Background(), r.root, text)
	got := map[string]Anchor{}
	for _, a := range as {
		got[a.Path] = a
	}
	if a, ok := got["internal/auth/token.go"]; !ok || a.Symbol != "RefreshToken" || a.Line != 4 || !strings.HasPrefix(a.Hash, "git:") {
		t.Errorf("RefreshToken anchor = %+v (all: %v)", a, as)
	}
	if a := got["internal/auth/other.go"]; a.Line != 3 || a.Symbol != "" {
		t.Errorf("path:line anchor = %+v", a)
	}
	if _, ok := got["README.md"]; !ok {
		t.Errorf("no README.md anchor: %v", as)
	}
	if a := got["tools/gen.py"]; a.Symbol != "Generator" {
		t.Errorf("python class anchor = %+v", a)
	}
	if a := got["web/src/api.ts"]; a.Symbol != "fetchUser" {
		t.Errorf("typescript function anchor = %+v", a)
	}
	for _, p := range []string{"cmd/a.go", "cmd/b.go", "docs/missing.md"} {
		if _, ok := got[p]; ok {
			t.Errorf("anchored %s: %v", p, as)
		}
	}
	// The recorded hash is git's blob id for the file.
	want := strings.TrimSpace(r.git("hash-object", "internal/auth/token.go"))
	if h := got["internal/auth/token.go"].Hash; h != "git:"+want {
		t.Errorf("hash = %s, want git:%s", h, want)
	}
	// The frontmatter form reads back as written.
	back, err := ParseAnchors(FormatAnchors(as))
	if err != nil || len(back) != len(as) || back[0] != as[0] {
		t.Errorf("ParseAnchors(FormatAnchors) = %v, %v; want %v", back, err, as)
	}
}

func TestAnchorsSaveRecallCheckRefresh(t *testing.T) {
	ctx := context.Background()
	r := newGitRepo(t)
	r.commit(map[string]string{"internal/auth/token.go": tokenGo, "main.go": "package main\n"})
	d, err := Open(filepath.Join(t.TempDir(), "memory"), &Options{ProjectRoot: r.root, Journal: NewJournal(t.TempDir(), nil)})
	if err != nil {
		t.Fatal(err)
	}
	m := &Memory{Name: "token refresh", Description: "how session tokens are renewed", Type: TypeProject,
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
	recall := func() Recalled {
		t.Helper()
		rr, err := d.Recall(ctx, "session tokens renewed", nil)
		if err != nil || len(rr.Memories) != 1 {
			t.Fatalf("recall: %v, %+v", err, rr)
		}
		return rr.Memories[0]
	}
	if got := recall(); len(got.StaleAnchors) != 0 || strings.Contains(got.Header, "changed since") {
		t.Errorf("fresh memory reported stale: %+v", got)
	}
	// A touch without a change is not stale.
	abs := filepath.Join(r.root, "internal", "auth", "token.go")
	later := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	os.Chtimes(abs, later, later)
	if got := recall(); len(got.StaleAnchors) != 0 {
		t.Errorf("touched file reported stale: %+v", got.StaleAnchors)
	}

	r.commit(map[string]string{"internal/auth/token.go": strings.Replace(tokenGo, "return old, nil", "return rotate(old)", 1)})
	r.commit(map[string]string{"internal/auth/token.go": tokenGo + "\nfunc rotate(s string) (string, error) { return s, nil }\n"})
	got := recall()
	if len(got.StaleAnchors) != 1 || got.StaleAnchors[0].State != AnchorChanged || got.StaleAnchors[0].Commits != 2 {
		t.Fatalf("stale anchors = %+v", got.StaleAnchors)
	}
	if !strings.Contains(got.Header, "changed since this memory was written: internal/auth/token.go (2 commits)") {
		t.Errorf("header does not report the change:\n%s", got.Header)
	}
	rep, err := d.Check(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if f := findingOf(rep, FindStaleAnchor); f == nil || f.Path != res.Path || !strings.Contains(f.Message, "internal/auth/token.go") {
		t.Errorf("doctor: no stale-anchor finding: %+v", rep.Findings)
	}
	ch := AnchorChanges(ctx, r.root, as)
	if len(ch) != 1 || !strings.Contains(ch[0].Summary, "2 commit(s)") || !strings.HasPrefix(ch[0].Summary, "+") {
		t.Errorf("change summary = %+v", ch)
	}

	r.commit(map[string]string{"internal/auth/token.go": ""})
	got = recall()
	if len(got.StaleAnchors) != 1 || got.StaleAnchors[0].State != AnchorGone || !strings.Contains(got.Header, "no longer exist: internal/auth/token.go") {
		t.Errorf("deleted file: %+v\n%s", got.StaleAnchors, got.Header)
	}
	rep, _ = d.Check(ctx)
	if f := findingOf(rep, FindAnchorGone); f == nil {
		t.Errorf("doctor: no anchor-gone finding: %+v", rep.Findings)
	}

	// The file returns under a new form; a person checks the memory and
	// refreshes its anchors, in a journaled run.
	r.commit(map[string]string{"internal/auth/token.go": tokenGo + "// v2\n"})
	before, _ := os.ReadFile(d.Abs(res.Path))
	ref, err := d.RefreshAnchors(ctx, res.Path)
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
	ctx := context.Background()
	r := newGitRepo(t)
	r.commit(map[string]string{"internal/auth/token.go": tokenGo})
	d, err := Open(filepath.Join(t.TempDir(), "memory"), &Options{Journal: NewJournal(t.TempDir(), nil)})
	if err != nil {
		t.Fatal(err)
	}
	res, err := d.Save(ctx, &Memory{Name: "n", Description: "d", Body: "`internal/auth/token.go`"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(d.Abs(res.Path))
	if strings.Contains(string(b), AnchorsKey) {
		t.Errorf("anchors recorded without a project root:\n%s", b)
	}
}

func TestAnchorsKeyKeptOnRewrite(t *testing.T) {
	src := "---\nname: n\ndescription: d\ntype: user\nanchors: a.go git:0123 5 6\nowner: me\n---\n\nbody\n"
	m, _ := ParseMemory([]byte(src))
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

func findingOf(rep *CheckReport, k FindingKind) *Finding {
	for i := range rep.Findings {
		if rep.Findings[i].Kind == k {
			return &rep.Findings[i]
		}
	}
	return nil
}

func TestAnchorContentKeepsTheRestAsWritten(t *testing.T) {
	ctx := context.Background()
	r := newGitRepo(t)
	r.commit(map[string]string{"internal/auth/token.go": tokenGo})
	src := "---\nname: token\ndescription:   renewal via `RefreshToken`\ntype: project\nowner: 'me'\n---\nBody names internal/auth/token.go.\n\n\n"
	out := string(AnchorContent(ctx, r.root, []byte(src)))
	want := "---\nname: token\ndescription:   renewal via `RefreshToken`\ntype: project\nowner: 'me'\nanchors: internal/auth/token.go:4#RefreshToken git:"
	if !strings.HasPrefix(out, want) || !strings.HasSuffix(out, "\n---\nBody names internal/auth/token.go.\n\n\n") {
		t.Fatalf("AnchorContent:\n%s", out)
	}
	// Written again unchanged, it is stable; with the names gone, the line goes.
	if again := string(AnchorContent(ctx, r.root, []byte(out))); again != out {
		t.Errorf("not stable:\n%s\n---\n%s", out, again)
	}
	gone := strings.ReplaceAll(strings.ReplaceAll(out, "`RefreshToken`", "it"), "Body names internal/auth/token.go.", "Body.")
	if got := string(AnchorContent(ctx, r.root, []byte(gone))); strings.Contains(got, "anchors:") {
		t.Errorf("stale anchors line kept:\n%s", got)
	}
	if got := AnchorContent(ctx, r.root, []byte("no frontmatter `internal/auth/token.go`\n")); string(got) != "no frontmatter `internal/auth/token.go`\n" {
		t.Errorf("content without frontmatter changed: %q", got)
	}
}
func TestTeamMemoryWithAnchorsPassesSecretScan(t *testing.T) {
	ctx := context.Background()
	r := newGitRepo(t)
	r.commit(map[string]string{"internal/auth/token.go": tokenGo, "internal/auth/keys.go": "package auth\n"})
	d, err := Open(filepath.Join(t.TempDir(), "memory"), &Options{ProjectRoot: r.root, Journal: NewJournal(t.TempDir(), nil)})
	if err != nil {
		t.Fatal(err)
	}
	res, err := d.Save(ctx, &Memory{Name: "tok", Description: "renewal", Type: TypeProject,
		Body: "`RefreshToken` and internal/auth/keys.go"}, &SaveOptions{Team: true})
	if err != nil {
		t.Fatalf("team save with anchors: %v", err)
	}
	m, _ := d.Get(ctx, res.Path)
	if as, _ := m.Anchors(); len(as) != 2 {
		t.Errorf("anchors = %v", as)
	}
}
