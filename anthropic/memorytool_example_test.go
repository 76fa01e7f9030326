package anthropic_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/memdir/memdir/anthropic"
	"github.com/memdir/memdir/llm"
	"github.com/memdir/memdir/memdirtest"
)

// A Go program using anthropic-sdk-go gives the model Anthropic's memory tool
// on a local directory by handing the handler to the tool runner. Here the
// model is the fake server, scripted to save a memory and then answer.
func ExampleMemoryTool() {
	srv := memdirtest.StartModelServer()
	defer srv.Close()
	create, _ := json.Marshal(map[string]string{"command": "create", "path": "/memories/preferences.md", "file_text": "The user prefers tabs.\n"})
	srv.Enqueue(
		memdirtest.ModelReply{Content: []llm.Block{{Type: llm.BlockToolUse, ToolUseID: "toolu_1", ToolName: "memory", Input: create}}},
		memdirtest.TextReply("Noted: you prefer tabs."),
	)

	dir, _ := os.MkdirTemp("", "memories")
	defer os.RemoveAll(dir)
	mem, err := anthropic.NewMemoryTool(dir, nil)
	if err != nil {
		panic(err)
	}
	defer mem.Close()

	client := sdk.NewClient(option.WithBaseURL(srv.AnthropicBaseURL()), option.WithAPIKey("test"), option.WithMaxRetries(0))
	runner := client.Beta.Messages.NewToolRunner([]sdk.BetaTool{mem}, sdk.BetaToolRunnerParams{
		BetaMessageNewParams: sdk.BetaMessageNewParams{
			Model: "claude-sonnet-4-5", MaxTokens: 1024,
			Tools:    []sdk.BetaToolUnionParam{mem.Definition()},
			Messages: []sdk.BetaMessageParam{sdk.NewBetaUserMessage(sdk.NewBetaTextBlock("Remember that I prefer tabs."))},
		},
		DisableThread: true,
	})
	final, err := runner.RunToCompletion(context.Background())
	if err != nil {
		panic(err)
	}
	saved, _ := os.ReadFile(filepath.Join(dir, "preferences.md"))
	fmt.Print(string(saved))
	fmt.Println(final.Content[0].Text)
	fmt.Println(len(srv.Requests()), "requests; the first offered", srv.Requests()[0].Tools[0].Name)
	// Output:
	// The user prefers tabs.
	// Noted: you prefer tabs.
	// 2 requests; the first offered memory
}
