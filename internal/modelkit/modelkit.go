// Package modelkit holds what the model adapters (anthropic, openai) share:
// turning an SDK failure into a *llm.ModelError whose message tells the
// user what to do, normalising a structured-output reply to bare JSON, and
// logging each HTTP attempt.
package modelkit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/internal/jsonx"
	"github.com/memdir/memdir/llm"
)

// Caller describes the adapter making a call, for error messages.
type Caller struct {
	Provider string // "anthropic", "openai"
	Model    string
	BaseURL  string
	// KeyEnv names the environment variable that conventionally holds the
	// key, such as OPENAI_API_KEY.
	KeyEnv string
	// KeySet says whether a key was given at all.
	KeySet bool
	// Tries is the number of attempts the SDK makes (retries + 1).
	Tries int
	// Timeout is the limit of one attempt.
	Timeout time.Duration
}

// Kind classifies an HTTP status.
func Kind(status int) llm.ModelErrorKind {
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return llm.ModelAuth
	case status == http.StatusNotFound:
		return llm.ModelNotFound
	case status == http.StatusTooManyRequests:
		return llm.ModelRateLimit
	case status >= 500:
		return llm.ModelServer
	case status >= 400:
		return llm.ModelBadRequest
	default:
		return llm.ModelBadResponse
	}
}

