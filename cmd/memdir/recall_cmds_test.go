package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/memdirtest"
)

func TestRecallCommand(t *testing.T) {
	w := newMemWorld(t)
	w.ok(t, "save", "--name", "db-tests", "--type", "feedback", "--description", "integration tests hit a real Postgres database, never mocks", "--body", "Use compose.")
	w.ok(t, "save", "--name", "grafana", "--type", "reference", "--description", "dispatch latency dashboards in Grafana", "--body", "grafana.internal")

	out, errOut, code := w.run(t, "recall", "should", "integration", "tests", "mock", "the", "database?")
	if code != 0 || !strings.Contains(out, "<system-reminder>\nMemory (saved today): ") || !strings.Contains(out, "Use compose.") {
		t.Fatalf("recall: exit %d\n%s\n%s", code, out, errOut)
	}
	if !strings.Contains(errOut, "lexical ranking (no model configured) found 1 memory among 2 candidates") {
		t.Errorf("summary = %q", errOut)
	}
	var res memdir.RecallResult
	out = w.ok(t, "recall", "--json", "where are the latency dashboards?")
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	if res.Method != memdir.RecallByLexical || len(res.Memories) != 1 || res.Memories[0].Path != "reference_grafana.md" || res.Memories[0].Score <= 0 || res.Memories[0].Reason == "" {
		t.Errorf("recall --json = %+v", res)
	}
	// The cache lives outside the memory directory.
	if _, err := os.Stat(filepath.Join(w.state, "recall")); err != nil {
		t.Errorf("no recall cache under the state directory: %v", err)
	}
	if entries, _ := os.ReadDir(w.memDir(t)); len(entries) != 3 {
		t.Errorf("memory directory holds %d entries, want the two memories and MEMORY.md", len(entries))
	}
	_, errOut, _ = w.run(t, "recall", "grafana")
	if !strings.Contains(errOut, "nothing looked up: the query is empty or a single word") {
		t.Errorf("one-word query: %q", errOut)
	}
	if out := w.ok(t, "recall", "--all", "grafana"); !strings.Contains(out, "grafana.internal") {
		t.Errorf("--all did not look up a one-word query: %q", out)
	}
	if _, _, code := w.run(t, "recall"); code != exitUsage {
		t.Errorf("recall without a query: exit %d", code)
	}
}

func TestRecallCommandWithModel(t *testing.T) {
	w := newMemWorld(t)
	w.ok(t, "save", "--name", "db-tests", "--type", "feedback", "--description", "integration tests hit a real Postgres database, never mocks", "--body", "Use compose.")
	w.ok(t, "save", "--name", "kubectl", "--type", "feedback", "--description", "never kubectl apply to prod; deploy through Argo", "--body", "Argo only.")
	srv := memdirtest.NewModelServer(t)
	reply := memdirtest.JSONReply(map[string]any{"selected_memories": []string{"feedback_kubectl.md"}})
	reply.Usage = memdir.Usage{InputTokens: 200, OutputTokens: 12}
	srv.Enqueue(reply)
	w.vars["MEMDIR_MODEL"] = "anthropic:claude-sonnet-4-5"
	w.vars["ANTHROPIC_BASE_URL"] = srv.AnthropicBaseURL()
	w.vars["ANTHROPIC_API_KEY"] = "test-key"
	out, errOut, code := w.run(t, "recall", "--tools", "Bash, Read", "can I kubectl apply the database fix to prod?")
	if code != 0 || !strings.Contains(out, "Argo only.") || strings.Contains(out, "Use compose.") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	if !strings.Contains(errOut, "the model chose 1 memory from a shortlist of 2") || !strings.Contains(errOut, "model tokens: 200 in, 12 out") {
		t.Errorf("summary = %q", errOut)
	}
	if msg := srv.LastRequest().Messages[0].Content[0].Text; !strings.HasSuffix(msg, "Recently used tools: Bash, Read") {
		t.Errorf("selector message = %q", msg)
	}
	// A failing model falls back and says so, still exit 0.
	srv.Enqueue(memdirtest.ErrorReply(401, "invalid x-api-key"))
	out, errOut, code = w.run(t, "recall", "--max-retries", "0", "can I kubectl apply the database fix to prod?")
	if code != 0 || !strings.Contains(errOut, "note: the model selector failed") || !strings.Contains(errOut, "401") || out == "" {
		t.Errorf("fallback: exit %d\n%s\n%s", code, out, errOut)
	}
}

