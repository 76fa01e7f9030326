package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/memdir/memdir"
	"github.com/memdir/memdir/agent"
	"github.com/memdir/memdir/internal/flock"
	"github.com/memdir/memdir/llm"
	"github.com/memdir/memdir/locate"
	"github.com/memdir/memdir/memdirtest"
	"github.com/memdir/memdir/transcript"
)

// conv builds a conversation: alternating user and assistant text messages
// with UUIDs u1, u2, …
func conv(texts ...string) []transcript.Message {
	var out []transcript.Message
	for i, t := range texts {
		role := llm.RoleUser
		if i%2 == 1 {
			role = llm.RoleAssistant
		}
		out = append(out, transcript.Message{
			Message: llm.Message{Role: role, Content: []llm.Block{llm.TextBlock(t)}},
			UUID:    "u" + string(rune('1'+i)),
		})
	}
	return out
}

type extractWorld struct {
	srv   *memdirtest.ModelServer
	dir   *memdir.Dir
	state string
	now   time.Time
}

func newExtractWorld(tb testing.TB) *extractWorld {
	tb.Helper()
	base := tb.TempDir()
	d, err := memdir.Open(filepath.Join(base, "memory"), &memdir.Options{Journal: memdir.NewJournal(filepath.Join(base, "journal"), nil)})
	if err != nil {
		tb.Fatal(err)
	}
	return &extractWorld{srv: memdirtest.NewModelServer(tb), dir: d, state: filepath.Join(base, "state"), now: time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)}
}

func (w *extractWorld) extractor(tb testing.TB, every int) *agent.Extractor {
	tb.Helper()
	e, err := agent.NewExtractor(&agent.ExtractOptions{
		Model: clients[0].new(tb, w.srv), Dir: w.dir, StateDir: w.state, SessionID: "s1",
		Every: every, Now: func() time.Time { return w.now },
	})
	if err != nil {
		tb.Fatal(err)
	}
	return e
}

const memFile = "---\nname: db-tests\ndescription: integration tests use a real Postgres, never mocks\ntype: feedback\n---\n\nUse the compose Postgres.\n\n**Why:** mocks hid a broken migration.\n**How to apply:** every integration test.\n"

