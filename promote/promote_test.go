package promote_test

import (
	"context"
	"errors"
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
	"github.com/memdir/memdir/promote"
)

// reviewWorld is a project with every memory layer filled, and planted
// promotions, duplicates, outdated entries and conflicts.
type reviewWorld struct {
	src promote.Sources
	dir *memdir.Dir
	now time.Time
}

var reviewToken = "ghp_" + strings.Repeat("a1B2", 9)

func newReviewWorld(tb testing.TB) *reviewWorld {
	tb.Helper()
	base := tb.TempDir()
	w := &reviewWorld{
		src: promote.Sources{
			MemoryDir:   filepath.Join(base, "config", "projects", "-p", "memory"),
			ProjectRoot: filepath.Join(base, "project"),
			ConfigHome:  filepath.Join(base, "config"),
		},
		now: time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC),
	}
	mem := func(typ, name, desc, body string) string {
		s := "---\nname: " + name + "\ndescription: " + desc + "\n"
		if typ != "" {
			s += "type: " + typ + "\n"
		}
		return s + "---\n\n" + body + "\n"
	}
	files := map[string]string{
		// Promotions.
		"memory/feedback_commits.md": mem("feedback", "commit style", "conventional commits, squash merges",
			"All commits in this repo use Conventional Commits, and we squash pull requests.\n\n**Why:** the changelog is generated from commit subjects."),
		"memory/feedback_terse.md": mem("feedback", "terse answers", "the user wants short answers",
			"The user prefers terse answers with no summary at the end."),
		"memory/user_tabs.md":          mem("user", "tabs", "user prefers tabs", "Prefers tabs over spaces when writing shell scripts."),
		"memory/reference_runbooks.md": mem("reference", "runbooks", "where the runbooks are", "Runbooks live in Notion under Ops/Runbooks."),
		"memory/feedback_中文提交.md":      mem("feedback", "提交信息", "团队约定提交信息用中文", "团队约定：所有提交信息必须使用中文。"),
		// Stays.
		"memory/user_role.md": mem("user", "role", "senior Go engineer new to React", "Ten years of Go; first time on the React frontend."),
		"memory/project_ci_token.md": mem("project", "ci token", "staging pipeline credentials",
			"The staging pipeline authenticates with "+reviewToken+" until the vault migration."),
		// Cleanup: exact duplicates, a memory already in the user's CLAUDE.md,
		// a near duplicate of the project's CLAUDE.md, an outdated and a
		// superseded project memory.
		"memory/feedback_gofmt.md":      mem("feedback", "gofmt", "format before committing", "Run gofmt before committing."),
		"memory/feedback_gofmt_copy.md": mem("feedback", "gofmt again", "format Go code", "Run  gofmt  before committing."),
		"memory/feedback_small_prs.md":  mem("feedback", "small prs", "keep pull requests small", "Prefer small PRs."),
		"memory/feedback_deploy.md": mem("feedback", "deploys", "deploys go through Argo CD, never kubectl apply to production",
			"Deploy through Argo CD only; never kubectl apply against production clusters."),
		"memory/project_freeze.md": mem("project", "mobile freeze", "merge freeze for the mobile release",
			"Merge freeze from 2026-03-05 until March 12, 2026 for the mobile release."),
		"memory/project_billing.md": "---\nname: billing rewrite\ndescription: the billing rewrite plan\ntype: project\nstatus: superseded\n---\n\nRewrite billing in Rust.\n",
		// Ambiguous: a conflict with CLAUDE.md, and one memory saved with
		// two types.
		"memory/feedback_no_mocks.md": mem("feedback", "no http mocks", "never mock HTTP services in tests",
			"Never mock HTTP services in tests; replay the recorded fixtures instead."),
		"memory/reference_grafana.md": mem("reference", "grafana", "dispatch latency dashboards", "Dispatch latency dashboards: grafana.internal/d/dispatch."),
		"memory/team/grafana.md":      mem("project", "grafana", "dispatch latency dashboards", "The dispatch dashboards moved to grafana.internal/d/dispatch-v2."),
		"memory/team/MEMORY.md":       "- [grafana](grafana.md) — dispatch latency dashboards\n",
		// Not memories.
		"memory/logs/2026/11/2026-11-28.md": "- 10:00 asked about deploys\n",
		// Instruction files.
		"project/CLAUDE.md":       "# Project rules\n\n<!-- reviewers: keep this list short -->\n- Deploy through Argo CD; never run kubectl apply against production.\n- Mock external HTTP services in unit tests\n  so that they run offline.\n\n```sh\nmake test\n```\n\n@docs/style.md\n",
		"project/CLAUDE.local.md": "- Answer in English.\n",
		"config/CLAUDE.md":        "# Mine\n\nPrefer small PRs.\n",
	}
	for name, content := range files {
		p := filepath.Join(base, filepath.FromSlash(name))
		if after, ok := strings.CutPrefix(name, "memory/"); ok {
			p = filepath.Join(w.src.MemoryDir, filepath.FromSlash(after))
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			tb.Fatal(err)
		}
	}
	// The copy is newer, so the original is the one kept.
	old, newer := w.now.Add(-48*time.Hour), w.now.Add(-time.Hour)
	os.Chtimes(filepath.Join(w.src.MemoryDir, "feedback_gofmt.md"), old, old)
	os.Chtimes(filepath.Join(w.src.MemoryDir, "feedback_gofmt_copy.md"), newer, newer)
	d, err := memdir.Open(w.src.MemoryDir, &memdir.Options{Journal: memdir.NewJournal(filepath.Join(base, "journal"), nil)})
	if err != nil {
		tb.Fatal(err)
	}
	w.dir = d
	return w
}

