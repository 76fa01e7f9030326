package anchors_test

import (
	"context"
	"strings"
	"testing"

	"github.com/memdir/memdir/anchors"
	"github.com/memdir/memdir/memdirtest"
)

const tokenGo = "package auth\n\n// RefreshToken renews a session token.\nfunc RefreshToken(old string) (string, error) {\n\treturn old, nil\n}\n"

func TestFind(t *testing.T) {
	t.Parallel()
	r := memdirtest.NewGitRepo(t)
	r.Commit(map[string]string{
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
	as := anchors.Find(context.Background(), r.Root, text)
	got := map[string]anchors.Anchor{}
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
	want := strings.TrimSpace(r.Git("hash-object", "internal/auth/token.go"))
	if h := got["internal/auth/token.go"].Hash; h != "git:"+want {
		t.Errorf("hash = %s, want git:%s", h, want)
	}
	// The frontmatter form reads back as written.
	back, err := anchors.Parse(anchors.Format(as))
	if err != nil || len(back) != len(as) || back[0] != as[0] {
		t.Errorf("anchors.Parse(anchors.Format) = %v, %v; want %v", back, err, as)
	}
}
