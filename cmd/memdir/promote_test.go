package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/memdir/memdir/internal/cli"
	"github.com/memdir/memdir/llm"
	"github.com/memdir/memdir/memdirtest"
	"github.com/memdir/memdir/promote"
)

// promoteWorld fills the sandbox's layers: three memories, a project
// CLAUDE.md and the user's CLAUDE.md.
func promoteWorld(tb testing.TB) *memWorld {
	tb.Helper()
	w := newMemWorld(tb)
	w.ok(tb, "save", "--name", "commit style", "--type", "feedback", "--description", "conventional commits in this repo",
		"--body", "All commits in this repo use Conventional Commits.\n\n**Why:** the changelog is generated.")
	w.ok(tb, "save", "--name", "small prs", "--type", "feedback", "--description", "keep pull requests small", "--body", "Prefer small PRs.")
	w.ok(tb, "save", "--name", "no http mocks", "--type", "feedback", "--description", "never mock HTTP services in tests",
		"--body", "Never mock HTTP services in tests; replay recorded fixtures.")
	memdirtest.WriteFiles(tb, w.project, map[string]string{"CLAUDE.md": "# Rules\n\n- Mock external HTTP services in unit tests.\n"})
	memdirtest.WriteFiles(tb, filepath.Join(w.home, ".claude"), map[string]string{"CLAUDE.md": "Prefer small PRs.\n"})
	return w
}

func TestPromoteCommand(t *testing.T) {
	w := promoteWorld(t)
	dir := w.memDir(t)
	out := w.ok(t, "promote")
	for _, want := range []string{
		"Reviewed 3 memories and 2 instructions in 2 CLAUDE files (lexical review, no model configured).",
		"Promotions\n  P1   feedback_commit_style.md → CLAUDE.md\n       + All commits in this repo use Conventional Commits. (Why: the changelog is generated.)\n",
		"Cleanup\n  C1   duplicate: feedback_small_prs.md ↔ ~config/CLAUDE.md:1 (removes feedback_small_prs.md)\n       already stated in ~config/CLAUDE.md:1\n",
		"Ambiguous\n  A1   conflict: feedback_no_http_mocks.md ↔ CLAUDE.md:3\n",
		"No action\n  (none)\n",
		"Apply with: memdir promote --apply P1 C1\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	var rep promote.Report
	if err := json.Unmarshal([]byte(w.ok(t, "promote", "--json")), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Items) != 3 || rep.Method != promote.MethodLexical {
		t.Errorf("--json: %+v", rep)
	}

	_, errOut, code := w.run(t, "promote", "--apply", "A1")
	if code != cli.ExitInvalid || !strings.Contains(errOut, "for you to decide") {
		t.Errorf("applying a conflict: exit %d, %q", code, errOut)
	}
	out = w.ok(t, "promote", "--apply", "P1", "c1")
	claude := filepath.Join(w.project, "CLAUDE.md")
	for _, want := range []string{
		"P1: added the rule to " + claude + " and removed feedback_commit_style.md.\n",
		"C1: removed feedback_small_prs.md.\nUndo with: memdir undo ",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("apply printed no %q:\n%s", want, out)
		}
	}
	if got := memdirtest.ReadFile(t, claude); got != "# Rules\n\n- Mock external HTTP services in unit tests.\n- All commits in this repo use Conventional Commits. (Why: the changelog is generated.)\n" {
		t.Errorf("CLAUDE.md = %q", got)
	}
	index := memdirtest.ReadFile(t, filepath.Join(dir, "MEMORY.md"))
	if strings.Contains(index, "commit_style") || strings.Contains(index, "small_prs") || !strings.Contains(index, "no_http_mocks") {
		t.Errorf("MEMORY.md = %q", index)
	}
	log := w.ok(t, "log")
	if !strings.Contains(log, "promote P1: added the rule to "+claude+" and removed feedback_commit_style.md; C1: removed feedback_small_prs.md") {
		t.Errorf("log:\n%s", log)
	}
	// The apply is one run, and one undo reverts all of it.
	if out := w.ok(t, "undo"); !strings.Contains(out, "recreated feedback_small_prs.md") || !strings.Contains(out, "recreated feedback_commit_style.md") || !strings.Contains(out, "restored  CLAUDE.md") {
		t.Errorf("undo printed %q", out)
	}
	// The review is stale once the promoted memory changes.
	w.ok(t, "save", "--name", "commit style", "--type", "feedback", "--description", "conventional commits in this repo", "--body", "Changed.")
	if _, errOut, code := w.run(t, "promote", "--apply", "P1"); code != cli.ExitExists || !strings.Contains(errOut, "since the review") {
		t.Errorf("stale apply: exit %d, %q", code, errOut)
	}

	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"promote", "--apply"}, cli.ExitUsage, "needs the ids"},
		{[]string{"promote", "--keep-memory"}, cli.ExitUsage, "goes with --apply"},
		{[]string{"promote", "--apply", "Z9"}, cli.ExitNotFound, `no item "Z9"`},
		{[]string{"promote", "--dir", "x", "--project", "y"}, cli.ExitUsage, "cannot be combined"},
	} {
		_, errOut, code := w.run(t, tc.args...)
		if code != tc.code || !strings.Contains(errOut, tc.want) {
			t.Errorf("memdir %s: exit %d, %q; want %d and %q", strings.Join(tc.args, " "), code, errOut, tc.code, tc.want)
		}
	}
	w2 := newMemWorld(t)
	if _, errOut, code := w2.run(t, "promote", "--apply", "P1"); code != cli.ExitNotFound || !strings.Contains(errOut, "run 'memdir promote' first") {
		t.Errorf("apply without a review: exit %d, %q", code, errOut)
	}
}

