package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memdir/memdir/internal/cli"
	"github.com/memdir/memdir/llm"
	"github.com/memdir/memdir/memdirtest"
)

// useFakeModel points the world's configuration at a fake Anthropic server.
func (w *memWorld) useFakeModel(tb testing.TB) *memdirtest.ModelServer {
	tb.Helper()
	srv := memdirtest.NewModelServer(tb)
	w.vars["MEMDIR_MODEL"] = "anthropic:claude-test"
	w.vars["ANTHROPIC_BASE_URL"] = srv.AnthropicBaseURL()
	w.vars["ANTHROPIC_API_KEY"] = "test-key"
	w.vars["MEMDIR_MAX_RETRIES"] = "0"
	return srv
}

// writeTranscript writes a two-message Claude Code session log.
func writeTranscript(tb testing.TB, dir, name string, lines ...string) string {
	tb.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		tb.Fatal(err)
	}
	return p
}

const (
	jsonlUser = `{"type":"user","uuid":"a1","parentUuid":null,"sessionId":"s","timestamp":"2026-11-29T10:00:00.000Z","message":{"role":"user","content":"from now on, never mock the database in integration tests"}}`
	jsonlBot  = `{"type":"assistant","uuid":"a2","parentUuid":"a1","sessionId":"s","timestamp":"2026-11-29T10:00:05.000Z","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude","content":[{"type":"text","text":"Understood."}],"stop_reason":"end_turn","usage":{"input_tokens":10,"output_tokens":3}}}`
)

func TestExtractCommand(t *testing.T) {
	w := newMemWorld(t)
	path := writeTranscript(t, t.TempDir(), "3f2a.jsonl", jsonlUser, jsonlBot)
	if _, errOut, code := w.run(t, "extract", "--transcript", path); code != cli.ExitInvalid || !strings.Contains(errOut, "needs a model: set MEMDIR_MODEL") {
		t.Errorf("without a model: exit %d, %q", code, errOut)
	}
	srv := w.useFakeModel(t)
	file := "---\nname: db-tests\ndescription: integration tests use a real database\ntype: feedback\n---\nNo mocks.\n"
	in, _ := json.Marshal(map[string]string{"command": "create", "path": "/memories/feedback_db_tests.md", "file_text": file})
	srv.Enqueue(
		memdirtest.ModelReply{Content: []llm.Block{{Type: llm.BlockToolUse, ToolUseID: "t1", ToolName: "memory", Input: in}}, Usage: llm.Usage{InputTokens: 900, OutputTokens: 60}},
		memdirtest.TextReply("Saved one."),
	)
	out, errOut, code := w.run(t, "extract", "--transcript", path)
	if code != 0 || !strings.Contains(out, "Saved 1 memory from 2 new messages.\n  "+w.memDir(t)+"/feedback_db_tests.md") {
		t.Fatalf("extract: exit %d\n%s\n%s", code, out, errOut)
	}
	if !strings.Contains(errOut, "undo with: memdir undo ") {
		t.Errorf("stderr = %q", errOut)
	}
	out = w.ok(t, "extract", "--transcript", path)
	if out != "No extraction: no new messages since the last extraction.\n" {
		t.Errorf("second extract printed %q", out)
	}
	w.vars["CLAUDE_CODE_DISABLE_AUTO_MEMORY"] = "1"
	if _, _, code := w.run(t, "extract", "--transcript", path); code != cli.ExitDisabled {
		t.Errorf("disabled auto memory: exit %d, want %d", code, cli.ExitDisabled)
	}
}

func TestDreamCommand(t *testing.T) {
	w := newMemWorld(t)
	srv := w.useFakeModel(t)
	w.ok(t, "save", "--name", "a", "--type", "user", "--description", "d", "--body", "x")
	out := w.ok(t, "dream")
	if !strings.Contains(out, "Not consolidating (enabled gate): automatic consolidation is off") {
		t.Errorf("dream without autoDreamEnabled printed %q", out)
	}
	srv.Enqueue(memdirtest.TextReply("Nothing needed changing."))
	out, errOut, code := w.run(t, "dream", "--force")
	if code != 0 || !strings.Contains(out, "Improved 0 memories.") || !strings.Contains(out, "Nothing needed changing.") {
		t.Fatalf("dream --force: exit %d\n%s\n%s", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(w.memDir(t), ".consolidate-lock")); err != nil {
		t.Errorf("no consolidation lock after a run: %v", err)
	}
	// Turned on in the user's settings, but the last run was just now.
	os.MkdirAll(filepath.Join(w.home, ".claude"), 0o700)
	os.WriteFile(filepath.Join(w.home, ".claude", "settings.json"), []byte(`{"autoDreamEnabled": true}`), 0o600)
	if out := w.ok(t, "dream"); !strings.Contains(out, "(time gate)") {
		t.Errorf("dream right after a run printed %q", out)
	}
}
