package memdirtest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/llm"
)

// ModelConfig is what the model conformance suite sets on the adapter under
// test: the settings every adapter's Options has in some form. The factory
// given to [TestModel] copies them into its own Options.
type ModelConfig struct {
	// Model is the model name to ask for.
	Model string
	// APIKey is the key to send; empty means send none.
	APIKey string
	// MaxRetries is how many times a failed attempt is retried, as in the
	// adapters' Options: negative means none. The suite always sets it.
	MaxRetries int
	// Timeout limits one attempt; zero means the adapter's default.
	Timeout time.Duration
}

// NewModelFunc returns the llm.Model under test, configured with cfg and
// pointed at srv (its AnthropicBaseURL or OpenAIBaseURL, whichever the
// adapter speaks). srv may already be closed: that is how the suite tests an
// unreachable server.
type NewModelFunc func(tb testing.TB, srv *ModelServer, cfg ModelConfig) llm.Model

// Settings the model suite passes in ModelConfig.
const (
	conformModel = "conformance-model-1"
	conformKey   = "conformance-key"
)

// TestModel runs the conformance suite for an llm.Model adapter: what every
// caller (recall's selector, the agents, session memory) relies on whichever
// provider answers. Each check starts its own [ModelServer] and asks
// newModel for a fresh model. An adapter with several ways of calling (plain
// and streaming, structured output or its fallback) runs the suite once per
// way, with a factory for each.
func TestModel(t *testing.T, newModel NewModelFunc) {
	tests := []struct {
		name string
		fn   func(t *testing.T, h *modelHarness)
	}{
		{"Text", testModelText},
		{"WithoutKey", testModelWithoutKey},
		{"DefaultMaxTokens", testModelDefaultMaxTokens},
		{"ToolRoundTrip", testModelToolRoundTrip},
		{"ParallelToolCalls", testModelParallelTools},
		{"ToolResultError", testModelToolResultError},
		{"Structured", testModelStructured},
		{"StructuredRejected", testModelStructuredRejected},
		{"StructuredWithoutJSON", testModelStructuredWithoutJSON},
		{"StopReasons", testModelStopReasons},
		{"RetryThenSuccess", testModelRetryThenSuccess},
		{"Failures", testModelFailures},
		{"Timeout", testModelTimeout},
		{"Unreachable", testModelUnreachable},
		{"Cancel", testModelCancel},
		{"CancelWhileWaitingToRetry", testModelCancelInBackoff},
		{"CallerDeadline", testModelCallerDeadline},
		{"InvalidRequest", testModelInvalidRequest},
		{"Concurrent", testModelConcurrent},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.fn(t, &modelHarness{srv: NewModelServer(t), newModel: newModel})
		})
	}
}

// modelHarness is one check's server and the way to get models of it.
type modelHarness struct {
	srv      *ModelServer
	newModel NewModelFunc
}

// model returns a model of h.srv with the suite's defaults (a key, no
// retries), adjusted by edit.
func (h *modelHarness) model(tb testing.TB, edit func(*ModelConfig)) llm.Model {
	tb.Helper()
	cfg := ModelConfig{Model: conformModel, APIKey: conformKey, MaxRetries: -1}
	if edit != nil {
		edit(&cfg)
	}
	m := h.newModel(tb, h.srv, cfg)
	if m == nil {
		tb.Fatal("the model factory returned nil")
	}
	return m
}

func generate(tb testing.TB, m llm.Model, req *llm.Request) *llm.Response {
	tb.Helper()
	resp, err := m.Generate(context.Background(), req)
	if err != nil {
		tb.Fatalf("Generate: %v", err)
	}
	if resp == nil {
		tb.Fatal("Generate returned neither a response nor an error")
	}
	return resp
}

func userMessage(blocks ...llm.Block) llm.Message {
	return llm.Message{Role: llm.RoleUser, Content: blocks}
}

func assistantMessage(blocks ...llm.Block) llm.Message {
	return llm.Message{Role: llm.RoleAssistant, Content: blocks}
}

