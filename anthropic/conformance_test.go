package anthropic_test

import (
	"testing"

	"github.com/memdir/memdir/anthropic"
	"github.com/memdir/memdir/llm"
	"github.com/memdir/memdir/memdirtest"
)

// TestConformance runs the llm.Model suite in each way the client can
// call: plain or streamed, with structured output or the forced tool.
func TestConformance(t *testing.T) {
	for _, tt := range []struct {
		name               string
		stream, forcedTool bool
	}{
		{"plain", false, false},
		{"stream", true, false},
		{"forced-tool", false, true},
		{"stream-forced-tool", true, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			memdirtest.TestModel(t, func(tb testing.TB, srv *memdirtest.ModelServer, cfg memdirtest.ModelConfig) llm.Model {
				tb.Helper()
				c, err := anthropic.New(&anthropic.Options{
					Model: cfg.Model, APIKey: cfg.APIKey, BaseURL: srv.AnthropicBaseURL(),
					MaxRetries: cfg.MaxRetries, Timeout: cfg.Timeout,
					Stream: tt.stream, ForcedToolSchema: tt.forcedTool,
				})
				if err != nil {
					tb.Fatal(err)
				}
				return c
			})
		})
	}
}
