package memdirtest

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/memdir/memdir/llm"
)

// embedFailure is a provider failure and the error every embedder must make
// of it. The server answers every attempt with reply.
type embedFailure struct {
	name    string
	reply   EmbedReply
	retries int
	noKey   bool
	kind    llm.ModelErrorKind
	status  int    // the error's StatusCode; 0 leaves it unchecked
	tries   int    // requests the server must see
	quote   string // what the error must quote of the server's message
}

// retriedEmbed marks a reply to be retried after 1ms, not the SDKs' backoff.
func retriedEmbed(r EmbedReply) EmbedReply {
	r.RetryAfter = time.Millisecond
	return r
}

// The suite's failing calls embed two texts.
var embedFailures = []embedFailure{
	{"401", EmbedReply{Status: 401, Message: "Incorrect API key provided"}, 2, false, llm.ModelAuth, 401, 1, "Incorrect API key"},
	{"401 without a key", EmbedReply{Status: 401, Message: "missing key"}, 2, true, llm.ModelAuth, 401, 1, "missing key"},
	{"403", EmbedReply{Status: 403, Message: "not allowed"}, 2, false, llm.ModelAuth, 403, 1, "not allowed"},
	{"404", EmbedReply{Status: 404, Message: "model not found"}, 2, false, llm.ModelNotFound, 404, 1, "model not found"},
	{"unknown model as 400", EmbedReply{Status: 400, Message: `model "conformance-embed-1" not found, try pulling it first`}, 2, false, llm.ModelNotFound, 400, 1, "try pulling it first"},
	{"400", EmbedReply{Status: 400, Message: "input is too long for the context"}, 2, false, llm.ModelBadRequest, 400, 1, "too long"},
	{"429 after retries", retriedEmbed(EmbedReply{Status: 429, Message: "slow down"}), 1, false, llm.ModelRateLimit, 429, 2, "slow down"},
	{"500 after retries", retriedEmbed(EmbedReply{Status: 500, Message: "boom"}), 2, false, llm.ModelServer, 500, 3, "boom"},
	{"502 as plain text", retriedEmbed(EmbedReply{Status: 502, Body: "Bad Gateway"}), 1, false, llm.ModelServer, 502, 2, "Bad Gateway"},
	{"body not JSON", EmbedReply{Body: "<html>upstream went away</html>"}, -1, false, llm.ModelBadResponse, 0, 1, ""},
	{"JSON cut short", EmbedReply{Body: `{"object":"list","data":[{"embedding":[0.1,`}, -1, false, llm.ModelBadResponse, 0, 1, ""},
	{"too few vectors", EmbedReply{Vectors: [][]float32{{1, 0}}}, -1, false, llm.ModelBadResponse, 0, 1, ""},
	{"too many vectors", EmbedReply{Vectors: [][]float32{{1, 0}, {0, 1}, {1, 1}}}, -1, false, llm.ModelBadResponse, 0, 1, ""},
	{"no vectors", EmbedReply{Vectors: [][]float32{}}, -1, false, llm.ModelBadResponse, 0, 1, ""},
	{"an empty vector", EmbedReply{Vectors: [][]float32{{1, 0}, {}}}, -1, false, llm.ModelBadResponse, 0, 1, ""},
	{"mixed dimensions", EmbedReply{Vectors: [][]float32{{1, 0}, {1, 0, 0}}}, -1, false, llm.ModelBadResponse, 0, 1, ""},
}

