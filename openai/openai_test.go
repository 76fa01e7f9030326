package openai_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/llm"
	"github.com/memdir/memdir/memdirtest"
	"github.com/memdir/memdir/openai"
)

const model = "gpt-test-mini"

// newClient returns a client of srv without retries; edit adjusts options.
func newClient(tb testing.TB, srv *memdirtest.ModelServer, edit func(*openai.Options)) *openai.Client {
	tb.Helper()
	opts := &openai.Options{Model: model, APIKey: "sk-test", BaseURL: srv.OpenAIBaseURL(), MaxRetries: -1}
	if edit != nil {
		edit(opts)
	}
	c, err := openai.New(opts)
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

func userText(s string) []llm.Message {
	return []llm.Message{{Role: llm.RoleUser, Content: []llm.Block{llm.TextBlock(s)}}}
}

func modelError(tb testing.TB, err error, kind llm.ModelErrorKind) *llm.ModelError {
	tb.Helper()
	var me *llm.ModelError
	if !errors.As(err, &me) {
		tb.Fatalf("error = %v (%T), want a *llm.ModelError", err, err)
	}
	if me.Kind != kind {
		tb.Fatalf("error kind = %q, want %q (error: %v)", me.Kind, kind, err)
	}
	return me
}

func jsonEqual(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return string(a) == string(b)
	}
	return cmp.Equal(x, y)
}

var modes = []struct {
	name   string
	stream bool
}{{"plain", false}, {"stream", true}}

func TestGenerateText(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			srv := memdirtest.NewModelServer(t)
			reply := memdirtest.TextReply("Bonjour — a reply long enough to arrive in several chunks.")
			reply.Usage = llm.Usage{InputTokens: 10, OutputTokens: 20, CacheReadTokens: 30, CacheWriteTokens: 4}
			srv.Enqueue(reply)
			c := newClient(t, srv, func(o *openai.Options) { o.Stream = m.stream })

			got, err := c.Generate(context.Background(), &llm.Request{System: "Be brief.", Messages: userText("Hi"), MaxTokens: 64})
			if err != nil {
				t.Fatal(err)
			}
			want := &llm.Response{
				Content:    []llm.Block{llm.TextBlock("Bonjour — a reply long enough to arrive in several chunks.")},
				StopReason: llm.StopEndTurn,
				Usage:      llm.Usage{InputTokens: 10, OutputTokens: 20, CacheReadTokens: 30, CacheWriteTokens: 4, Calls: 1},
				Model:      model,
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("response (-want +got):\n%s", diff)
			}
			sent := srv.LastRequest()
			if sent.API != "openai" || sent.Stream != m.stream || sent.Model != model || sent.MaxTokens != 64 || sent.System != "Be brief." {
				t.Errorf("sent api=%q stream=%v model=%q max_tokens=%d system=%q", sent.API, sent.Stream, sent.Model, sent.MaxTokens, sent.System)
			}
			if diff := cmp.Diff(userText("Hi"), sent.Messages); diff != "" {
				t.Errorf("sent messages (-want +got):\n%s", diff)
			}
			if got := sent.Header.Get("Authorization"); got != "Bearer sk-test" {
				t.Errorf("Authorization = %q", got)
			}
			if m.stream && !strings.Contains(string(sent.Body), `"include_usage":true`) {
				t.Errorf("streaming request does not ask for usage: %s", sent.Body)
			}
		})
	}
}

// TestMaxTokensField checks which field caps the reply: OpenAI's current one
// for api.openai.com, the older one elsewhere, or the one configured.
func TestMaxTokensField(t *testing.T) {
	srv := memdirtest.NewModelServer(t)
	srv.Enqueue(memdirtest.TextReply("a"), memdirtest.TextReply("b"))
	for _, tt := range []struct {
		field string
		want  string
	}{{"", `"max_tokens":4096`}, {openai.MaxCompletionTokens, `"max_completion_tokens":4096`}} {
		c := newClient(t, srv, func(o *openai.Options) { o.MaxTokensField = tt.field })
		if _, err := c.Generate(context.Background(), &llm.Request{Messages: userText("x")}); err != nil {
			t.Fatal(err)
		}
		if body := string(srv.LastRequest().Body); !strings.Contains(body, tt.want) {
			t.Errorf("MaxTokensField %q: body %s lacks %s", tt.field, body, tt.want)
		}
	}
	if _, err := openai.New(&openai.Options{Model: "m", MaxTokensField: "n_predict"}); !errors.Is(err, memdir.ErrInvalid) {
		t.Errorf("unknown MaxTokensField: error = %v, want ErrInvalid", err)
	}
}