// brief renders an item as one comparable line.
func brief(it promote.Item) string {
	var subj []string
	for _, s := range it.Subjects {
		subj = append(subj, s.Display)
	}
	s := it.ID + " " + string(it.Kind) + " " + strings.Join(subj, " | ")
	if it.Remove != "" {
		s += " -remove " + it.Remove
	}
	if it.Target != "" {
		s += " -> " + filepath.Base(it.Target)
	}
	if !it.Applicable {
		s += " (not applicable)"
	}
	return s
}

func TestReviewLexical(t *testing.T) {
	w := newReviewWorld(t)
	rep, err := promote.Review(context.Background(), w.src, &promote.Options{Now: func() time.Time { return w.now }})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, it := range rep.Items {
		got = append(got, brief(it))
	}
	want := []string{
		"P1 to-claude-md feedback_commits.md -> CLAUDE.md",
		"P2 to-claude-local-md feedback_terse.md -> CLAUDE.local.md",
		"P3 to-claude-md feedback_中文提交.md -> CLAUDE.md",
		"P4 to-team reference_runbooks.md -> reference_runbooks.md",
		"P5 to-claude-local-md user_tabs.md -> CLAUDE.local.md",
		"C1 duplicate feedback_gofmt_copy.md | feedback_gofmt.md -remove feedback_gofmt_copy.md",
		"C2 duplicate feedback_small_prs.md | ~config/CLAUDE.md:3 -remove feedback_small_prs.md",
		"C3 near-duplicate feedback_deploy.md | CLAUDE.md:4 -remove feedback_deploy.md",
		"C4 superseded project_billing.md -remove project_billing.md",
		"C5 outdated project_freeze.md -remove project_freeze.md",
		"A1 conflict feedback_no_mocks.md | CLAUDE.md:5 (not applicable)",
		"A2 conflict reference_grafana.md | team/grafana.md (not applicable)",
		"A3 unclear feedback_gofmt.md (not applicable)",
		"N1 keep project_ci_token.md (not applicable)",
		"N2 keep user_role.md (not applicable)",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("report (-want +got):\n%s", diff)
		for _, it := range rep.Items {
			t.Logf("%s: %s", it.ID, it.Reason)
		}
	}
	if rep.Method != promote.MethodLexical || rep.Memories != 16 || rep.Rules != 4 || len(rep.Files) != 3 {
		t.Errorf("method %s, %d memories, %d rules, files %+v", rep.Method, rep.Memories, rep.Rules, rep.Files)
	}
	reasons := map[string]string{}
	for _, it := range rep.Items {
		reasons[it.ID] = it.Reason
	}
	for id, want := range map[string]string{
		"P1": `"this repo"`,
		"P2": `"the user"`,
		"C5": "the latest, 2026-03-12, was 262 days ago",
		"C4": "status: superseded",
		"A1": `one negates "mock" and the other asserts it`,
		"A2": "saved as reference in reference_grafana.md and as project in team/grafana.md",
		"N1": "GitHub PAT",
	} {
		if !strings.Contains(reasons[id], want) {
			t.Errorf("%s reason %q lacks %q", id, reasons[id], want)
		}
	}
	if strings.Contains(reasons["N1"], reviewToken) {
		t.Error("a reason quotes the credential")
	}
	p1, _ := rep.Item("p1")
	if p1.Rule != "All commits in this repo use Conventional Commits, and we squash pull requests. (Why: the changelog is generated from commit subjects.)" {
		t.Errorf("P1 rule = %q", p1.Rule)
	}
}

