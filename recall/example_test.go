package recall_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/anthropic"
	"github.com/memdir/memdir/memdirtest"
	"github.com/memdir/memdir/recall"
)

// Recall with a model: the selector is shown a manifest of the directory and
// the query, and names the memories to surface. Here the model is memdirtest's
// fake server on loopback, scripted to pick one file, behind the real
// Anthropic adapter.
func ExampleRecall() {
	srv := memdirtest.StartModelServer()
	defer srv.Close()
	srv.Enqueue(memdirtest.JSONReply(map[string]any{"selected_memories": []string{"feedback_testing_policy.md"}}))
	model, err := anthropic.New(&anthropic.Options{Model: "claude-sonnet-4-5", BaseURL: srv.AnthropicBaseURL(), APIKey: "test"})
	if err != nil {
		panic(err)
	}

	tmp, _ := os.MkdirTemp("", "recall-example")
	defer os.RemoveAll(tmp)
	d, err := memdir.Open(filepath.Join(tmp, "memory"), &memdir.Options{
		Journal: memdir.NewJournal(filepath.Join(tmp, "state", "journal"), nil),
	})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	for _, m := range []*memdir.Memory{
		{Name: "testing policy", Description: "integration tests hit a real database, never mocks", Type: memdir.TypeFeedback, Body: "Run them with make itest.\n"},
		{Name: "grafana", Description: "where the dashboards are", Type: memdir.TypeReference, Body: "grafana.internal\n"},
	} {
		if _, err := d.Save(ctx, m, nil); err != nil {
			panic(err)
		}
	}
	res, err := recall.Recall(ctx, d, "how should I test the payments service?", &recall.Options{Model: model})
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Method, res.Candidates)
	for _, r := range res.Memories {
		fmt.Println(r.Path)
	}
	// Output:
	// model 2
	// feedback_testing_policy.md
}
