// Package provider builds the model and the embedder a [config.Config]
// names, with memdir's adapters: anthropic:NAME with package
// github.com/memdir/memdir/anthropic, openai:NAME with
// github.com/memdir/memdir/openai (OpenAI and the servers that speak its API:
// Ollama, vLLM, llama.cpp, LM Studio).
//
// It is apart from package config because it links both providers' SDKs: a
// host that only resolves the configuration (to read the team settings, or
// to build its own model client from the model key) imports config and
// stays free of them. The memdir command builds its models here, so a Go
// host that calls NewModel gets the model `memdir config` describes.
package provider

import (
	"fmt"
	"net/url"

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/anthropic"
	"github.com/memdir/memdir/config"
	"github.com/memdir/memdir/llm"
	"github.com/memdir/memdir/openai"
)

// NewModel returns the model cfg configures, or nil and no error when none
// is configured, in which case callers fall back (recall ranks lexically).
// It makes no request. An unknown provider is an error wrapping
// memdir.ErrInvalid.
//
// A model on the provider's own API (the default base URL) with no key
// configured is refused before any call, with an error naming the variable
// to set; a server at another base URL (a gateway, Ollama) may need none.
func NewModel(cfg *config.Config) (llm.Model, error) {
	provider, name := cfg.ModelName()
	if err := checkCredentials(cfg); err != nil {
		return nil, err
	}
	switch provider {
	case "":
		return nil, nil
	case "anthropic":
		return anthropic.New(&anthropic.Options{
			Model:      name,
			APIKey:     cfg.Anthropic.APIKey.Value,
			AuthToken:  cfg.Anthropic.AuthToken.Value,
			BaseURL:    cfg.Anthropic.BaseURL.Value,
			Timeout:    cfg.AttemptTimeout(),
			MaxRetries: adapterRetries(cfg),
			Stream:     cfg.Streaming(),
		})
	case "openai":
		return openai.New(&openai.Options{
			Model:      name,
			APIKey:     cfg.OpenAI.APIKey.Value,
			BaseURL:    cfg.OpenAI.BaseURL.Value,
			Timeout:    cfg.AttemptTimeout(),
			MaxRetries: adapterRetries(cfg),
			Stream:     cfg.Streaming(),
		})
	default:
		return nil, fmt.Errorf("model %q (from %s) has unknown provider %q: use anthropic:NAME, or openai:NAME for OpenAI and compatible servers (Ollama, vLLM, llama.cpp): %w",
			cfg.Model.Value, cfg.Model.Source, provider, memdir.ErrInvalid)
	}
}

// adapterRetries is max_retries as the adapters' Options take it: they read
// 0 as "their default", so a configured 0 (one attempt) is -1.
func adapterRetries(cfg *config.Config) int {
	if n := cfg.Retries(); n != 0 {
		return n
	}
	return -1
}

// MissingKeyError reports a model on Anthropic's or OpenAI's own API
// (Provider "anthropic" or "openai") with no key for it set; the message
// names the variables to set. It wraps memdir.ErrInvalid.
type MissingKeyError struct {
	Provider string
	Model    config.Setting
}

func (e *MissingKeyError) Error() string {
	if e.Provider == "openai" {
		return fmt.Sprintf("model %s (from %s) is served by api.openai.com, which needs a key, and OPENAI_API_KEY is not set; set it, or set OPENAI_BASE_URL for a local server that needs none: %v",
			e.Model.Value, e.Model.Source, memdir.ErrInvalid)
	}
	return fmt.Sprintf("model %s (from %s) needs an Anthropic API key, and ANTHROPIC_API_KEY is not set (nor ANTHROPIC_AUTH_TOKEN); set it, or choose another model: %v",
		e.Model.Value, e.Model.Source, memdir.ErrInvalid)
}

func (e *MissingKeyError) Unwrap() error { return memdir.ErrInvalid }

// checkCredentials names the missing environment variable when the model is
// on Anthropic's or OpenAI's own API and no key for it is set, so that the
// user learns it before a request fails with a less telling error.
func checkCredentials(c *config.Config) error {
	provider, _ := c.ModelName()
	switch provider {
	case "anthropic":
		if !c.Anthropic.APIKey.Set() && !c.Anthropic.AuthToken.Set() && c.Anthropic.BaseURL.Value == config.DefaultAnthropicBaseURL {
			return &MissingKeyError{Provider: provider, Model: c.Model}
		}
	case "openai":
		if !c.OpenAI.APIKey.Set() && c.OpenAI.BaseURL.Value == config.DefaultOpenAIBaseURL {
			return &MissingKeyError{Provider: provider, Model: c.Model}
		}
	}
	return nil
}

// NewEmbedder returns the embedding model cfg configures, or nil and no
// error when none is configured, in which case recall stays lexical. It
// makes no request. An unknown provider, or api.openai.com without a key, is
// an error wrapping memdir.ErrInvalid that names the variables to set; a
// server at another URL (Ollama, llama.cpp, vLLM, LM Studio) may go without
// a key.
//
// The base URL and key are [config.Config.EmbedBaseURL] and
// [config.Config.EmbedAPIKey]: the openai ones unless embed.base_url or
// embed.api_key say otherwise, the OpenAI key going only to the OpenAI
// base URL.
func NewEmbedder(cfg *config.Config) (llm.Embedder, error) {
	provider, name := cfg.EmbedModelName()
	switch provider {
	case "":
		return nil, nil
	case "openai":
	default:
		return nil, fmt.Errorf("embedding model %q (from %s) has unknown provider %q: use openai:NAME for OpenAI and compatible servers (Ollama, llama.cpp, vLLM, LM Studio): %w",
			cfg.Embed.Model.Value, cfg.Embed.Model.Source, provider, memdir.ErrInvalid)
	}
	base, key := cfg.EmbedBaseURL(), cfg.EmbedAPIKey()
	baseURL := base.Value
	if baseURL == "" {
		baseURL = openai.DefaultBaseURL
	}
	if u, err := url.Parse(baseURL); err == nil && u.Hostname() == "api.openai.com" && !key.Set() {
		return nil, fmt.Errorf("embedding model %s (from %s) calls %s but no API key is set: set MEMDIR_EMBED_API_KEY or OPENAI_API_KEY, or point MEMDIR_EMBED_BASE_URL at a local server (Ollama: http://localhost:11434/v1), which needs none: %w",
			cfg.Embed.Model.Value, cfg.Embed.Model.Source, baseURL, memdir.ErrInvalid)
	}
	e, err := openai.NewEmbedder(&openai.EmbedderOptions{
		Model:      name,
		APIKey:     key.Value,
		BaseURL:    baseURL,
		Dimensions: cfg.EmbedDimensions(),
		MaxBatch:   cfg.EmbedBatchSize(),
		Timeout:    cfg.AttemptTimeout(),
		MaxRetries: adapterRetries(cfg),
	})
	if err != nil {
		return nil, err
	}
	if cfg.Embed.APIKey.Set() || !key.Set() {
		// Error messages name the variable to set: OPENAI_API_KEY only when
		// that is where the key came from.
		e.SetKeyEnv("MEMDIR_EMBED_API_KEY")
	}
	return e, nil
}
