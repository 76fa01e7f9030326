package openai_test

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/llm"
	"github.com/memdir/memdir/memdirtest"
	"github.com/memdir/memdir/openai"
)

func newEmbedder(tb testing.TB, srv *memdirtest.EmbedServer, edit func(*openai.EmbedderOptions)) *openai.Embedder {
	tb.Helper()
	opts := &openai.EmbedderOptions{Model: "embed-test", APIKey: "sk-test", BaseURL: srv.OpenAIBaseURL(), MaxRetries: -1}
	if edit != nil {
		edit(opts)
	}
	e, err := openai.NewEmbedder(opts)
	if err != nil {
		tb.Fatal(err)
	}
	return e
}

func TestEmbedRequestAndReply(t *testing.T) {
	srv := memdirtest.NewEmbedServer(t)
	e := newEmbedder(t, srv, func(o *openai.EmbedderOptions) { o.Dimensions = 64 })
	texts := []string{"deploy with make ship", "tests hit a real database"}
	got, err := e.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	want := &llm.Embedding{
		Vectors: [][]float32{memdirtest.FakeVector(texts[0], 64), memdirtest.FakeVector(texts[1], 64)},
		Usage:   llm.Usage{InputTokens: 9, Calls: 1},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Embed (-want +got):\n%s", diff)
	}
	r := srv.Requests()[0]
	if diff := cmp.Diff(texts, r.Input); diff != "" {
		t.Errorf("input sent (-want +got):\n%s", diff)
	}
	if r.Model != "embed-test" || r.Dimensions != 64 || r.EncodingFormat != "float" {
		t.Errorf("request model %q, dimensions %d, encoding %q; want embed-test, 64, float", r.Model, r.Dimensions, r.EncodingFormat)
	}
	if got := r.Header.Get("Authorization"); got != "Bearer sk-test" {
		t.Errorf("Authorization = %q", got)
	}
	if e.EmbedderName() != "openai:embed-test@64" {
		t.Errorf("EmbedderName = %q", e.EmbedderName())
	}
}

func TestEmbedWithoutKeyOrDimensions(t *testing.T) {
	srv := memdirtest.NewEmbedServer(t)
	e := newEmbedder(t, srv, func(o *openai.EmbedderOptions) { o.APIKey = "" })
	if _, err := e.Embed(context.Background(), []string{"x"}); err != nil {
		t.Fatal(err)
	}
	r := srv.Requests()[0]
	if r.Header.Get("Authorization") != "" || r.Dimensions != 0 || strings.Contains(string(r.Body), "dimensions") {
		t.Errorf("keyless request sent Authorization %q, body %s", r.Header.Get("Authorization"), r.Body)
	}
	if e.EmbedderName() != "openai:embed-test" {
		t.Errorf("EmbedderName = %q", e.EmbedderName())
	}
}

func TestEmbedOrderAndBatches(t *testing.T) {
	texts := []string{"one", "two", "three", "four", "five"}
	for _, tt := range []struct {
		name  string
		reply memdirtest.EmbedReply
	}{
		{"reversed with indexes", memdirtest.EmbedReply{Reverse: true}},
		{"no indexes", memdirtest.EmbedReply{NoIndex: true}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := memdirtest.NewEmbedServer(t)
			srv.Handle(func(*memdirtest.EmbedRequest) memdirtest.EmbedReply { return tt.reply })
			e := newEmbedder(t, srv, func(o *openai.EmbedderOptions) { o.MaxBatch = 2 })
			got, err := e.Embed(context.Background(), texts)
			if err != nil {
				t.Fatal(err)
			}
			for i, text := range texts {
				if !cmp.Equal(memdirtest.FakeVector(text, 0), got.Vectors[i]) {
					t.Errorf("vector %d is not the one of %q", i, text)
				}
			}
			if n := len(srv.Requests()); n != 3 || got.Usage.Calls != 3 || got.Usage.InputTokens != 5 {
				t.Errorf("%d requests, usage %+v; want 3 requests of at most 2 texts, 5 tokens", n, got.Usage)
			}
		})
	}
}

func TestEmbedFailures(t *testing.T) {
	tests := []struct {
		name    string
		reply   memdirtest.EmbedReply
		noKey   bool
		kind    llm.ModelErrorKind
		mention []string
	}{
		{"no key", memdirtest.EmbedReply{Status: 401, Message: "missing key"}, true, "auth", []string{"OPENAI_API_KEY", "missing key"}},
		{"unknown model", memdirtest.EmbedReply{Status: 404, Message: "model not found"}, false, "not_found", []string{`"embed-test"`}},
		{"unknown model as 400", memdirtest.EmbedReply{Status: 400, Message: `model "embed-test" not found, try pulling it first`}, false, "not_found", nil},
		{"server error", memdirtest.EmbedReply{Status: 500, Message: "boom"}, false, "server", []string{"boom"}},
		{"broken JSON", memdirtest.EmbedReply{Body: `{"object":"list","data":[{"embedding":[0.1,`}, false, "bad_response", nil},
		{"wrong count", memdirtest.EmbedReply{Vectors: [][]float32{{1, 0}}}, false, "bad_response", []string{"1 vectors for 2 texts"}},
		{"empty vector", memdirtest.EmbedReply{Vectors: [][]float32{{1, 0}, {}}}, false, "bad_response", []string{"empty"}},
		{"mixed dimensions", memdirtest.EmbedReply{Vectors: [][]float32{{1, 0}, {1, 0, 0}}}, false, "bad_response", []string{"vector 1 of the reply has 3 dimensions, vector 0 has 2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := memdirtest.NewEmbedServer(t)
			srv.Enqueue(tt.reply)
			e := newEmbedder(t, srv, func(o *openai.EmbedderOptions) {
				if tt.noKey {
					o.APIKey = ""
				}
			})
			_, err := e.Embed(context.Background(), []string{"a", "b"})
			var me *llm.ModelError
			if !errors.As(err, &me) || me.Kind != tt.kind {
				t.Fatalf("error = %v, want a ModelError of kind %s", err, tt.kind)
			}
			for _, s := range tt.mention {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not mention %s", err, s)
				}
			}
		})
	}
}

