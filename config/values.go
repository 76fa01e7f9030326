package config

import (
	"errors"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/memdir/memdir/recall"
)

func checkModel(v string) error {
	if v == "none" {
		return nil
	}
	provider, name, ok := strings.Cut(v, ":")
	if !ok || provider == "" || strings.TrimSpace(name) == "" {
		return errors.New("want PROVIDER:NAME, such as anthropic:claude-sonnet-4-5 or openai:gpt-4.1-mini, or none")
	}
	return nil
}

func checkEmbedModel(v string) error {
	if v == "none" {
		return nil
	}
	provider, name, ok := strings.Cut(v, ":")
	if !ok || provider == "" || strings.TrimSpace(name) == "" {
		return errors.New("want PROVIDER:NAME, such as openai:text-embedding-3-small or openai:nomic-embed-text, or none")
	}
	return nil
}

func checkDimensions(v string) error {
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > 1<<16 {
		return errors.New("not a whole number from 1 to 65536")
	}
	return nil
}

func checkBatchSize(v string) error {
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > 2048 {
		return errors.New("not a whole number from 1 to 2048")
	}
	return nil
}

func checkManifestTokens(v string) error {
	_, err := parseManifestTokens(v)
	return err
}

// parseManifestTokens reads recall.manifest_tokens as a
// recall.Options.ManifestTokens value: "auto" (or empty) is 0,
// "all" is -1, else a positive number of tokens.
func parseManifestTokens(v string) (int, error) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "", "auto":
		return 0, nil
	case "all", "unlimited":
		return -1, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		return 0, errors.New("want auto, all, or a number of tokens above 0")
	}
	return n, nil
}

func checkDuration(v string) error {
	_, err := parseTimeout(v)
	return err
}

// parseTimeout reads a Go duration ("90s", "2m") or a number of seconds.
func parseTimeout(v string) (time.Duration, error) {
	d, err := time.ParseDuration(v)
	if err != nil {
		secs, nerr := strconv.ParseFloat(v, 64)
		if nerr != nil {
			return 0, errors.New("not a duration such as 30s or 2m")
		}
		d = time.Duration(secs * float64(time.Second))
	}
	if d <= 0 {
		return 0, errors.New("must be more than zero")
	}
	return d, nil
}

func checkRetries(v string) error {
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 || n > 100 {
		return errors.New("not a whole number from 0 to 100")
	}
	return nil
}

func checkBool(v string) error {
	if _, err := strconv.ParseBool(v); err != nil {
		return errors.New("not true or false")
	}
	return nil
}

func checkURL(v string) error {
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return errors.New("not an http:// or https:// URL")
	}
	return nil
}

// The typed accessors below cannot fail on a Config from Load, which checked
// the values; on a Config built otherwise, a malformed value reads as zero.

// AttemptTimeout returns the limit of one attempt of a model call (the
// timeout key).
func (c *Config) AttemptTimeout() time.Duration {
	d, _ := parseTimeout(c.Timeout.Value)
	return d
}

// Retries returns how many times a failed model call is retried (the
// max_retries key); 0 means a single attempt.
func (c *Config) Retries() int {
	n, _ := strconv.Atoi(c.MaxRetries.Value)
	return n
}

// Streaming says whether model calls use the streaming API (the stream
// key).
func (c *Config) Streaming() bool {
	b, _ := strconv.ParseBool(c.Stream.Value)
	return b
}

// ManifestTokens returns the recall selector's manifest budget as
// recall.Options.ManifestTokens takes it: 0 for auto, -1 for all,
// else a number of tokens.
func (c *Config) ManifestTokens() int {
	n, _ := parseManifestTokens(c.Recall.ManifestTokens.Value)
	return n
}

// ModelName splits the model key into a lower-case provider and a name;
// both are empty when no model is configured (unset or "none").
func (c *Config) ModelName() (provider, name string) {
	return splitModel(c.Model)
}

// EmbedModelName splits the embed.model key as [Config.ModelName] does the
// model key.
func (c *Config) EmbedModelName() (provider, name string) {
	return splitModel(c.Embed.Model)
}

func splitModel(s Setting) (provider, name string) {
	if !s.Set() || s.Value == "none" {
		return "", ""
	}
	provider, name, _ = strings.Cut(s.Value, ":")
	return strings.ToLower(strings.TrimSpace(provider)), strings.TrimSpace(name)
}

// EmbedBaseURL is embed.base_url, or else openai.base_url, its source
// saying so: one OpenAI-compatible server (Ollama, say) often serves both
// the chat model and the embedding model.
func (c *Config) EmbedBaseURL() Setting {
	if c.Embed.BaseURL.Set() {
		return c.Embed.BaseURL
	}
	return inherited(c.OpenAI.BaseURL, "openai.base_url")
}

// EmbedAPIKey is embed.api_key, or else openai.api_key, but the latter only
// while the embeddings go to the openai base URL: the OpenAI key is never
// sent to another server.
func (c *Config) EmbedAPIKey() Setting {
	if c.Embed.APIKey.Set() {
		return c.Embed.APIKey
	}
	if c.Embed.BaseURL.Set() && strings.TrimRight(c.Embed.BaseURL.Value, "/") != strings.TrimRight(c.OpenAI.BaseURL.Value, "/") {
		return Setting{}
	}
	return inherited(c.OpenAI.APIKey, "openai.api_key")
}

// inherited is s as another key's value, its source saying so.
func inherited(s Setting, key string) Setting {
	if !s.Set() {
		return s
	}
	return Setting{Value: s.Value, Source: key + " (" + s.Source + ")"}
}

// EmbedDimensions returns embed.dimensions, 0 when unset (the model's own).
func (c *Config) EmbedDimensions() int {
	n, _ := strconv.Atoi(c.Embed.Dimensions.Value)
	return n
}

// EmbedBatchSize returns how many texts go into one embeddings request
// (embed.batch_size).
func (c *Config) EmbedBatchSize() int {
	n, _ := strconv.Atoi(c.Embed.BatchSize.Value)
	return n
}

// EmbedOptions returns the options for recall.EmbedCache.Vectors that the
// configuration sets (the batch size).
func (c *Config) EmbedOptions() *recall.EmbedOptions {
	return &recall.EmbedOptions{BatchSize: c.EmbedBatchSize()}
}