func TestNoAPIKey(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-from-env")
	t.Setenv("OPENAI_BASE_URL", "http://127.0.0.1:1/v1")
	srv := memdirtest.NewModelServer(t)
	srv.Enqueue(memdirtest.TextReply("local"))
	c := newClient(t, srv, func(o *openai.Options) { o.APIKey = "" })
	got, err := c.Generate(context.Background(), &llm.Request{Messages: userText("x")})
	if err != nil {
		t.Fatal(err)
	}
	if got.Text() != "local" {
		t.Errorf("text = %q", got.Text())
	}
	if h := srv.LastRequest().Header.Get("Authorization"); h != "" {
		t.Errorf("Authorization = %q, want none: a local server needs no key and the environment is not read", h)
	}
}

func TestToolRoundTrip(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			srv := memdirtest.NewModelServer(t)
			call := memdirtest.ToolCallReply("call_1", "memory", `{"command":"view","path":"/memories/notes-with-a-long-name.md"}`)
			second := memdirtest.ModelReply{Content: []llm.Block{
				{Type: llm.BlockToolUse, ToolUseID: "call_2", ToolName: "search", Input: json.RawMessage(`{"q":"a"}`)},
				{Type: llm.BlockToolUse, ToolUseID: "call_3", ToolName: "search", Input: json.RawMessage(`{"q":"b"}`)},
			}}
			srv.Enqueue(call, second, memdirtest.TextReply("Done."))
			c := newClient(t, srv, func(o *openai.Options) { o.Stream = m.stream })
			tools := []llm.Tool{
				{Name: "search", Description: "Search.", InputSchema: json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}}}`)},
				{Name: "memory", Description: "Memory files.", InputSchema: json.RawMessage(`{"type":"object","properties":{"command":{"type":"string"}}}`)},
			}
			req := &llm.Request{System: "sys", Messages: userText("Look around"), Tools: tools}

			first, err := c.Generate(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(call.Content, first.Content); diff != "" {
				t.Errorf("first reply (-want +got):\n%s", diff)
			}
			if first.StopReason != llm.StopToolUse {
				t.Errorf("stop reason = %q", first.StopReason)
			}
			req.Messages = append(req.Messages,
				llm.Message{Role: llm.RoleAssistant, Content: first.Content},
				llm.Message{Role: llm.RoleUser, Content: []llm.Block{{Type: llm.BlockToolResult, ToolUseID: "call_1", Text: "empty"}}})
			got2, err := c.Generate(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(second.Content, got2.Content); diff != "" {
				t.Errorf("parallel calls (-want +got):\n%s", diff)
			}
			req.Messages = append(req.Messages,
				llm.Message{Role: llm.RoleAssistant, Content: append([]llm.Block{llm.TextBlock("Searching twice.")}, got2.Content...)},
				llm.Message{Role: llm.RoleUser, Content: []llm.Block{
					{Type: llm.BlockToolResult, ToolUseID: "call_2", Text: "hit"},
					{Type: llm.BlockToolResult, ToolUseID: "call_3", Text: "no such index", IsError: true},
					llm.TextBlock("Summarise."),
				}})
			if _, err := c.Generate(context.Background(), req); err != nil {
				t.Fatal(err)
			}
			sent := srv.LastRequest()
			// The wire has no error flag: the fake sees it spelled out.
			want := append([]llm.Message(nil), req.Messages...)
			last := want[len(want)-1]
			last.Content = append([]llm.Block(nil), last.Content...)
			last.Content[1] = llm.Block{Type: llm.BlockToolResult, ToolUseID: "call_3", Text: "Error: no such index"}
			want[len(want)-1] = last
			if diff := cmp.Diff(want, sent.Messages); diff != "" {
				t.Errorf("sent messages (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tools, sent.Tools, cmp.Comparer(jsonEqual)); diff != "" {
				t.Errorf("sent tools (-want +got):\n%s", diff)
			}
		})
	}
}

// TestToolArgumentsRepaired checks that arguments a small model wrapped in
// prose still parse, and that hopeless ones reach the tool as a JSON string,
// so the tool can answer with an error the model corrects.
func TestToolArgumentsRepaired(t *testing.T) {
	srv := memdirtest.NewModelServer(t)
	srv.Enqueue(
		memdirtest.ModelReply{Body: `{"id":"x","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"Sure: {\"a\": 1}"}}]}}]}`},
		memdirtest.ModelReply{Body: `{"id":"x","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"finish_reason":"tool_calls","message":{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"not json"}}]}}]}`},
	)
	c := newClient(t, srv, nil)
	got, err := c.Generate(context.Background(), &llm.Request{Messages: userText("x")})
	if err != nil {
		t.Fatal(err)
	}
	want := []llm.Block{{Type: llm.BlockToolUse, ToolUseID: "c1", ToolName: "f", Input: json.RawMessage(`{"a": 1}`)}}
	if diff := cmp.Diff(want, got.Content); diff != "" {
		t.Errorf("content (-want +got):\n%s", diff)
	}
	if got.StopReason != llm.StopToolUse {
		t.Errorf("stop reason = %q, want tool_use even when the server said stop", got.StopReason)
	}
	got, err = c.Generate(context.Background(), &llm.Request{Messages: userText("x")})
	if err != nil {
		t.Fatal(err)
	}
	want = []llm.Block{{Type: llm.BlockToolUse, ToolUseID: "c1", ToolName: "f", Input: json.RawMessage(`"not json"`)}}
	if diff := cmp.Diff(want, got.Content); diff != "" {
		t.Errorf("hopeless arguments (-want +got):\n%s", diff)
	}
}