func TestPromoteCommandWithModel(t *testing.T) {
	w := promoteWorld(t)
	srv := memdirtest.NewModelServer(t)
	w.vars["MEMDIR_MODEL"] = "anthropic:claude-sonnet-4-5"
	w.vars["ANTHROPIC_BASE_URL"] = srv.AnthropicBaseURL()
	w.vars["ANTHROPIC_API_KEY"] = "test-key"
	// M1..M3 are the memories in path order.
	reply := memdirtest.JSONReply(map[string]any{"items": []any{
		map[string]any{"section": "promotions", "kind": "to-claude-local-md", "refs": []string{"M1"}, "rule": "I like Conventional Commits.", "remove": "", "reason": "A personal habit."},
	}})
	reply.Usage = llm.Usage{InputTokens: 700, OutputTokens: 40}
	srv.Enqueue(reply)
	out := w.ok(t, "promote", "we", "squash", "merge")
	if !strings.Contains(out, "(classified by the model; 700 tokens in, 40 out)") || !strings.Contains(out, "P1   feedback_commit_style.md → CLAUDE.local.md\n       + I like Conventional Commits.\n       A personal habit.") {
		t.Errorf("model report:\n%s", out)
	}
	if msg := srv.LastRequest().Messages[0].Content[0].Text; !strings.HasSuffix(msg, "## Additional context from the user\nwe squash merge\n") {
		t.Errorf("the prompt ends %q", msg[max(0, len(msg)-80):])
	}
	srv.Enqueue(memdirtest.JSONReply(map[string]any{"items": []any{
		map[string]any{"section": "cleanup", "kind": "duplicate", "refs": []string{"../../etc/passwd"}, "rule": "", "remove": "", "reason": "x"},
	}}))
	out, errOut, code := w.run(t, "promote", "--json")
	if code != 0 || !strings.Contains(errOut, `note: the model's review was not used (the model's item 1 is unusable: unknown ref "../../etc/passwd")`) {
		t.Errorf("fallback: exit %d, %q", code, errOut)
	}
	var rep promote.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, it := range rep.Items {
		kinds = append(kinds, it.ID+" "+string(it.Kind))
	}
	if diff := cmp.Diff([]string{"P1 to-claude-md", "C1 duplicate", "A1 conflict"}, kinds); diff != "" {
		t.Errorf("fallback items (-want +got):\n%s", diff)
	}
	if _, err := os.Stat(filepath.Join(w.state, "promote")); err != nil {
		t.Errorf("the review was not saved under the state directory: %v", err)
	}
}