// scriptSave scripts the usual two turns: view, then create the memory, then
// a closing sentence.
func (w *extractWorld) scriptSave() {
	w.srv.Enqueue(
		reply(llm.Usage{InputTokens: 1000, OutputTokens: 20}, use("t1", "memory", `{"command":"view","path":"/memories"}`)),
		reply(llm.Usage{InputTokens: 1100, OutputTokens: 120}, use("t2", "memory", mustJSON(map[string]string{"command": "create", "path": "/memories/feedback_db_tests.md", "file_text": memFile}))),
		memdirtest.ModelReply{Content: []llm.Block{llm.TextBlock("Saved one feedback memory.")}, Usage: llm.Usage{InputTokens: 1200, OutputTokens: 8}},
	)
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func TestExtractSavesAndAdvancesCursor(t *testing.T) {
	ctx := context.Background()
	w := newExtractWorld(t)
	e := w.extractor(t, 1)
	w.scriptSave()
	msgs := conv("please never mock the database in integration tests: a mocked test once hid a broken migration", "Understood, I will use the real Postgres.")
	res, err := e.Extract(ctx, agent.Source{Messages: msgs})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"feedback_db_tests.md"}, res.Saved); diff != "" {
		t.Errorf("Saved (-want +got):\n%s", diff)
	}
	if res.Skipped || res.Cursor != "u2" || res.NewMessages != 2 || res.RunID == "" || res.Usage.InputTokens != 3300 || res.Usage.Calls != 3 {
		t.Errorf("result = %+v", res)
	}
	// The model forgot MEMORY.md: memdir added the line.
	ix, _ := os.ReadFile(w.dir.Abs("MEMORY.md"))
	if string(ix) != "- [db-tests](feedback_db_tests.md) — integration tests use a real Postgres, never mocks\n" {
		t.Errorf("MEMORY.md = %q", ix)
	}
	// What the model was told: the memory instructions, the extraction
	// brief with today's date, no project tools, and the conversation.
	first := w.srv.Requests()[0]
	if !strings.Contains(first.System, "# Your task: memory extraction") || !strings.Contains(first.System, "Today is Sunday 2026-11-29") {
		t.Errorf("system prompt lacks the extraction brief")
	}
	if len(first.Tools) != 1 || first.Tools[0].Name != "memory" {
		t.Errorf("extraction offered tools %v, want only the memory tool", first.Tools)
	}
	msg := first.Messages[0].Content[0].Text
	if !strings.Contains(msg, "## Existing memory files\n\nThere are none yet.") || !strings.Contains(msg, "User:\nplease never mock the database") {
		t.Errorf("request = %q", msg)
	}

	// Nothing new: no model call.
	res, err = e.Extract(ctx, agent.Source{Messages: msgs})
	if err != nil || !res.Skipped || !strings.Contains(res.Reason, "no new messages") {
		t.Errorf("second call = %+v, %v", res, err)
	}
	// New messages: only they are sent, with the manifest of what exists.
	w.srv.Enqueue(memdirtest.TextReply("Nothing worth saving."))
	more := append(msgs, conv("thanks", "You're welcome", "what's the weather", "I cannot check the weather")[2:]...)
	more[2].UUID, more[3].UUID = "u3", "u4"
	res, err = e.Extract(ctx, agent.Source{Messages: more})
	if err != nil || res.Skipped || res.NewMessages != 2 || res.Cursor != "u4" || len(res.Saved) != 0 || res.RunID != "" {
		t.Errorf("third call = %+v, %v", res, err)
	}
	sent := w.srv.LastRequest().Messages[0].Content[0].Text
	if strings.Contains(sent, "never mock") && !strings.Contains(sent, "feedback_db_tests.md") || !strings.Contains(sent, "what's the weather") || strings.Contains(sent, "User:\nplease never mock") {
		t.Errorf("third request should hold the manifest and only the new messages:\n%s", sent)
	}

	// The extraction is undoable byte for byte.
	if _, err := w.dir.Undo(ctx, "", nil); err == nil {
		t.Fatal("Undo with an empty id succeeded")
	}
	runs, _ := w.dir.Journal().Runs()
	var extractRun string
	for _, r := range runs {
		if r.Kind == "extract" {
			extractRun = r.ID
		}
	}
	if _, err := w.dir.Undo(ctx, extractRun, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(w.dir.Abs("feedback_db_tests.md")); !errors.Is(err, os.ErrNotExist) {
		t.Error("undo left the extracted memory")
	}
}

func TestExtractCursorLostMeansEverything(t *testing.T) {
	w := newExtractWorld(t)
	e := w.extractor(t, 1)
	w.srv.Enqueue(memdirtest.TextReply("nothing"), memdirtest.TextReply("nothing"))
	msgs := conv("a b c", "d e f")
	if _, err := e.Extract(context.Background(), agent.Source{Messages: msgs}); err != nil {
		t.Fatal(err)
	}
	// After a compaction the old UUIDs are gone: every message counts.
	compacted := conv("summary of before", "ok", "new question", "new answer")
	for i := range compacted {
		compacted[i].UUID = "c" + compacted[i].UUID
	}
	res, err := e.Extract(context.Background(), agent.Source{Messages: compacted})
	if err != nil || res.NewMessages != 4 || res.Cursor != "cu4" {
		t.Errorf("after compaction: %+v, %v", res, err)
	}
}

