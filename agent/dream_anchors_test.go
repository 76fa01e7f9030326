package agent_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/agent"
	"github.com/memdir/memdir/llm"
	"github.com/memdir/memdir/memdirtest"
)

func TestDreamGetsStaleMemoriesFirst(t *testing.T) {
	ctx := context.Background()
	w := newDreamWorld(t)
	repo, _ := filepath.EvalSymlinks(t.TempDir())
	memdirtest.Git(t, repo, "init", "-q", "-b", "main")
	tok := filepath.Join(repo, "internal", "auth", "token.go")
	os.MkdirAll(filepath.Dir(tok), 0o755)
	os.WriteFile(tok, []byte("package auth\n\nfunc RefreshToken() {}\n"), 0o644)
	memdirtest.Git(t, repo, "add", ".")
	memdirtest.Git(t, repo, "commit", "-q", "-m", "token")

	d, err := memdir.Open(w.dir.Path(), &memdir.Options{ProjectRoot: repo, Journal: w.dir.Journal()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Save(ctx, &memdir.Memory{Name: "token refresh", Description: "session renewal", Type: memdir.TypeProject,
		Body: "Renewal is `RefreshToken` in internal/auth/token.go."}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Save(ctx, &memdir.Memory{Name: "unrelated", Description: "no code", Type: memdir.TypeUser, Body: "Prefers short answers."}, nil); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(tok, []byte("package auth\n\nfunc RefreshToken() {}\nfunc rotate() {}\n"), 0o644)
	memdirtest.Git(t, repo, "commit", "-q", "-am", "rotate")

	created := "---\nname: rotation\ndescription: tokens rotate\ntype: project\n---\n`RefreshToken` now calls rotate.\n"
	w.srv.Enqueue(
		reply(llm.Usage{InputTokens: 100}, use("t1", "memory", mustJSON(map[string]string{"command": "create", "path": "/memories/project_rotation.md", "file_text": created}))),
		memdirtest.TextReply("Checked the token memory."))
	o := w.opts(t)
	o.Dir, o.Force = d, true
	res, err := agent.Dream(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Stale) != 1 || res.Stale[0].Path != "project_token_refresh.md" {
		t.Fatalf("stale = %+v", res.Stale)
	}
	sys := w.srv.LastRequest().System
	i, j := strings.Index(sys, "memories the code has moved away from"), strings.Index(sys, "Phase 1")
	if i < 0 || j < i {
		t.Fatalf("system prompt has no stale section before phase 1:\n%s", sys)
	}
	section := sys[i:j]
	if !strings.Contains(section, "/memories/project_token_refresh.md") || !strings.Contains(section, "`internal/auth/token.go` changed: +1 -0 lines in 1 commit(s)") {
		t.Errorf("stale section:\n%s", section)
	}
	// What the agent writes through the memory tool gets anchors too.
	m, err := d.Get(ctx, "project_rotation.md")
	if err != nil {
		t.Fatal(err)
	}
	if as, err := m.Anchors(); err != nil || len(as) != 1 || as[0].Path != "internal/auth/token.go" || as[0].Symbol != "RefreshToken" {
		t.Errorf("anchors of the dream's new memory = %+v, %v", as, err)
	}
	if strings.Contains(section, "unrelated") {
		t.Errorf("a fresh memory was listed as stale:\n%s", section)
	}
}