func TestEvalCommandOnDevSet(t *testing.T) {
	w := newMemWorld(t)
	devSet, _ := filepath.Abs("../../testdata/eval/recall-dev.json")
	out := w.ok(t, "eval", "recall", devSet, "--json")
	var rep struct {
		Lexical struct {
			Recall    map[string]float64 `json:"recall"`
			NoneEmpty float64            `json:"none_empty"`
		} `json:"lexical"`
		Shortlist struct {
			Recall map[string]float64 `json:"recall"`
		} `json:"shortlist"`
		Baseline struct {
			Recall map[string]float64 `json:"recall"`
		} `json:"baseline_newest_200"`
		ShortlistTokens float64 `json:"shortlist_manifest_tokens"`
		BaselineTokens  float64 `json:"baseline_manifest_tokens"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	t.Logf("dev set: ranking recall@5 %.3f, shortlist recall@30 %.3f, answer recall@5 %.3f, none-empty %.3f, baseline %.3f, tokens %.0f vs %.0f",
		rep.Shortlist.Recall["5"], rep.Shortlist.Recall["30"], rep.Lexical.Recall["5"], rep.Lexical.NoneEmpty, rep.Baseline.Recall["200"], rep.ShortlistTokens, rep.BaselineTokens)
	// The project target for lexical recall@5, and regression floors for
	// the rest (the end-to-end path must match the ranker's own figures).
	for name, c := range map[string][2]float64{
		"ranking recall@5 (target)":    {rep.Shortlist.Recall["5"], 0.75},
		"shortlist recall@30 (target)": {rep.Shortlist.Recall["30"], 0.97},
		"answer recall@5 (floor)":      {rep.Lexical.Recall["5"], 0.70},
		"no-relevant empty (floor)":    {rep.Lexical.NoneEmpty, 0.99},
	} {
		if c[0] < c[1] {
			t.Errorf("%s = %.3f, below %.2f", name, c[0], c[1])
		}
	}
	if rep.ShortlistTokens >= rep.BaselineTokens/2 {
		t.Errorf("shortlist manifest %.0f tokens, baseline %.0f: the shortlist should cost far less", rep.ShortlistTokens, rep.BaselineTokens)
	}
	if _, _, code := w.run(t, "eval", "recall", "/nonexistent.json"); code == 0 {
		t.Error("eval on a missing file succeeded")
	}
}

func TestPromptCommand(t *testing.T) {
	w := newMemWorld(t)
	w.ok(t, "save", "--name", "role", "--type", "user", "--description", "backend lead", "--body", "x")
	out := w.ok(t, "prompt", "--with-index")
	if !strings.HasPrefix(out, "# auto memory\n\nYou have a persistent memory made of files at `"+w.memDir(t)+"/`") {
		t.Errorf("prompt starts %q", out[:120])
	}
	if !strings.Contains(out, "Contents of "+w.memDir(t)+"/MEMORY.md (user's auto-memory, persists across conversations):\n\n- [role](user_role.md) — backend lead") {
		t.Errorf("--with-index did not append MEMORY.md:\n%s", out[len(out)-300:])
	}
	w.vars["CLAUDE_COWORK_MEMORY_EXTRA_GUIDELINES"] = "Write memories in English."
	if out := w.ok(t, "prompt", "--mode", "team", "--extra", "Be brief."); !strings.Contains(out, "## Additional guidelines\n\nBe brief.\n\nWrite memories in English.") || !strings.HasPrefix(out, "# Memory") {
		t.Errorf("team prompt with extras:\n%s", out)
	}
	out = w.ok(t, "prompt", "--mode", "agent", "--agent", "reviewer", "--scope", "user")
	if !strings.HasPrefix(out, "# Persistent Agent Memory") || !strings.Contains(out, "Your MEMORY.md is empty so far") {
		t.Errorf("agent prompt:\n%s", out)
	}
	if _, _, code := w.run(t, "prompt", "--mode", "agent"); code != exitUsage {
		t.Errorf("agent mode without --agent: exit %d", code)
	}
	if out := w.ok(t, "prompt", "--search"); !strings.Contains(out, "## Searching past context") || !strings.Contains(out, "*.jsonl") {
		t.Errorf("--search: %s", out[len(out)-300:])
	}
}