var selectSchema = json.RawMessage(`{"type":"object","properties":{"selected_memories":{"type":"array","items":{"type":"string"}}},"required":["selected_memories"]}`)

func TestStructuredResponseFormat(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			srv := memdirtest.NewModelServer(t)
			srv.Enqueue(memdirtest.TextReply("```json\n{\"selected_memories\": [\"a.md\", \"b.md\"]}\n```"))
			c := newClient(t, srv, func(o *openai.Options) { o.Stream = m.stream })
			got, err := c.Generate(context.Background(), &llm.Request{System: "Pick.", Messages: userText("q"), Schema: selectSchema, SchemaName: "selection"})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(`{"selected_memories": ["a.md", "b.md"]}`, got.Text()); diff != "" {
				t.Errorf("text (-want +got):\n%s", diff)
			}
			sent := srv.LastRequest()
			if !jsonEqual(selectSchema, sent.Schema) || sent.SchemaName != "selection" {
				t.Errorf("response_format schema = %s name %q", sent.Schema, sent.SchemaName)
			}
			if sent.System != "Pick." {
				t.Errorf("system = %q, want it unchanged when response_format carries the schema", sent.System)
			}
		})
	}
}

// TestStructuredWithoutResponseFormat covers servers without structured
// output: the schema goes into the system prompt and JSON is extracted.
func TestStructuredWithoutResponseFormat(t *testing.T) {
	srv := memdirtest.NewModelServer(t)
	srv.Enqueue(memdirtest.TextReply(`Based on the query, these fit: {"selected_memories": ["z.md"]} — hope this helps.`))
	c := newClient(t, srv, func(o *openai.Options) { o.NoResponseFormat = true })
	got, err := c.Generate(context.Background(), &llm.Request{System: "Pick.", Messages: userText("q"), Schema: selectSchema})
	if err != nil {
		t.Fatal(err)
	}
	if got.Text() != `{"selected_memories": ["z.md"]}` {
		t.Errorf("text = %q", got.Text())
	}
	sent := srv.LastRequest()
	if len(sent.Schema) != 0 || strings.Contains(string(sent.Body), "response_format") {
		t.Errorf("response_format was sent: %s", sent.Body)
	}
	if !strings.HasPrefix(sent.System, "Pick.\n\n") || !strings.Contains(sent.System, string(selectSchema)) {
		t.Errorf("system prompt does not carry the schema: %q", sent.System)
	}
}

