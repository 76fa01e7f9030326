package memdirtest

import (
	"bytes"
	"cmp"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode"
)

// DefaultEmbedDim is the size of an [EmbedServer]'s vectors when neither the
// server nor the request sets one.
const DefaultEmbedDim = 256

// FakeVector is the vector an [EmbedServer] returns for text: a hashed bag of
// the text's lower-cased words (weight 1) and of the character trigrams of
// each word (weight 0.5), normalised to length 1. It is deterministic, and
// texts that share words or word stems are close in cosine similarity, so
// tests of ranking get meaningful neighbours without a model. Text with no
// letter or digit maps to a fixed unit vector.
func FakeVector(text string, dim int) []float32 {
	if dim <= 0 {
		dim = DefaultEmbedDim
	}
	v := make([]float64, dim)
	add := func(feature string, w float64) {
		h := fnv.New64a()
		io.WriteString(h, feature)
		x := h.Sum64()
		sign := 1.0
		if x>>63 == 1 {
			sign = -1
		}
		v[x%uint64(dim)] += sign * w
	}
	words := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
	for _, w := range words {
		add("w:"+w, 1)
		rs := []rune(" " + w + " ")
		for i := 0; i+3 <= len(rs); i++ {
			add("t:"+string(rs[i:i+3]), 0.5)
		}
	}
	var norm float64
	for _, x := range v {
		norm += x * x
	}
	out := make([]float32, dim)
	if norm == 0 {
		out[0] = 1
		return out
	}
	norm = math.Sqrt(norm)
	for i, x := range v {
		out[i] = float32(x / norm)
	}
	return out
}

// RandomVector is a vector that knows nothing: a unit vector drawn from
// text's hash, the same for the same text, unrelated for any two texts. An
// [EmbedServer] whose handler answers with it is an embedder that is
// useless, to test that fusing it does no harm.
func RandomVector(text string, dim int) []float32 {
	if dim <= 0 {
		dim = DefaultEmbedDim
	}
	h := fnv.New64a()
	io.WriteString(h, text)
	x := h.Sum64() | 1
	v := make([]float64, dim)
	var norm float64
	for i := range v {
		// xorshift64*, then a uniform in (-1, 1).
		x ^= x >> 12
		x ^= x << 25
		x ^= x >> 27
		v[i] = float64(int64(x*2685821657736338717)) / math.MaxInt64
		norm += v[i] * v[i]
	}
	out := make([]float32, dim)
	norm = math.Sqrt(norm)
	for i := range v {
		out[i] = float32(v[i] / norm)
	}
	return out
}

// RandomReply answers an [EmbedRequest] with [RandomVector] of each input.
func RandomReply(req *EmbedRequest) EmbedReply {
	dim := req.Dimensions
	vecs := make([][]float32, len(req.Input))
	for i, t := range req.Input {
		vecs[i] = RandomVector(t, dim)
	}
	return EmbedReply{Vectors: vecs}
}

// FakeTokens is the token count an [EmbedServer] reports for a text: its
// number of whitespace-separated words, at least 1.
func FakeTokens(text string) int { return max(1, len(strings.Fields(text))) }

// EmbedReply is one scripted answer of an [EmbedServer]. The zero value is
// the normal answer: FakeVector of every input.
type EmbedReply struct {
	// Status, when 400 or more, makes the reply an HTTP error in the OpenAI
	// format, carrying Message.
	Status  int
	Message string
	// Body, when set, is sent verbatim (with Status, or 200): malformed JSON,
	// a foreign error page.
	Body string
	// Vectors, when not nil, are sent instead of the computed ones: a wrong
	// count, a wrong or mixed dimension.
	Vectors [][]float32
	// Reverse sends the vectors in reverse order, each with its correct
	// index, as a server is free to.
	Reverse bool
	// NoIndex sends every vector with index 0, as some servers do.
	NoIndex bool
	// PromptTokens, when not zero, is the usage reported.
	PromptTokens int
	// RetryAfter, with an error Status, sets Retry-After-Ms so a test of
	// retries does not wait out the SDK's backoff.
	RetryAfter time.Duration
	// Delay holds the reply back, to test timeouts.
	Delay time.Duration
}

// EmbedRequest is one request an [EmbedServer] received.
type EmbedRequest struct {
	Method string
	Path   string
	Header http.Header
	Body   []byte

	Model string
	// Input is the texts to embed (a single string input is one text).
	Input []string
	// Dimensions is the requested size, 0 when not sent.
	Dimensions int
	// EncodingFormat is "float", "base64" or "" when not sent.
	EncodingFormat string
}

// EmbedServer is a fake OpenAI-compatible embeddings server on loopback
// (POST /v1/embeddings). Unscripted requests get FakeVector of each input;
// [EmbedServer.Enqueue] and [EmbedServer.Handle] script other answers. It
// answers base64 when asked to, as OpenAI does, so a client that forgets to
// ask for floats is caught. It is safe for concurrent use.
type EmbedServer struct {
	srv     *httptest.Server
	report  func(format string, args ...any)
	closing chan struct{}
	once    sync.Once

	script[EmbedRequest, EmbedReply]

	mu  sync.Mutex
	dim int
}

// NewEmbedServer starts a server that is closed when the test ends. A
// malformed request fails the test.
func NewEmbedServer(tb testing.TB) *EmbedServer {
	tb.Helper()
	s := StartEmbedServer()
	s.report = tb.Errorf
	tb.Cleanup(s.Close)
	return s
}

