package memdirtest_test

import (
	"context"
	"encoding/json"
	"math"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/memdir/memdir/memdirtest"
	"github.com/memdir/memdir/recall"
)

func TestFakeVector(t *testing.T) {
	a := memdirtest.FakeVector("Deploy the service", 128)
	if !cmp.Equal(a, memdirtest.FakeVector("deploy  the service!", 128)) {
		t.Error("FakeVector depends on case or punctuation")
	}
	var norm float64
	for _, x := range a {
		norm += float64(x) * float64(x)
	}
	if math.Abs(norm-1) > 1e-5 || len(a) != 128 {
		t.Errorf("FakeVector has %d dimensions, squared norm %v; want 128, 1", len(a), norm)
	}
	near := recall.Cosine(a, memdirtest.FakeVector("deploying a service", 128))
	far := recall.Cosine(a, memdirtest.FakeVector("lunch on fridays", 128))
	if near <= far {
		t.Errorf("cosine to a text sharing words %v <= to an unrelated one %v", near, far)
	}
	if v := memdirtest.FakeVector("...", 8); v[0] != 1 {
		t.Errorf("FakeVector of no words = %v, want a fixed unit vector", v)
	}
}

// TestEmbedServerBase64 checks that the server answers base64 when asked, as
// OpenAI does, and that the SDK decodes it to the same vectors.
func TestEmbedServerBase64(t *testing.T) {
	srv := memdirtest.NewEmbedServer(t)
	svc := sdk.NewEmbeddingService(option.WithBaseURL(srv.OpenAIBaseURL()), option.WithMaxRetries(0))
	res, err := svc.New(context.Background(), sdk.EmbeddingNewParams{
		Model: "m", Input: sdk.EmbeddingNewParamsInputUnion{OfString: sdk.String("hello world")},
		EncodingFormat: sdk.EmbeddingNewParamsEncodingFormatBase64,
	})
	if err != nil {
		t.Fatal(err)
	}
	var raw struct {
		Data []struct {
			Embedding json.RawMessage `json:"embedding"`
		} `json:"data"`
	}
	if err := json.Unmarshal([]byte(res.RawJSON()), &raw); err != nil || len(raw.Data) != 1 || raw.Data[0].Embedding[0] != '"' {
		t.Fatalf("reply %s is not base64 (%v)", res.RawJSON(), err)
	}
	want := memdirtest.FakeVector("hello world", 0)
	got := make([]float32, len(res.Data[0].Embedding))
	for i, x := range res.Data[0].Embedding {
		got[i] = float32(x)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("decoded base64 vector (-want +got):\n%s", diff)
	}
	if r := srv.Requests()[0]; r.EncodingFormat != "base64" || !cmp.Equal(r.Input, []string{"hello world"}) {
		t.Errorf("recorded request = %+v", r)
	}
}

func TestEmbedServerRejects(t *testing.T) {
	srv := memdirtest.StartEmbedServer() // malformed requests would fail a test server's test
	defer srv.Close()
	for _, tt := range []struct{ path, body string }{
		{"/v1/embeddings", `{"model":"m","input":""}`},
		{"/v1/embeddings", `{"input":["a"]}`},
		{"/v1/embeddings", `not json`},
	} {
		res, body := post(t, srv.URL()+tt.path, tt.body)
		if res.StatusCode != http.StatusBadRequest {
			t.Errorf("POST %s %s: status %d, body %s; want 400", tt.path, tt.body, res.StatusCode, body)
		}
	}
	if res, _ := post(t, srv.URL()+"/v1/other", `{}`); res.StatusCode != http.StatusNotFound {
		t.Errorf("unknown path: status %d, want 404", res.StatusCode)
	}
}
