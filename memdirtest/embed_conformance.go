package memdirtest

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/memdir/memdir/llm"
)

// EmbedderConfig is what the embedder conformance suite sets on the adapter
// under test; the factory given to [TestEmbedder] copies it into its own
// options.
type EmbedderConfig struct {
	// Model is the embedding model to ask for.
	Model string
	// APIKey is the key to send; empty means send none.
	APIKey string
	// Dimensions, when more than zero, asks for vectors of that size.
	Dimensions int
	// MaxRetries is how many times a failed attempt is retried: negative
	// means none. The suite always sets it.
	MaxRetries int
	// Timeout limits one attempt; zero means the adapter's default.
	Timeout time.Duration
}

// NewEmbedderFunc returns the llm.Embedder under test, configured with cfg
// and pointed at srv. srv may already be closed: that is how the suite
// tests an unreachable server. An adapter speaking another wire format
// than OpenAI's embeddings teaches EmbedServer that format (as ModelServer
// speaks two); the suite scripts replies in EmbedReply's neutral terms.
type NewEmbedderFunc func(tb testing.TB, srv *EmbedServer, cfg EmbedderConfig) llm.Embedder

// conformEmbedModel is the model name the embedder suite asks for.
const conformEmbedModel = "conformance-embed-1"

// TestEmbedder runs the conformance suite for an llm.Embedder: what the
// embedding cache and semantic recall rely on whichever provider answers.
// Each check starts its own [EmbedServer] and asks newEmbedder for a fresh
// embedder.
func TestEmbedder(t *testing.T, newEmbedder NewEmbedderFunc) {
	tests := []struct {
		name string
		fn   func(t *testing.T, h *embedHarness)
	}{
		{"Vectors", testEmbedVectors},
		{"WithoutKey", testEmbedWithoutKey},
		{"Dimensions", testEmbedDimensions},
		{"Order", testEmbedOrder},
		{"ManyTexts", testEmbedMany},
		{"NoTexts", testEmbedNone},
		{"Name", testEmbedName},
		{"Failures", testEmbedFailures},
		{"MixedDimensionsAcrossRequests", testEmbedMixedAcrossRequests},
		{"RetryThenSuccess", testEmbedRetry},
		{"Timeout", testEmbedTimeout},
		{"Unreachable", testEmbedUnreachable},
		{"Cancel", testEmbedCancel},
		{"CallerDeadline", testEmbedCallerDeadline},
		{"Concurrent", testEmbedConcurrent},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.fn(t, &embedHarness{srv: NewEmbedServer(t), newEmbedder: newEmbedder})
		})
	}
}

// embedHarness is one check's server and the way to get embedders of it.
type embedHarness struct {
	srv         *EmbedServer
	newEmbedder NewEmbedderFunc
}

// embedder returns an embedder of h.srv with the suite's defaults (a key,
// no retries, the model's own dimension), adjusted by edit.
func (h *embedHarness) embedder(tb testing.TB, edit func(*EmbedderConfig)) llm.Embedder {
	tb.Helper()
	cfg := EmbedderConfig{Model: conformEmbedModel, APIKey: conformKey, MaxRetries: -1}
	if edit != nil {
		edit(&cfg)
	}
	e := h.newEmbedder(tb, h.srv, cfg)
	if e == nil {
		tb.Fatal("the embedder factory returned nil")
	}
	return e
}

func (h *embedHarness) requests() int { return len(h.srv.Requests()) }

func embed(tb testing.TB, e llm.Embedder, texts []string) *llm.Embedding {
	tb.Helper()
	got, err := e.Embed(context.Background(), texts)
	if err != nil {
		tb.Fatalf("Embed of %d texts: %v", len(texts), err)
	}
	if got == nil {
		tb.Fatal("Embed returned neither an embedding nor an error")
	}
	return got
}

// wantEmbedding is what the fake sends for texts: FakeVector of each, and
// FakeTokens of each as usage, over requests HTTP requests.
func wantEmbedding(texts []string, dim, requests int) *llm.Embedding {
	want := &llm.Embedding{Vectors: [][]float32{}, Usage: llm.Usage{Calls: requests}}
	for _, text := range texts {
		want.Vectors = append(want.Vectors, FakeVector(text, dim))
		want.Usage.InputTokens += FakeTokens(text)
	}
	return want
}

func testEmbedVectors(t *testing.T, h *embedHarness) {
	h.srv.SetDim(48)
	texts := []string{"deploy with make ship", "tests hit a real database", "lunch on fridays"}
	got := embed(t, h.embedder(t, nil), texts)
	if diff := cmp.Diff(wantEmbedding(texts, 48, 1), got); diff != "" {
		t.Errorf("Embed (-want +got):\n%s", diff)
	}
	reqs := h.srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("server got %d requests, want 1", len(reqs))
	}
	if diff := cmp.Diff(texts, reqs[0].Input); diff != "" {
		t.Errorf("texts sent (-want +got):\n%s", diff)
	}
	if reqs[0].Model != conformEmbedModel || reqs[0].Dimensions != 0 {
		t.Errorf("request for model %q, dimensions %d; want %q and none asked for", reqs[0].Model, reqs[0].Dimensions, conformEmbedModel)
	}
	if !strings.Contains(reqs[0].Header.Get("Authorization"), conformKey) {
		t.Errorf("the API key was not sent: headers %v", reqs[0].Header)
	}
}

