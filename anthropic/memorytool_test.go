package anthropic_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/memdir/memdir/anthropic"
	"github.com/memdir/memdir/llm"
	"github.com/memdir/memdir/memdirtest"
)

func TestMemoryToolRefusesTraversalThroughTheRunner(t *testing.T) {
	srv := memdirtest.NewModelServer(t)
	srv.Enqueue(
		memdirtest.ModelReply{Content: []llm.Block{{Type: llm.BlockToolUse, ToolUseID: "t1", ToolName: "memory",
			Input: []byte(`{"command":"create","path":"/memories/../escape.md","file_text":"x"}`)}}},
		memdirtest.TextReply("ok"),
	)
	base := t.TempDir()
	dir := filepath.Join(base, "mem")
	os.Mkdir(dir, 0o700)
	mem, err := anthropic.NewMemoryTool(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	client := sdk.NewClient(option.WithBaseURL(srv.AnthropicBaseURL()), option.WithAPIKey("test"), option.WithMaxRetries(0))
	runner := client.Beta.Messages.NewToolRunner([]sdk.BetaTool{mem}, sdk.BetaToolRunnerParams{
		BetaMessageNewParams: sdk.BetaMessageNewParams{Model: "claude-sonnet-4-5", MaxTokens: 100,
			Tools:    []sdk.BetaToolUnionParam{mem.Definition()},
			Messages: []sdk.BetaMessageParam{sdk.NewBetaUserMessage(sdk.NewBetaTextBlock("hi"))}},
		DisableThread: true,
	})
	if _, err := runner.RunToCompletion(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(base, "escape.md")); err == nil {
		t.Fatal("a file was written outside the memory directory")
	}
	second := srv.Requests()[1]
	last := second.Messages[len(second.Messages)-1]
	res := last.Content[0]
	if res.Type != llm.BlockToolResult || !res.IsError || !strings.HasPrefix(res.Text, "Error: ") || strings.HasPrefix(res.Text, "Error: Error:") {
		t.Errorf("tool result sent back = %+v", res)
	}
	if tools := srv.Requests()[0].Tools; len(tools) != 1 || tools[0].Name != "memory" {
		t.Errorf("tools sent = %+v, want the native memory tool only", tools)
	}
}
