package mcpserver_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/llm"
	"github.com/memdir/memdir/mcpserver"
	"github.com/memdir/memdir/memdirtest"
	"github.com/memdir/memdir/openai"
	"github.com/memdir/memdir/recall"
)

// fakeModel answers every request with a fixed reply or error.
type fakeModel struct {
	reply string
	err   error
	usage llm.Usage
}

func (m *fakeModel) Generate(context.Context, *llm.Request) (*llm.Response, error) {
	if m.err != nil {
		return nil, m.err
	}
	return &llm.Response{Content: []llm.Block{llm.TextBlock(m.reply)}, StopReason: llm.StopEndTurn, Usage: m.usage}, nil
}

var recallFiles = map[string]string{
	"feedback_db_tests.md": memoryFile("db tests", "integration tests must hit a real Postgres database, never mocks", memdir.TypeFeedback, "Mocks hid a broken migration.\n"),
	"project_freeze.md":    memoryFile("merge freeze", "merge freeze for the mobile release starts Thursday", memdir.TypeProject, "Only hotfixes after Thursday.\n"),
	"reference_grafana.md": memoryFile("latency dashboard", "the Grafana board on-call watches for API latency", memdir.TypeReference, "grafana.internal/d/api-latency\n"),
}

func recallPaths(out mcpserver.RecallOutput) []string {
	paths := []string{}
	for _, m := range out.Memories {
		paths = append(paths, m.Path)
	}
	return paths
}

func TestRecallTool(t *testing.T) {
	f := newFixture(t, nil)
	memdirtest.WriteFiles(t, f.dir.Path(), recallFiles)
	cs := f.connect(t)
	query := map[string]any{"query": "should the integration tests mock the database?"}

	var first mcpserver.RecallOutput
	got := callOK(t, cs, "recall", query, &first)
	if diff := cmp.Diff([]string{"feedback_db_tests.md"}, recallPaths(first)); diff != "" {
		t.Fatalf("first recall (-want +got):\n%s", diff)
	}
	m := first.Memories[0]
	if first.Method != "lexical" || m.URI != "memdir://memory/feedback_db_tests.md" || !strings.HasPrefix(m.Reason, "lexical match on ") {
		t.Errorf("first recall = %+v", first)
	}
	if !strings.HasPrefix(got, "<system-reminder>\n") || !strings.Contains(got, "Mocks hid a broken migration.") || !strings.Contains(got, f.dir.Abs("feedback_db_tests.md")) {
		t.Errorf("rendered memories:\n%s", got)
	}
	if first.SessionBytes == 0 || first.SessionBudget != 60*1024 {
		t.Errorf("session bytes %d of %d", first.SessionBytes, first.SessionBudget)
	}

	// The same query in the same session surfaces nothing new.
	var second mcpserver.RecallOutput
	got = callOK(t, cs, "recall", query, &second)
	if len(second.Memories) != 0 || !strings.HasPrefix(got, "No saved memory is relevant") || second.SessionBytes != first.SessionBytes {
		t.Errorf("second recall in the session = %+v\n%s", second, got)
	}

	// Another session starts afresh.
	var other mcpserver.RecallOutput
	callOK(t, f.connect(t), "recall", query, &other)
	if diff := cmp.Diff([]string{"feedback_db_tests.md"}, recallPaths(other)); diff != "" {
		t.Errorf("recall in a new session (-want +got):\n%s", diff)
	}

	for _, q := range []string{"", "   "} {
		if msg := callErr(t, cs, "recall", map[string]any{"query": q}); !strings.Contains(msg, "recall needs a query") {
			t.Errorf("recall %q: error %q", q, msg)
		}
	}
	// One word is looked up: a model calling recall means it.
	var word mcpserver.RecallOutput
	callOK(t, cs, "recall", map[string]any{"query": "grafana"}, &word)
	if diff := cmp.Diff([]string{"reference_grafana.md"}, recallPaths(word)); diff != "" {
		t.Errorf("one-word recall (-want +got):\n%s", diff)
	}
}

func TestRecallToolWithModel(t *testing.T) {
	cases := []struct {
		name       string
		model      *fakeModel
		wantMethod string
		wantPaths  []string
		wantReason string
	}{
		{"model chooses", &fakeModel{reply: `{"selected_memories":["project_freeze.md"]}`, usage: llm.Usage{InputTokens: 300, OutputTokens: 12, Calls: 1}},
			"model", []string{"project_freeze.md"}, ""},
		{"model fails", &fakeModel{err: &llm.ModelError{Provider: "anthropic", Kind: "server", StatusCode: 529, Message: "overloaded"}},
			"fallback", []string{"project_freeze.md"}, "the model selector failed"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, &mcpserver.Options{Model: tc.model})
			memdirtest.WriteFiles(t, f.dir.Path(), recallFiles)
			var out mcpserver.RecallOutput
			callOK(t, f.connect(t), "recall", map[string]any{"query": "can I merge the mobile release fix on Friday?", "recent_tools": []string{"Bash"}}, &out)
			if out.Method != tc.wantMethod || !strings.Contains(out.Reason, tc.wantReason) {
				t.Errorf("method %q reason %q, want %q and %q", out.Method, out.Reason, tc.wantMethod, tc.wantReason)
			}
			if diff := cmp.Diff(tc.wantPaths, recallPaths(out)); diff != "" {
				t.Errorf("recalled (-want +got):\n%s", diff)
			}
			if out.Usage != tc.model.usage {
				t.Errorf("usage %+v, want %+v", out.Usage, tc.model.usage)
			}
		})
	}
}

