package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memdir/memdir/internal/cli"
	"github.com/memdir/memdir/llm"
	"github.com/memdir/memdir/locate"
	"github.com/memdir/memdir/memdirtest"
	"github.com/memdir/memdir/session"
)

const sessionTestID = "5d0c9a3e-41b7-4c2a-9e55-0f1e2d3c4b5a"

// sessionFixture copies the root package's session transcript into the
// project's transcript directory, as Claude Code would have written it,
// and returns its path.
func sessionFixture(tb testing.TB, w *memWorld) string {
	tb.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "session", "testdata", "session.jsonl"))
	if err != nil {
		tb.Fatal(err)
	}
	dir := filepath.Join(w.home, ".claude", "projects", locate.SanitizePath(w.project, locate.HashBun))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		tb.Fatal(err)
	}
	path := filepath.Join(dir, sessionTestID+".jsonl")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		tb.Fatal(err)
	}
	return path
}

func sessionNotesPath(w *memWorld) string {
	return filepath.Join(w.home, ".claude", "projects", locate.SanitizePath(w.project, locate.HashBun), sessionTestID, "session-memory", "summary.md")
}

// sessionModel points memdir at a fake Anthropic server.
func sessionModel(tb testing.TB, w *memWorld) *memdirtest.ModelServer {
	tb.Helper()
	srv := memdirtest.NewModelServer(tb)
	w.vars["MEMDIR_MODEL"] = "anthropic:claude-haiku-test"
	w.vars["ANTHROPIC_BASE_URL"] = srv.AnthropicBaseURL()
	w.vars["ANTHROPIC_API_KEY"] = "test-key"
	return srv
}

func sessionReplace(id, old, new string) llm.Block {
	in, _ := json.Marshal(map[string]string{"command": "str_replace", "path": "/memories/summary.md", "old_str": old, "new_str": new})
	return llm.Block{Type: llm.BlockToolUse, ToolUseID: id, ToolName: "memory", Input: in}
}

const sessionStateLine = "_What is under way at this moment, what is still open, and the immediate next steps_\n"

func TestSessionUpdateCommand(t *testing.T) {
	w := newMemWorld(t)
	transcriptPath := sessionFixture(t, w)

	// No model configured: a clear error, exit 4.
	_, errOut, code := w.run(t, "session", "update", "--transcript", transcriptPath)
	if code != cli.ExitInvalid || !strings.Contains(errOut, "needs a model") || !strings.Contains(errOut, "MEMDIR_MODEL") {
		t.Fatalf("without a model: exit %d, %s", code, errOut)
	}

	srv := sessionModel(t, w)
	srv.Enqueue(
		memdirtest.ModelReply{Content: []llm.Block{
			sessionReplace("e1", sessionStateLine, sessionStateLine+"Quotes cache committed as 9f3c2a1.\n"),
		}, Usage: llm.Usage{InputTokens: 6100, OutputTokens: 80}},
		memdirtest.ModelReply{Content: []llm.Block{llm.TextBlock("Done.")}, Usage: llm.Usage{InputTokens: 6200, OutputTokens: 2}},
	)
	out := w.ok(t, "session", "update", "--transcript", transcriptPath)
	out0 := out
	for _, want := range []string{
		"Session " + sessionTestID + ": " + sessionNotesPath(w),
		"Context: 23065 tokens (reported by the API), 23065 since the last update, 20 tool calls since the last update.",
		"Due: the context grew by 23065 tokens and 20 tool calls were made since the last update.",
		"Created the notes from the template.",
		"Sent the model 49 messages since the last update.",
		"Updated Current State (notes about",
		"Model: 2 turns, 1 tool call; tokens: 12300 in, 82 out.",
		"Undo with: memdir undo --dir ",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("update output lacks %q:\n%s", want, out)
		}
	}
	notes, _ := os.ReadFile(sessionNotesPath(w))
	if !strings.Contains(string(notes), "Quotes cache committed as 9f3c2a1.") {
		t.Errorf("notes:\n%s", notes)
	}

	// Nothing new: says why, touches nothing, exit 0.
	out = w.ok(t, "session", "update", "--session", sessionTestID)
	if !strings.Contains(out, "Not updated: the context grew by 0 tokens since the last update, fewer than the 5000 needed. (--force updates anyway)") {
		t.Errorf("second update:\n%s", out)
	}
	if len(srv.Requests()) != 2 {
		t.Errorf("%d model requests, want 2", len(srv.Requests()))
	}

	// The undo line works: the first update also created the notes.
	var undo []string
	for l := range strings.SplitSeq(out0, "\n") {
		if rest, ok := strings.CutPrefix(l, "Undo with: memdir "); ok {
			undo = strings.Fields(rest)
		}
	}
	if len(undo) != 4 {
		t.Fatalf("no undo line in:\n%s", out0)
	}
	w.ok(t, undo...)
	if _, err := os.Stat(sessionNotesPath(w)); !os.IsNotExist(err) {
		t.Errorf("undo of the first update left the notes: %v", err)
	}
}

