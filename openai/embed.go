package openai

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/internal/modelkit"
	"github.com/memdir/memdir/llm"
)

// DefaultEmbedBatch is the most texts one embeddings request carries when
// EmbedderOptions leaves MaxBatch zero. OpenAI accepts up to 2,048; local
// servers work through a request one text at a time or in small groups, so
// a bounded request keeps each attempt well inside the timeout.
const DefaultEmbedBatch = 256

// EmbedderOptions configure an Embedder. Only Model is required.
type EmbedderOptions struct {
	// Model is the embedding model, such as text-embedding-3-small or
	// nomic-embed-text.
	Model string
	// APIKey is sent as a bearer token when set. Local servers need none.
	APIKey string
	// BaseURL is the API root including /v1 (DefaultBaseURL when empty),
	// such as http://localhost:11434/v1 for Ollama.
	BaseURL string
	// Dimensions, when more than zero, asks for vectors of that size
	// (text-embedding-3 models and servers that support it shorten them).
	Dimensions int
	// MaxBatch is the most texts per request (DefaultEmbedBatch when zero);
	// Embed splits longer lists into several requests.
	MaxBatch int
	// HTTPClient defaults to a plain *http.Client.
	HTTPClient *http.Client
	// Timeout limits one attempt (DefaultTimeout when zero).
	Timeout time.Duration
	// MaxRetries is how many times a failed attempt (429, 5xx, connection
	// error) is retried: 0 means DefaultMaxRetries, negative none.
	MaxRetries int
	// Logger receives a debug record per HTTP attempt; nil discards.
	Logger *slog.Logger
}

// Embedder is a llm.Embedder on the OpenAI embeddings endpoint
// (POST /v1/embeddings), which OpenAI, Ollama, llama.cpp's llama-server,
// vLLM and LM Studio all serve. Vectors are asked for as JSON floats
// (encoding_format "float"), which every compatible server supports; the
// SDK's default of base64 is not. It is safe for concurrent use.
type Embedder struct {
	svc    sdk.EmbeddingService
	opts   EmbedderOptions
	caller modelkit.Caller
}

var _ llm.Embedder = (*Embedder)(nil)

// NewEmbedder returns an embedder for opts.Model. It makes no request.
func NewEmbedder(opts *EmbedderOptions) (*Embedder, error) {
	if opts == nil || opts.Model == "" {
		return nil, fmt.Errorf("openai: no embedding model name given: %w", memdir.ErrInvalid)
	}
	o := *opts
	var err error
	if o.BaseURL, _, err = parseBaseURL(o.BaseURL); err != nil {
		return nil, err
	}
	if o.Dimensions < 0 {
		return nil, fmt.Errorf("openai: embedding dimensions %d is negative: %w", o.Dimensions, memdir.ErrInvalid)
	}
	if o.MaxBatch <= 0 {
		o.MaxBatch = DefaultEmbedBatch
	}
	unusedMaxTokens := 1
	modelkit.FillDefaults(&o.Timeout, &o.MaxRetries, &unusedMaxTokens, &o.HTTPClient, &o.Logger)
	c := conn{model: o.Model, baseURL: o.BaseURL, apiKey: o.APIKey, httpClient: o.HTTPClient, maxRetries: o.MaxRetries, timeout: o.Timeout, logger: o.Logger}
	return &Embedder{svc: sdk.NewEmbeddingService(c.requestOptions()...), opts: o, caller: c.caller()}, nil
}

// SetKeyEnv names the variable that error messages tell the user to set
// for the key (OPENAI_API_KEY by default), for callers that read the key from
// another one.
func (e *Embedder) SetKeyEnv(name string) { e.caller.KeyEnv = name }

// EmbedderName returns "openai:MODEL", with "@N" when Dimensions is set.
func (e *Embedder) EmbedderName() string {
	name := "openai:" + e.opts.Model
	if e.opts.Dimensions > 0 {
		name += "@" + strconv.Itoa(e.opts.Dimensions)
	}
	return name
}

// Embed returns one vector per text, in order, making one request per
// MaxBatch texts. Failures the server reports are *llm.ModelError; so is
// a reply with the wrong number of vectors or vectors of differing sizes,
// within a request or across them (kind bad_response).
func (e *Embedder) Embed(ctx context.Context, texts []string) (*llm.Embedding, error) {
	out := &llm.Embedding{Vectors: make([][]float32, 0, len(texts))}
	for start := 0; start < len(texts); start += e.opts.MaxBatch {
		batch := texts[start:min(start+e.opts.MaxBatch, len(texts))]
		vecs, usage, err := e.send(ctx, batch)
		if err != nil {
			return nil, err
		}
		if err := e.sameSize(out.Vectors, vecs); err != nil {
			return nil, err
		}
		out.Vectors = append(out.Vectors, vecs...)
		out.Usage.Add(usage)
	}
	return out, nil
}

// sameSize checks that the vectors of a batch have the size of the call's
// first vector: a server that mixes sizes (a model swapped between
// requests, a broken reply) would have them compared to no purpose.
func (e *Embedder) sameSize(before, batch [][]float32) error {
	first := before
	if len(first) == 0 {
		first = batch
	}
	for i, v := range batch {
		if len(v) != len(first[0]) {
			return e.caller.BadResponse(fmt.Sprintf("vector %d of the reply has %d dimensions, vector 0 has %d", len(before)+i, len(v), len(first[0])), nil)
		}
	}
	return nil
}

func (e *Embedder) send(ctx context.Context, texts []string) ([][]float32, llm.Usage, error) {
	params := sdk.EmbeddingNewParams{
		Model:          e.opts.Model,
		Input:          sdk.EmbeddingNewParamsInputUnion{OfArrayOfStrings: texts},
		EncodingFormat: sdk.EmbeddingNewParamsEncodingFormatFloat,
	}
	if e.opts.Dimensions > 0 {
		params.Dimensions = sdk.Int(int64(e.opts.Dimensions))
	}
	var raw *http.Response
	res, err := e.svc.New(ctx, params, option.WithResponseInto(&raw))
	if err != nil {
		return nil, llm.Usage{}, e.caller.Failure(ctx, raw, err)
	}
	if len(res.Data) != len(texts) {
		return nil, llm.Usage{}, e.caller.BadResponse(fmt.Sprintf("the server sent %d vectors for %d texts", len(res.Data), len(texts)), nil)
	}
	// Place each vector by its index when the indexes are a permutation;
	// a server that leaves them out (all zero) is taken in order.
	vecs := make([][]float32, len(texts))
	byIndex := true
	for _, d := range res.Data {
		if d.Index < 0 || int(d.Index) >= len(texts) || vecs[d.Index] != nil {
			byIndex = false
			break
		}
		vecs[d.Index] = []float32{} // placeholder: taken
	}
	for i, d := range res.Data {
		if len(d.Embedding) == 0 {
			return nil, llm.Usage{}, e.caller.BadResponse(fmt.Sprintf("vector %d of the reply is empty", i), nil)
		}
		v := make([]float32, len(d.Embedding))
		for j, x := range d.Embedding {
			v[j] = float32(x)
		}
		at := i
		if byIndex {
			at = int(d.Index)
		}
		vecs[at] = v
	}
	usage := llm.Usage{InputTokens: int(res.Usage.PromptTokens), Calls: 1}
	if usage.InputTokens == 0 {
		usage.InputTokens = int(res.Usage.TotalTokens)
	}
	return vecs, usage, nil
}