func TestStructuredFallback(t *testing.T) {
	srv := memdirtest.NewModelServer(t)
	srv.Enqueue(
		memdirtest.ErrorReply(400, "response_format json_schema is not supported by this server"),
		memdirtest.TextReply(`{"selected_memories": []}`),
		memdirtest.TextReply(`{"selected_memories": ["y.md"]}`),
	)
	c := newClient(t, srv, nil)
	for i := range 2 {
		if _, err := c.Generate(context.Background(), &llm.Request{Messages: userText("q"), Schema: selectSchema}); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	var withFormat []bool
	for _, r := range srv.Requests() {
		withFormat = append(withFormat, len(r.Schema) > 0)
	}
	if diff := cmp.Diff([]bool{true, false, false}, withFormat); diff != "" {
		t.Errorf("response_format per request (-want +got):\n%s", diff)
	}
}

func TestBadResponses(t *testing.T) {
	tests := []struct {
		name     string
		reply    memdirtest.ModelReply
		schema   bool
		contains string
	}{
		{"malformed JSON for a schema", memdirtest.TextReply(`{"selected_memories": ["a.md"`), true, "cut off"},
		{"prose for a schema", memdirtest.TextReply("No memories match."), true, `"No memories match."`},
		{"body is not JSON", memdirtest.ModelReply{Body: "upstream went away"}, false, "could not be read"},
		{"no choices", memdirtest.ModelReply{Body: `{"id":"x","object":"chat.completion","created":1,"model":"m","choices":[]}`}, false, "no choices"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := memdirtest.NewModelServer(t)
			srv.Enqueue(tt.reply)
			c := newClient(t, srv, nil)
			req := &llm.Request{Messages: userText("q")}
			if tt.schema {
				req.Schema = selectSchema
			}
			_, err := c.Generate(context.Background(), req)
			me := modelError(t, err, "bad_response")
			if !strings.Contains(me.Error(), tt.contains) {
				t.Errorf("error %q does not contain %q", me, tt.contains)
			}
		})
	}
}

// TestStreamWithoutChunks checks that a streaming request answered with
// something other than an event stream is a bad response, not an empty
// reply: the SDK reads such a body as a stream with no events.
func TestStreamWithoutChunks(t *testing.T) {
	for _, body := range []string{`{"status":"ok"}`, "<html>upstream went away</html>"} {
		srv := memdirtest.NewModelServer(t)
		srv.Enqueue(memdirtest.ModelReply{Body: body})
		c := newClient(t, srv, func(o *openai.Options) { o.Stream = true })
		_, err := c.Generate(context.Background(), &llm.Request{Messages: userText("q")})
		me := modelError(t, err, "bad_response")
		if !strings.Contains(me.Error(), "no chunks") {
			t.Errorf("body %q: error %q does not say the stream had no chunks", body, me)
		}
	}
}

// TestStreamErrorChunk checks how an error sent inside a begun stream is
// classified, in the forms servers word it.
func TestStreamErrorChunk(t *testing.T) {
	tests := []struct {
		name, chunk string
		kind        llm.ModelErrorKind
		status      int
	}{
		{"OpenAI's server error", `{"error":{"message":"The server had an error","type":"server_error","param":null,"code":null}}`, "server", 500},
		{"a code that names the error", `{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}`, "rate_limit", 429},
		{"a code that is a status (vLLM)", `{"error":{"object":"error","message":"context length exceeded","type":"BadRequestError","param":null,"code":400}}`, "bad_request", 400},
		{"an unknown model as a 400", `{"error":{"message":"model 'gpt-test-mini' not found","type":"invalid_request_error","code":null}}`, "not_found", 400},
		{"a bare string", `{"error":"llama runner process has terminated"}`, "bad_response", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := memdirtest.NewModelServer(t)
			srv.Enqueue(memdirtest.ModelReply{Body: `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"Hel"}}]}` + "\n\ndata: " + tt.chunk + "\n\n"})
			c := newClient(t, srv, func(o *openai.Options) { o.Stream = true })
			_, err := c.Generate(context.Background(), &llm.Request{Messages: userText("q")})
			me := modelError(t, err, tt.kind)
			if me.StatusCode != tt.status {
				t.Errorf("status = %d, want %d", me.StatusCode, tt.status)
			}
			if msg := chunkMessage(tt.chunk); !strings.Contains(me.Error(), msg) {
				t.Errorf("error %q does not quote %q", me, msg)
			}
		})
	}
}