// unknownModel matches the ways servers say a model does not exist when they
// answer 400 instead of 404 (Ollama, vLLM, proxies).
var unknownModel = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)model.*(not (be )?found|does not exist|not exist|unknown|no such)|(unknown|invalid) model`)
})

// Failure turns the error of an SDK call into the error Generate returns.
// res is the last HTTP response the SDK received (option.WithResponseInto),
// or nil. When ctx itself is done, the context error is returned, wrapped,
// so callers see a cancellation rather than a provider failure.
func (c *Caller) Failure(ctx context.Context, res *http.Response, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return fmt.Errorf("%s model %q: %w", c.Provider, c.Model, ctxErr)
	}
	switch {
	case res != nil && res.StatusCode >= 400:
		return c.statusError(res.StatusCode, readMessage(res), err)
	case errors.Is(err, context.DeadlineExceeded):
		return c.newError(llm.ModelTimeout, 0, fmt.Sprintf("no reply from %s within %s (tried %d times); raise the timeout or check the server", c.BaseURL, c.Timeout, c.Tries), err)
	case res != nil:
		return c.newError(llm.ModelBadResponse, res.StatusCode, fmt.Sprintf("the reply from %s could not be read: %v", c.BaseURL, err), err)
	default:
		return c.newError(llm.ModelUnreachable, 0, fmt.Sprintf("cannot reach %s: %v; check the base URL and that the server is running", c.BaseURL, err), err)
	}
}

// StatusError returns the error for an HTTP error status with the server's
// message, as Failure does; adapters use it for errors that arrive inside a
// stream, with the status from [ErrorTypeStatus]. A status under 400 (none
// known) makes a bad_response.
func (c *Caller) StatusError(status int, serverMessage string, err error) error {
	return c.statusError(status, serverMessage, err)
}

// errorTypeStatus maps the names providers give an error (Anthropic's
// error.type, OpenAI's error.type and error.code) to the HTTP status the
// same error comes with when it is not inside a stream.
var errorTypeStatus = map[string]int{
	"invalid_request_error": 400,
	"authentication_error":  401,
	"invalid_api_key":       401,
	"permission_error":      403,
	"not_found_error":       404,
	"model_not_found":       404,
	"rate_limit_error":      429,
	"rate_limit_exceeded":   429,
	"insufficient_quota":    429,
	"api_error":             500,
	"server_error":          500,
	"overloaded_error":      529,
}

// ErrorTypeStatus returns the HTTP status of the first of names that is a
// known error type or code, so that an error reported inside a 200 stream
// gets the kind it would have had as an HTTP error; 0 when none is known.
func ErrorTypeStatus(names ...string) int {
	for _, n := range names {
		if status, ok := errorTypeStatus[n]; ok {
			return status
		}
	}
	return 0
}

func (c *Caller) statusError(status int, said string, err error) error {
	kind := Kind(status)
	if kind == llm.ModelBadRequest && unknownModel().MatchString(said) {
		kind = llm.ModelNotFound
	}
	quoted := ""
	if said != "" {
		quoted = fmt.Sprintf(" (the server said: %s)", said)
	}
	var msg string
	switch kind {
	case llm.ModelAuth:
		if c.KeySet {
			msg = fmt.Sprintf("the server refused the credentials%s; check that %s holds a valid key", quoted, c.KeyEnv)
		} else {
			msg = fmt.Sprintf("no API key was given%s; set %s", quoted, c.KeyEnv)
		}
	case llm.ModelNotFound:
		msg = fmt.Sprintf("no model %q at %s%s; check the model name and the base URL", c.Model, c.BaseURL, quoted)
	case llm.ModelRateLimit:
		msg = fmt.Sprintf("rate limited, still after %d tries%s; wait and try again", c.Tries, quoted)
	case llm.ModelServer:
		msg = fmt.Sprintf("server error, still after %d tries%s", c.Tries, quoted)
	case llm.ModelBadResponse:
		msg = "the server reported an error of an unknown kind" + quoted
	default:
		msg = "the request was rejected" + quoted
	}
	return c.newError(kind, status, msg, err)
}

// BadResponse returns a bad_response error with msg.
func (c *Caller) BadResponse(msg string, err error) error {
	return c.newError(llm.ModelBadResponse, 0, msg, err)
}

func (c *Caller) newError(kind llm.ModelErrorKind, status int, msg string, err error) *llm.ModelError {
	return &llm.ModelError{Provider: c.Provider, Model: c.Model, StatusCode: status, Kind: kind, Message: msg, Err: err}
}

// maxMessage bounds how much of a server's message an error quotes.
const maxMessage = 300

// readMessage returns the human part of an error response body: the message
// of the JSON error formats servers use, or the start of the text.
func readMessage(res *http.Response) string {
	if res.Body == nil {
		return ""
	}
	body, _ := io.ReadAll(io.LimitReader(res.Body, 64<<10))
	return ServerMessage(body)
}

// ServerMessage extracts the message from an error body: {"error":
// {"message": ...}} (Anthropic, OpenAI, llama.cpp), {"error": "..."}
// (Ollama), {"message": ...} (vLLM), or else the text itself.
func ServerMessage(body []byte) string {
	var v struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
		Detail  string          `json:"detail"`
	}
	msg := ""
	if json.Unmarshal(body, &v) == nil {
		var inner struct {
			Message string `json:"message"`
		}
		var s string
		switch {
		case json.Unmarshal(v.Error, &inner) == nil && inner.Message != "":
			msg = inner.Message
		case json.Unmarshal(v.Error, &s) == nil && s != "":
			msg = s
		case v.Message != "":
			msg = v.Message
		case v.Detail != "":
			msg = v.Detail
		}
	}
	if msg == "" {
		msg = string(body)
	}
	msg = strings.Join(strings.Fields(msg), " ")
	if len(msg) > maxMessage {
		cut := maxMessage
		for cut > 0 && msg[cut]&0xC0 == 0x80 {
			cut--
		}
		msg = msg[:cut] + "…"
	}
	return msg
}

// Structured rewrites a reply to a request that carried a JSON schema so that
// its text is exactly the JSON value, whatever prose or code fence the model
// put around it. Tool calls are kept. A reply without JSON is a bad_response.
func (c *Caller) Structured(resp *llm.Response) error {
	raw, err := jsonx.Extract(resp.Text())
	if err != nil {
		msg := "the reply has no JSON value for the requested schema: " + err.Error()
		if resp.StopReason == llm.StopMaxTokens {
			msg = "the reply was cut off at max tokens before its JSON ended: " + err.Error()
		}
		return c.BadResponse(msg, err)
	}
	content := []llm.Block{llm.TextBlock(string(raw))}
	for _, b := range resp.Content {
		if b.Type != llm.BlockText {
			content = append(content, b)
		}
	}
	resp.Content = content
	return nil
}

// SchemaMap decodes a JSON schema for an SDK field that takes a map: a
// request's output schema or a tool's input schema. Anything but a JSON
// object is an error wrapping memdir.ErrInvalid, found before a request is
// sent.
func SchemaMap(schema json.RawMessage) (map[string]any, error) {
	var m map[string]any
	if err := json.Unmarshal(schema, &m); err != nil || m == nil {
		return nil, fmt.Errorf("not a JSON object: %w", memdir.ErrInvalid)
	}
	return m, nil
}

// SchemaInstruction is appended to the system prompt when a schema cannot be
// sent as structured output, so the model still knows the shape to produce.
func SchemaInstruction(schema json.RawMessage) string {
	return "Reply with a single JSON value that conforms to this JSON schema, and nothing else: no prose and no code fence.\n" + string(schema)
}

// LogAttempts returns an HTTP middleware, in the shape both SDKs accept, that
// logs each attempt at debug level: retries show up as repeated attempts.
func LogAttempts(logger *slog.Logger, provider string) func(*http.Request, func(*http.Request) (*http.Response, error)) (*http.Response, error) {
	return func(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
		start := time.Now()
		res, err := next(req)
		attrs := []any{
			slog.String("provider", provider),
			slog.String("url", req.URL.String()),
			slog.String("retry", req.Header.Get("X-Stainless-Retry-Count")),
			slog.Duration("elapsed", time.Since(start)),
		}
		if res != nil {
			attrs = append(attrs, slog.Int("status", res.StatusCode))
		}
		if err != nil {
			attrs = append(attrs, slog.String("error", err.Error()))
		}
		logger.DebugContext(req.Context(), "model HTTP attempt", attrs...)
		return res, err
	}
}

// DiscardLogger is used when an adapter is given no logger.
var DiscardLogger = slog.New(slog.DiscardHandler)

// Defaults for the settings both adapters share.
const (
	DefaultMaxTokens  = 4096
	DefaultTimeout    = 2 * time.Minute
	DefaultMaxRetries = 2
)

// FillDefaults applies the defaults of the settings both adapters share: a
// zero timeout, retry count or token cap takes the default, a negative retry
// count means none, and a nil HTTP client or logger gets a plain one.
func FillDefaults(timeout *time.Duration, maxRetries, maxTokens *int, client **http.Client, logger **slog.Logger) {
	if *timeout <= 0 {
		*timeout = DefaultTimeout
	}
	switch {
	case *maxRetries == 0:
		*maxRetries = DefaultMaxRetries
	case *maxRetries < 0:
		*maxRetries = 0
	}
	if *maxTokens <= 0 {
		*maxTokens = DefaultMaxTokens
	}
	if *client == nil {
		*client = &http.Client{}
	}
	if *logger == nil {
		*logger = DiscardLogger
	}
}

// Shape is a sticky choice of how a request with a schema is sent: as the
// provider's structured output, or as the fallback (a forced tool, the
// schema spelled out in the prompt) once a server has rejected the former.
// It is safe for concurrent use.
type Shape struct{ fallback atomic.Bool }

// SetFallback makes every later request use the fallback.
func (s *Shape) SetFallback() { s.fallback.Store(true) }

// Generate calls send with the current shape. When a request with a schema
// is rejected with a bad_request error, it is sent once more with the
// fallback, which sticks if it works. A reply to a schema is then reduced to
// its JSON by [Caller.Structured].
func (s *Shape) Generate(ctx context.Context, c *Caller, logger *slog.Logger, req *llm.Request, send func(fallback bool) (*llm.Response, error)) (*llm.Response, error) {
	fallback := s.fallback.Load()
	resp, err := send(fallback)
	var me *llm.ModelError
	if len(req.Schema) > 0 && !fallback && errors.As(err, &me) && me.Kind == llm.ModelBadRequest {
		logger.DebugContext(ctx, "structured output rejected, retrying without it",
			slog.String("provider", c.Provider), slog.String("error", err.Error()))
		if resp, err = send(true); err == nil {
			s.fallback.Store(true)
		}
	}
	if err != nil {
		return nil, err
	}
	if len(req.Schema) > 0 {
		if err := c.Structured(resp); err != nil {
			return nil, err
		}
	}
	return resp, nil
}
