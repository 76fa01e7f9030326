// Package memdirtest holds test kits for code built on memdir, in the spirit
// of net/http/httptest: fakes that run real protocols on loopback, so tests
// exercise the same client code as production.
//
// [ModelServer] is a fake language-model server that speaks the Anthropic
// Messages API, the OpenAI Chat Completions API, the OpenAI Responses API
// (as Codex CLI calls it) and the Gemini API's generateContent (as Gemini
// CLI calls it), plain and streaming. Tests point the real SDK clients
// (through the anthropic and openai adapter packages), or the real agent
// programs ([NewCodex], [NewGemini]), at it, script its replies, and assert
// on the requests it recorded.
//
// [TestModel] is the conformance suite every llm.Model adapter runs against
// that server: the same checks of replies, tool calls, structured output,
// usage, stop reasons, failures and cancellation, whichever provider's
// wire format the adapter speaks. [TestEmbedder] is its counterpart for
// llm.Embedder adapters, against the fake [EmbedServer].
package memdirtest

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memdir/memdir/llm"
)

// ModelReply is one scripted answer of a [ModelServer]. The zero value is an
// empty successful reply.
type ModelReply struct {
	// Content is what the model says: text and tool_use blocks.
	Content []llm.Block
	// StopReason defaults to tool_use when Content has a tool call, and to
	// end_turn otherwise. StopOther goes out as a provider's reason that is
	// none of the others: refusal (Anthropic), content_filter (OpenAI).
	StopReason llm.StopReason
	// Usage is the token count the reply reports. InputTokens means input
	// neither read from nor written to the cache, as in the Anthropic API;
	// the OpenAI format adds the cache counts into prompt_tokens.
	Usage llm.Usage
	// Model is the model name the reply reports; empty echoes the request's.
	Model string

	// Status, when 400 or more, makes the reply an HTTP error in the
	// provider's error format, carrying Message. A streaming request gets the
	// error before any event, as the real services mostly do.
	Status  int
	Message string
	// MidStream, with an error Status, makes a streaming request get a 200
	// stream that starts the reply and then reports the error as an event
	// (Anthropic's error event, an OpenAI chunk holding "error"), as a
	// server overloaded while generating does. A plain request still gets
	// the HTTP error.
	MidStream bool
	// Body, when set, is sent verbatim instead of the generated body (with
	// Status, or 200): a way to send malformed JSON or a foreign error page.
	Body string
	// Header is added to the response.
	Header http.Header
	// RetryAfter, with an error Status, sets the Retry-After-Ms header both
	// SDKs obey, so a test of retries need not wait out their backoff.
	RetryAfter time.Duration
	// Delay holds the reply back, to test timeouts. A request whose client
	// gives up stops waiting.
	Delay time.Duration
}

// TextReply returns a reply made of one text block.
func TextReply(text string) ModelReply {
	return ModelReply{Content: []llm.Block{llm.TextBlock(text)}}
}

// JSONReply returns a text reply holding v encoded as JSON, as a model
// answering with structured output does.
func JSONReply(v any) ModelReply {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("memdirtest.JSONReply: %v", err))
	}
	return TextReply(string(b))
}

// ToolCallReply returns a reply calling one tool with the JSON arguments input.
func ToolCallReply(id, name, input string) ModelReply {
	return ModelReply{Content: []llm.Block{{
		Type: llm.BlockToolUse, ToolUseID: id, ToolName: name, Input: json.RawMessage(input),
	}}}
}

// ErrorReply returns an HTTP error reply.
func ErrorReply(status int, message string) ModelReply {
	return ModelReply{Status: status, Message: message}
}

// ModelRequest is one request the server received: the raw HTTP parts and a
// neutral decoded form, the same whichever wire format carried it.
type ModelRequest struct {
	// API is "anthropic", "openai" (Chat Completions), "responses" (the
	// OpenAI Responses API) or "gemini"; empty for a path the server does not
	// serve.
	API      string
	Method   string
	Path     string
	RawQuery string
	Header   http.Header
	Body     []byte

	Model     string
	Stream    bool
	MaxTokens int
	System    string
	Messages  []llm.Message
	Tools     []llm.Tool
	// ToolChoice is the name of the tool the request forces, if any.
	ToolChoice string
	// Schema is the JSON schema of the requested structured output
	// (Anthropic output_config.format, OpenAI response_format), if any.
	Schema     json.RawMessage
	SchemaName string
}