func TestSessionUpdateForcedAndJSON(t *testing.T) {
	w := newMemWorld(t)
	transcriptPath := sessionFixture(t, w)
	srv := sessionModel(t, w)
	srv.Enqueue(memdirtest.TextReply("Nothing worth noting."))
	short := filepath.Join(t.TempDir(), "s2.json")
	if err := os.WriteFile(short, []byte(`[{"role":"user","content":"hi"},{"role":"assistant","content":"Hello."}]`), 0o600); err != nil {
		t.Fatal(err)
	}
	out := w.ok(t, "session", "update", "--transcript", short)
	if !strings.Contains(out, "Context: 3 tokens (estimated).\n") || !strings.Contains(out, "Not updated: the context holds 3 tokens, fewer than the 10000 needed before the first update.") {
		t.Errorf("short session:\n%s", out)
	}
	out = w.ok(t, "session", "update", "--transcript", short, "--force", "--json")
	var res session.UpdateResult
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err, out)
	}
	if res.SessionID != "s2" || !res.Updated || res.Changed || res.Edit == nil || res.Edit.Turns != 1 || res.State.Updates != 1 || res.Decision.Update {
		t.Errorf("forced update = %+v", res)
	}
	// Lower thresholds by flag.
	srv.Enqueue(memdirtest.TextReply("ok"))
	out = w.ok(t, "session", "update", "--transcript", transcriptPath, "--min-init-tokens", "100000", "--json")
	if err := json.Unmarshal([]byte(out), &res); err != nil || res.Updated || res.Decision.Thresholds.MinTokensToInit != 100000 {
		t.Errorf("--min-init-tokens: %+v, %v", res, err)
	}
}

