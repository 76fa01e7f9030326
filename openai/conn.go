package openai

import (
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"time"

	"github.com/openai/openai-go/v3/option"

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/internal/modelkit"
)

// conn is what the chat client and the embedder share: the server they
// reach and how, once defaults are filled in.
type conn struct {
	model, baseURL, apiKey string
	httpClient             *http.Client
	maxRetries             int
	timeout                time.Duration
	logger                 *slog.Logger
}

// parseBaseURL checks a base URL, the default when empty.
func parseBaseURL(raw string) (string, *url.URL, error) {
	if raw == "" {
		raw = DefaultBaseURL
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", nil, fmt.Errorf("openai: base URL %q is not an http(s) URL: %w", raw, memdir.ErrInvalid)
	}
	return raw, u, nil
}

// requestOptions configures an SDK service for c. Services are built from
// them directly, not through sdk.NewClient, whose constructor reads OPENAI_*
// variables from the process environment.
func (c *conn) requestOptions() []option.RequestOption {
	ro := []option.RequestOption{
		option.WithBaseURL(c.baseURL),
		option.WithHTTPClient(c.httpClient),
		option.WithMaxRetries(c.maxRetries),
		option.WithRequestTimeout(c.timeout),
		option.WithMiddleware(modelkit.LogAttempts(c.logger, "openai")),
	}
	if c.apiKey != "" {
		ro = append(ro, option.WithAPIKey(c.apiKey))
	}
	return ro
}

// caller describes c in error messages.
func (c *conn) caller() modelkit.Caller {
	return modelkit.Caller{
		Provider: "openai",
		Model:    c.model,
		BaseURL:  c.baseURL,
		KeyEnv:   "OPENAI_API_KEY",
		KeySet:   c.apiKey != "",
		Tries:    c.maxRetries + 1,
		Timeout:  c.timeout,
	}
}
