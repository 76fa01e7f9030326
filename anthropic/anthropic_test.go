package anthropic_test

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
	"github.com/memdir/memdir/anthropic"
	"github.com/memdir/memdir/llm"
	"github.com/memdir/memdir/memdirtest"
)

const model = "claude-test-1"

// newClient returns a client of srv with fast retries; edit adjusts options.
func newClient(tb testing.TB, srv *memdirtest.ModelServer, edit func(*anthropic.Options)) *anthropic.Client {
	tb.Helper()
	opts := &anthropic.Options{Model: model, APIKey: "test-key", BaseURL: srv.AnthropicBaseURL(), MaxRetries: -1}
	if edit != nil {
		edit(opts)
	}
	c, err := anthropic.New(opts)
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

func userText(s string) []llm.Message {
	return []llm.Message{{Role: llm.RoleUser, Content: []llm.Block{llm.TextBlock(s)}}}
}

// modelError asserts that err is a *llm.ModelError of kind and returns it.
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

func TestGenerateText(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run(map[bool]string{false: "plain", true: "stream"}[stream], func(t *testing.T) {
			srv := memdirtest.NewModelServer(t)
			reply := memdirtest.TextReply("Hello there — a reply long enough to arrive in several deltas.")
			reply.Usage = llm.Usage{InputTokens: 12, OutputTokens: 34, CacheReadTokens: 56, CacheWriteTokens: 78}
			srv.Enqueue(reply)
			c := newClient(t, srv, func(o *anthropic.Options) { o.Stream = stream })

			got, err := c.Generate(context.Background(), &llm.Request{System: "Be brief.", Messages: userText("Hi"), MaxTokens: 100})
			if err != nil {
				t.Fatal(err)
			}
			want := &llm.Response{
				Content:    []llm.Block{llm.TextBlock("Hello there — a reply long enough to arrive in several deltas.")},
				StopReason: llm.StopEndTurn,
				Usage:      llm.Usage{InputTokens: 12, OutputTokens: 34, CacheReadTokens: 56, CacheWriteTokens: 78, Calls: 1},
				Model:      model,
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("response (-want +got):\n%s", diff)
			}

			sent := srv.LastRequest()
			if sent.API != "anthropic" || sent.Stream != stream || sent.Model != model || sent.MaxTokens != 100 || sent.System != "Be brief." {
				t.Errorf("sent api=%q stream=%v model=%q max_tokens=%d system=%q", sent.API, sent.Stream, sent.Model, sent.MaxTokens, sent.System)
			}
			if diff := cmp.Diff(userText("Hi"), sent.Messages); diff != "" {
				t.Errorf("sent messages (-want +got):\n%s", diff)
			}
			if got := sent.Header.Get("Authorization"); got != "Bearer test-key" {
				t.Errorf("Authorization = %q, want the API key as a bearer token", got)
			}
			if sent.Header.Get("Anthropic-Version") == "" {
				t.Error("no anthropic-version header")
			}
		})
	}
}

func TestDefaultMaxTokens(t *testing.T) {
	srv := memdirtest.NewModelServer(t)
	srv.Enqueue(memdirtest.TextReply("ok"), memdirtest.TextReply("ok"))
	c := newClient(t, srv, nil)
	if _, err := c.Generate(context.Background(), &llm.Request{Messages: userText("x")}); err != nil {
		t.Fatal(err)
	}
	if got := srv.LastRequest().MaxTokens; got != anthropic.DefaultMaxTokens {
		t.Errorf("max_tokens = %d, want %d", got, anthropic.DefaultMaxTokens)
	}
	c = newClient(t, srv, func(o *anthropic.Options) { o.MaxTokens = 77 })
	if _, err := c.Generate(context.Background(), &llm.Request{Messages: userText("x")}); err != nil {
		t.Fatal(err)
	}
	if got := srv.LastRequest().MaxTokens; got != 77 {
		t.Errorf("max_tokens = %d, want Options.MaxTokens 77", got)
	}
}

