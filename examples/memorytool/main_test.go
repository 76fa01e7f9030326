package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/memdir/memdir/llm"
	"github.com/memdir/memdir/memdirtest"
)

// TestSavesThroughTheMemoryTool scripts the fake model to create a memory
// with the tool and then answer: the file lands in Claude Code's memory
// directory for the project, and the answer is printed.
func TestSavesThroughTheMemoryTool(t *testing.T) {
	srv := memdirtest.NewModelServer(t)
	create, _ := json.Marshal(map[string]string{"command": "create", "path": "/memories/user_indentation.md",
		"file_text": "---\nname: indentation\ndescription: the user prefers tabs\ntype: user\n---\nTabs, always.\n"})
	srv.Enqueue(
		memdirtest.ModelReply{Content: []llm.Block{{Type: llm.BlockToolUse, ToolUseID: "toolu_1", ToolName: "memory", Input: create}}},
		memdirtest.TextReply("Noted: tabs."),
	)
	home := t.TempDir()
	project := filepath.Join(t.TempDir(), "shop")
	if err := os.MkdirAll(project, 0o700); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"HOME": home, "CLAUDE_CONFIG_DIR": filepath.Join(home, ".claude"), "ANTHROPIC_API_KEY": "test", "ANTHROPIC_BASE_URL": srv.AnthropicBaseURL()}
	var out bytes.Buffer
	if err := run(context.Background(), "I prefer tabs.", project, func(k string) (string, bool) { v, ok := env[k]; return v, ok }, &out); err != nil {
		t.Fatal(err)
	}
	if out.String() != "Noted: tabs.\n" {
		t.Errorf("output %q", out.String())
	}
	matches, _ := filepath.Glob(filepath.Join(home, ".claude", "projects", "*", "memory", "user_indentation.md"))
	if len(matches) != 1 {
		t.Fatalf("the memory is not in Claude Code's directory for the project: %v", matches)
	}
	if reqs := srv.Requests(); len(reqs) != 2 || reqs[0].Tools[0].Name != "memory" {
		t.Errorf("%d requests to the model; want 2, the first offering the memory tool", len(reqs))
	}
}
