package memdirtest

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/memdir/memdir/llm"
)

// promptly bounds how long a call may take to give up once it should: far
// below the minute a held-back reply waits, far above a loaded machine's
// scheduling delays.
const promptly = 10 * time.Second

// wantModelError checks that err is a *llm.ModelError of kind for the
// suite's model, and returns it.
func wantModelError(tb testing.TB, err error, kind llm.ModelErrorKind) *llm.ModelError {
	tb.Helper()
	return wantErrorOf(tb, err, conformModel, kind)
}

// wantErrorOf checks that err is a *llm.ModelError of kind that names
// model, a provider and a message, and returns it.
func wantErrorOf(tb testing.TB, err error, model string, kind llm.ModelErrorKind) *llm.ModelError {
	tb.Helper()
	var me *llm.ModelError
	if !errors.As(err, &me) {
		tb.Fatalf("error = %v (%T), want a *llm.ModelError of kind %s", err, err, kind)
	}
	if me.Kind != kind {
		tb.Fatalf("error kind = %q, want %q (error: %v)", me.Kind, kind, err)
	}
	if me.Provider == "" || me.Model != model || me.Message == "" {
		tb.Errorf("error provider %q, model %q, message %q; want a provider, %q and a message", me.Provider, me.Model, me.Message, model)
	}
	return me
}

// wantCallerError checks that err is the caller's own context error, target,
// and no provider failure.
func wantCallerError(tb testing.TB, err, target error) {
	tb.Helper()
	var me *llm.ModelError
	if errors.As(err, &me) || !errors.Is(err, target) {
		tb.Errorf("error = %v, want %v and no *llm.ModelError", err, target)
	}
}

// failureCase is a provider failure and the error every adapter must make
// of it. The server answers every attempt with reply.
type failureCase struct {
	name    string
	reply   ModelReply
	retries int
	noKey   bool
	kind    llm.ModelErrorKind
	status  int    // the error's StatusCode; 0 leaves it unchecked
	tries   int    // requests the server must see
	quote   string // what the error must quote of the server's message
}

// retried marks a reply to be retried after 1ms, not the SDKs' backoff.
func retried(r ModelReply) ModelReply {
	r.RetryAfter = time.Millisecond
	return r
}

var modelFailures = []failureCase{
	{"401", ErrorReply(401, "invalid x-api-key"), 2, false, llm.ModelAuth, 401, 1, "invalid x-api-key"},
	{"401 without a key", ErrorReply(401, "an API key is required"), 2, true, llm.ModelAuth, 401, 1, "an API key is required"},
	{"403", ErrorReply(403, "this key may not use the model"), 2, false, llm.ModelAuth, 403, 1, "may not use the model"},
	{"404", ErrorReply(404, "model: conformance-model-1"), 2, false, llm.ModelNotFound, 404, 1, "model: conformance-model-1"},
	{"unknown model as 400", ErrorReply(400, "model 'conformance-model-1' not found, try pulling it first"), 2, false, llm.ModelNotFound, 400, 1, "try pulling it first"},
	{"400", ErrorReply(400, "messages: at least one message is required"), 2, false, llm.ModelBadRequest, 400, 1, "at least one message"},
	{"413", ErrorReply(413, "request too large"), 2, false, llm.ModelBadRequest, 413, 1, "request too large"},
	{"429 after retries", retried(ErrorReply(429, "rate limit reached")), 1, false, llm.ModelRateLimit, 429, 2, "rate limit reached"},
	{"500 after retries", retried(ErrorReply(500, "boom")), 2, false, llm.ModelServer, 500, 3, "boom"},
	{"502 as plain text", retried(ModelReply{Status: 502, Body: "Bad Gateway"}), 1, false, llm.ModelServer, 502, 2, "Bad Gateway"},
	{"503", retried(ErrorReply(503, "warming up")), 1, false, llm.ModelServer, 503, 2, "warming up"},
	{"529 overloaded", retried(ErrorReply(529, "Overloaded")), 1, false, llm.ModelServer, 529, 2, "Overloaded"},
	// A streaming call gets these inside the stream, a plain one as HTTP.
	{"500 mid-stream", ModelReply{Status: 500, Message: "internal error while generating", MidStream: true}, -1, false, llm.ModelServer, 0, 1, "internal error while generating"},
	{"529 mid-stream", ModelReply{Status: 529, Message: "Overloaded", MidStream: true}, -1, false, llm.ModelServer, 0, 1, "Overloaded"},
	{"body not JSON", ModelReply{Body: "<html>upstream went away</html>"}, -1, false, llm.ModelBadResponse, 0, 1, ""},
	{"JSON cut short", ModelReply{Body: `{"id":"msg_1","type":"message","content":[`}, -1, false, llm.ModelBadResponse, 0, 1, ""},
	{"JSON that is no reply", ModelReply{Body: `{"status":"ok"}`}, -1, false, llm.ModelBadResponse, 0, 1, ""},
}