// chunkMessage is the message part of an error chunk.
func chunkMessage(chunk string) string {
	var v struct {
		Error json.RawMessage `json:"error"`
	}
	json.Unmarshal([]byte(chunk), &v)
	var inner struct{ Message string }
	if json.Unmarshal(v.Error, &inner) == nil {
		return inner.Message
	}
	var s string
	json.Unmarshal(v.Error, &s)
	return s
}

func TestHTTPErrors(t *testing.T) {
	tests := []struct {
		name     string
		replies  []memdirtest.ModelReply
		retries  int
		noKey    bool
		kind     llm.ModelErrorKind
		status   int
		requests int
		contains []string
	}{
		{"401 names the key variable", []memdirtest.ModelReply{memdirtest.ErrorReply(401, "Incorrect API key provided")}, 2, false, "auth", 401, 1,
			[]string{"OPENAI_API_KEY", "Incorrect API key"}},
		{"401 without a key", []memdirtest.ModelReply{memdirtest.ErrorReply(401, "You didn't provide an API key.")}, 2, true, "auth", 401, 1,
			[]string{"no API key was given", "set OPENAI_API_KEY"}},
		{"404 names model and base URL", []memdirtest.ModelReply{memdirtest.ErrorReply(404, "The model `gpt-test-mini` does not exist")}, 2, false, "not_found", 404, 1,
			[]string{`"gpt-test-mini"`, "/v1"}},
		{"Ollama's plain 404", []memdirtest.ModelReply{{Status: 404, Body: `{"error":"model \"gpt-test-mini\" not found, try pulling it first"}`}}, 2, false, "not_found", 404, 1,
			[]string{"try pulling it first"}},
		{"unknown model as 400", []memdirtest.ModelReply{memdirtest.ErrorReply(400, "model 'gpt-test-mini' not found")}, 2, false, "not_found", 400, 1, nil},
		{"other 400", []memdirtest.ModelReply{memdirtest.ErrorReply(400, "messages must not be empty")}, 2, false, "bad_request", 400, 1, nil},
		{"plain text 502", slices.Repeat([]memdirtest.ModelReply{memdirtest.ModelReply{Status: 502, Body: "Bad Gateway", RetryAfter: time.Millisecond}}, 2), 1, false, "server", 502, 2,
			[]string{"Bad Gateway"}},
		{"persistent 500 fails after all tries", slices.Repeat([]memdirtest.ModelReply{memdirtest.ModelReply{Status: 500, Message: "boom", RetryAfter: time.Millisecond}}, 3), 2, false, "server", 500, 3,
			[]string{"after 3 tries"}},
		{"persistent 429", slices.Repeat([]memdirtest.ModelReply{memdirtest.ModelReply{Status: 429, Message: "Rate limit reached", RetryAfter: time.Millisecond}}, 2), 1, false, "rate_limit", 429, 2, nil},
	}
	for _, tt := range tests {
		for _, m := range modes {
			t.Run(tt.name+"/"+m.name, func(t *testing.T) {
				srv := memdirtest.NewModelServer(t)
				srv.Enqueue(tt.replies...)
				c := newClient(t, srv, func(o *openai.Options) {
					o.MaxRetries, o.Stream = tt.retries, m.stream
					if tt.noKey {
						o.APIKey = ""
					}
				})
				_, err := c.Generate(context.Background(), &llm.Request{Messages: userText("q")})
				me := modelError(t, err, tt.kind)
				if me.StatusCode != tt.status || me.Provider != "openai" || me.Model != model {
					t.Errorf("error status=%d provider=%q model=%q", me.StatusCode, me.Provider, me.Model)
				}
				for _, s := range tt.contains {
					if !strings.Contains(me.Error(), s) {
						t.Errorf("error %q does not contain %q", me, s)
					}
				}
				if n := len(srv.Requests()); n != tt.requests {
					t.Errorf("server got %d requests, want %d", n, tt.requests)
				}
			})
		}
	}
}