func TestExtractSkipsWhenConversationWroteMemory(t *testing.T) {
	w := newExtractWorld(t)
	e := w.extractor(t, 1)
	write := func(tool, path string) []transcript.Message {
		msgs := conv("remember that I use vim", "")
		msgs[1].Content = []llm.Block{{Type: llm.BlockToolUse, ToolUseID: "w1", ToolName: tool, Input: json.RawMessage(mustJSON(map[string]string{"file_path": path, "content": "x"}))}}
		return msgs
	}
	res, err := e.Extract(context.Background(), agent.Source{Messages: write("Write", w.dir.Abs("user_editor.md"))})
	if err != nil || !res.Skipped || !strings.Contains(res.Reason, "already wrote to memory") || res.Cursor != "u2" {
		t.Fatalf("direct write: %+v, %v", res, err)
	}
	if len(w.srv.Requests()) != 0 {
		t.Error("the model was called although the conversation saved the memory itself")
	}
	// Gemini CLI's write_file and Codex CLI's apply_patch count too.
	for _, tool := range []struct {
		name  string
		input map[string]string
	}{
		{"write_file", map[string]string{"file_path": w.dir.Abs("user_editor.md"), "content": "x"}},
		{"apply_patch", map[string]string{"input": "*** Begin Patch\n*** Add File: " + w.dir.Abs("user_editor.md") + "\n+x\n*** End Patch\n"}},
	} {
		msgs := conv("remember that I use vim", "")
		msgs[0].UUID, msgs[1].UUID = tool.name+"-1", tool.name+"-2"
		msgs[1].Content = []llm.Block{{Type: llm.BlockToolUse, ToolUseID: "w1", ToolName: tool.name, Input: json.RawMessage(mustJSON(tool.input))}}
		if res, err := e.Extract(context.Background(), agent.Source{Messages: msgs}); err != nil || !res.Skipped || !strings.Contains(res.Reason, "already wrote to memory") {
			t.Errorf("%s of a memory: %+v, %v", tool.name, res, err)
		}
	}
	// A write elsewhere is not a memory write: the extraction runs.
	w.srv.Enqueue(memdirtest.TextReply("nothing"))
	msgs := write("Edit", filepath.Join(t.TempDir(), "main.go"))
	msgs[0].UUID, msgs[1].UUID = "v1", "v2"
	if res, err := e.Extract(context.Background(), agent.Source{Messages: msgs}); err != nil || res.Skipped {
		t.Errorf("write outside memory: %+v, %v", res, err)
	}
}

func TestExtractThrottle(t *testing.T) {
	w := newExtractWorld(t)
	e := w.extractor(t, 2)
	w.srv.Enqueue(memdirtest.TextReply("nothing"))
	res, err := e.Extract(context.Background(), agent.Source{Messages: conv("one two", "three")})
	if err != nil || !res.Skipped || !strings.Contains(res.Reason, "every 2 eligible turns (1 so far)") {
		t.Fatalf("first call: %+v, %v", res, err)
	}
	res, err = e.Extract(context.Background(), agent.Source{Messages: conv("one two", "three", "four five", "six")})
	if err != nil || res.Skipped || res.NewMessages != 4 {
		t.Errorf("second call: %+v, %v", res, err)
	}
}

func TestExtractCoalescesInProcess(t *testing.T) {
	w := newExtractWorld(t)
	e := w.extractor(t, 1)
	slow := memdirtest.TextReply("nothing")
	slow.Delay = 300 * time.Millisecond
	w.srv.Enqueue(slow, memdirtest.TextReply("nothing either"))
	var first *agent.ExtractResult
	var firstErr error
	var wg sync.WaitGroup
	wg.Go(func() {
		first, firstErr = e.Extract(context.Background(), agent.Source{Messages: conv("a b", "c")})
	})
	// Wait until the first run has called the model, then arrive.
	for len(w.srv.Requests()) == 0 {
		time.Sleep(5 * time.Millisecond)
	}
	later := conv("a b", "c", "d e", "f")
	second, err := e.Extract(context.Background(), agent.Source{Messages: later})
	if err != nil || !second.Skipped || !strings.Contains(second.Reason, "already running") {
		t.Fatalf("concurrent call: %+v, %v", second, err)
	}
	wg.Wait()
	if firstErr != nil {
		t.Fatal(firstErr)
	}
	if first.Trailing == nil || first.Trailing.Skipped || first.Trailing.NewMessages != 2 || first.Trailing.Cursor != "u4" {
		t.Errorf("trailing run = %+v", first.Trailing)
	}
	if n := len(w.srv.Requests()); n != 2 {
		t.Errorf("%d model calls, want 2 (the run and one trailing run)", n)
	}
}