// jsonEqual compares JSON documents by value, and anything else as bytes.
func jsonEqual(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return string(a) == string(b)
	}
	return cmp.Equal(x, y)
}

// jsonValues compares the JSON fields of the llm types by value, as the
// adapters and the fake may re-encode them.
var jsonValues = cmp.Comparer(jsonEqual)

func testModelText(t *testing.T, h *modelHarness) {
	const text = "Hello there — a reply long enough to arrive in several deltas when streamed."
	reply := TextReply(text)
	reply.Usage = llm.Usage{InputTokens: 12, OutputTokens: 34, CacheReadTokens: 56, CacheWriteTokens: 7}
	reply.Model = conformModel + "-20250101" // the dated name a provider reports
	h.srv.Enqueue(reply)
	req := &llm.Request{
		System: "Be brief.",
		Messages: []llm.Message{
			userMessage(llm.TextBlock("Hi")),
			assistantMessage(llm.TextBlock("Hello. What can I do?")),
			userMessage(llm.TextBlock("Say hello again.")),
		},
		MaxTokens: 100,
	}
	got := generate(t, h.model(t, nil), req)
	want := &llm.Response{
		Content:    []llm.Block{llm.TextBlock(text)},
		StopReason: llm.StopEndTurn,
		Usage:      llm.Usage{InputTokens: 12, OutputTokens: 34, CacheReadTokens: 56, CacheWriteTokens: 7, Calls: 1},
		Model:      conformModel + "-20250101",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("response (-want +got):\n%s", diff)
	}
	sent := h.srv.LastRequest()
	type call struct {
		Model, System string
		MaxTokens     int
		Messages      []llm.Message
	}
	if diff := cmp.Diff(call{conformModel, req.System, 100, req.Messages}, call{sent.Model, sent.System, sent.MaxTokens, sent.Messages}); diff != "" {
		t.Errorf("request sent (-want +got):\n%s", diff)
	}
	if !strings.Contains(sent.Header.Get("Authorization")+sent.Header.Get("X-Api-Key"), conformKey) {
		t.Errorf("the API key was not sent: headers %v", sent.Header)
	}
}

// testModelWithoutKey checks that a model given no key, as for a local
// server or a gateway that adds its own, sends no credentials and works.
func testModelWithoutKey(t *testing.T, h *modelHarness) {
	h.srv.Enqueue(TextReply("ok"))
	generate(t, h.model(t, func(c *ModelConfig) { c.APIKey = "" }), &llm.Request{Messages: []llm.Message{userMessage(llm.TextBlock("x"))}})
	if hdr := h.srv.LastRequest().Header; hdr.Get("Authorization") != "" || hdr.Get("X-Api-Key") != "" {
		t.Errorf("credentials sent without a key: %v", hdr)
	}
}

func testModelDefaultMaxTokens(t *testing.T, h *modelHarness) {
	h.srv.Enqueue(TextReply("ok"))
	generate(t, h.model(t, nil), &llm.Request{Messages: []llm.Message{userMessage(llm.TextBlock("x"))}})
	if got := h.srv.LastRequest().MaxTokens; got <= 0 {
		t.Errorf("a request without MaxTokens was sent with max tokens %d, want the adapter's default", got)
	}
}

