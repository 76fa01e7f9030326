package memdirtest_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/memdir/memdir/anthropic"
	"github.com/memdir/memdir/llm"
	"github.com/memdir/memdir/memdirtest"
)

// A test scripts the fake server, points a real adapter at it, and checks
// both the reply and what was sent. In a test, use NewModelServer(t), which
// closes the server and fails the test on unscripted requests.
func ExampleModelServer() {
	srv := memdirtest.StartModelServer()
	defer srv.Close()

	reply := memdirtest.JSONReply(map[string]any{"selected_memories": []string{"testing.md"}})
	reply.Usage = llm.Usage{InputTokens: 120, OutputTokens: 9}
	srv.Enqueue(reply)

	model, err := anthropic.New(&anthropic.Options{Model: "claude-sonnet-4-5", BaseURL: srv.AnthropicBaseURL(), APIKey: "test"})
	if err != nil {
		panic(err)
	}
	resp, err := model.Generate(context.Background(), &llm.Request{
		System:   "Pick the relevant memories.",
		Messages: []llm.Message{{Role: llm.RoleUser, Content: []llm.Block{llm.TextBlock("how do we run tests?")}}},
		Schema:   json.RawMessage(`{"type":"object","properties":{"selected_memories":{"type":"array","items":{"type":"string"}}}}`),
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(resp.Text(), resp.Usage.InputTokens, resp.Usage.OutputTokens)

	sent := srv.LastRequest()
	fmt.Println(sent.API, sent.Model, sent.System, len(sent.Schema) > 0)
	// Output:
	// {"selected_memories":["testing.md"]} 120 9
	// anthropic claude-sonnet-4-5 Pick the relevant memories. true
}