func TestRetryThenSuccess(t *testing.T) {
	for _, first := range []memdirtest.ModelReply{
		memdirtest.ModelReply{Status: 429, Message: "slow down", RetryAfter: time.Millisecond},
		memdirtest.ErrorReply(503, "warming up"), // the SDK's own backoff
	} {
		t.Run(first.Message, func(t *testing.T) {
			srv := memdirtest.NewModelServer(t)
			srv.Enqueue(first, memdirtest.TextReply("ok"))
			c := newClient(t, srv, func(o *openai.Options) { o.MaxRetries = 2 })
			got, err := c.Generate(context.Background(), &llm.Request{Messages: userText("q")})
			if err != nil {
				t.Fatal(err)
			}
			if got.Text() != "ok" {
				t.Errorf("text = %q", got.Text())
			}
			if n := len(srv.Requests()); n != 2 {
				t.Errorf("server got %d requests, want 2", n)
			}
		})
	}
}

func TestTimeout(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			srv := memdirtest.NewModelServer(t)
			slow := memdirtest.TextReply("late")
			slow.Delay = time.Minute
			srv.Enqueue(slow)
			c := newClient(t, srv, func(o *openai.Options) { o.Timeout = 50 * time.Millisecond; o.Stream = m.stream })
			_, err := c.Generate(context.Background(), &llm.Request{Messages: userText("q")})
			modelError(t, err, "timeout")
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("error %v does not wrap context.DeadlineExceeded", err)
			}
		})
	}
}

func TestCallerCancel(t *testing.T) {
	srv := memdirtest.NewModelServer(t)
	slow := memdirtest.TextReply("late")
	slow.Delay = time.Minute
	srv.Enqueue(slow)
	c := newClient(t, srv, nil)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for srv.LastRequest() == nil {
			time.Sleep(time.Millisecond)
		}
		cancel()
	}()
	_, err := c.Generate(ctx, &llm.Request{Messages: userText("q")})
	var me *llm.ModelError
	if errors.As(err, &me) || !errors.Is(err, context.Canceled) {
		t.Errorf("error = %v, want context.Canceled and no ModelError", err)
	}
}