// StartEmbedServer starts a server outside a test; the caller must Close it.
func StartEmbedServer() *EmbedServer {
	s := &EmbedServer{closing: make(chan struct{}), dim: DefaultEmbedDim}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// URL is the server's root, such as http://127.0.0.1:41234.
func (s *EmbedServer) URL() string { return s.srv.URL }

// OpenAIBaseURL is the base URL the OpenAI SDK wants (it appends embeddings).
func (s *EmbedServer) OpenAIBaseURL() string { return s.srv.URL + "/v1" }

// SetDim sets the size of the vectors sent when the request asks for none.
func (s *EmbedServer) SetDim(dim int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.dim = dim
}

// Texts returns every text the server was asked to embed, in order.
func (s *EmbedServer) Texts() []string {
	var out []string
	for _, r := range s.Requests() {
		out = append(out, r.Input...)
	}
	return out
}

// Enqueue appends replies to the script; each request takes the next one.
func (s *EmbedServer) Enqueue(replies ...EmbedReply) { s.enqueue(replies...) }

// Handle sets the function that answers requests once the queue is empty.
func (s *EmbedServer) Handle(f func(*EmbedRequest) EmbedReply) { s.handle(f) }

// Requests returns the requests received so far, in order.
func (s *EmbedServer) Requests() []*EmbedRequest { return s.all() }

// Close stops the server, first releasing replies held back by Delay.
func (s *EmbedServer) Close() {
	s.once.Do(func() { close(s.closing) })
	s.srv.Close()
}

func (s *EmbedServer) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	req := &EmbedRequest{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body}
	seq := s.record(req)
	if r.Method != http.MethodPost || r.URL.Path != "/v1/embeddings" {
		http.Error(w, fmt.Sprintf("memdirtest: no route for %s %s", r.Method, r.URL.Path), http.StatusNotFound)
		return
	}
	if err := decodeEmbedRequest(body, req); err != nil {
		if s.report != nil {
			s.report("memdirtest: embeddings request %d is malformed: %v", seq, err)
		}
		writeOpenAIError(w, http.StatusBadRequest, "malformed request: "+err.Error())
		return
	}
	reply, dim := s.next(req)
	if reply.Delay > 0 {
		t := time.NewTimer(reply.Delay)
		defer t.Stop()
		select {
		case <-t.C:
		case <-r.Context().Done():
			return
		case <-s.closing:
			return
		}
	}
	if reply.RetryAfter > 0 {
		w.Header().Set("Retry-After-Ms", strconv.FormatFloat(float64(reply.RetryAfter)/float64(time.Millisecond), 'f', -1, 64))
	}
	switch {
	case reply.Body != "":
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(cmp.Or(reply.Status, http.StatusOK))
		io.WriteString(w, reply.Body)
		return
	case reply.Status >= 400:
		writeOpenAIError(w, reply.Status, reply.Message)
		return
	}
	vecs := reply.Vectors
	if vecs == nil {
		if req.Dimensions > 0 {
			dim = req.Dimensions
		}
		for _, t := range req.Input {
			vecs = append(vecs, FakeVector(t, dim))
		}
	}
	tokens := reply.PromptTokens
	if tokens == 0 {
		for _, t := range req.Input {
			tokens += FakeTokens(t)
		}
	}
	type item struct {
		Object    string `json:"object"`
		Index     int    `json:"index"`
		Embedding any    `json:"embedding"`
	}
	data := make([]item, len(vecs))
	for i, v := range vecs {
		it := item{Object: "embedding", Index: i, Embedding: v}
		if reply.NoIndex {
			it.Index = 0
		}
		if req.EncodingFormat == "base64" {
			b := make([]byte, 0, 4*len(v))
			for _, f := range v {
				b = binary.LittleEndian.AppendUint32(b, math.Float32bits(f))
			}
			it.Embedding = base64.StdEncoding.EncodeToString(b)
		}
		data[i] = it
	}
	if reply.Reverse {
		for i, j := 0, len(data)-1; i < j; i, j = i+1, j-1 {
			data[i], data[j] = data[j], data[i]
		}
	}
	w.Header().Set("Content-Type", "application/json")
	writeJSON(w, map[string]any{
		"object": "list",
		"data":   data,
		"model":  req.Model,
		"usage":  map[string]int{"prompt_tokens": tokens, "total_tokens": tokens},
	})
}

func (s *EmbedServer) next(req *EmbedRequest) (EmbedReply, int) {
	s.mu.Lock()
	dim := s.dim
	s.mu.Unlock()
	r, _ := s.take(req)
	return r, dim
}

func decodeEmbedRequest(body []byte, into *EmbedRequest) error {
	var v struct {
		Model          string          `json:"model"`
		Input          json.RawMessage `json:"input"`
		Dimensions     int             `json:"dimensions"`
		EncodingFormat string          `json:"encoding_format"`
	}
	if err := json.Unmarshal(body, &v); err != nil {
		return err
	}
	if v.Model == "" {
		return fmt.Errorf("no model")
	}
	in := bytes.TrimSpace(v.Input)
	switch {
	case len(in) > 0 && in[0] == '"':
		var s string
		if err := json.Unmarshal(in, &s); err != nil {
			return err
		}
		into.Input = []string{s}
	case len(in) > 0 && in[0] == '[':
		if err := json.Unmarshal(in, &into.Input); err != nil {
			return fmt.Errorf("input is not a string or a list of strings: %v", err)
		}
	default:
		return fmt.Errorf("no input")
	}
	for i, t := range into.Input {
		if t == "" {
			return fmt.Errorf("input %d is empty", i)
		}
	}
	into.Model, into.Dimensions, into.EncodingFormat = v.Model, v.Dimensions, v.EncodingFormat
	return nil
}

// writeOpenAIError writes an error in the OpenAI format.
func writeOpenAIError(w http.ResponseWriter, status int, message string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	writeJSON(w, map[string]any{"error": map[string]any{"message": message, "type": "invalid_request_error"}})
}
