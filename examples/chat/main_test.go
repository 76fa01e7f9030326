package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memdir/memdir/llm"
	"github.com/memdir/memdir/memdirtest"
)

// TestChatRemembersAcrossSessions runs two chat sessions against the fake
// model: the first saves a memory through extraction, the second recalls it
// and sends it to the model with the user's message.
func TestChatRemembersAcrossSessions(t *testing.T) {
	srv := memdirtest.NewModelServer(t)
	memory := "---\nname: indentation\ndescription: the user prefers tabs for indentation in Go and shell scripts\ntype: feedback\n---\nUse tabs.\n"
	srv.Handle(func(r *memdirtest.ModelRequest) memdirtest.ModelReply {
		last := r.Messages[len(r.Messages)-1]
		switch {
		case len(r.Schema) > 0: // the recall selector
			return memdirtest.JSONReply(map[string]any{"selected_memories": []string{"feedback_indentation.md"}})
		case strings.Contains(r.System, "# Your task: memory extraction"):
			if last.Content[0].Type == llm.BlockToolResult {
				return memdirtest.TextReply("Saved the indentation preference.")
			}
			if strings.Contains(last.Content[0].Text, "Existing memory files\n\nThere are none yet.") {
				in, _ := json.Marshal(map[string]string{"command": "create", "path": "/memories/feedback_indentation.md", "file_text": memory})
				return memdirtest.ModelReply{Content: []llm.Block{{Type: llm.BlockToolUse, ToolUseID: "t1", ToolName: "memory", Input: in}}}
			}
			return memdirtest.TextReply("Nothing new.")
		default:
			return memdirtest.TextReply("Sure.")
		}
	})
	model, err := modelFromEnv(func(k string) string {
		return map[string]string{"MEMDIR_MODEL": "anthropic:claude-test", "ANTHROPIC_API_KEY": "test", "ANTHROPIC_BASE_URL": srv.AnthropicBaseURL()}[k]
	})
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "memory")
	os.Mkdir(dir, 0o700)
	t.Setenv("MEMDIR_STATE_DIR", t.TempDir())
	now := func() time.Time { return time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC) }

	var out bytes.Buffer
	first := &chat{model: model, dir: dir, state: t.TempDir(), session: "s1", now: now}
	if err := first.run(context.Background(), strings.NewReader("please always use tabs for indentation\n"), &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "Sure.\n(saved 1 memory: feedback_indentation.md)") {
		t.Fatalf("first session:\n%s", out.String())
	}

	out.Reset()
	second := &chat{model: model, dir: dir, state: t.TempDir(), session: "s2", now: now}
	if err := second.run(context.Background(), strings.NewReader("format this shell script for indentation\n"), &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "(recalled 1 memory)") {
		t.Fatalf("second session:\n%s", out.String())
	}
	// The answer request carried MEMORY.md in the system prompt and the
	// recalled memory before the user's words.
	var answer *memdirtest.ModelRequest
	for _, r := range srv.Requests() {
		if len(r.Schema) == 0 && !strings.Contains(r.System, "memory extraction") {
			answer = r
		}
	}
	if !strings.Contains(answer.System, "- [indentation](feedback_indentation.md)") {
		t.Errorf("the system prompt lacks MEMORY.md")
	}
	user := answer.Messages[len(answer.Messages)-1]
	if len(user.Content) != 2 || !strings.Contains(user.Content[0].Text, "Use tabs.") || user.Content[1].Text != "format this shell script for indentation" {
		t.Errorf("user turn = %+v", user.Content)
	}
}