// Contains reports whether s occurs in the text the request sends the model:
// its system prompt, or a text, tool call or tool result of a message. It is
// how a test asserts that some context reached the model, whichever wire
// format carried it and wherever the client put it.
func (r *ModelRequest) Contains(s string) bool {
	if strings.Contains(r.System, s) {
		return true
	}
	for _, m := range r.Messages {
		for _, b := range m.Content {
			if strings.Contains(b.Text, s) || strings.Contains(string(b.Input), s) {
				return true
			}
		}
	}
	return false
}

// ModelServer is a fake model server on loopback. Its replies come from the
// queue filled by [ModelServer.Enqueue] first, then from the function given to
// [ModelServer.Handle]. It is safe for concurrent use.
type ModelServer struct {
	srv     *httptest.Server
	report  func(format string, args ...any) // where unscripted requests are reported
	closing chan struct{}
	once    sync.Once

	script[ModelRequest, ModelReply]

	mu    sync.Mutex
	embed *EmbedServer
}

// NewModelServer starts a server that is closed when the test ends. A request
// the script has no reply for fails the test.
func NewModelServer(tb testing.TB) *ModelServer {
	tb.Helper()
	s := StartModelServer()
	s.report = tb.Errorf
	tb.Cleanup(s.Close)
	return s
}

// StartModelServer starts a server outside a test (an example, a manual
// experiment). The caller must Close it. A request the script has no reply
// for gets HTTP 500.
func StartModelServer() *ModelServer {
	s := &ModelServer{closing: make(chan struct{})}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// URL is the server's root, such as http://127.0.0.1:41234.
func (s *ModelServer) URL() string { return s.srv.URL }

// AnthropicBaseURL is the base URL the Anthropic SDK wants (it appends
// v1/messages).
func (s *ModelServer) AnthropicBaseURL() string { return s.srv.URL }

// OpenAIBaseURL is the base URL the OpenAI SDK wants (it appends
// chat/completions or responses), the form an OpenAI-compatible server's
// /v1 takes; it is also a Codex model provider's base_url.
func (s *ModelServer) OpenAIBaseURL() string { return s.srv.URL + "/v1" }

// GeminiBaseURL is the base URL Google's genai SDK wants (it appends
// v1beta/models/...): Gemini CLI's GOOGLE_GEMINI_BASE_URL.
func (s *ModelServer) GeminiBaseURL() string { return s.srv.URL }

// ServeEmbeddings makes the server answer POST /v1/embeddings as e does
// (e records the requests and takes the script), for tests where one
// OpenAI-compatible base URL serves both the chat and the embedding model,
// as Ollama does.
func (s *ModelServer) ServeEmbeddings(e *EmbedServer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.embed = e
}

// Enqueue appends replies to the script; each request takes the next one.
func (s *ModelServer) Enqueue(replies ...ModelReply) { s.enqueue(replies...) }

// Handle sets the function that answers requests once the queue is empty.
func (s *ModelServer) Handle(f func(*ModelRequest) ModelReply) { s.handle(f) }

// Requests returns the requests received so far, in order.
func (s *ModelServer) Requests() []*ModelRequest { return s.all() }

// LastRequest returns the latest request, or nil when there was none.
func (s *ModelServer) LastRequest() *ModelRequest { return s.last() }

// Close stops the server, first releasing replies held back by Delay.
func (s *ModelServer) Close() {
	s.once.Do(func() { close(s.closing) })
	s.srv.Close()
}

// wireFormat is what differs between the two APIs.
type wireFormat interface {
	decode(body []byte, into *ModelRequest) error
	writeError(w http.ResponseWriter, status int, message string)
	writeReply(w http.ResponseWriter, req *ModelRequest, r ModelReply, seq int)
	writeStream(w http.ResponseWriter, req *ModelRequest, r ModelReply, seq int)
}

func (s *ModelServer) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	embed := s.embed
	s.mu.Unlock()
	if embed != nil && r.URL.Path == "/v1/embeddings" {
		embed.serve(w, r)
		return
	}
	body, _ := io.ReadAll(r.Body)
	req := &ModelRequest{Method: r.Method, Path: r.URL.Path, RawQuery: r.URL.RawQuery, Header: r.Header.Clone(), Body: body}
	var wf wireFormat
	if r.Method == http.MethodPost {
		switch model, method, isGemini := geminiPath(r.URL.Path); {
		case r.URL.Path == "/v1/messages":
			req.API, wf = "anthropic", anthropicWire{}
		case r.URL.Path == "/v1/chat/completions":
			req.API, wf = "openai", openaiWire{}
		case r.URL.Path == "/v1/responses":
			req.API, wf = "responses", responsesWire{}
		case isGemini:
			// The path, not the body, names the model and asks for a stream.
			req.API, wf = "gemini", geminiWire{}
			req.Model, req.Stream = model, method == "streamGenerateContent"
		}
	}

	seq := s.record(req)

	if wf == nil {
		http.Error(w, fmt.Sprintf("memdirtest: no route for %s %s", r.Method, r.URL.Path), http.StatusNotFound)
		return
	}
	if err := wf.decode(body, req); err != nil {
		s.reportf("memdirtest: request %d to %s is malformed: %v", seq, r.URL.Path, err)
		wf.writeError(w, http.StatusBadRequest, "malformed request: "+err.Error())
		return
	}
	reply, ok := s.take(req)
	if !ok {
		s.reportf("memdirtest: no reply scripted for request %d (%s %s)", seq, req.API, req.Path)
		wf.writeError(w, http.StatusInternalServerError, "memdirtest: no reply scripted")
		return
	}
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
	for k, vs := range reply.Header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	switch {
	case reply.Body != "":
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(cmp.Or(reply.Status, http.StatusOK))
		io.WriteString(w, reply.Body)
	case reply.Status >= 400 && !(reply.MidStream && req.Stream):
		wf.writeError(w, reply.Status, reply.Message)
	case req.Stream:
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Cache-Control", "no-cache")
		wf.writeStream(w, req, reply, seq)
	default:
		w.Header().Set("Content-Type", "application/json")
		wf.writeReply(w, req, reply, seq)
	}
}

