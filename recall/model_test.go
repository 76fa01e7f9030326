package recall_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/memdir/memdir"
	"github.com/memdir/memdir/anthropic"
	"github.com/memdir/memdir/llm"
	"github.com/memdir/memdir/memdirtest"
	"github.com/memdir/memdir/openai"
	"github.com/memdir/memdir/recall"
)

// modelFixture writes memories and returns the directory.
func modelFixture(tb testing.TB) *memdir.Dir {
	tb.Helper()
	base := tb.TempDir()
	d, err := memdir.Open(filepath.Join(base, "memory"), &memdir.Options{Journal: memdir.NewJournal(filepath.Join(base, "j"), nil)})
	if err != nil {
		tb.Fatal(err)
	}
	d.Ensure()
	t0 := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	for i, m := range [][3]string{
		{"feedback_db_tests.md", "feedback", "integration tests hit a real Postgres database, never mocks"},
		{"feedback_kubectl.md", "feedback", "kubectl apply is forbidden in prod; deploys go through Argo"},
		{"reference_kubectl_docs.md", "reference", "how to use kubectl: common commands cheat sheet"},
		{"project_freeze.md", "project", "payments API frozen until the audit ends"},
	} {
		p := d.Abs(m[0])
		os.WriteFile(p, fmt.Appendf(nil, "---\nname: %s\ndescription: %s\ntype: %s\n---\nbody %d\n", strings.TrimSuffix(m[0], ".md"), m[2], m[1], i), 0o600)
		mt := t0.Add(-time.Duration(i) * time.Hour)
		os.Chtimes(p, mt, mt)
	}
	return d
}

func models(tb testing.TB, srv *memdirtest.ModelServer) map[string]llm.Model {
	tb.Helper()
	a, err := anthropic.New(&anthropic.Options{Model: "claude-sonnet-4-5", BaseURL: srv.AnthropicBaseURL(), APIKey: "test", MaxRetries: -1})
	if err != nil {
		tb.Fatal(err)
	}
	o, err := openai.New(&openai.Options{Model: "gpt-4.1-mini", BaseURL: srv.OpenAIBaseURL(), APIKey: "test", MaxRetries: -1})
	if err != nil {
		tb.Fatal(err)
	}
	return map[string]llm.Model{"anthropic": a, "openai": o}
}

func TestRecallWithModelSelector(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := modelFixture(t)
	now := func() time.Time { return time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC) }
	for name, build := range map[string]func(*memdirtest.ModelServer) llm.Model{
		"anthropic": func(s *memdirtest.ModelServer) llm.Model { return models(t, s)["anthropic"] },
		"openai":    func(s *memdirtest.ModelServer) llm.Model { return models(t, s)["openai"] },
	} {
		t.Run(name, func(t *testing.T) {
			srv := memdirtest.NewModelServer(t)
			reply := memdirtest.JSONReply(map[string]any{"selected_memories": []string{"feedback_kubectl.md", "not_a_memory.md", "feedback_kubectl.md", "./feedback_db_tests.md"}})
			reply.Usage = llm.Usage{InputTokens: 321, OutputTokens: 17}
			srv.Enqueue(reply)
			res, err := recall.Recall(ctx, d, "can I kubectl apply the fix to prod and skip the database tests?", &recall.Options{
				Model: build(srv), RecentTools: []string{"Bash", "Read"}, Now: now,
			})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, m := range res.Memories {
				got = append(got, m.Path+" "+m.Reason)
			}
			want := []string{"feedback_kubectl.md selected by the model", "feedback_db_tests.md selected by the model"}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("recalled (-want +got):\n%s", diff)
			}
			if res.Method != recall.MethodModel || res.Usage.InputTokens != 321 || res.Usage.OutputTokens != 17 {
				t.Errorf("method %s, usage %+v", res.Method, res.Usage)
			}
			sent := srv.LastRequest()
			msg := sent.Messages[0].Content[0].Text
			if !strings.HasPrefix(msg, "Query: can I kubectl apply the fix to prod") || !strings.HasSuffix(msg, "\n\nRecently used tools: Bash, Read") {
				t.Errorf("selector message = %q", msg)
			}
			if !strings.Contains(msg, "\nAvailable memories:\n- [feedback] feedback_kubectl.md (2026-11-29T11:00:00.000Z): kubectl apply is forbidden in prod") {
				t.Errorf("manifest not in Claude Code's line format:\n%s", msg)
			}
			if !strings.Contains(sent.System, "do not pick memories that only document how to use those tools") || len(sent.Schema) == 0 || sent.MaxTokens != 256 {
				t.Errorf("selector request: system %q, schema %s, max tokens %d", sent.System, sent.Schema, sent.MaxTokens)
			}
		})
	}
}