func TestUnreachable(t *testing.T) {
	srv := memdirtest.NewModelServer(t)
	base := srv.OpenAIBaseURL()
	srv.Close()
	c, err := openai.New(&openai.Options{Model: model, BaseURL: base, MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Generate(context.Background(), &llm.Request{Messages: userText("q")})
	me := modelError(t, err, "unreachable")
	if !strings.Contains(me.Error(), base) {
		t.Errorf("error %q does not name the base URL", me)
	}
}

// TestWrongBaseURL checks the mistake of leaving /v1 off a compatible
// server's URL: the 404 names the URL to fix.
func TestWrongBaseURL(t *testing.T) {
	srv := memdirtest.NewModelServer(t)
	c := newClient(t, srv, func(o *openai.Options) { o.BaseURL = srv.URL() })
	_, err := c.Generate(context.Background(), &llm.Request{Messages: userText("q")})
	me := modelError(t, err, "not_found")
	if !strings.Contains(me.Error(), srv.URL()) {
		t.Errorf("error %q does not name the base URL", me)
	}
}

func TestInvalidInput(t *testing.T) {
	for name, opts := range map[string]*openai.Options{
		"nil":          nil,
		"no model":     {BaseURL: "http://127.0.0.1/v1"},
		"bad base URL": {Model: "m", BaseURL: "localhost:11434"},
	} {
		if _, err := openai.New(opts); !errors.Is(err, memdir.ErrInvalid) {
			t.Errorf("New(%s) error = %v, want ErrInvalid", name, err)
		}
	}
	srv := memdirtest.NewModelServer(t)
	c := newClient(t, srv, nil)
	for name, req := range map[string]*llm.Request{
		"schema not an object": {Messages: userText("q"), Schema: json.RawMessage(`"x"`)},
		"tool result from the assistant": {Messages: []llm.Message{{Role: llm.RoleAssistant, Content: []llm.Block{
			{Type: llm.BlockToolResult, ToolUseID: "x", Text: "y"}}}}},
		"bad tool input": {Messages: []llm.Message{{Role: llm.RoleAssistant, Content: []llm.Block{
			{Type: llm.BlockToolUse, ToolUseID: "x", ToolName: "t", Input: json.RawMessage(`{`)}}}}},
	} {
		if _, err := c.Generate(context.Background(), req); !errors.Is(err, memdir.ErrInvalid) {
			t.Errorf("%s: error = %v, want ErrInvalid", name, err)
		}
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("invalid requests reached the server %d times", n)
	}
}

// TestLogger checks that each HTTP attempt, retries included, reaches the
// injected logger.
func TestLogger(t *testing.T) {
	srv := memdirtest.NewModelServer(t)
	srv.Enqueue(memdirtest.ModelReply{Status: 429, Message: "wait", RetryAfter: time.Millisecond}, memdirtest.TextReply("ok"))
	var buf bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	c := newClient(t, srv, func(o *openai.Options) { o.MaxRetries = 1; o.Logger = logger })
	if _, err := c.Generate(context.Background(), &llm.Request{Messages: userText("q")}); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(buf.String(), "model HTTP attempt"); n != 2 {
		t.Errorf("logged %d attempts, want 2:\n%s", n, buf.String())
	}
	for _, s := range []string{"status=429", "status=200", "retry=1"} {
		if !strings.Contains(buf.String(), s) {
			t.Errorf("log lacks %s:\n%s", s, buf.String())
		}
	}
}

// BenchmarkGenerate measures the adapter's own cost per call (request
// building, the SDK, the loopback round trip and decoding) against the fake.
func BenchmarkGenerate(b *testing.B) {
	for _, stream := range []bool{false, true} {
		b.Run(map[bool]string{false: "plain", true: "stream"}[stream], func(b *testing.B) {
			srv := memdirtest.NewModelServer(b)
			reply := memdirtest.JSONReply(map[string]any{"selected_memories": []string{"a.md", "b.md", "c.md", "d.md", "e.md"}})
			srv.Handle(func(*memdirtest.ModelRequest) memdirtest.ModelReply { return reply })
			c := newClient(b, srv, func(o *openai.Options) { o.Stream = stream })
			req := &llm.Request{System: strings.Repeat("Pick the memories relevant to the query. ", 50), Messages: userText("how do we release?"), Schema: selectSchema}
			for b.Loop() {
				if _, err := c.Generate(context.Background(), req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestToolErrorPrefixedOnce checks that an is_error tool result is marked
// once, whether or not its text already says it is an error.
func TestToolErrorPrefixedOnce(t *testing.T) {
	srv := memdirtest.NewModelServer(t)
	srv.Enqueue(memdirtest.TextReply("ok"), memdirtest.TextReply("ok"))
	c := newClient(t, srv, nil)
	for text, want := range map[string]string{
		"Error: The path /memories/x does not exist": "Error: The path /memories/x does not exist",
		"no such file": "Error: no such file",
	} {
		msgs := []llm.Message{
			{Role: llm.RoleUser, Content: []llm.Block{llm.TextBlock("go")}},
			{Role: llm.RoleAssistant, Content: []llm.Block{{Type: llm.BlockToolUse, ToolUseID: "t1", ToolName: "memory", Input: json.RawMessage(`{}`)}}},
			{Role: llm.RoleUser, Content: []llm.Block{{Type: llm.BlockToolResult, ToolUseID: "t1", Text: text, IsError: true}}},
		}
		if _, err := c.Generate(context.Background(), &llm.Request{Messages: msgs}); err != nil {
			t.Fatal(err)
		}
		sent := srv.LastRequest()
		if !strings.Contains(string(sent.Body), `"content":"`+want+`"`) {
			t.Errorf("tool result sent as %s, want content %q", sent.Body, want)
		}
	}
}