func TestToolRoundTrip(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run(map[bool]string{false: "plain", true: "stream"}[stream], func(t *testing.T) {
			srv := memdirtest.NewModelServer(t)
			call := memdirtest.ToolCallReply("toolu_1", "memory", `{"command":"view","path":"/memories"}`)
			call.Content = append([]llm.Block{llm.TextBlock("Let me look.")}, call.Content...)
			srv.Enqueue(call, memdirtest.TextReply("Nothing stored yet."))
			c := newClient(t, srv, func(o *anthropic.Options) { o.Stream = stream })
			tools := []llm.Tool{
				{Name: "search", Description: "Search.", InputSchema: json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]}`)},
				{Name: "memory", Description: "Memory files.", InputSchema: json.RawMessage(`{"type":"object","properties":{"command":{"type":"string"},"path":{"type":"string"}}}`)},
			}
			req := &llm.Request{System: "sys", Messages: userText("What do you remember?"), Tools: tools}

			first, err := c.Generate(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			wantUse := llm.Block{Type: llm.BlockToolUse, ToolUseID: "toolu_1", ToolName: "memory", Input: json.RawMessage(`{"command":"view","path":"/memories"}`)}
			if diff := cmp.Diff([]llm.Block{llm.TextBlock("Let me look."), wantUse}, first.Content); diff != "" {
				t.Errorf("first reply (-want +got):\n%s", diff)
			}
			if first.StopReason != llm.StopToolUse {
				t.Errorf("stop reason = %q, want tool_use", first.StopReason)
			}

			req.Messages = append(req.Messages,
				llm.Message{Role: llm.RoleAssistant, Content: first.Content},
				llm.Message{Role: llm.RoleUser, Content: []llm.Block{
					{Type: llm.BlockToolResult, ToolUseID: "toolu_1", Text: "Directory is empty", IsError: true},
					llm.TextBlock("Go on."),
				}})
			second, err := c.Generate(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			if second.Text() != "Nothing stored yet." {
				t.Errorf("second reply = %q", second.Text())
			}
			sent := srv.LastRequest()
			if diff := cmp.Diff(req.Messages, sent.Messages); diff != "" {
				t.Errorf("sent messages (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tools, sent.Tools, cmp.Comparer(jsonEqual)); diff != "" {
				t.Errorf("sent tools (-want +got):\n%s", diff)
			}
		})
	}
}

// jsonEqual compares JSON documents by value.
func jsonEqual(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return string(a) == string(b)
	}
	return cmp.Equal(x, y)
}

// TestCacheMarkers checks that the stable prefix (system prompt, tools) is
// marked for the prompt cache, and nothing else.
func TestCacheMarkers(t *testing.T) {
	srv := memdirtest.NewModelServer(t)
	srv.Enqueue(memdirtest.TextReply("ok"))
	c := newClient(t, srv, nil)
	req := &llm.Request{
		System:   "A long, stable system prompt.",
		Messages: userText("q"),
		Tools: []llm.Tool{
			{Name: "a", InputSchema: json.RawMessage(`{"type":"object"}`)},
			{Name: "b", InputSchema: json.RawMessage(`{"type":"object"}`)},
		},
	}
	if _, err := c.Generate(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	var body struct {
		System []struct {
			Text         string          `json:"text"`
			CacheControl json.RawMessage `json:"cache_control"`
		} `json:"system"`
		Tools []struct {
			Name         string          `json:"name"`
			CacheControl json.RawMessage `json:"cache_control"`
		} `json:"tools"`
		Messages []struct {
			Content []struct {
				CacheControl json.RawMessage `json:"cache_control"`
			} `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(srv.LastRequest().Body, &body); err != nil {
		t.Fatal(err)
	}
	type marks struct{ System, FirstTool, LastTool, Message string }
	got := marks{string(body.System[0].CacheControl), string(body.Tools[0].CacheControl), string(body.Tools[1].CacheControl), string(body.Messages[0].Content[0].CacheControl)}
	want := marks{System: `{"type":"ephemeral"}`, LastTool: `{"type":"ephemeral"}`}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("cache_control markers (-want +got):\n%s", diff)
	}
}

var selectSchema = json.RawMessage(`{"type":"object","properties":{"selected_memories":{"type":"array","items":{"type":"string"}}},"required":["selected_memories"],"additionalProperties":false}`)

func TestStructuredOutputFormat(t *testing.T) {
	srv := memdirtest.NewModelServer(t)
	srv.Enqueue(memdirtest.TextReply("Here you are:\n```json\n{\"selected_memories\": [\"a.md\"]}\n```"))
	c := newClient(t, srv, nil)
	got, err := c.Generate(context.Background(), &llm.Request{Messages: userText("pick"), Schema: selectSchema, SchemaName: "selection"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(`{"selected_memories": ["a.md"]}`, got.Text()); diff != "" {
		t.Errorf("reply text (-want +got):\n%s", diff)
	}
	sent := srv.LastRequest()
	if !jsonEqual(selectSchema, sent.Schema) {
		t.Errorf("output_config.format.schema = %s, want %s", sent.Schema, selectSchema)
	}
	if len(sent.Tools) != 0 || sent.ToolChoice != "" {
		t.Errorf("sent tools %v and tool_choice %q, want neither with output_config", sent.Tools, sent.ToolChoice)
	}
	var body struct {
		OutputConfig struct {
			Format struct {
				Type string `json:"type"`
			} `json:"format"`
		} `json:"output_config"`
	}
	json.Unmarshal(sent.Body, &body)
	if body.OutputConfig.Format.Type != "json_schema" {
		t.Errorf("output_config.format.type = %q, want json_schema", body.OutputConfig.Format.Type)
	}
}

func TestStructuredForcedTool(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run(map[bool]string{false: "plain", true: "stream"}[stream], func(t *testing.T) {
			srv := memdirtest.NewModelServer(t)
			reply := memdirtest.ToolCallReply("toolu_9", "selection", `{"selected_memories":["b.md","c.md"]}`)
			reply.Content = append([]llm.Block{llm.TextBlock("Calling the tool {as asked}.")}, reply.Content...)
			srv.Enqueue(reply)
			c := newClient(t, srv, func(o *anthropic.Options) { o.ForcedToolSchema = true; o.Stream = stream })
			got, err := c.Generate(context.Background(), &llm.Request{Messages: userText("pick"), Schema: selectSchema, SchemaName: "selection"})
			if err != nil {
				t.Fatal(err)
			}
			want := &llm.Response{Content: []llm.Block{llm.TextBlock(`{"selected_memories":["b.md","c.md"]}`)}, StopReason: llm.StopEndTurn, Usage: llm.Usage{Calls: 1}, Model: model}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("response (-want +got):\n%s", diff)
			}
			sent := srv.LastRequest()
			if sent.ToolChoice != "selection" || len(sent.Schema) != 0 {
				t.Errorf("tool_choice = %q, output schema = %s; want the forced tool and no output_config", sent.ToolChoice, sent.Schema)
			}
			if len(sent.Tools) != 1 || sent.Tools[0].Name != "selection" || !jsonEqual(selectSchema, sent.Tools[0].InputSchema) {
				t.Errorf("sent tools = %+v, want one tool whose input schema is the schema", sent.Tools)
			}
		})
	}
}

// TestStructuredFallback checks that a server rejecting output_config is asked
// again with a forced tool, and that the client remembers.
func TestStructuredFallback(t *testing.T) {
	srv := memdirtest.NewModelServer(t)
	srv.Enqueue(
		memdirtest.ErrorReply(400, "output_config: Extra inputs are not permitted"),
		memdirtest.ToolCallReply("t1", "structured_output", `{"selected_memories":[]}`),
		memdirtest.ToolCallReply("t2", "structured_output", `{"selected_memories":["x.md"]}`),
	)
	c := newClient(t, srv, nil)
	for i, want := range []string{`{"selected_memories":[]}`, `{"selected_memories":["x.md"]}`} {
		got, err := c.Generate(context.Background(), &llm.Request{Messages: userText("pick"), Schema: selectSchema})
		if err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
		if got.Text() != want {
			t.Errorf("call %d: text = %q, want %q", i, got.Text(), want)
		}
	}
	var shape []string
	for _, r := range srv.Requests() {
		shape = append(shape, map[bool]string{true: "output_config", false: "tool:" + r.ToolChoice}[len(r.Schema) > 0])
	}
	if diff := cmp.Diff([]string{"output_config", "tool:structured_output", "tool:structured_output"}, shape); diff != "" {
		t.Errorf("request shapes (-want +got):\n%s", diff)
	}
}

func TestBadResponses(t *testing.T) {
	tests := []struct {
		name     string
		reply    memdirtest.ModelReply
		schema   bool
		contains string
	}{
		{"malformed JSON for a schema", memdirtest.TextReply(`{"selected_memories": ["a.md",`), true, "cut off"},
		{"prose for a schema", memdirtest.TextReply("I cannot help with that."), true, `"I cannot help with that."`},
		{"truncated at max tokens", memdirtest.ModelReply{Content: []llm.Block{llm.TextBlock(`{"selected`)}, StopReason: llm.StopMaxTokens}, true, "max tokens"},
		{"body is not JSON", memdirtest.ModelReply{Body: "<html>oops</html>"}, false, "could not be read"},
		{"JSON that is not a message", memdirtest.ModelReply{Body: `{"status":"ok"}`}, false, "not a message"},
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
		{"401 names the key variable", []memdirtest.ModelReply{memdirtest.ErrorReply(401, "invalid x-api-key")}, 2, false, "auth", 401, 1,
			[]string{"ANTHROPIC_API_KEY", "invalid x-api-key"}},
		{"401 without a key", []memdirtest.ModelReply{memdirtest.ErrorReply(401, "x-api-key header is required")}, 2, true, "auth", 401, 1,
			[]string{"no API key was given", "ANTHROPIC_API_KEY"}},
		{"403", []memdirtest.ModelReply{memdirtest.ErrorReply(403, "not allowed")}, 2, false, "auth", 403, 1, nil},
		{"404 names model and base URL", []memdirtest.ModelReply{memdirtest.ErrorReply(404, "model: claude-test-1")}, 2, false, "not_found", 404, 1,
			[]string{`"claude-test-1"`, "127.0.0.1"}},
		{"400", []memdirtest.ModelReply{memdirtest.ErrorReply(400, "messages: at least one message is required")}, 2, false, "bad_request", 400, 1,
			[]string{"at least one message"}},
		{"persistent 500 fails after all tries", slices.Repeat([]memdirtest.ModelReply{memdirtest.ModelReply{Status: 500, Message: "boom", RetryAfter: time.Millisecond}}, 3), 2, false, "server", 500, 3,
			[]string{"after 3 tries", "boom"}},
		{"529 overloaded", slices.Repeat([]memdirtest.ModelReply{memdirtest.ModelReply{Status: 529, Message: "Overloaded", RetryAfter: time.Millisecond}}, 2), 1, false, "server", 529, 2, nil},
		{"persistent 429", slices.Repeat([]memdirtest.ModelReply{memdirtest.ModelReply{Status: 429, Message: "slow down", RetryAfter: time.Millisecond}}, 2), 1, false, "rate_limit", 429, 2, []string{"slow down"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := memdirtest.NewModelServer(t)
			srv.Enqueue(tt.replies...)
			c := newClient(t, srv, func(o *anthropic.Options) {
				o.MaxRetries = tt.retries
				if tt.noKey {
					o.APIKey = ""
				}
			})
			_, err := c.Generate(context.Background(), &llm.Request{Messages: userText("q")})
			me := modelError(t, err, tt.kind)
			if me.StatusCode != tt.status || me.Provider != "anthropic" || me.Model != model {
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

func TestRetryThenSuccess(t *testing.T) {
	tests := []struct {
		name  string
		first memdirtest.ModelReply
	}{
		{"429 with Retry-After-Ms", memdirtest.ModelReply{Status: 429, Message: "rate limited", RetryAfter: time.Millisecond}},
		{"500 with the SDK's own backoff", memdirtest.ErrorReply(500, "transient")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := memdirtest.NewModelServer(t)
			srv.Enqueue(tt.first, memdirtest.TextReply("fine now"))
			c := newClient(t, srv, func(o *anthropic.Options) { o.MaxRetries = 2 })
			got, err := c.Generate(context.Background(), &llm.Request{Messages: userText("q")})
			if err != nil {
				t.Fatal(err)
			}
			if got.Text() != "fine now" || got.Usage.Calls != 1 {
				t.Errorf("reply %q with %d calls", got.Text(), got.Usage.Calls)
			}
			reqs := srv.Requests()
			if len(reqs) != 2 {
				t.Fatalf("server got %d requests, want 2", len(reqs))
			}
			if got := reqs[1].Header.Get("X-Stainless-Retry-Count"); got != "1" {
				t.Errorf("second request retry count = %q, want 1", got)
			}
		})
	}
}

func TestTimeout(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run(map[bool]string{false: "plain", true: "stream"}[stream], func(t *testing.T) {
			srv := memdirtest.NewModelServer(t)
			slow := memdirtest.TextReply("late")
			slow.Delay = time.Minute
			srv.Enqueue(slow)
			c := newClient(t, srv, func(o *anthropic.Options) { o.Timeout = 50 * time.Millisecond; o.Stream = stream })
			_, err := c.Generate(context.Background(), &llm.Request{Messages: userText("q")})
			modelError(t, err, "timeout")
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("error %v does not wrap context.DeadlineExceeded", err)
			}
		})
	}
}

// TestCallerCancel checks that the caller's own deadline is reported as such,
// not as a provider failure.
func TestCallerCancel(t *testing.T) {
	srv := memdirtest.NewModelServer(t)
	slow := memdirtest.TextReply("late")
	slow.Delay = time.Minute
	srv.Enqueue(slow)
	c := newClient(t, srv, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := c.Generate(ctx, &llm.Request{Messages: userText("q")})
	var me *llm.ModelError
	if errors.As(err, &me) || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("error = %v, want the context's deadline error and no ModelError", err)
	}
}

func TestUnreachable(t *testing.T) {
	srv := memdirtest.NewModelServer(t)
	base := srv.AnthropicBaseURL()
	srv.Close()
	c, err := anthropic.New(&anthropic.Options{Model: model, BaseURL: base, MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Generate(context.Background(), &llm.Request{Messages: userText("q")})
	me := modelError(t, err, "unreachable")
	if !strings.Contains(me.Error(), base) {
		t.Errorf("error %q does not name the base URL", me)
	}
}

// TestIgnoresEnvironment checks that the client never picks up a key or base
// URL from the process environment: the command resolves configuration.
func TestIgnoresEnvironment(t *testing.T) {
	t.Setenv("ANTHROPIC_API_KEY", "env-key")
	t.Setenv("ANTHROPIC_AUTH_TOKEN", "env-token")
	t.Setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:1")
	srv := memdirtest.NewModelServer(t)
	srv.Enqueue(memdirtest.TextReply("ok"))
	c := newClient(t, srv, func(o *anthropic.Options) { o.APIKey = "" })
	if _, err := c.Generate(context.Background(), &llm.Request{Messages: userText("q")}); err != nil {
		t.Fatal(err)
	}
	h := srv.LastRequest().Header
	if h.Get("Authorization") != "" || h.Get("X-Api-Key") != "" {
		t.Errorf("credentials from the environment were sent: %v", h)
	}
}

func TestAuthToken(t *testing.T) {
	srv := memdirtest.NewModelServer(t)
	srv.Enqueue(memdirtest.TextReply("ok"))
	c := newClient(t, srv, func(o *anthropic.Options) { o.APIKey = ""; o.AuthToken = "tok" })
	if _, err := c.Generate(context.Background(), &llm.Request{Messages: userText("q")}); err != nil {
		t.Fatal(err)
	}
	if got := srv.LastRequest().Header.Get("Authorization"); got != "Bearer tok" {
		t.Errorf("Authorization = %q", got)
	}
}

func TestInvalidInput(t *testing.T) {
	if _, err := anthropic.New(nil); !errors.Is(err, memdir.ErrInvalid) {
		t.Errorf("New(nil) error = %v, want ErrInvalid", err)
	}
	srv := memdirtest.NewModelServer(t)
	c := newClient(t, srv, nil)
	for name, req := range map[string]*llm.Request{
		"schema not an object": {Messages: userText("q"), Schema: json.RawMessage(`[1]`)},
		"bad tool input":       {Messages: []llm.Message{{Role: llm.RoleAssistant, Content: []llm.Block{{Type: llm.BlockToolUse, ToolUseID: "x", ToolName: "t", Input: json.RawMessage(`{`)}}}}},
		"bad role":             {Messages: []llm.Message{{Role: "system", Content: []llm.Block{llm.TextBlock("x")}}}},
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
	c := newClient(t, srv, func(o *anthropic.Options) { o.MaxRetries = 1; o.Logger = logger })
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
			c := newClient(b, srv, func(o *anthropic.Options) { o.Stream = stream })
			req := &llm.Request{System: strings.Repeat("Pick the memories relevant to the query. ", 50), Messages: userText("how do we release?"), Schema: selectSchema}
			for b.Loop() {
				if _, err := c.Generate(context.Background(), req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