func TestRecallFallsBackWhenTheModelFails(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := modelFixture(t)
	for _, tc := range []struct {
		name, wantReason string
		reply            memdirtest.ModelReply
	}{
		{"malformed JSON", "no JSON", memdirtest.TextReply("I think feedback_db_tests.md is relevant")},
		{"wrong shape", "no \"selected_memories\"", memdirtest.JSONReply(map[string]any{"memories": []string{"x"}})},
		{"server error", "HTTP 500", memdirtest.ErrorReply(500, "overloaded")},
		{"bad key", "HTTP 401", memdirtest.ErrorReply(401, "invalid x-api-key")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := memdirtest.NewModelServer(t)
			srv.Enqueue(tc.reply)
			res, err := recall.Recall(ctx, d, "should integration tests mock the Postgres database?", &recall.Options{Model: models(t, srv)["anthropic"]})
			if err != nil {
				t.Fatal(err)
			}
			if res.Method != recall.MethodFallback || !strings.Contains(res.Reason, tc.wantReason) {
				t.Errorf("method %s, reason %q; want fallback mentioning %q", res.Method, res.Reason, tc.wantReason)
			}
			if len(res.Memories) == 0 || res.Memories[0].Path != "feedback_db_tests.md" {
				t.Errorf("fallback recalled %+v", res.Memories)
			}
		})
	}
}

func TestRecallSelectorCanChooseNothing(t *testing.T) {
	t.Parallel()
	d := modelFixture(t)
	srv := memdirtest.NewModelServer(t)
	srv.Enqueue(memdirtest.JSONReply(map[string]any{"selected_memories": []string{}}))
	res, err := recall.Recall(context.Background(), d, "what does the payments audit cover", &recall.Options{Model: models(t, srv)["openai"]})
	if err != nil || res.Method != recall.MethodModel || len(res.Memories) != 0 {
		t.Errorf("empty selection: %+v, %v", res, err)
	}
	// A query sharing no word with any memory still reaches the model:
	// the selector judges by meaning, as Claude Code's does.
	srv.Enqueue(memdirtest.JSONReply(map[string]any{"selected_memories": []string{}}))
	res, err = recall.Recall(context.Background(), d, "zzz qqq xyzzy", &recall.Options{Model: models(t, srv)["openai"]})
	if err != nil || res.Method != recall.MethodModel || len(res.Memories) != 0 || len(srv.Requests()) != 2 || len(res.Shortlist) != 4 {
		t.Errorf("no-match query: %+v, %v, %d requests", res, err, len(srv.Requests()))
	}
}