// TestEmbedBase64Reply checks that a server answering base64 although
// floats were asked for (OpenAI's own default) is read, as the SDK read it.
func TestEmbedBase64Reply(t *testing.T) {
	srv := memdirtest.NewEmbedServer(t)
	want := [][]float32{{0.25, -1, 7.5}, {1e-3, 0, -0.5}}
	var items []string
	for i, v := range want {
		b := make([]byte, 4*len(v))
		for j, x := range v {
			binary.LittleEndian.PutUint32(b[4*j:], math.Float32bits(x))
		}
		items = append(items, fmt.Sprintf(`{"object":"embedding","index":%d,"embedding":%q}`, i, base64.StdEncoding.EncodeToString(b)))
	}
	srv.Enqueue(memdirtest.EmbedReply{Body: `{"object":"list","data":[` + strings.Join(items, ",") + `],"usage":{"prompt_tokens":4,"total_tokens":4}}`})
	got, err := newEmbedder(t, srv, nil).Embed(context.Background(), []string{"a", "b"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(&llm.Embedding{Vectors: want, Usage: llm.Usage{InputTokens: 4, Calls: 1}}, got); diff != "" {
		t.Errorf("Embed (-want +got):\n%s", diff)
	}
}

// TestEmbedMixedBatches checks that vectors of one size in a first request
// and another in a second are an error, not one list of both.
func TestEmbedMixedBatches(t *testing.T) {
	srv := memdirtest.NewEmbedServer(t)
	srv.Enqueue(memdirtest.EmbedReply{Vectors: [][]float32{{1, 0}, {0, 1}}}, memdirtest.EmbedReply{Vectors: [][]float32{{1, 0, 0}}})
	e := newEmbedder(t, srv, func(o *openai.EmbedderOptions) { o.MaxBatch = 2 })
	_, err := e.Embed(context.Background(), []string{"a", "b", "c"})
	var me *llm.ModelError
	if !errors.As(err, &me) || me.Kind != "bad_response" || !strings.Contains(err.Error(), "vector 2 of the reply has 3 dimensions, vector 0 has 2") {
		t.Errorf("error = %v, want a bad_response naming vector 2", err)
	}
}

func TestEmbedRetriesAndTimeout(t *testing.T) {
	srv := memdirtest.NewEmbedServer(t)
	srv.Enqueue(memdirtest.EmbedReply{Status: 429, Message: "slow down", RetryAfter: time.Millisecond})
	e := newEmbedder(t, srv, func(o *openai.EmbedderOptions) { o.MaxRetries = 1 })
	if _, err := e.Embed(context.Background(), []string{"a"}); err != nil {
		t.Fatalf("a 429 then a success: %v", err)
	}
	if n := len(srv.Requests()); n != 2 {
		t.Errorf("%d requests, want 2 (one retry)", n)
	}

	srv.Enqueue(memdirtest.EmbedReply{Delay: time.Minute})
	e = newEmbedder(t, srv, func(o *openai.EmbedderOptions) { o.Timeout = 50 * time.Millisecond })
	_, err := e.Embed(context.Background(), []string{"a"})
	var me *llm.ModelError
	if !errors.As(err, &me) || me.Kind != "timeout" {
		t.Errorf("error = %v, want a timeout ModelError", err)
	}
}

func TestEmbedUnreachable(t *testing.T) {
	srv := memdirtest.NewEmbedServer(t)
	url := srv.OpenAIBaseURL()
	srv.Close()
	e, err := openai.NewEmbedder(&openai.EmbedderOptions{Model: "m", BaseURL: url, MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.Embed(context.Background(), []string{"a"})
	var me *llm.ModelError
	if !errors.As(err, &me) || me.Kind != "unreachable" {
		t.Errorf("error = %v, want an unreachable ModelError", err)
	}
}

func TestNewEmbedderRejects(t *testing.T) {
	for _, o := range []*openai.EmbedderOptions{nil, {}, {Model: "m", BaseURL: "ftp://x"}, {Model: "m", Dimensions: -1}} {
		if _, err := openai.NewEmbedder(o); !errors.Is(err, memdir.ErrInvalid) {
			t.Errorf("NewEmbedder(%+v) error = %v, want ErrInvalid", o, err)
		}
	}
}

// BenchmarkEmbedDecode is an embeddings call of 1 and of 64 texts at 1,536
// dimensions against the fake server in this process (whose own encoding
// is part of the figure): what a hybrid prompt's query and a `memdir
// embed` batch cost on the client's side.
func BenchmarkEmbedDecode(b *testing.B) {
	srv := memdirtest.NewEmbedServer(b)
	for _, n := range []int{1, 64} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			e := newEmbedder(b, srv, func(o *openai.EmbedderOptions) { o.Dimensions = 1536 })
			texts := make([]string, n)
			for i := range texts {
				texts[i] = fmt.Sprintf("how do we deploy the billing service %d", i)
			}
			for b.Loop() {
				if _, err := e.Embed(context.Background(), texts); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