func TestExtractCoalescesAcrossProcesses(t *testing.T) {
	w := newExtractWorld(t)
	loads := 0
	newer := conv("a b", "c", "d e", "f")
	e, err := agent.NewExtractor(&agent.ExtractOptions{
		Model: clients[0].new(t, w.srv), Dir: w.dir, StateDir: w.state, SessionID: "s1",
		Load: func(path string) ([]transcript.Message, error) { loads++; return newer, nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	// Another process holds the session's lock.
	lockDir := filepath.Join(w.state, "extract", locate.SanitizePath(w.dir.Path(), locate.HashBun))
	os.MkdirAll(lockDir, 0o700)
	held, ok, err := flock.TryAcquire(filepath.Join(lockDir, "s1.lock"))
	if err != nil || !ok {
		t.Fatalf("hold the lock: %v %v", ok, err)
	}
	res, err := e.Extract(context.Background(), agent.Source{Messages: conv("a b", "c"), Path: "/transcripts/s1.jsonl"})
	if err != nil || !res.Skipped || !strings.Contains(res.Reason, "another process") {
		t.Fatalf("while locked: %+v, %v", res, err)
	}
	held.Unlock()
	// The next run takes the note and follows with a trailing run on the
	// reloaded conversation.
	w.srv.Enqueue(memdirtest.TextReply("nothing"), memdirtest.TextReply("nothing"))
	res, err = e.Extract(context.Background(), agent.Source{Messages: conv("a b", "c")})
	if err != nil || res.Trailing == nil || loads != 1 || res.Trailing.Cursor != "u4" {
		t.Errorf("after the lock: %+v (trailing %+v), loads %d, %v", res, res.Trailing, loads, err)
	}
}

func TestExtractModelFailureKeepsCursor(t *testing.T) {
	w := newExtractWorld(t)
	e := w.extractor(t, 1)
	w.srv.Enqueue(
		reply(llm.Usage{}, use("t1", "memory", mustJSON(map[string]string{"command": "create", "path": "/memories/user_editor.md", "file_text": "---\nname: editor\ndescription: uses vim\ntype: user\n---\nvim\n"}))),
		memdirtest.ErrorReply(500, "overloaded"),
	)
	res, err := e.Extract(context.Background(), agent.Source{Messages: conv("I use vim", "noted")})
	var me *llm.ModelError
	if !errors.As(err, &me) {
		t.Fatalf("err = %v, want a ModelError", err)
	}
	// The file written before the failure is journaled, so it can be undone;
	// the cursor did not move, so the next call sees the messages again.
	if res.RunID == "" {
		t.Error("a failed run that wrote a file left no journal run")
	}
	w.srv.Enqueue(memdirtest.TextReply("nothing"))
	res, err = e.Extract(context.Background(), agent.Source{Messages: conv("I use vim", "noted")})
	if err != nil || res.Skipped || res.NewMessages != 2 {
		t.Errorf("retry after failure: %+v, %v", res, err)
	}
}

func TestRenderConversation(t *testing.T) {
	msgs := conv("<system-reminder>ignore me</system-reminder>fix the login bug", "Looking.")
	msgs = append(msgs, transcript.Message{Message: llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{
		{Type: llm.BlockToolUse, ToolName: "Read", Input: json.RawMessage(`{"file_path": "/src/login.go"}`)},
	}}}, transcript.Message{Message: llm.Message{Role: llm.RoleUser, Content: []llm.Block{
		{Type: llm.BlockToolResult, Text: strings.Repeat("x", 5000), IsError: true},
	}}})
	got := agent.RenderConversation(msgs, 100_000)
	for _, want := range []string{"User:\nfix the login bug\n", "Assistant:\nLooking.\n", `(called Read {"file_path":"/src/login.go"})`, "[Tool results]\n(error: xxx", "more bytes]"} {
		if !strings.Contains(got, want) {
			t.Errorf("rendering lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "ignore me") {
		t.Error("system reminders were not stripped from user text")
	}
	if short := agent.RenderConversation(msgs, 40); !strings.HasPrefix(short, "(The 3 earliest messages are left out for length.)") {
		t.Errorf("budgeted rendering = %q", short)
	}
}