func testEmbedFailures(t *testing.T, h *embedHarness) {
	for _, tt := range embedFailures {
		t.Run(tt.name, func(t *testing.T) {
			srv := NewEmbedServer(t)
			srv.Handle(func(*EmbedRequest) EmbedReply { return tt.reply })
			cfg := EmbedderConfig{Model: conformEmbedModel, APIKey: conformKey, MaxRetries: tt.retries}
			if tt.noKey {
				cfg.APIKey = ""
			}
			got, err := h.newEmbedder(t, srv, cfg).Embed(context.Background(), []string{"a", "b"})
			if err == nil {
				t.Fatalf("Embed succeeded with %+v, want an error", got)
			}
			me := wantErrorOf(t, err, conformEmbedModel, tt.kind)
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

// testEmbedMixedAcrossRequests checks that one Embed call spread over
// several requests does not return vectors of two sizes.
func testEmbedMixedAcrossRequests(t *testing.T, h *embedHarness) {
	var calls atomic.Int32
	h.srv.Handle(func(r *EmbedRequest) EmbedReply {
		dim := 16
		if calls.Add(1) == 1 {
			dim = 8
		}
		var vecs [][]float32
		for _, text := range r.Input {
			vecs = append(vecs, FakeVector(text, dim))
		}
		return EmbedReply{Vectors: vecs}
	})
	got, err := h.embedder(t, nil).Embed(context.Background(), manyTexts(600))
	if n := h.requests(); n < 2 {
		t.Logf("the embedder sent 600 texts in one request; nothing to mix")
		if err != nil {
			t.Errorf("Embed: %v", err)
		}
		return
	}
	if err == nil {
		t.Fatalf("Embed returned vectors of %d and %d dimensions without an error", len(got.Vectors[0]), len(got.Vectors[len(got.Vectors)-1]))
	}
	wantErrorOf(t, err, conformEmbedModel, llm.ModelBadResponse)
}

func testEmbedRetry(t *testing.T, h *embedHarness) {
	h.srv.Enqueue(retriedEmbed(EmbedReply{Status: 429, Message: "slow down"}), retriedEmbed(EmbedReply{Status: 503, Message: "warming up"}))
	texts := []string{"a text", "another"}
	got := embed(t, h.embedder(t, func(c *EmbedderConfig) { c.MaxRetries = 2 }), texts)
	if diff := cmp.Diff(wantEmbedding(texts, 0, 1).Vectors, got.Vectors); diff != "" {
		t.Errorf("vectors after two retries (-want +got):\n%s", diff)
	}
	if n := h.requests(); n != 3 {
		t.Errorf("server got %d requests, want 3", n)
	}
}

func testEmbedTimeout(t *testing.T, h *embedHarness) {
	h.srv.Enqueue(EmbedReply{Delay: time.Minute})
	e := h.embedder(t, func(c *EmbedderConfig) { c.Timeout = 100 * time.Millisecond })
	start := time.Now()
	_, err := e.Embed(context.Background(), []string{"a"})
	wantErrorOf(t, err, conformEmbedModel, llm.ModelTimeout)
	if d := time.Since(start); d > promptly {
		t.Errorf("the timeout took %v", d)
	}
}

func testEmbedUnreachable(t *testing.T, h *embedHarness) {
	h.srv.Close()
	_, err := h.embedder(t, nil).Embed(context.Background(), []string{"a"})
	wantErrorOf(t, err, conformEmbedModel, llm.ModelUnreachable)
	if !namesServer(err.Error(), h.srv.URL()) {
		t.Errorf("error %q does not name the server %s", err, h.srv.URL())
	}
}

func testEmbedCancel(t *testing.T, h *embedHarness) {
	h.srv.Handle(func(*EmbedRequest) EmbedReply { return EmbedReply{Delay: time.Minute} })
	e := h.embedder(t, func(c *EmbedderConfig) { c.MaxRetries = 2 })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cancelOnRequest(h.requests, cancel)
	start := time.Now()
	_, err := e.Embed(ctx, []string{"a"})
	wantCallerError(t, err, context.Canceled)
	if d := time.Since(start); d > promptly {
		t.Errorf("the cancelled call took %v", d)
	}
	if n := h.requests(); n != 1 {
		t.Errorf("server got %d requests, want 1: a cancelled call is not retried", n)
	}
}

func testEmbedCallerDeadline(t *testing.T, h *embedHarness) {
	h.srv.Handle(func(*EmbedRequest) EmbedReply { return EmbedReply{Delay: time.Minute} })
	e := h.embedder(t, func(c *EmbedderConfig) { c.MaxRetries = 2 })
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := e.Embed(ctx, []string{"a"})
	wantCallerError(t, err, context.DeadlineExceeded)
	if d := time.Since(start); d > promptly {
		t.Errorf("the call past its deadline took %v", d)
	}
}

// testEmbedConcurrent checks that one embedder serves calls from several
// goroutines, each getting the vectors of its own texts.
func testEmbedConcurrent(t *testing.T, h *embedHarness) {
	e := h.embedder(t, nil)
	const n = 8
	errs := make([]error, n)
	got := make([]*llm.Embedding, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { got[i], errs[i] = e.Embed(context.Background(), []string{fmt.Sprintf("text %d", i)}) })
	}
	wg.Wait()
	for i := range n {
		if errs[i] != nil {
			t.Errorf("call %d: %v", i, errs[i])
			continue
		}
		if !cmp.Equal(FakeVector(fmt.Sprintf("text %d", i), 0), got[i].Vectors[0]) {
			t.Errorf("call %d got another text's vector", i)
		}
	}
}