// conformTools are the tools of the suite's tool calls.
var conformTools = []llm.Tool{
	{Name: "search", Description: "Search the notes.", InputSchema: json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]}`)},
	{Name: "memory", Description: "Read memory files.", InputSchema: json.RawMessage(`{"type":"object","properties":{"command":{"type":"string"},"path":{"type":"string"}}}`)},
}

func toolUse(id, name, input string) llm.Block {
	return llm.Block{Type: llm.BlockToolUse, ToolUseID: id, ToolName: name, Input: json.RawMessage(input)}
}

func toolResult(id, text string) llm.Block {
	return llm.Block{Type: llm.BlockToolResult, ToolUseID: id, Text: text}
}

func testModelToolRoundTrip(t *testing.T, h *modelHarness) {
	use := toolUse("toolu_1", "memory", `{"command":"view","path":"/memories/a-long-enough-name.md"}`)
	h.srv.Enqueue(ModelReply{Content: []llm.Block{llm.TextBlock("Let me look."), use}, Usage: llm.Usage{InputTokens: 5, OutputTokens: 6}},
		TextReply("Nothing stored yet."))
	m := h.model(t, nil)
	req := &llm.Request{System: "sys", Messages: []llm.Message{userMessage(llm.TextBlock("What do you remember?"))}, Tools: conformTools}

	first := generate(t, m, req)
	want := &llm.Response{
		Content:    []llm.Block{llm.TextBlock("Let me look."), use},
		StopReason: llm.StopToolUse,
		Usage:      llm.Usage{InputTokens: 5, OutputTokens: 6, Calls: 1},
		Model:      conformModel,
	}
	if diff := cmp.Diff(want, first, jsonValues); diff != "" {
		t.Errorf("reply calling a tool (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(conformTools, h.srv.LastRequest().Tools, jsonValues); diff != "" {
		t.Errorf("tools sent (-want +got):\n%s", diff)
	}

	req.Messages = append(req.Messages,
		assistantMessage(first.Content...),
		userMessage(toolResult("toolu_1", "The directory is empty."), llm.TextBlock("Go on.")))
	second := generate(t, m, req)
	if second.Text() != "Nothing stored yet." || second.StopReason != llm.StopEndTurn {
		t.Errorf("reply after the tool result = %q (stop %q), want the scripted text", second.Text(), second.StopReason)
	}
	if diff := cmp.Diff(req.Messages, h.srv.LastRequest().Messages, jsonValues); diff != "" {
		t.Errorf("conversation sent back (-want +got):\n%s", diff)
	}
}

func testModelParallelTools(t *testing.T, h *modelHarness) {
	uses := []llm.Block{toolUse("call_a", "search", `{"q":"deploy"}`), toolUse("call_b", "search", `{"q":"release checklist"}`)}
	h.srv.Enqueue(ModelReply{Content: uses}, TextReply("Both searched."))
	m := h.model(t, nil)
	req := &llm.Request{Messages: []llm.Message{userMessage(llm.TextBlock("Search twice."))}, Tools: conformTools}
	first := generate(t, m, req)
	if diff := cmp.Diff(uses, first.ToolUses(), jsonValues); diff != "" {
		t.Errorf("tool calls (-want +got):\n%s", diff)
	}
	if first.StopReason != llm.StopToolUse {
		t.Errorf("stop reason = %q, want tool_use", first.StopReason)
	}
	req.Messages = append(req.Messages, assistantMessage(first.Content...),
		userMessage(toolResult("call_a", "one hit"), toolResult("call_b", "two hits")))
	generate(t, m, req)
	if diff := cmp.Diff(req.Messages, h.srv.LastRequest().Messages, jsonValues); diff != "" {
		t.Errorf("conversation sent back (-want +got):\n%s", diff)
	}
}

// testModelToolResultError checks that a failed tool's result reaches the
// model marked as a failure: by the provider's flag where it has one, else
// in the text.
func testModelToolResultError(t *testing.T, h *modelHarness) {
	h.srv.Enqueue(TextReply("ok"))
	failed := toolResult("toolu_1", "no such file")
	failed.IsError = true
	generate(t, h.model(t, nil), &llm.Request{Messages: []llm.Message{
		userMessage(llm.TextBlock("Read it.")),
		assistantMessage(toolUse("toolu_1", "memory", `{"command":"view","path":"/memories/x.md"}`)),
		userMessage(failed),
	}, Tools: conformTools})
	msgs := h.srv.LastRequest().Messages
	if len(msgs) != 3 || len(msgs[2].Content) != 1 {
		t.Fatalf("messages sent = %+v, want three, the last with the tool result alone", msgs)
	}
	got := msgs[2].Content[0]
	if got.Type != llm.BlockToolResult || got.ToolUseID != "toolu_1" || !strings.Contains(got.Text, "no such file") {
		t.Errorf("tool result sent = %+v, want the result of toolu_1", got)
	}
	if !got.IsError && !strings.HasPrefix(got.Text, "Error") {
		t.Errorf("tool result sent = %+v: neither flagged nor worded as an error", got)
	}
}

func testModelInvalidRequest(t *testing.T, h *modelHarness) {
	m := h.model(t, nil)
	user := userMessage(llm.TextBlock("q"))
	tests := []struct {
		name string
		req  *llm.Request
	}{
		{"schema not an object", &llm.Request{Messages: []llm.Message{user}, Schema: json.RawMessage(`[1]`)}},
		{"tool schema not an object", &llm.Request{Messages: []llm.Message{user}, Tools: []llm.Tool{{Name: "t", InputSchema: json.RawMessage(`"x"`)}}}},
		{"tool input not JSON", &llm.Request{Messages: []llm.Message{user, assistantMessage(toolUse("x", "t", `{`))}}},
		{"unknown role", &llm.Request{Messages: []llm.Message{{Role: "system", Content: []llm.Block{llm.TextBlock("x")}}}}},
	}
	for _, tt := range tests {
		if _, err := m.Generate(context.Background(), tt.req); !errors.Is(err, memdir.ErrInvalid) {
			t.Errorf("%s: error = %v, want one wrapping memdir.ErrInvalid", tt.name, err)
		}
	}
	if n := len(h.srv.Requests()); n != 0 {
		t.Errorf("invalid requests reached the server %d times", n)
	}
}

// testModelConcurrent checks that one model serves calls from several
// goroutines, each getting its own answer.
func testModelConcurrent(t *testing.T, h *modelHarness) {
	h.srv.Handle(func(r *ModelRequest) ModelReply {
		return TextReply("echo: " + r.Messages[len(r.Messages)-1].Content[0].Text)
	})
	m := h.model(t, nil)
	const n = 8
	got := make([]string, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			resp, err := m.Generate(context.Background(), &llm.Request{Messages: []llm.Message{userMessage(llm.TextBlock(fmt.Sprint(i)))}})
			if errs[i] = err; err == nil {
				got[i] = resp.Text()
			}
		})
	}
	wg.Wait()
	for i := range n {
		if errs[i] != nil || got[i] != fmt.Sprintf("echo: %d", i) {
			t.Errorf("call %d: %q, %v; want its own echo", i, got[i], errs[i])
		}
	}
}

// conformSchema is the schema of the suite's structured requests, and
// conformAnswer a value matching it.
var (
	conformSchema = json.RawMessage(`{"type":"object","properties":{"selected_memories":{"type":"array","items":{"type":"string"}}},"required":["selected_memories"],"additionalProperties":false}`)
	conformAnswer = `{"selected_memories":["testing.md","deploy.md"]}`
)

// structuredReply answers a structured request as a model would: with a
// remark and a call of the forced tool when the request forces one, else
// with the JSON in prose and a code fence. Either way the adapter must
// return the JSON alone.
func structuredReply(r *ModelRequest) ModelReply {
	if r.ToolChoice != "" {
		reply := ToolCallReply("toolu_answer", r.ToolChoice, conformAnswer)
		reply.Content = append([]llm.Block{llm.TextBlock("Answering with the tool {as asked}.")}, reply.Content...)
		return reply
	}
	return TextReply("Here you are:\n```json\n" + conformAnswer + "\n```\nHope this helps.")
}

// schemaConveyed says whether r carries schema in one of the ways a
// provider can be told it: as structured output, as the input schema of the
// tool it forces, or spelled out in the system prompt.
func schemaConveyed(r *ModelRequest, schema json.RawMessage) bool {
	if len(r.Schema) > 0 {
		return jsonEqual(r.Schema, schema)
	}
	for _, tool := range r.Tools {
		if tool.Name == r.ToolChoice && r.ToolChoice != "" && jsonEqual(tool.InputSchema, schema) {
			return true
		}
	}
	return strings.Contains(r.System, string(schema))
}

// checkStructured checks a reply to a structured request: the JSON value
// alone as its only content, the model's prose, fences and tool call gone.
func checkStructured(tb testing.TB, resp *llm.Response) {
	tb.Helper()
	var v any
	if err := json.Unmarshal([]byte(resp.Text()), &v); err != nil || !jsonEqual(json.RawMessage(resp.Text()), json.RawMessage(conformAnswer)) {
		tb.Errorf("reply text = %q, want the JSON value %s alone", resp.Text(), conformAnswer)
	}
	if len(resp.Content) != 1 || resp.StopReason != llm.StopEndTurn {
		tb.Errorf("reply content %+v, stop %q; want one text block and end_turn", resp.Content, resp.StopReason)
	}
}

func testModelStructured(t *testing.T, h *modelHarness) {
	h.srv.Handle(structuredReply)
	req := &llm.Request{System: "Pick the relevant memories.", Messages: []llm.Message{userMessage(llm.TextBlock("how do we ship?"))},
		Schema: conformSchema, SchemaName: "selection"}
	resp := generate(t, h.model(t, nil), req)
	checkStructured(t, resp)
	if resp.Usage.Calls != 1 {
		t.Errorf("usage calls = %d, want 1", resp.Usage.Calls)
	}
	if sent := h.srv.LastRequest(); !schemaConveyed(sent, conformSchema) {
		t.Errorf("the schema did not reach the server: %s", sent.Body)
	}
}

// testModelStructuredRejected checks that a server refusing the provider's
// structured output (a local server, an older gateway) still gets the
// schema another way, and that later calls go straight to that way.
func testModelStructuredRejected(t *testing.T, h *modelHarness) {
	h.srv.Handle(func(r *ModelRequest) ModelReply {
		if len(r.Schema) > 0 {
			return ErrorReply(400, "structured output is not supported by this server")
		}
		return structuredReply(r)
	})
	m := h.model(t, nil)
	req := &llm.Request{Messages: []llm.Message{userMessage(llm.TextBlock("pick"))}, Schema: conformSchema}
	checkStructured(t, generate(t, m, req))
	if sent := h.srv.LastRequest(); !schemaConveyed(sent, conformSchema) {
		t.Errorf("the schema did not reach the server after the rejection: %s", sent.Body)
	}
	before := len(h.srv.Requests())
	checkStructured(t, generate(t, m, req))
	if n := len(h.srv.Requests()) - before; n != 1 {
		t.Errorf("the call after a rejection made %d requests, want 1", n)
	}
}

func testModelStructuredWithoutJSON(t *testing.T, h *modelHarness) {
	tests := []struct {
		name  string
		reply ModelReply
	}{
		{"prose", TextReply("I cannot help with that.")},
		{"JSON cut short", TextReply(`{"selected_memories": ["a.md",`)},
		{"cut at max tokens", ModelReply{Content: []llm.Block{llm.TextBlock(`{"selected`)}, StopReason: llm.StopMaxTokens}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h.srv.Enqueue(tt.reply)
			_, err := h.model(t, nil).Generate(context.Background(), &llm.Request{Messages: []llm.Message{userMessage(llm.TextBlock("pick"))}, Schema: conformSchema})
			wantModelError(t, err, llm.ModelBadResponse)
		})
	}
}

func testModelStopReasons(t *testing.T, h *modelHarness) {
	tests := []struct {
		name  string
		reply ModelReply
		want  llm.StopReason
	}{
		{"end of turn", TextReply("done"), llm.StopEndTurn},
		{"tool call", ToolCallReply("toolu_1", "search", `{"q":"x"}`), llm.StopToolUse},
		{"token limit", ModelReply{Content: []llm.Block{llm.TextBlock("partial")}, StopReason: llm.StopMaxTokens}, llm.StopMaxTokens},
		{"anything else", ModelReply{Content: []llm.Block{llm.TextBlock("withheld")}, StopReason: llm.StopOther}, llm.StopOther},
	}
	m := h.model(t, nil)
	for _, tt := range tests {
		h.srv.Enqueue(tt.reply)
		resp := generate(t, m, &llm.Request{Messages: []llm.Message{userMessage(llm.TextBlock("go"))}, Tools: conformTools})
		if resp.StopReason != tt.want {
			t.Errorf("%s: stop reason = %q, want %q", tt.name, resp.StopReason, tt.want)
		}
	}
}