// TestRecallToolKeepsTheSessionBudget fills a session's 60 KB budget with
// large memories and checks that recall then stops surfacing any.
func TestRecallToolKeepsTheSessionBudget(t *testing.T) {
	f := newFixture(t, nil)
	files := map[string]string{}
	body := strings.Repeat("The deploy pipeline runs canary checks before promoting a build.\n", 60)
	for i := range 30 {
		files[fmt.Sprintf("project_deploy_%02d.md", i)] = memoryFile(fmt.Sprintf("deploy %d", i), "how the deploy pipeline promotes builds", memdir.TypeProject, body)
	}
	memdirtest.WriteFiles(t, f.dir.Path(), files)
	cs := f.connect(t)
	seen := map[string]bool{}
	var last mcpserver.RecallOutput
	for call := range 10 {
		var out mcpserver.RecallOutput
		callOK(t, cs, "recall", map[string]any{"query": "how does the deploy pipeline promote builds?"}, &out)
		for _, m := range out.Memories {
			if seen[m.Path] {
				t.Errorf("call %d surfaced %s again", call, m.Path)
			}
			seen[m.Path] = true
		}
		if out.SessionBytes > recall.SessionBudget {
			t.Fatalf("call %d: session used %d bytes, over the %d budget", call, out.SessionBytes, recall.SessionBudget)
		}
		last = out
		if len(out.Memories) == 0 {
			break
		}
	}
	if !strings.Contains(last.Reason, "budget") {
		t.Errorf("recall never stopped at the budget: last result %+v", last)
	}
	if len(seen) == 0 || len(seen) == len(files) {
		t.Errorf("%d of %d memories surfaced; want some, not all", len(seen), len(files))
	}
}

func TestSessionsAreForgottenWhenTheyEnd(t *testing.T) {
	f := newFixture(t, nil)
	memdirtest.WriteFiles(t, f.dir.Path(), recallFiles)
	cs := f.connect(t)
	callOK(t, cs, "recall", map[string]any{"query": "database mocks in tests"}, nil)
	if n := f.sessions.Len(); n != 1 {
		t.Fatalf("%d sessions recorded, want 1", n)
	}
	if err := cs.Close(); err != nil && !errors.Is(err, context.Canceled) {
		t.Fatal(err)
	}
	// The record goes when the server notices the session ended; wait for
	// that (the test's own timeout bounds the wait).
	for f.sessions.Len() != 0 {
		waitABit()
	}
}

// TestRecallToolFillsVectorsInTheBackground: the server's first recall on
// a cold vector cache embeds only the query and ranks lexically; the server
// fills the memories' vectors outside the call, so a later recall fuses.
func TestRecallToolFillsVectorsInTheBackground(t *testing.T) {
	srv := memdirtest.NewEmbedServer(t)
	emb, err := openai.NewEmbedder(&openai.EmbedderOptions{Model: "text-embedding-3-small", BaseURL: srv.OpenAIBaseURL(), MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	cache, err := recall.OpenEmbedCache(filepath.Join(t.TempDir(), "vectors.vec"))
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, &mcpserver.Options{Embedder: emb, EmbedCache: cache})
	memdirtest.WriteFiles(t, f.dir.Path(), recallFiles)
	cs := f.connect(t)
	query := map[string]any{"query": "should the integration tests mock the database?"}

	var first mcpserver.RecallOutput
	callOK(t, cs, "recall", query, &first)
	if first.Method != "lexical" {
		t.Errorf("cold cache: method %q, want lexical", first.Method)
	}
	deadline := time.Now().Add(20 * time.Second)
	for cache.Len(emb.EmbedderName()) < len(recallFiles) {
		if time.Now().After(deadline) {
			t.Fatalf("the server filled %d of %d vectors", cache.Len(emb.EmbedderName()), len(recallFiles))
		}
		time.Sleep(10 * time.Millisecond)
	}
	var later mcpserver.RecallOutput
	callOK(t, f.connect(t), "recall", query, &later)
	if later.Method != "hybrid" {
		t.Errorf("warm cache: method %q, want hybrid", later.Method)
	}
}