func (s *ModelServer) reportf(format string, args ...any) {
	if s.report != nil {
		s.report(format, args...)
	}
}

// stopReason fills in the default stop reason of a reply.
func (r ModelReply) stopReason() llm.StopReason {
	if r.StopReason != "" {
		return r.StopReason
	}
	for _, b := range r.Content {
		if b.Type == llm.BlockToolUse {
			return llm.StopToolUse
		}
	}
	return llm.StopEndTurn
}

func (r ModelReply) model(req *ModelRequest) string {
	if r.Model != "" {
		return r.Model
	}
	return req.Model
}

// input returns a tool call's arguments, {} when the script left them empty.
func input(b llm.Block) json.RawMessage {
	if len(bytes.TrimSpace(b.Input)) == 0 {
		return json.RawMessage(`{}`)
	}
	return b.Input
}

// pieces cuts s into parts of at most n bytes on rune boundaries, so that a
// streamed reply arrives in several deltas the client has to join.
func pieces(s string, n int) []string {
	var out []string
	for len(s) > n {
		cut := n
		for cut > 0 && !isRuneStart(s[cut]) {
			cut--
		}
		if cut == 0 {
			cut = n
		}
		out = append(out, s[:cut])
		s = s[cut:]
	}
	if s != "" {
		out = append(out, s)
	}
	return out
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

// writeJSON encodes v, which never fails for the maps and structs used here.
func writeJSON(w io.Writer, v any) {
	b, _ := json.Marshal(v)
	w.Write(b)
}

// writeEvent writes one server-sent event; name may be empty.
func writeEvent(w http.ResponseWriter, name string, data any) {
	if name != "" {
		fmt.Fprintf(w, "event: %s\n", name)
	}
	io.WriteString(w, "data: ")
	if s, ok := data.(string); ok {
		io.WriteString(w, s)
	} else {
		writeJSON(w, data)
	}
	io.WriteString(w, "\n\n")
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

// textOf decodes message content that is either a string or a list of
// {"type":"text","text":...} parts, which both APIs accept.
func textOf(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	if raw[0] == '"' {
		var s string
		err := json.Unmarshal(raw, &s)
		return s, err
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", err
	}
	var b bytes.Buffer
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String(), nil
}