// TestRecallSelectorSeesWhatClaudeCodeShows: in a directory under 200
// memories, the selector's manifest holds every memory, as Claude Code's
// does, even when no memory shares a word with the query; the ranked ones
// come first.
func TestRecallSelectorSeesWhatClaudeCodeShows(t *testing.T) {
	t.Parallel()
	d, t0 := openManifestDir(t)
	descs := []string{
		"Release trains leave on Tuesdays; the blue/green script rolls them out",
		"integration tests hit a real Postgres database, never mocks",
		"the on-call runbook for Kafka consumer lag",
		"reviewers want small PRs with the why in the description",
		"the user prefers tabs over spaces in Makefiles",
		"Grafana dashboards for dispatch latency",
		"payments API frozen until the audit ends",
		"the console's Playwright suite needs a seeded database",
		"Chinese product names are stored as NFC",
		"feature flags live in LaunchDarkly, never in env vars",
		"the invoice job runs at 02:00 UTC",
	}
	for i, desc := range descs {
		p := d.Abs(fmt.Sprintf("m%02d.md", i))
		os.WriteFile(p, fmt.Appendf(nil, "---\nname: m%02d\ndescription: %s\ntype: project\n---\nbody\n", i, desc), 0o600)
		mt := t0.Add(-time.Duration(i) * time.Hour)
		os.Chtimes(p, mt, mt)
	}
	srv := memdirtest.NewModelServer(t)
	srv.Enqueue(memdirtest.JSONReply(map[string]any{"selected_memories": []string{"m00.md"}}))
	res, err := recall.Recall(context.Background(), d, "how do we ship the service to production?", &recall.Options{Model: models(t, srv)["anthropic"]})
	if err != nil {
		t.Fatal(err)
	}
	if res.Method != recall.MethodModel || len(res.Memories) != 1 || res.Memories[0].Path != "m00.md" {
		t.Fatalf("recall: method %s, memories %+v, reason %q", res.Method, res.Memories, res.Reason)
	}
	if len(res.Shortlist) != len(descs) || res.ManifestTokens != res.BaselineTokens {
		t.Errorf("manifest of %d memories, %d tokens; want all %d at Claude Code's %d tokens", len(res.Shortlist), res.ManifestTokens, len(descs), res.BaselineTokens)
	}
	msg := srv.LastRequest().Messages[0].Content[0].Text
	if n := strings.Count(msg, "\n- [project] "); n != len(descs) {
		t.Errorf("selector was shown %d memories, want %d:\n%s", n, len(descs), msg)
	}

	// A smaller budget shows fewer, the ranked ones first.
	srv.Enqueue(memdirtest.JSONReply(map[string]any{"selected_memories": []string{}}))
	res, err = recall.Recall(context.Background(), d, "which dashboards show dispatch latency?", &recall.Options{Model: models(t, srv)["anthropic"], ManifestTokens: 40})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Shortlist) == 0 || len(res.Shortlist) >= len(descs) || res.Shortlist[0] != "m05.md" || res.ManifestTokens > 40 || res.ManifestBudget != 40 {
		t.Errorf("budget 40: shortlist %v (%d ranked), %d tokens", res.Shortlist, res.Ranked, res.ManifestTokens)
	}
}