func TestApplyReview(t *testing.T) {
	ctx := context.Background()
	w := newReviewWorld(t)
	rep, err := promote.Review(ctx, w.src, &promote.Options{Now: func() time.Time { return w.now }})
	if err != nil {
		t.Fatal(err)
	}
	claudeMD := filepath.Join(w.src.ProjectRoot, "CLAUDE.md")
	localMD := filepath.Join(w.src.ProjectRoot, "CLAUDE.local.md")
	beforeMD, _ := os.ReadFile(claudeMD)
	beforeLocal, _ := os.ReadFile(localMD)

	// Unknown, not applicable, or stale items stop everything.
	for _, tc := range []struct {
		ids  []string
		want error
	}{
		{[]string{"P1", "Z9"}, memdir.ErrNotFound},
		{[]string{"P1", "A1"}, memdir.ErrInvalid},
		{nil, memdir.ErrInvalid},
	} {
		if _, err := promote.Apply(ctx, w.dir, rep, tc.ids, nil); !errors.Is(err, tc.want) {
			t.Errorf("apply %v: %v, want %v", tc.ids, err, tc.want)
		}
	}
	if got, _ := os.ReadFile(claudeMD); string(got) != string(beforeMD) {
		t.Fatal("a refused apply changed CLAUDE.md")
	}

	beforeIndex, _ := os.ReadFile(filepath.Join(w.src.MemoryDir, "MEMORY.md"))
	done, err := promote.Apply(ctx, w.dir, rep, []string{"P1", "P2", "P4", "C1"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(done) != 4 {
		t.Fatalf("applied %+v", done)
	}
	gotMD, _ := os.ReadFile(claudeMD)
	wantMD := string(beforeMD) + "\n- All commits in this repo use Conventional Commits, and we squash pull requests. (Why: the changelog is generated from commit subjects.)\n"
	if diff := cmp.Diff(wantMD, string(gotMD)); diff != "" {
		t.Errorf("CLAUDE.md (-want +got):\n%s", diff)
	}
	if got, _ := os.ReadFile(localMD); string(got) != "- Answer in English.\n- The user prefers terse answers with no summary at the end.\n" {
		t.Errorf("CLAUDE.local.md = %q", got)
	}
	for _, gone := range []string{"feedback_commits.md", "feedback_terse.md", "reference_runbooks.md", "feedback_gofmt_copy.md"} {
		if _, err := os.Stat(filepath.Join(w.src.MemoryDir, gone)); !os.IsNotExist(err) {
			t.Errorf("%s is still there: %v", gone, err)
		}
	}
	if _, err := os.Stat(filepath.Join(w.src.MemoryDir, "team", "reference_runbooks.md")); err != nil {
		t.Errorf("the runbooks memory did not move to team/: %v", err)
	}

	// Applying again: the promoted memories are gone, so the review is stale.
	if _, err := promote.Apply(ctx, w.dir, rep, []string{"P1"}, nil); !errors.Is(err, memdir.ErrExists) {
		t.Errorf("re-applying: %v", err)
	}

	// The apply is one run (2 file edits, 3 removals, 1 rename), and one
	// undo brings the files back as they were.
	runs, _ := w.dir.Journal().Runs()
	if len(runs) != 1 || len(runs[0].ChangedFiles()) < 8 {
		t.Fatalf("%d journal runs, want 1 with every file of the apply", len(runs))
	}
	for _, a := range done {
		if len(a.RunIDs) != 1 || a.RunIDs[0] != runs[0].ID {
			t.Errorf("%s: runs %v, want [%s]", a.ID, a.RunIDs, runs[0].ID)
		}
	}
	if _, err := w.dir.Undo(ctx, runs[0].ID, nil); err != nil {
		t.Fatalf("undo: %v", err)
	}
	if got, _ := os.ReadFile(filepath.Join(w.src.MemoryDir, "MEMORY.md")); string(got) != string(beforeIndex) {
		t.Errorf("MEMORY.md after undo: %q, want %q", got, beforeIndex)
	}
	if _, err := os.Stat(filepath.Join(w.src.MemoryDir, "team", "reference_runbooks.md")); !os.IsNotExist(err) {
		t.Errorf("undo left the moved memory in team/: %v", err)
	}
	if got, _ := os.ReadFile(claudeMD); string(got) != string(beforeMD) {
		t.Errorf("CLAUDE.md after undo: %q", got)
	}
	if got, _ := os.ReadFile(localMD); string(got) != string(beforeLocal) {
		t.Errorf("CLAUDE.local.md after undo: %q", got)
	}
	for _, back := range []string{"feedback_commits.md", "feedback_terse.md", "reference_runbooks.md", "feedback_gofmt_copy.md"} {
		if _, err := os.Stat(filepath.Join(w.src.MemoryDir, back)); err != nil {
			t.Errorf("%s not restored: %v", back, err)
		}
	}

	// A memory edited after the review is not acted on.
	os.WriteFile(filepath.Join(w.src.MemoryDir, "project_freeze.md"), []byte("---\nname: x\ndescription: y\ntype: project\n---\nchanged\n"), 0o600)
	if _, err := promote.Apply(ctx, w.dir, rep, []string{"C5"}, nil); !errors.Is(err, memdir.ErrExists) || !strings.Contains(err.Error(), "project_freeze.md changed") {
		t.Errorf("apply over an edit: %v", err)
	}
}

func TestApplyReviewCreatesClaudeMDAndKeepsMemory(t *testing.T) {
	ctx := context.Background()
	w := newReviewWorld(t)
	os.Remove(filepath.Join(w.src.ProjectRoot, "CLAUDE.md"))
	rep, err := promote.Review(ctx, w.src, &promote.Options{Now: func() time.Time { return w.now }})
	if err != nil {
		t.Fatal(err)
	}
	p1, _ := rep.Item("P1")
	if _, err := promote.Apply(ctx, w.dir, rep, []string{"P1"}, &promote.ApplyOptions{KeepMemory: true}); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(w.src.ProjectRoot, "CLAUDE.md"))
	if err != nil || string(got) != "- "+p1.Rule+"\n" {
		t.Errorf("new CLAUDE.md = %q, %v", got, err)
	}
	if fi, _ := os.Stat(filepath.Join(w.src.ProjectRoot, "CLAUDE.md")); fi.Mode().Perm() != 0o600 {
		t.Errorf("new CLAUDE.md mode %v", fi.Mode().Perm())
	}
	if _, err := os.Stat(filepath.Join(w.src.MemoryDir, "feedback_commits.md")); err != nil {
		t.Errorf("KeepMemory removed the memory: %v", err)
	}
}

func TestReviewSaveLoad(t *testing.T) {
	w := newReviewWorld(t)
	rep, err := promote.Review(context.Background(), w.src, &promote.Options{Now: func() time.Time { return w.now }})
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "state", "promote", "x.json")
	if err := promote.SaveReport(file, rep); err != nil {
		t.Fatal(err)
	}
	back, err := promote.LoadReport(file)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(rep, back); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	if _, err := promote.LoadReport(filepath.Join(t.TempDir(), "none.json")); !errors.Is(err, memdir.ErrNotFound) {
		t.Errorf("missing: %v", err)
	}
	os.WriteFile(file, []byte("{"), 0o600)
	if _, err := promote.LoadReport(file); !errors.Is(err, memdir.ErrInvalid) || !strings.Contains(err.Error(), file) {
		t.Errorf("damaged: %v", err)
	}
}

