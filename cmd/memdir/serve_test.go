package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/memdir/memdir/internal/cli"
	"github.com/memdir/memdir/team"
)

func TestServeTokens(t *testing.T) {
	w := newTeamWorld(t)
	db := "sqlite:" + filepath.Join(t.TempDir(), "team.db")
	out := w.ok(t, "serve", "token", "create", "--repo", "Acme/Widgets", "--name", "alice", "--db", db)
	secret := regexp.MustCompile(`mdt_[A-Za-z0-9_-]+`).FindString(out)
	if secret == "" || !strings.Contains(out, "read-write token tok_") || !strings.Contains(out, "acme/widgets") {
		t.Fatalf("token create output:\n%s", out)
	}
	var created struct {
		team.Token
		Secret string `json:"secret"`
	}
	if err := json.Unmarshal([]byte(w.ok(t, "serve", "token", "create", "--repo", "acme/widgets", "--read-only", "--json", "--db", db)), &created); err != nil {
		t.Fatal(err)
	}
	if !created.ReadOnly || !strings.HasPrefix(created.Secret, "mdt_") || created.ID == "" {
		t.Errorf("token create --json = %+v", created)
	}
	list := w.ok(t, "serve", "token", "list", "--db", db)
	if strings.Contains(list, secret) || strings.Contains(list, created.Secret) {
		t.Errorf("token list shows a secret:\n%s", list)
	}
	if !strings.Contains(list, "read-only") || !strings.Contains(list, "alice") {
		t.Errorf("token list:\n%s", list)
	}
	w.ok(t, "serve", "token", "revoke", created.ID, "--db", db)
	var toks []team.Token
	json.Unmarshal([]byte(w.ok(t, "serve", "token", "list", "--json", "--db", db)), &toks)
	revoked := 0
	for _, tok := range toks {
		if (tok.RevokedAt != nil) != (tok.ID == created.ID) {
			t.Errorf("token %s: revoked at %v", tok.ID, tok.RevokedAt)
		}
		if tok.RevokedAt != nil {
			revoked++
		}
	}
	if len(toks) != 2 || revoked != 1 {
		t.Errorf("token list --json after revoke = %+v", toks)
	}

	// The default database lives under MEMDIR_DATA_DIR.
	w.ok(t, "serve", "token", "create", "--repo", "a/b")
	if _, err := filepath.Glob(filepath.Join(w.vars["MEMDIR_DATA_DIR"], "team.db")); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"serve", "token", "create", "--db", db}, cli.ExitUsage, "--repo"},
		{[]string{"serve", "token", "create", "--repo", "nope", "--db", db}, cli.ExitInvalid, "owner/name"},
		{[]string{"serve", "token", "revoke", "tok_missing", "--db", db}, cli.ExitNotFound, "tok_missing"},
		{[]string{"serve", "token", "revoke", "--db", db}, cli.ExitUsage, "one token ID"},
		{[]string{"serve", "token", "rotate", "--db", db}, cli.ExitUsage, "rotate"},
		{[]string{"serve", "token", "--db", db}, cli.ExitUsage, "create, list or revoke"},
		{[]string{"serve", "tokens"}, cli.ExitUsage, "tokens"},
		{[]string{"serve", "--db", "mysql://x"}, cli.ExitUsage, "sqlite:PATH"},
		{[]string{"serve", "--db", "postgres://u:hunter2@[bad"}, cli.ExitFailure, ""},
		{[]string{"serve", "--log-format", "xml"}, cli.ExitUsage, "json or text"},
	}
	for _, tt := range tests {
		_, errOut, code := w.run(t, tt.args...)
		if code != tt.code || !strings.Contains(errOut, tt.msg) || strings.Contains(errOut, "hunter2") {
			t.Errorf("memdir %s: exit %d, want %d; stderr %q should mention %q", strings.Join(tt.args, " "), code, tt.code, errOut, tt.msg)
		}
	}
}

func TestServeHTTP(t *testing.T) {
	w := newTeamWorld(t)
	db := "sqlite:" + filepath.Join(t.TempDir(), "team.db")
	var created struct {
		Secret string `json:"secret"`
	}
	json.Unmarshal([]byte(w.ok(t, "serve", "token", "create", "--repo", "acme/widgets", "--json", "--db", db)), &created)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out, errb := &lockedBuffer{}, &lockedBuffer{}
	done := make(chan int, 1)
	go func() {
		done <- Main(ctx, []string{"serve", "--addr", "127.0.0.1:0", "--db", db, "--max-entries", "2"}, w.env(out, errb))
	}()
	waitFor(t, errb, `"url":"http://127.0.0.1:`)
	url := regexp.MustCompile(`"url":"(http://127\.0\.0\.1:[0-9]+)"`).FindStringSubmatch(errb.String())[1]

	get := func(path, token string) (int, string) {
		req, _ := http.NewRequest("GET", url+path, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, _ := get("/healthz", ""); code != 200 {
		t.Errorf("/healthz: %d", code)
	}
	if code, _ := get("/readyz", ""); code != 200 {
		t.Errorf("/readyz: %d", code)
	}
	if code, _ := get(team.APIPath+"?repo=acme/widgets", created.Secret); code != 404 {
		t.Errorf("GET before any push: %d, want 404", code)
	}
	// The configured entry limit reaches the handler.
	writeFile(t, filepath.Join(w.teamDir(), "a.md"), "a")
	writeFile(t, filepath.Join(w.teamDir(), "b.md"), "b")
	writeFile(t, filepath.Join(w.teamDir(), "c.md"), "c")
	w.vars["MEMDIR_TEAM_URL"], w.vars["MEMDIR_TEAM_TOKEN"] = url, created.Secret
	if _, errOut, code := w.run(t, "sync", "push"); code != cli.ExitInvalid || !strings.Contains(errOut, "allows 2") {
		t.Errorf("push over --max-entries: exit %d, stderr %q", code, errOut)
	}
	cancel()
	if code := <-done; code != 0 {
		t.Errorf("serve exit %d after shutdown; stderr:\n%s", code, errb)
	}
	logs := errb.String()
	if !strings.Contains(logs, `"msg":"stopped"`) || !strings.Contains(logs, `"repo":"acme/widgets"`) || strings.Contains(logs, created.Secret) {
		t.Errorf("server log:\n%s", logs)
	}
}