// When the candidates do not all fit the budget in full, the manifest lists
// the first third of the budget in full and the rest by file name alone: at
// Claude Code's cost, the selector sees far more than its 200 newest.
func TestRecallTieredManifest(t *testing.T) {
	t.Parallel()
	d, t0 := openManifestDir(t)
	const n = 900
	for i := range n {
		p := d.Abs(fmt.Sprintf("project_note_%03d.md", i))
		desc := fmt.Sprintf("note %d about the warehouse scheduler and its nightly batch windows", i)
		os.WriteFile(p, fmt.Appendf(nil, "---\nname: note-%d\ndescription: %s\ntype: project\n---\nbody\n", i, desc), 0o600)
		mt := t0.Add(-time.Duration(i) * time.Minute)
		os.Chtimes(p, mt, mt)
	}
	// The model picks a memory far older than Claude Code's 200 newest.
	old := "project_note_450.md"
	srv := memdirtest.NewModelServer(t)
	srv.Enqueue(memdirtest.JSONReply(map[string]any{"selected_memories": []string{old}}))
	res, err := recall.Recall(context.Background(), d, "how do we ship the service to production?", &recall.Options{Model: models(t, srv)["anthropic"]})
	if err != nil {
		t.Fatal(err)
	}
	if res.ManifestTokens > res.BaselineTokens || res.ManifestBudget != res.BaselineTokens {
		t.Errorf("manifest %d tokens, budget %d; want at most Claude Code's %d", res.ManifestTokens, res.ManifestBudget, res.BaselineTokens)
	}
	if len(res.Shortlist) <= 2*memdir.MaxScanFiles || res.FullLines <= 0 || res.FullLines >= memdir.MaxScanFiles {
		t.Fatalf("manifest of %d memories, %d in full; want well over %d, a part in full", len(res.Shortlist), res.FullLines, memdir.MaxScanFiles)
	}
	for i, p := range res.Shortlist[:memdir.MaxScanFiles] {
		if want := fmt.Sprintf("project_note_%03d.md", i); p != want {
			t.Fatalf("shortlist[%d] = %s, want %s (the newest first: a superset of Claude Code's)", i, p, want)
		}
	}
	if len(res.Memories) != 1 || res.Memories[0].Path != old {
		t.Fatalf("recalled %+v (method %s, %s), want %s", res.Memories, res.Method, res.Reason, old)
	}
	msg := srv.LastRequest().Messages[0].Content[0].Text
	full, compact, intro := 0, 0, strings.Index(msg, "More memories, by file name only:\n")
	for line := range strings.SplitSeq(msg, "\n") {
		switch {
		case strings.HasPrefix(line, "- [project] project_note_"):
			full++
		case strings.HasPrefix(line, "- project_note_"):
			compact++
		}
	}
	if full != res.FullLines || full+compact != len(res.Shortlist) || intro < 0 || strings.Contains(msg[intro:], "- [project]") {
		t.Errorf("request lists %d full and %d compact lines (intro at %d), result says %d full of %d:\n%.600s", full, compact, intro, res.FullLines, len(res.Shortlist), msg)
	}
	if got := len(msg[strings.Index(msg, "Available memories:\n")+len("Available memories:\n"):]); (got+3)/4 > res.ManifestTokens+1 {
		t.Errorf("manifest text is %d bytes, more than the %d tokens reported", got, res.ManifestTokens)
	}
	// A budget that holds every memory in full lists every one in full.
	srv.Enqueue(memdirtest.JSONReply(map[string]any{"selected_memories": []string{}}))
	res, err = recall.Recall(context.Background(), d, "how do we ship the service to production?", &recall.Options{Model: models(t, srv)["anthropic"], ManifestTokens: -1})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Shortlist) != n || res.FullLines != n || strings.Contains(srv.LastRequest().Messages[0].Content[0].Text, "by file name only") {
		t.Errorf("unlimited budget: %d listed, %d in full; want all %d in full", len(res.Shortlist), res.FullLines, n)
	}
	// Without a model the manifest is built only when asked for, and the
	// answer is the same either way.
	q := "which nightly batch windows does note 77 describe for the warehouse scheduler?"
	plain, err := recall.Recall(context.Background(), d, q, nil)
	if err != nil {
		t.Fatal(err)
	}
	shown, err := recall.Recall(context.Background(), d, q, &recall.Options{ShowManifest: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(plain.Shortlist) != 0 || len(shown.Shortlist) <= memdir.MaxScanFiles || len(plain.Memories) == 0 || len(plain.Memories) != len(shown.Memories) || plain.Memories[0].Path != shown.Memories[0].Path {
		t.Errorf("no model: %d listed, answer %d memories; with ShowManifest %d listed, answer %d", len(plain.Shortlist), len(plain.Memories), len(shown.Shortlist), len(shown.Memories))
	}
}

// openManifestDir opens an empty memory directory for the manifest tests and
// gives the reference time their files' ages count back from.
func openManifestDir(t *testing.T) (*memdir.Dir, time.Time) {
	t.Helper()
	base := t.TempDir()
	d, err := memdir.Open(filepath.Join(base, "memory"), &memdir.Options{Journal: memdir.NewJournal(filepath.Join(base, "j"), nil)})
	if err != nil {
		t.Fatal(err)
	}
	d.Ensure()
	return d, time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
}