func TestReviewEmpty(t *testing.T) {
	base := t.TempDir()
	rep, err := promote.Review(context.Background(), promote.Sources{MemoryDir: filepath.Join(base, "none"), ProjectRoot: base, ConfigHome: filepath.Join(base, "cfg")}, nil)
	if err != nil || len(rep.Items) != 0 || rep.Memories != 0 {
		t.Errorf("empty review: %+v, %v", rep, err)
	}
}

// TestReviewWithModel runs the model path through the real Anthropic SDK
// client against the fake server.
func TestReviewWithModel(t *testing.T) {
	ctx := context.Background()
	w := newReviewWorld(t)
	srv := memdirtest.NewModelServer(t)
	m, err := anthropic.New(&anthropic.Options{Model: "claude-test", APIKey: "test-key", BaseURL: srv.AnthropicBaseURL(), MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	lexical, err := promote.Review(ctx, w.src, &promote.Options{Now: func() time.Time { return w.now }})
	if err != nil {
		t.Fatal(err)
	}
	refOf := map[string]string{}
	for _, it := range lexical.Items {
		for _, s := range it.Subjects {
			refOf[s.Display] = s.Ref
		}
	}
	item := func(section, kind string, refs []string, rule, remove, reason string) map[string]any {
		return map[string]any{"section": section, "kind": kind, "refs": refs, "rule": rule, "remove": remove, "reason": reason}
	}
	good := memdirtest.JSONReply(map[string]any{"items": []any{
		item("promotions", "to-claude-md", []string{refOf["feedback_commits.md"]}, "Use Conventional Commits; squash PRs.", "", "A repository convention."),
		item("cleanup", "duplicate", []string{refOf["feedback_gofmt_copy.md"], refOf["feedback_gofmt.md"]}, "", refOf["feedback_gofmt_copy.md"], "Same text twice."),
		item("ambiguous", "conflict", []string{refOf["feedback_no_mocks.md"], refOf["CLAUDE.md:5"]}, "", "", "Opposite advice on HTTP mocks."),
		item("promotions", "to-team", []string{refOf["project_ci_token.md"]}, "", "", "The team needs it."),
	}})
	good.Usage = llm.Usage{InputTokens: 900, OutputTokens: 120}
	srv.Enqueue(good)
	rep, err := promote.Review(ctx, w.src, &promote.Options{Model: m, Context: "we are moving to a monorepo", Now: func() time.Time { return w.now }})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Method != promote.MethodByModel || rep.Usage.InputTokens != 900 || rep.Fallback != "" {
		t.Fatalf("method %s, usage %+v, fallback %q", rep.Method, rep.Usage, rep.Fallback)
	}
	var got []string
	for _, it := range rep.Items[:4] {
		got = append(got, brief(it))
	}
	want := []string{
		"P1 to-claude-md feedback_commits.md -> CLAUDE.md",
		"C1 duplicate feedback_gofmt_copy.md | feedback_gofmt.md -remove feedback_gofmt_copy.md",
		"A1 conflict feedback_no_mocks.md | CLAUDE.md:5 (not applicable)",
		// The credential check overrides the model.
		"N1 keep project_ci_token.md (not applicable)",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("model report (-want +got):\n%s", diff)
	}
	if p1, _ := rep.Item("P1"); p1.Rule != "Use Conventional Commits; squash PRs." {
		t.Errorf("P1 rule = %q", p1.Rule)
	}
	if n := len(rep.Section(promote.SectionNoAction)); n != 1+16-5 {
		t.Errorf("%d no-action items: memories the model left out should be kept", n)
	}
	req := srv.LastRequest()
	msg := req.Messages[0].Content[0].Text
	for _, wantText := range []string{"## Memories", "[M", "· feedback · feedback_commits.md", "CLAUDE.md:5: Mock external HTTP services", "## Lexical findings", "conflict", "## Additional context from the user\nwe are moving to a monorepo"} {
		if !strings.Contains(msg, wantText) {
			t.Errorf("the prompt lacks %q", wantText)
		}
	}
	if strings.Contains(msg, "2026-11-28.md") {
		t.Error("the prompt includes a daily log")
	}

	// Answers that do not check out fall back to the lexical report.
	for _, tc := range []struct {
		name  string
		reply memdirtest.ModelReply
		want  string
	}{
		{"unknown ref", memdirtest.JSONReply(map[string]any{"items": []any{item("cleanup", "duplicate", []string{"M999"}, "", "", "x")}}), `unknown ref "M999"`},
		{"wrong section", memdirtest.JSONReply(map[string]any{"items": []any{item("cleanup", "to-claude-md", []string{refOf["feedback_commits.md"]}, "r", "", "x")}}), "belongs in promotions"},
		{"promoting an instruction", memdirtest.JSONReply(map[string]any{"items": []any{item("promotions", "to-claude-local-md", []string{refOf["CLAUDE.md:4"]}, "r", "", "x")}}), "not an auto memory"},
		{"promotion without a rule", memdirtest.JSONReply(map[string]any{"items": []any{item("promotions", "to-claude-md", []string{refOf["feedback_commits.md"]}, " ", "", "x")}}), "needs a one-line rule"},
		{"removing a team memory", memdirtest.JSONReply(map[string]any{"items": []any{item("cleanup", "duplicate", []string{refOf["team/grafana.md"]}, "", refOf["team/grafana.md"], "x")}}), "not an auto memory"},
		{"unknown kind", memdirtest.JSONReply(map[string]any{"items": []any{item("cleanup", "merge", []string{refOf["feedback_commits.md"]}, "", "", "x")}}), `unknown kind "merge"`},
		{"no refs", memdirtest.JSONReply(map[string]any{"items": []any{item("cleanup", "duplicate", []string{}, "", "", "x")}}), "it names no entry"},
		{"removing outside its refs", memdirtest.JSONReply(map[string]any{"items": []any{item("cleanup", "duplicate", []string{refOf["feedback_gofmt_copy.md"]}, "", refOf["feedback_gofmt.md"], "x")}}), "is not one of its refs"},
		{"removing an unknown ref", memdirtest.JSONReply(map[string]any{"items": []any{item("cleanup", "outdated", []string{refOf["project_freeze.md"]}, "", "M999", "x")}}), `remove "M999" is not one of its refs`},
		{"items not a list", memdirtest.JSONReply(map[string]any{"items": "none"}), "does not match the schema"},
		{"no items", memdirtest.JSONReply(map[string]any{"findings": []any{}}), `has no "items" list`},
		{"not JSON", memdirtest.TextReply("I think everything is fine."), "no JSON"},
		{"server error", memdirtest.ErrorReply(500, "overloaded"), "the model call failed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv.Enqueue(tc.reply)
			rep, err := promote.Review(ctx, w.src, &promote.Options{Model: m, Now: func() time.Time { return w.now }})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Method != promote.MethodFallback || !strings.Contains(rep.Fallback, tc.want) {
				t.Errorf("method %s, fallback %q; want it to mention %q", rep.Method, rep.Fallback, tc.want)
			}
			if len(rep.Items) != len(lexical.Items) {
				t.Errorf("fallback report has %d items, the lexical one %d", len(rep.Items), len(lexical.Items))
			}
		})
	}

	// The other promotions, a removal, and an item without a reason.
	srv.Enqueue(memdirtest.JSONReply(map[string]any{"items": []any{
		item("promotions", "to-claude-local-md", []string{refOf["feedback_terse.md"]}, " Keep answers\nterse. ", "", "How this user works."),
		item("promotions", "to-team", []string{refOf["reference_runbooks.md"]}, "", "", "Everyone needs the runbooks."),
		item("cleanup", "outdated", []string{refOf["project_freeze.md"]}, "", " "+refOf["project_freeze.md"], "  "),
		item("cleanup", "near-duplicate", []string{refOf["feedback_deploy.md"], refOf["CLAUDE.md:4"]}, "", "", "Said twice; nothing removed."),
	}}))
	rep, err = promote.Review(ctx, w.src, &promote.Options{Model: m, Now: func() time.Time { return w.now }})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Method != promote.MethodByModel {
		t.Fatalf("method %s, fallback %q", rep.Method, rep.Fallback)
	}
	got = nil
	for _, it := range rep.Items[:4] {
		got = append(got, brief(it)+": "+it.Rule+": "+it.Reason)
	}
	want = []string{
		"P1 to-claude-local-md feedback_terse.md -> CLAUDE.local.md: Keep answers terse.: How this user works.",
		"P2 to-team reference_runbooks.md -> reference_runbooks.md: : Everyone needs the runbooks.",
		"C1 outdated project_freeze.md -remove project_freeze.md: : (the model gave no reason)",
		"C2 near-duplicate feedback_deploy.md | CLAUDE.md:4 (not applicable): : Said twice; nothing removed.",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("model report (-want +got):\n%s", diff)
	}
	if p2, _ := rep.Item("P2"); p2.Target != "team/reference_runbooks.md" {
		t.Errorf("P2 target = %q", p2.Target)
	}
}

// TestApplyReviewRefusesTamperedReports edits a saved report so that its
// items point outside what a review may touch.
func TestApplyReviewRefusesTamperedReports(t *testing.T) {
	ctx := context.Background()
	w := newReviewWorld(t)
	outside := filepath.Join(t.TempDir(), ".bashrc")
	for _, tc := range []struct {
		id     string
		tamper func(*promote.Item)
	}{
		{"P1", func(it *promote.Item) { it.Target = outside }},
		{"P2", func(it *promote.Item) { it.Target = filepath.Join(w.src.ProjectRoot, "CLAUDE.md") }}, // local rule into the shared file
		{"P4", func(it *promote.Item) { it.Target = "../escape.md" }},
		{"C1", func(it *promote.Item) { it.Remove = "team/grafana.md" }},
		{"C1", func(it *promote.Item) { it.Remove = "../../x.md" }},
	} {
		rep, err := promote.Review(ctx, w.src, &promote.Options{Now: func() time.Time { return w.now }})
		if err != nil {
			t.Fatal(err)
		}
		it, _ := rep.Item(tc.id)
		tc.tamper(it)
		if _, err := promote.Apply(ctx, w.dir, rep, []string{tc.id}, nil); !errors.Is(err, memdir.ErrInvalid) || !strings.Contains(err.Error(), "the saved review names") {
			t.Errorf("%s tampered: %v", tc.id, err)
		}
	}
	if _, err := os.Stat(outside); !os.IsNotExist(err) {
		t.Errorf("a tampered report wrote outside the project: %v", err)
	}
	if _, err := os.Stat(filepath.Join(w.src.MemoryDir, "team", "grafana.md")); err != nil {
		t.Errorf("a tampered report removed a team memory: %v", err)
	}
}

// TestReviewLexicalPairs covers the pair findings the planted world does
// not: several groups of exact duplicates (reported in path order, a team
// copy kept over a private one), near duplicates between two memories
// (the older kept, whichever comes first) and between two instruction files, and near-identical
// entries of one instruction file (left to its author).
func TestReviewLexicalPairs(t *testing.T) {
	base := t.TempDir()
	src := promote.Sources{
		MemoryDir:   filepath.Join(base, "memory"),
		ProjectRoot: filepath.Join(base, "project"),
		ConfigHome:  filepath.Join(base, "config"),
	}
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	mem := func(name, body string) string {
		return "---\nname: " + name + "\ndescription: " + name + "\ntype: user\n---\n\n" + body + "\n"
	}
	files := map[string]struct {
		content string
		age     time.Duration
	}{
		"memory/b_zebra.md":       {mem("zebra one", "Zebras graze on the savanna grass at dawn."), 3 * time.Hour},
		"memory/b_zebra_copy.md":  {mem("zebra two", "Zebras graze on the savanna grass at dawn."), 2 * time.Hour},
		"memory/a_kiwi.md":        {mem("kiwi one", "Kiwis forage for insects in leaf litter."), time.Hour},
		"memory/team/kiwi.md":     {mem("kiwi team", "Kiwis forage for insects in leaf litter."), 2 * time.Hour},
		"memory/team/MEMORY.md":   {"- [kiwi](kiwi.md) — kiwis\n", 0},
		"memory/c_otter.md":       {mem("otter", "Sea otters hold hands while sleeping in kelp beds near Monterey bay."), time.Hour},
		"memory/c_otter_older.md": {mem("otter older", "Sea otters hold hands while sleeping in kelp beds near Monterey."), 5 * time.Hour},
		"memory/d_heron_old.md":   {mem("heron old", "Grey herons nest in tall trees beside the river estuary every spring."), 6 * time.Hour},
		"memory/d_heron_young.md": {mem("heron young", "Grey herons nest in tall trees beside the river estuary each spring."), time.Hour},
		"project/CLAUDE.md": {"- Compile protobuf schemas with buf generate before every release build.\n" +
			"- Lint shell scripts with shellcheck in strict mode.\n- Lint shell scripts with shellcheck in strict mode please.\n", 0},
		"config/CLAUDE.md": {"- Compile protobuf schemas with buf generate before every release.\n", 0},
	}
	for name, f := range files {
		p := filepath.Join(base, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(f.content), 0o600); err != nil {
			t.Fatal(err)
		}
		mt := now.Add(-f.age)
		if err := os.Chtimes(p, mt, mt); err != nil {
			t.Fatal(err)
		}
	}
	rep, err := promote.Review(context.Background(), src, &promote.Options{Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, it := range rep.Items {
		if it.Section == promote.SectionCleanup {
			got = append(got, brief(it)+": "+it.Reason)
		}
	}
	want := []string{
		"C1 duplicate a_kiwi.md | team/kiwi.md -remove a_kiwi.md: holds the same text as team/kiwi.md",
		"C2 duplicate b_zebra_copy.md | b_zebra.md -remove b_zebra_copy.md: holds the same text as b_zebra.md",
		"C3 near-duplicate c_otter.md | c_otter_older.md -remove c_otter.md: says nearly the same as c_otter_older.md (similarity 0.79); merge anything it adds, then drop it",
		"C4 near-duplicate d_heron_young.md | d_heron_old.md -remove d_heron_young.md: says nearly the same as d_heron_old.md (similarity 0.71); merge anything it adds, then drop it",
		"C5 near-duplicate ~config/CLAUDE.md:1 | CLAUDE.md:1 (not applicable): two instruction files say nearly the same (similarity 0.88); keep it in one (memdir does not edit instruction files for you)",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("cleanup items (-want +got):\n%s", diff)
	}
}
