package openai_test

import (
	"strings"
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

// TestEmbedderConformance runs the llm.Embedder suite against the
// embeddings endpoint as configured for OpenAI, and as for a local
// OpenAI-compatible server (Ollama, llama-server, LM Studio): a base URL of
// the form http://localhost:PORT/v1. The suite's checks without a key are
// the local servers' case.
func TestEmbedderConformance(t *testing.T) {
	newEmbedder := func(tb testing.TB, baseURL string, cfg memdirtest.EmbedderConfig) llm.Embedder {
		tb.Helper()
		e, err := openai.NewEmbedder(&openai.EmbedderOptions{
			Model: cfg.Model, APIKey: cfg.APIKey, BaseURL: baseURL, Dimensions: cfg.Dimensions,
			MaxRetries: cfg.MaxRetries, Timeout: cfg.Timeout,
		})
		if err != nil {
			tb.Fatal(err)
		}
		return e
	}
	t.Run("openai", func(t *testing.T) {
		memdirtest.TestEmbedder(t, func(tb testing.TB, srv *memdirtest.EmbedServer, cfg memdirtest.EmbedderConfig) llm.Embedder {
			return newEmbedder(tb, srv.OpenAIBaseURL(), cfg)
		})
	})
	t.Run("compatible", func(t *testing.T) {
		memdirtest.TestEmbedder(t, func(tb testing.TB, srv *memdirtest.EmbedServer, cfg memdirtest.EmbedderConfig) llm.Embedder {
			return newEmbedder(tb, strings.Replace(srv.OpenAIBaseURL(), "//127.0.0.1:", "//localhost:", 1), cfg)
		})
	})
}
