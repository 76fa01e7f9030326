package openai_test

import (
	"testing"

	"github.com/memdir/memdir/llm"
	"github.com/memdir/memdir/memdirtest"
	"github.com/memdir/memdir/openai"
)

// TestConformance runs the llm.Model suite in each way the client can
// call: plain or streamed, with response_format or the schema in the prompt.
func TestConformance(t *testing.T) {
	for _, tt := range []struct {
		name             string
		stream, noFormat bool
	}{
		{"plain", false, false},
		{"stream", true, false},
		{"no-response-format", false, true},
		{"stream-no-response-format", true, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			memdirtest.TestModel(t, func(tb testing.TB, srv *memdirtest.ModelServer, cfg memdirtest.ModelConfig) llm.Model {
				tb.Helper()
				c, err := openai.New(&openai.Options{
					Model: cfg.Model, APIKey: cfg.APIKey, BaseURL: srv.OpenAIBaseURL(),
					MaxRetries: cfg.MaxRetries, Timeout: cfg.Timeout,
					Stream: tt.stream, NoResponseFormat: tt.noFormat,
				})
				if err != nil {
					tb.Fatal(err)
				}
				return c
			})
		})
	}
}