// testEmbedWithoutKey checks that an embedder given no key, as for a local
// server, sends no credentials and works.
func testEmbedWithoutKey(t *testing.T, h *embedHarness) {
	embed(t, h.embedder(t, func(c *EmbedderConfig) { c.APIKey = "" }), []string{"x"})
	if hdr := h.srv.Requests()[0].Header; hdr.Get("Authorization") != "" || hdr.Get("X-Api-Key") != "" || hdr.Get("Api-Key") != "" {
		t.Errorf("credentials sent without a key: %v", hdr)
	}
}

func testEmbedDimensions(t *testing.T, h *embedHarness) {
	texts := []string{"one text", "another text"}
	got := embed(t, h.embedder(t, func(c *EmbedderConfig) { c.Dimensions = 64 }), texts)
	if diff := cmp.Diff(wantEmbedding(texts, 64, 1), got); diff != "" {
		t.Errorf("Embed with 64 dimensions (-want +got):\n%s", diff)
	}
	if r := h.srv.Requests()[0]; r.Dimensions != 64 {
		t.Errorf("request asked for %d dimensions, want 64", r.Dimensions)
	}
}

// testEmbedOrder checks that vectors come back in the order of the texts
// however the server orders or numbers them.
func testEmbedOrder(t *testing.T, h *embedHarness) {
	texts := []string{"one", "two", "three", "four"}
	for _, tt := range []struct {
		name  string
		reply EmbedReply
	}{
		{"reversed, with indexes", EmbedReply{Reverse: true}},
		{"in order, without indexes", EmbedReply{NoIndex: true}},
	} {
		h.srv.Enqueue(tt.reply)
		got := embed(t, h.embedder(t, nil), texts)
		if diff := cmp.Diff(wantEmbedding(texts, 0, 1).Vectors, got.Vectors); diff != "" {
			t.Errorf("%s: vectors (-want +got):\n%s", tt.name, diff)
		}
	}
}

// manyTexts returns n distinct texts, more than one request of any adapter
// carries.
func manyTexts(n int) []string {
	texts := make([]string, n)
	for i := range texts {
		texts[i] = fmt.Sprintf("memory number %d about topic %d", i, i%7)
	}
	return texts
}

// testEmbedMany checks a list longer than one request takes: every text
// sent once, in order, and usage summed over the requests.
func testEmbedMany(t *testing.T, h *embedHarness) {
	texts := manyTexts(600)
	got := embed(t, h.embedder(t, nil), texts)
	n := h.requests()
	want := wantEmbedding(texts, 0, n)
	if diff := cmp.Diff(want.Usage, got.Usage); diff != "" {
		t.Errorf("usage of %d texts in %d requests (-want +got):\n%s", len(texts), n, diff)
	}
	// cmp.Diff of 600 vectors takes seconds; DeepEqual finds the odd one.
	if len(got.Vectors) != len(texts) {
		t.Fatalf("%d vectors for %d texts", len(got.Vectors), len(texts))
	}
	for i, v := range got.Vectors {
		if !reflect.DeepEqual(want.Vectors[i], v) {
			t.Fatalf("vector %d is not the one of %q", i, texts[i])
		}
	}
	if diff := cmp.Diff(texts, h.srv.Texts()); diff != "" {
		t.Errorf("texts sent (-want +got):\n%s", diff)
	}
}

func testEmbedNone(t *testing.T, h *embedHarness) {
	got := embed(t, h.embedder(t, nil), nil)
	if len(got.Vectors) != 0 || got.Usage != (llm.Usage{}) {
		t.Errorf("Embed of no texts = %+v, want nothing", got)
	}
	if n := h.requests(); n != 0 {
		t.Errorf("Embed of no texts made %d requests", n)
	}
}

// testEmbedName checks EmbedderName, the key of cached vectors: the same
// for the same model and dimension (whatever the key, before and after
// calls), different for another model or dimension.
func testEmbedName(t *testing.T, h *embedHarness) {
	name := func(model string, dim int, key string) string {
		return h.embedder(t, func(c *EmbedderConfig) { c.Model, c.Dimensions, c.APIKey = model, dim, key }).EmbedderName()
	}
	e := h.embedder(t, nil)
	base := e.EmbedderName()
	if !strings.Contains(base, conformEmbedModel) {
		t.Errorf("EmbedderName = %q, want it to name the model %q", base, conformEmbedModel)
	}
	embed(t, e, []string{"x"})
	if got := e.EmbedderName(); got != base {
		t.Errorf("EmbedderName changed from %q to %q after a call", base, got)
	}
	if got := name(conformEmbedModel, 0, "another-key"); got != base {
		t.Errorf("EmbedderName with another key = %q, want %q", got, base)
	}
	names := map[string]string{"the base": base}
	for what, n := range map[string]string{
		"another model": name("conformance-embed-2", 0, conformKey),
		"64 dimensions": name(conformEmbedModel, 64, conformKey),
		"32 dimensions": name(conformEmbedModel, 32, conformKey),
	} {
		for other, m := range names {
			if n == m {
				t.Errorf("EmbedderName of %s = %q, the same as of %s", what, n, other)
			}
		}
		names[what] = n
	}
	if n := names["64 dimensions"]; !strings.HasSuffix(n, "@64") {
		t.Errorf("EmbedderName with 64 dimensions = %q, want the suffix @64", n)
	}
}