func testModelFailures(t *testing.T, h *modelHarness) {
	for _, tt := range modelFailures {
		t.Run(tt.name, func(t *testing.T) {
			srv := NewModelServer(t)
			srv.Handle(func(*ModelRequest) ModelReply { return tt.reply })
			cfg := ModelConfig{Model: conformModel, APIKey: conformKey, MaxRetries: tt.retries}
			if tt.noKey {
				cfg.APIKey = ""
			}
			m := h.newModel(t, srv, cfg)
			_, err := m.Generate(context.Background(), &llm.Request{Messages: []llm.Message{userMessage(llm.TextBlock("q"))}})
			me := wantModelError(t, err, tt.kind)
			if tt.status != 0 && me.StatusCode != tt.status {
				t.Errorf("error status = %d, want %d", me.StatusCode, tt.status)
			}
			if !strings.Contains(err.Error(), tt.quote) {
				t.Errorf("error %q does not quote the server's %q", err, tt.quote)
			}
			if n := len(srv.Requests()); n != tt.tries {
				t.Errorf("server got %d requests, want %d", n, tt.tries)
			}
		})
	}
}

func testModelRetryThenSuccess(t *testing.T, h *modelHarness) {
	for _, first := range []ModelReply{retried(ErrorReply(429, "slow down")), retried(ErrorReply(503, "warming up")), retried(ErrorReply(529, "Overloaded"))} {
		t.Run(first.Message, func(t *testing.T) {
			srv := NewModelServer(t)
			ok := TextReply("fine now")
			ok.Usage = llm.Usage{InputTokens: 3, OutputTokens: 2}
			srv.Enqueue(first, ok)
			m := h.newModel(t, srv, ModelConfig{Model: conformModel, APIKey: conformKey, MaxRetries: 2})
			resp := generate(t, m, &llm.Request{Messages: []llm.Message{userMessage(llm.TextBlock("q"))}})
			if resp.Text() != "fine now" {
				t.Errorf("reply = %q, want the one after the retry", resp.Text())
			}
			if diff := cmp.Diff(llm.Usage{InputTokens: 3, OutputTokens: 2, Calls: 1}, resp.Usage); diff != "" {
				t.Errorf("usage (-want +got):\n%s", diff)
			}
			if n := len(srv.Requests()); n != 2 {
				t.Errorf("server got %d requests, want 2", n)
			}
		})
	}
}

// heldBack is a reply that does not come within any test's patience.
func heldBack() ModelReply {
	r := TextReply("late")
	r.Delay = time.Minute
	return r
}