func TestSessionUpdateRollback(t *testing.T) {
	w := newMemWorld(t)
	transcriptPath := sessionFixture(t, w)
	srv := sessionModel(t, w)
	srv.Enqueue(
		memdirtest.ModelReply{Content: []llm.Block{sessionReplace("b1", "# Worklog\n", "# Log\n")}},
		memdirtest.TextReply("Done."),
	)
	out, errOut, code := w.run(t, "session", "update", "--transcript", transcriptPath)
	if code != cli.ExitFailure || !strings.Contains(errOut, `the model broke the notes' structure (heading "# Worklog" became "# Log"); the previous notes were put back`) {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	if !strings.Contains(out, "The model's version is journaled; to see it: memdir undo --dir ") {
		t.Errorf("output:\n%s", out)
	}
	notes, _ := os.ReadFile(sessionNotesPath(w))
	if string(notes) != session.DefaultTemplate {
		t.Errorf("notes not put back:\n%s", notes)
	}
	// Model errors map to exit 9.
	srv.Enqueue(memdirtest.ErrorReply(401, "invalid x-api-key"))
	if _, errOut, code := w.run(t, "session", "update", "--transcript", transcriptPath, "--max-retries", "0"); code != cli.ExitModel || !strings.Contains(errOut, "401") {
		t.Errorf("model error: exit %d, %s", code, errOut)
	}
}

func TestSessionNotesCommand(t *testing.T) {
	w := newMemWorld(t)
	if out := w.ok(t, "session", "notes", "--session", sessionTestID, "--path"); out != sessionNotesPath(w)+"\n" {
		t.Errorf("--path = %q", out)
	}
	_, errOut, code := w.run(t, "session", "notes", "--session", sessionTestID)
	if code != cli.ExitNotFound || !strings.Contains(errOut, "has no notes yet") {
		t.Errorf("missing notes: exit %d, %s", code, errOut)
	}
	notes := strings.Replace(session.DefaultTemplate, sessionStateLine, sessionStateLine+"Wiring the cache.\n", 1)
	if err := os.MkdirAll(filepath.Dir(sessionNotesPath(w)), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(sessionNotesPath(w), []byte(notes), 0o600); err != nil {
		t.Fatal(err)
	}
	w.vars["CLAUDE_SESSION_ID"] = sessionTestID
	out, errOut, code := w.run(t, "session", "notes")
	if code != 0 || out != notes || !strings.Contains(errOut, "session notes: "+sessionNotesPath(w)+" (about ") || strings.Contains(errOut, "template") {
		t.Errorf("notes: exit %d\n%q\n%s", code, out, errOut)
	}
	var got struct {
		Path     string `json:"path"`
		Notes    string `json:"notes"`
		Template bool   `json:"template"`
		Sections []struct {
			Heading string `json:"heading"`
			Tokens  int    `json:"tokens"`
		} `json:"sections"`
	}
	if err := json.Unmarshal([]byte(w.ok(t, "session", "notes", "--json")), &got); err != nil {
		t.Fatal(err)
	}
	if got.Path != sessionNotesPath(w) || got.Notes != notes || got.Template || len(got.Sections) != 10 || got.Sections[1].Heading != "# Current State" {
		t.Errorf("--json = %+v", got)
	}
}

func TestSessionCompactCommand(t *testing.T) {
	w := newMemWorld(t)
	transcriptPath := sessionFixture(t, w)
	out := w.ok(t, "session", "compact", "--transcript", transcriptPath)
	if !strings.Contains(out, "Would fall back to an LLM summary: session "+sessionTestID+" has no notes") {
		t.Errorf("no notes:\n%s", out)
	}
	// Notes with content and a state saying what they cover.
	notes := strings.Replace(session.DefaultTemplate, sessionStateLine, sessionStateLine+"Wiring the cache.\n", 1)
	dir := filepath.Dir(sessionNotesPath(w))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(sessionNotesPath(w), []byte(notes), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, session.StateFile), []byte(`{"last_summarized_message_id":"20000046-0000-4000-8000-000000000046"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	out = w.ok(t, "session", "compact", "--session", sessionTestID, "--min-tokens", "2000")
	for _, want := range []string{
		"Session " + sessionTestID + ": 49 messages",
		"The last compaction comes before message 16; nothing earlier is kept.",
		// 37–48 hold 2,078 tokens and 5 text messages; 37 answers 36's call.
		"Would keep messages 36–48: 13 messages, about 2112 tokens, 5 with text.",
		"Summary: the notes, ",
		"INDEX  ROLE",
		"36     assistant  34      1 call       → Edit\n37     user       18      1 result",
		"44     assistant  46      text         Wired the cache into the six quotes handlers (internal/api/…",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("compact output lacks %q:\n%s", want, out)
		}
	}
	var got sessionCompactJSON
	if err := json.Unmarshal([]byte(w.ok(t, "session", "compact", "--session", sessionTestID, "--json", "--threshold", "100000")), &got); err != nil {
		t.Fatal(err)
	}
	if got.Fallback != nil || got.Compaction == nil || got.Compaction.Floor != 16 || len(got.Kept) != got.Messages-got.Compaction.Start || got.Kept[0].Index != got.Compaction.Start {
		t.Errorf("--json = %+v", got)
	}
	if err := json.Unmarshal([]byte(w.ok(t, "session", "compact", "--session", sessionTestID, "--json", "--threshold", "3000")), &got); err != nil || got.Fallback == nil || got.Fallback.Reason != session.FallbackOverThreshold {
		t.Errorf("over the threshold: %+v, %v", got.Fallback, err)
	}
}

func TestSessionCommandErrors(t *testing.T) {
	w := newMemWorld(t)
	for _, tt := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"session"}, cli.ExitUsage, "missing subcommand"},
		{[]string{"session", "tidy"}, cli.ExitUsage, "unknown subcommand"},
		{[]string{"session", "notes"}, cli.ExitUsage, "no session id"},
		{[]string{"session", "notes", "--session", "x", "extra"}, cli.ExitUsage, "takes no arguments"},
		{[]string{"session", "notes", "--session", "x", "--force"}, cli.ExitUsage, "--force does not apply to session notes"},
		{[]string{"session", "compact", "--session", "x", "--max-turns", "2"}, cli.ExitUsage, "--max-turns does not apply"},
		{[]string{"session", "update", "--session", "x", "--min-growth", "0"}, cli.ExitUsage, "more than zero"},
		{[]string{"session", "notes", "--session", "../etc"}, cli.ExitInvalid, "cannot name a directory"},
		{[]string{"session", "compact", "--session", "nosuch"}, cli.ExitNotFound, "nosuch.jsonl"},
		{[]string{"session", "compact", "--transcript", "garbage.txt"}, cli.ExitNotFound, "garbage.txt"},
	} {
		_, errOut, code := w.run(t, tt.args...)
		if code != tt.code || !strings.Contains(errOut, tt.msg) {
			t.Errorf("%v: exit %d, %q; want %d and %q", tt.args, code, errOut, tt.code, tt.msg)
		}
	}
	bad := filepath.Join(w.project, "bad.jsonl")
	if err := os.WriteFile(bad, []byte("\x00\x01binary"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, errOut, code := w.run(t, "session", "compact", "--transcript", bad); code != cli.ExitInvalid || !strings.Contains(errOut, bad) {
		t.Errorf("binary transcript: exit %d, %s", code, errOut)
	}
}
