package agent_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/memdir/memdir/agent"
	"github.com/memdir/memdir/anthropic"
	"github.com/memdir/memdir/llm"
	"github.com/memdir/memdir/memdirtest"
)

// A background run: the model reads the project, writes a memory, and is
// refused a shell. The fake server stands in for the model; a real run
// passes any llm.Model.
func ExampleRun() {
	srv := memdirtest.StartModelServer()
	defer srv.Close()
	srv.Enqueue(
		memdirtest.ModelReply{Content: []llm.Block{
			{Type: llm.BlockToolUse, ToolUseID: "1", ToolName: "read_file", Input: []byte(`{"path":"Makefile"}`)},
			{Type: llm.BlockToolUse, ToolUseID: "2", ToolName: "bash", Input: []byte(`{"command":"make -n test"}`)},
		}, Usage: llm.Usage{InputTokens: 900, OutputTokens: 40}},
		memdirtest.ModelReply{Content: []llm.Block{
			{Type: llm.BlockToolUse, ToolUseID: "3", ToolName: "memory", Input: []byte(`{"command":"create","path":"/memories/testing.md","file_text":"Tests run with make test.\n"}`)},
		}, Usage: llm.Usage{InputTokens: 1100, OutputTokens: 60}},
		memdirtest.ModelReply{Content: []llm.Block{llm.TextBlock("Saved how to run the tests.")}, Usage: llm.Usage{InputTokens: 1200, OutputTokens: 8}},
	)
	model, err := anthropic.New(&anthropic.Options{Model: "claude-sonnet-4-5", BaseURL: srv.AnthropicBaseURL(), APIKey: "test"})
	if err != nil {
		panic(err)
	}

	dir, err := os.MkdirTemp("", "agent-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	memDir, projDir := filepath.Join(dir, "memory"), filepath.Join(dir, "project")
	os.Mkdir(memDir, 0o700)
	os.Mkdir(projDir, 0o700)
	os.WriteFile(filepath.Join(projDir, "Makefile"), []byte("test:\n\tgo test ./...\n"), 0o600)

	res, err := agent.Run(context.Background(), &agent.Options{
		Model:      model,
		System:     "You maintain the memory directory of this project.",
		MemoryDir:  memDir,
		ProjectDir: projDir,
		MaxTurns:   5,
		BeforeChange: func(rel string) error {
			fmt.Println("journal", rel) // a real caller saves the file for undo
			return nil
		},
	}, []llm.Message{{Role: llm.RoleUser, Content: []llm.Block{llm.TextBlock("Save what is worth remembering.")}}})
	if err != nil {
		panic(err)
	}
	for _, c := range res.ToolCalls {
		fmt.Printf("turn %d: %s denied=%v error=%v\n", c.Turn, c.Name, c.Denied, c.IsError)
	}
	fmt.Println("saved:", res.Saved())
	fmt.Println("turns:", res.Turns, "tokens in/out:", res.Usage.InputTokens, res.Usage.OutputTokens)
	fmt.Println(res.Text)
	// Output:
	// journal testing.md
	// turn 1: read_file denied=false error=false
	// turn 1: bash denied=true error=true
	// turn 2: memory denied=false error=false
	// saved: [testing.md]
	// turns: 3 tokens in/out: 3200 108
	// Saved how to run the tests.
}
