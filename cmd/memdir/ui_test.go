package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/internal/cli"
	"github.com/memdir/memdir/ui"
)

// The recall preview shows exactly what the UserPromptSubmit hook injects.
func TestUIRecallPreviewMatchesHook(t *testing.T) {
	w := newHookWorld(t)
	w.ok(t, "save", "--name", "deploy-policy", "--type", "feedback", "--description", "dispatch deploys to production go through the blue/green script", "--body", "Never deploy by hand.\n\n**Why:** a manual apply took production down.")
	w.ok(t, "save", "--name", "grafana", "--type", "reference", "--description", "where the dashboards are", "--body", "Grafana at grafana.internal")
	w.ok(t, "save", "--name", "dispatch-owner", "--type", "project", "--description", "the dispatch service is owned by the payments team", "--body", "Ask #payments before deploying dispatch.")

	o := w.hookOK(t, w.input(t, "user_prompt_submit", nil), "--no-model", "--no-checkpoint")
	if o == nil {
		t.Fatal("the hook injected nothing")
	}
	want := hookContext(o)
	var in struct{ Prompt string }
	json.Unmarshal([]byte(w.input(t, "user_prompt_submit", nil)), &in)

	d, err := memdir.Open(w.memDir(t), &memdir.Options{LookupEnv: func(k string) (string, bool) { v, ok := w.vars[k]; return v, ok }})
	if err != nil {
		t.Fatal(err)
	}
	const addr = "127.0.0.1:7000"
	srv, err := ui.New(d, addr, &ui.Options{Now: func() time.Time { return w.now }})
	if err != nil {
		t.Fatal(err)
	}
	h := srv.Handler()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "http://"+addr+"/?token="+srv.Token(), nil))
	cookie := rec.Result().Cookies()[0]
	body, _ := json.Marshal(map[string]any{"prompt": in.Prompt})
	r := httptest.NewRequest("POST", "http://"+addr+"/api/recall/preview", bytes.NewReader(body))
	r.AddCookie(cookie)
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set(ui.CSRFHeader, srv.CSRF())
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, r)
	if rec.Code != http.StatusOK {
		t.Fatalf("preview: %d %s", rec.Code, rec.Body)
	}
	var got struct{ Injected string }
	json.Unmarshal(rec.Body.Bytes(), &got)
	if got.Injected != want {
		t.Errorf("the preview differs from what the hook injects:\npreview:\n%s\nhook:\n%s", got.Injected, want)
	}
	if !strings.Contains(want, "Never deploy by hand.") {
		t.Errorf("the hook's context: %s", want)
	}
}

// The command refuses addresses other machines can reach.
func TestUIRefusesNonLoopback(t *testing.T) {
	w := newMemWorld(t)
	for _, addr := range []string{"0.0.0.0:0", "192.168.0.10:8080", ":0", "example.com:80"} {
		_, errOut, code := w.run(t, "ui", "--no-model", "--addr", addr)
		if code != cli.ExitUsage || !strings.Contains(errOut, "loopback") {
			t.Errorf("ui --addr %s: exit %d, %q; want a usage error about loopback", addr, code, errOut)
		}
	}
	if _, errOut, code := w.run(t, "ui", "extra"); code != cli.ExitUsage {
		t.Errorf("ui extra: exit %d, %q", code, errOut)
	}
}
