package openai

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"strconv"
	"time"
	"unsafe"

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
	// The SDK sends the request (authentication, retries, errors) and
	// hands back the reply's bytes, which decodeEmbedReply reads: the
	// SDK's own decoding went through a generic JSON tree for each of a
	// vector's numbers, about 175 ns a number and more than half of an
	// embeddings call's CPU (a profile of BenchmarkEmbedDecode).
	var raw *http.Response
	var body []byte
	if _, err := e.svc.New(ctx, params, option.WithResponseInto(&raw), option.WithResponseBodyInto(&body)); err != nil {
		return nil, llm.Usage{}, e.caller.Failure(ctx, raw, err)
	}
	res, err := decodeEmbedReply(body)
	if err != nil {
		return nil, llm.Usage{}, e.caller.BadResponse("the reply is not an embeddings list", err)
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
		v := d.Embedding
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

// embedReply is the part of an embeddings reply memdir reads.
type embedReply struct {
	Data []struct {
		Embedding embedVector `json:"embedding"`
		Index     int64       `json:"index"`
	} `json:"data"`
	Usage struct {
		PromptTokens int64 `json:"prompt_tokens"`
		TotalTokens  int64 `json:"total_tokens"`
	} `json:"usage"`
}

// decodeEmbedReply reads an embeddings reply.
func decodeEmbedReply(body []byte) (*embedReply, error) {
	var r embedReply
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// embedVector is a vector of a reply: a list of numbers, or, from a
// server that answers base64 whatever was asked (OpenAI's own default),
// a base64 string of little-endian float32s, as the SDK reads it too.
// Numbers are read as float64 and rounded once to float32, as the SDK's
// float64 vectors were converted.
type embedVector []float32

func (v *embedVector) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		var packed []byte
		if err := json.Unmarshal(b, &packed); err != nil {
			return err
		}
		if len(packed)%4 != 0 {
			return errors.New("a base64 vector whose length is not a multiple of 4 bytes")
		}
		*v = make(embedVector, len(packed)/4)
		for i := range *v {
			(*v)[i] = math.Float32frombits(binary.LittleEndian.Uint32(packed[4*i:]))
		}
		return nil
	}
	if string(b) == "null" {
		*v = nil
		return nil
	}
	out, err := parseNumbers(b)
	if err != nil {
		return err
	}
	*v = out
	return nil
}

// parseNumbers reads a JSON array of numbers (which encoding/json has
// already checked is valid JSON) in one pass: a number at a time through
// strconv, where decoding into a slice walked each through reflection
// (BenchmarkEmbedDecode, one vector of 1,536 with the fake server's own
// encoding: 0.55 ms decoded into a []float64, 0.32 ms by this). Anything
// but numbers (null, strings, nested arrays) is an error.
func parseNumbers(b []byte) (embedVector, error) {
	if len(b) < 2 || b[0] != '[' || b[len(b)-1] != ']' {
		return nil, errors.New("a vector that is not a list")
	}
	out := make(embedVector, 0, len(b)/8)
	rest := b[1 : len(b)-1]
	for {
		rest = skipSpace(rest)
		if len(rest) == 0 {
			if len(out) > 0 {
				return nil, errors.New("a vector that ends in a comma")
			}
			return out, nil
		}
		end := 0
		for end < len(rest) && rest[end] != ',' && !isSpace(rest[end]) {
			end++
		}
		x, err := strconv.ParseFloat(unsafeString(rest[:end]), 64)
		if err != nil {
			return nil, fmt.Errorf("vector component %d: %w", len(out), err)
		}
		out = append(out, float32(x))
		rest = skipSpace(rest[end:])
		if len(rest) == 0 {
			return out, nil
		}
		if rest[0] != ',' {
			return nil, fmt.Errorf("vector component %d is followed by %q", len(out)-1, rest[0])
		}
		rest = rest[1:]
	}
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func skipSpace(b []byte) []byte {
	for len(b) > 0 && isSpace(b[0]) {
		b = b[1:]
	}
	return b
}

// unsafeString views b as a string for strconv, which keeps no reference.
func unsafeString(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }
