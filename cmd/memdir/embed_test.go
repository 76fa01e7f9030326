package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/memdir/memdir/internal/cli"
	"github.com/memdir/memdir/locate"
	"github.com/memdir/memdir/memdirtest"
	"github.com/memdir/memdir/recall"
)

// embedWorld is a sandbox with three memories and the fake embeddings
// server configured as the embedding model.
func embedWorld(t *testing.T) (*memWorld, *memdirtest.EmbedServer) {
	t.Helper()
	srv := memdirtest.NewEmbedServer(t)
	w := newMemWorld(t)
	w.vars["MEMDIR_EMBED_MODEL"] = "openai:nomic-embed-text"
	w.vars["MEMDIR_EMBED_BASE_URL"] = srv.OpenAIBaseURL()
	w.vars["MEMDIR_MAX_RETRIES"] = "0"
	w.ok(t, "save", "--name", "deploy", "--type", "project", "--description", "how we ship to production", "--body", "Run make ship from main.")
	w.ok(t, "save", "--name", "testing", "--type", "feedback", "--description", "tests hit a real database", "--body", "Never mock the database.")
	w.ok(t, "save", "--name", "oncall", "--type", "reference", "--description", "pager rota", "--body", "PagerDuty schedule ops-primary.")
	return w, srv
}

func embedJSON(t *testing.T, w *memWorld, args ...string) embedReport {
	t.Helper()
	var rep embedReport
	out := w.ok(t, append([]string{"embed", "--json"}, args...)...)
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("embed --json output is not JSON: %v\n%s", err, out)
	}
	return rep
}

func TestEmbedCommand(t *testing.T) {
	w, srv := embedWorld(t)
	rep := embedJSON(t, w)
	cache := filepath.Join(w.state, "embed", locate.SanitizePath(w.memDir(t), locate.HashBun)+".vec")
	want := embedReport{Dir: w.memDir(t), Cache: cache, Embedder: "openai:nomic-embed-text", Source: "MEMDIR_EMBED_MODEL",
		Memories: 3, Embedded: 3, Requests: 1, InputTokens: rep.InputTokens}
	if diff := cmp.Diff(want, rep); diff != "" {
		t.Errorf("first run (-want +got):\n%s", diff)
	}
	if rep.InputTokens == 0 {
		t.Error("no tokens reported")
	}
	if _, err := os.Stat(cache); err != nil {
		t.Errorf("no cache file: %v", err)
	}
	// What is sent is what recall embeds: EmbedText of the memory.
	if got, wantText := srv.Texts(), recall.EmbedText("deploy", "how we ship to production", "Run make ship from main."); !containsString(got, wantText) {
		t.Errorf("texts sent %q do not include %q", got, wantText)
	}

	// Nothing changed: nothing is sent.
	if rep := embedJSON(t, w); rep.Cached != 3 || rep.Embedded != 0 || rep.Requests != 0 {
		t.Errorf("second run = %+v, want all 3 cached and no request", rep)
	}

	// One edit, one removal: one text sent, the stale vectors dropped.
	w.ok(t, "save", "--name", "oncall", "--type", "reference", "--description", "pager rota", "--body", "Opsgenie now.")
	w.ok(t, "rm", "testing")
	rep = embedJSON(t, w)
	if rep.Memories != 2 || rep.Cached != 1 || rep.Embedded != 1 || rep.Pruned != 2 {
		t.Errorf("after an edit and a removal = %+v, want 2 memories, 1 cached, 1 embedded, 2 pruned", rep)
	}

	out := w.ok(t, "embed")
	if !strings.Contains(out, "2 memories: 0 embedded with openai:nomic-embed-text (0 requests, 0 tokens), 2 already cached.") || !strings.Contains(out, "Cache: "+cache) {
		t.Errorf("text output:\n%s", out)
	}
}

func containsString(list []string, s string) bool {
	return slices.Contains(list, s)
}

// Embed's progress is the shared reporter's: one live line on a terminal,
// lines on a pipe (TestProgressOfEmbed), here shown at every step
// (MEMDIR_PROGRESS=0) so that nothing depends on timing.
func TestEmbedCommandProgressOnTerminal(t *testing.T) {
	w, _ := embedWorld(t)
	w.vars["MEMDIR_PROGRESS"] = "0"
	run := func(terminal bool) string {
		var out, errb bytes.Buffer
		env := &cli.Env{Stdout: &out, Stderr: &errb, LookupEnv: func(k string) (string, bool) { v, ok := w.vars[k]; return v, ok },
			Cwd: w.project, Now: func() time.Time { return w.now }, StderrIsTerminal: terminal}
		if code := Main(context.Background(), []string{"embed", "--embed-batch-size", "2", "--dir", w.memDir(t)}, env); code != 0 {
			t.Fatalf("exit %d: %s", code, errb.String())
		}
		return errb.String()
	}
	got := run(true)
	for _, want := range []string{"\rembed: embedding memories 0/3 (0%), 0s", "\rembed: embedding memories 2/3 (66%), 0s", "\rembed: embedding memories 3/3 (100%), done in 0s\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("terminal progress %q lacks %q", got, want)
		}
	}
	if strings.Count(got, "\n") != 1 {
		t.Errorf("terminal progress %q is not one live line", got)
	}
}

func TestEmbedCommandErrors(t *testing.T) {
	w, srv := embedWorld(t)
	delete(w.vars, "MEMDIR_EMBED_MODEL")
	_, errOut, code := w.run(t, "embed")
	if code != cli.ExitInvalid || !strings.Contains(errOut, "MEMDIR_EMBED_MODEL") {
		t.Errorf("no model: exit %d, stderr %q; want %d naming MEMDIR_EMBED_MODEL", code, errOut, cli.ExitInvalid)
	}

	w.vars["MEMDIR_EMBED_MODEL"] = "openai:nomic-embed-text"
	srv.Enqueue(memdirtest.EmbedReply{Status: 404, Message: `model "nomic-embed-text" not found`})
	_, errOut, code = w.run(t, "embed")
	if code != cli.ExitModel || !strings.Contains(errOut, "nomic-embed-text") {
		t.Errorf("unknown model: exit %d, stderr %q; want %d", code, errOut, cli.ExitModel)
	}

	srv.Enqueue(memdirtest.EmbedReply{Vectors: [][]float32{{1}, {1, 2}, {1}}})
	if _, errOut, code = w.run(t, "embed"); code != cli.ExitModel {
		t.Errorf("mixed dimensions: exit %d, stderr %q; want %d", code, errOut, cli.ExitModel)
	}

	delete(w.vars, "MEMDIR_EMBED_BASE_URL")
	_, errOut, code = w.run(t, "embed")
	if code != cli.ExitInvalid || !strings.Contains(errOut, "MEMDIR_EMBED_API_KEY") || len(srv.Requests()) != 2 {
		t.Errorf("api.openai.com without a key: exit %d, stderr %q, %d requests; want %d before any request", code, errOut, len(srv.Requests()), cli.ExitInvalid)
	}
}