func testModelTimeout(t *testing.T, h *modelHarness) {
	h.srv.Enqueue(heldBack())
	m := h.model(t, func(c *ModelConfig) { c.Timeout = 100 * time.Millisecond })
	start := time.Now()
	_, err := m.Generate(context.Background(), &llm.Request{Messages: []llm.Message{userMessage(llm.TextBlock("q"))}})
	wantModelError(t, err, llm.ModelTimeout)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("error %v does not wrap context.DeadlineExceeded", err)
	}
	if d := time.Since(start); d > promptly {
		t.Errorf("the timeout took %v", d)
	}
}

func testModelUnreachable(t *testing.T, h *modelHarness) {
	h.srv.Close()
	_, err := h.model(t, nil).Generate(context.Background(), &llm.Request{Messages: []llm.Message{userMessage(llm.TextBlock("q"))}})
	wantModelError(t, err, llm.ModelUnreachable)
	if !namesServer(err.Error(), h.srv.URL()) {
		t.Errorf("error %q does not name the server %s", err, h.srv.URL())
	}
}

// namesServer says whether msg names the server at rawURL, by its port:
// the adapter may have been given another host name for it (localhost).
func namesServer(msg, rawURL string) bool {
	u, err := url.Parse(rawURL)
	return err == nil && u.Port() != "" && strings.Contains(msg, ":"+u.Port())
}

// cancelOnRequest cancels once a server has received a request, as counted
// by requests (or after promptly, so that a broken adapter fails rather
// than hangs).
func cancelOnRequest(requests func() int, cancel context.CancelFunc) {
	go func() {
		defer cancel()
		for end := time.Now().Add(promptly); time.Now().Before(end) && requests() == 0; {
			time.Sleep(time.Millisecond)
		}
	}()
}

// testModelCancel checks that cancelling the caller's context ends a call
// in flight at once, without retrying, as the caller's error.
func testModelCancel(t *testing.T, h *modelHarness) {
	h.srv.Handle(func(*ModelRequest) ModelReply { return heldBack() })
	m := h.model(t, func(c *ModelConfig) { c.MaxRetries = 2 })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cancelOnRequest(func() int { return len(h.srv.Requests()) }, cancel)
	start := time.Now()
	_, err := m.Generate(ctx, &llm.Request{Messages: []llm.Message{userMessage(llm.TextBlock("q"))}})
	wantCallerError(t, err, context.Canceled)
	if d := time.Since(start); d > promptly {
		t.Errorf("the cancelled call took %v", d)
	}
	if n := len(h.srv.Requests()); n != 1 {
		t.Errorf("server got %d requests, want 1: a cancelled call is not retried", n)
	}
}

// testModelCancelInBackoff checks that a call waiting to retry (here for
// the 30s a server asked for) gives up when the caller cancels.
func testModelCancelInBackoff(t *testing.T, h *modelHarness) {
	h.srv.Handle(func(*ModelRequest) ModelReply {
		r := ErrorReply(503, "busy")
		r.RetryAfter = 30 * time.Second
		return r
	})
	m := h.model(t, func(c *ModelConfig) { c.MaxRetries = 2 })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cancelOnRequest(func() int { return len(h.srv.Requests()) }, cancel)
	start := time.Now()
	_, err := m.Generate(ctx, &llm.Request{Messages: []llm.Message{userMessage(llm.TextBlock("q"))}})
	wantCallerError(t, err, context.Canceled)
	if d := time.Since(start); d > promptly {
		t.Errorf("the cancelled call took %v", d)
	}
}

// testModelCallerDeadline checks that the caller's own deadline is reported
// as such, not as the adapter's timeout.
func testModelCallerDeadline(t *testing.T, h *modelHarness) {
	h.srv.Handle(func(*ModelRequest) ModelReply { return heldBack() })
	m := h.model(t, func(c *ModelConfig) { c.MaxRetries = 2 })
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := m.Generate(ctx, &llm.Request{Messages: []llm.Message{userMessage(llm.TextBlock("q"))}})
	wantCallerError(t, err, context.DeadlineExceeded)
	if d := time.Since(start); d > promptly {
		t.Errorf("the call past its deadline took %v", d)
	}
}
