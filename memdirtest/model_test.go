package memdirtest_test

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/memdir/memdir/llm"
	"github.com/memdir/memdir/memdirtest"
)

func post(tb testing.TB, url, body string) (*http.Response, string) {
	tb.Helper()
	res, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		tb.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		tb.Fatal(err)
	}
	return res, string(b)
}

// events returns the event names (Anthropic) or the data lines (OpenAI) of
// an SSE body.
func events(body string, names bool) []string {
	var out []string
	sc := bufio.NewScanner(strings.NewReader(body))
	for sc.Scan() {
		line := sc.Text()
		if names && strings.HasPrefix(line, "event: ") {
			out = append(out, strings.TrimPrefix(line, "event: "))
		}
		if !names && strings.HasPrefix(line, "data: ") {
			out = append(out, strings.TrimPrefix(line, "data: "))
		}
	}
	return out
}

func TestAnthropicStreamEvents(t *testing.T) {
	srv := memdirtest.NewModelServer(t)
	r := memdirtest.ToolCallReply("toolu_1", "f", `{"a":1}`)
	r.Content = append([]llm.Block{llm.TextBlock("hi")}, r.Content...)
	srv.Enqueue(r)
	res, body := post(t, srv.URL()+"/v1/messages", `{"model":"m","max_tokens":5,"stream":true,"messages":[{"role":"user","content":"x"}]}`)
	if ct := res.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Errorf("Content-Type = %q", ct)
	}
	want := []string{"message_start", "ping",
		"content_block_start", "content_block_delta", "content_block_stop",
		"content_block_start", "content_block_delta", "content_block_stop",
		"message_delta", "message_stop"}
	if diff := cmp.Diff(want, events(body, true)); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	for _, s := range []string{`"type":"text_delta"`, `"type":"input_json_delta"`, `"stop_reason":"tool_use"`} {
		if !strings.Contains(body, s) {
			t.Errorf("stream lacks %s:\n%s", s, body)
		}
	}
}

func TestOpenAIStreamChunks(t *testing.T) {
	srv := memdirtest.NewModelServer(t)
	srv.Enqueue(memdirtest.TextReply("hello"), memdirtest.TextReply("hello"))
	for _, tt := range []struct {
		usage bool
		n     int
	}{{false, 4}, {true, 5}} {
		body := `{"model":"m","stream":true,"messages":[{"role":"user","content":"x"}]}`
		if tt.usage {
			body = `{"model":"m","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"x"}]}`
		}
		_, out := post(t, srv.OpenAIBaseURL()+"/chat/completions", body)
		data := events(out, false)
		// role, "hello", finish, [usage], [DONE]
		if len(data) != tt.n || data[len(data)-1] != "[DONE]" {
			t.Errorf("include_usage=%v: got %d data lines ending %q, want %d ending [DONE]:\n%s", tt.usage, len(data), data[len(data)-1], tt.n, out)
		}
	}
}

func TestErrorFormats(t *testing.T) {
	srv := memdirtest.NewModelServer(t)
	srv.Enqueue(memdirtest.ErrorReply(429, "slow"), memdirtest.ErrorReply(429, "slow"))
	res, body := post(t, srv.URL()+"/v1/messages", `{"model":"m","max_tokens":5,"stream":true,"messages":[]}`)
	if res.StatusCode != 429 || body != `{"error":{"message":"slow","type":"rate_limit_error"},"request_id":"req_fake","type":"error"}` {
		t.Errorf("anthropic error: %d %s", res.StatusCode, body)
	}
	res, body = post(t, srv.OpenAIBaseURL()+"/chat/completions", `{"model":"m","messages":[{"role":"user","content":"x"}]}`)
	if res.StatusCode != 429 || body != `{"error":{"code":"rate_limit_exceeded","message":"slow","param":null,"type":"invalid_request_error"}}` {
		t.Errorf("openai error: %d %s", res.StatusCode, body)
	}
}

func TestHandlerAfterQueue(t *testing.T) {
	srv := memdirtest.NewModelServer(t)
	srv.Enqueue(memdirtest.TextReply("queued"))
	srv.Handle(func(r *memdirtest.ModelRequest) memdirtest.ModelReply {
		return memdirtest.JSONReply(map[string]any{"echo": r.Messages[0].Content[0].Text})
	})
	var got []string
	for _, q := range []string{"one", "two"} {
		_, body := post(t, srv.OpenAIBaseURL()+"/chat/completions", `{"model":"m","messages":[{"role":"user","content":"`+q+`"}]}`)
		var v struct {
			Choices []struct {
				Message struct{ Content string } `json:"message"`
			} `json:"choices"`
		}
		if err := json.Unmarshal([]byte(body), &v); err != nil {
			t.Fatal(err)
		}
		got = append(got, v.Choices[0].Message.Content)
	}
	if diff := cmp.Diff([]string{"queued", `{"echo":"two"}`}, got); diff != "" {
		t.Errorf("replies (-want +got):\n%s", diff)
	}
}

func TestRecordsRequests(t *testing.T) {
	srv := memdirtest.NewModelServer(t)
	srv.Enqueue(memdirtest.TextReply("a"), memdirtest.TextReply("b"))
	post(t, srv.URL()+"/v1/messages", `{"model":"m","max_tokens":9,"system":[{"type":"text","text":"S"}],
		"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":[{"type":"text","text":"R"}],"is_error":true}]}],
		"tools":[{"name":"f","input_schema":{"type":"object"}}],"tool_choice":{"type":"tool","name":"f"},
		"output_config":{"format":{"type":"json_schema","schema":{"type":"object"}}}}`)
	post(t, srv.OpenAIBaseURL()+"/chat/completions", `{"model":"m","max_completion_tokens":7,"messages":[{"role":"developer","content":"D"},
		{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]},
		{"role":"tool","tool_call_id":"c","content":"R"},{"role":"user","content":[{"type":"text","text":"U"}]}],
		"tool_choice":{"type":"function","function":{"name":"f"}},
		"response_format":{"type":"json_schema","json_schema":{"name":"n","schema":{"type":"object"}}}}`)
	type neutral struct {
		API, Model, System, ToolChoice, SchemaName, Schema string
		MaxTokens                                          int
		Messages                                           []llm.Message
	}
	var got []neutral
	for _, r := range srv.Requests() {
		got = append(got, neutral{r.API, r.Model, r.System, r.ToolChoice, r.SchemaName, string(r.Schema), r.MaxTokens, r.Messages})
	}
	want := []neutral{
		{"anthropic", "m", "S", "f", "", `{"type":"object"}`, 9, []llm.Message{{Role: llm.RoleUser, Content: []llm.Block{
			{Type: llm.BlockToolResult, ToolUseID: "t", Text: "R", IsError: true}}}}},
		{"openai", "m", "D", "f", "n", `{"type":"object"}`, 7, []llm.Message{
			{Role: llm.RoleAssistant, Content: []llm.Block{{Type: llm.BlockToolUse, ToolUseID: "c", ToolName: "f", Input: json.RawMessage(`{}`)}}},
			{Role: llm.RoleUser, Content: []llm.Block{{Type: llm.BlockToolResult, ToolUseID: "c", Text: "R"}, llm.TextBlock("U")}}}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("recorded requests (-want +got):\n%s", diff)
	}
}

func TestUnscriptedAndUnknown(t *testing.T) {
	srv := memdirtest.StartModelServer()
	defer srv.Close()
	res, _ := post(t, srv.URL()+"/v1/messages", `{"model":"m","max_tokens":1,"messages":[]}`)
	if res.StatusCode != 500 {
		t.Errorf("unscripted request: status %d, want 500", res.StatusCode)
	}
	res, _ = post(t, srv.URL()+"/chat/completions", `{}`)
	if res.StatusCode != 404 {
		t.Errorf("unknown path: status %d, want 404", res.StatusCode)
	}
	res, _ = post(t, srv.URL()+"/v1/messages", `{"model":`)
	if res.StatusCode != 400 {
		t.Errorf("malformed request: status %d, want 400", res.StatusCode)
	}
	if n := len(srv.Requests()); n != 3 {
		t.Errorf("recorded %d requests, want 3", n)
	}
}

// TestCloseReleasesDelay checks that Close does not wait out a Delay.
func TestCloseReleasesDelay(t *testing.T) {
	srv := memdirtest.StartModelServer()
	r := memdirtest.TextReply("late")
	r.Delay = time.Hour
	srv.Enqueue(r)
	done := make(chan struct{})
	go func() {
		defer close(done)
		res, err := http.Post(srv.URL()+"/v1/messages", "application/json", strings.NewReader(`{"model":"m","max_tokens":1,"messages":[]}`))
		if err == nil {
			res.Body.Close()
		}
	}()
	for srv.LastRequest() == nil {
		time.Sleep(time.Millisecond)
	}
	srv.Close() // would block for an hour if the delay held
	<-done
}

func TestRetryAfterHeader(t *testing.T) {
	srv := memdirtest.NewModelServer(t)
	srv.Enqueue(memdirtest.ModelReply{Status: 503, RetryAfter: 1500 * time.Microsecond, Header: http.Header{"X-Extra": {"yes"}}})
	res, _ := post(t, srv.OpenAIBaseURL()+"/chat/completions", `{"model":"m","messages":[{"role":"user","content":"x"}]}`)
	if got := [3]string{res.Status, res.Header.Get("Retry-After-Ms"), res.Header.Get("X-Extra")}; got != [3]string{"503 Service Unavailable", "1.5", "yes"} {
		t.Errorf("status and headers = %q", got)
	}
}

// TestMidStreamError checks that a MidStream error reaches a streaming
// request as an event after the reply has begun, and a plain one as the
// HTTP error.
func TestMidStreamError(t *testing.T) {
	srv := memdirtest.NewModelServer(t)
	srv.Handle(func(*memdirtest.ModelRequest) memdirtest.ModelReply {
		return memdirtest.ModelReply{Status: 529, Message: "Overloaded", MidStream: true}
	})
	res, body := post(t, srv.URL()+"/v1/messages", `{"model":"m","max_tokens":5,"stream":true,"messages":[{"role":"user","content":"x"}]}`)
	if diff := cmp.Diff([]string{"message_start", "ping", "error"}, events(body, true)); res.StatusCode != 200 || diff != "" {
		t.Errorf("anthropic: status %d, events (-want +got):\n%s", res.StatusCode, diff)
	}
	if !strings.Contains(body, `"error":{"message":"Overloaded","type":"overloaded_error"}`) {
		t.Errorf("anthropic error event lacks the overloaded error:\n%s", body)
	}
	res, body = post(t, srv.OpenAIBaseURL()+"/chat/completions", `{"model":"m","stream":true,"messages":[{"role":"user","content":"x"}]}`)
	data := events(body, false)
	if res.StatusCode != 200 || len(data) != 2 || !strings.HasPrefix(data[1], `{"error":{"code":null,"message":"Overloaded"`) {
		t.Errorf("openai: status %d, data lines %q; want a role chunk and the error", res.StatusCode, data)
	}
	if res, _ := post(t, srv.OpenAIBaseURL()+"/chat/completions", `{"model":"m","messages":[{"role":"user","content":"x"}]}`); res.StatusCode != 529 {
		t.Errorf("plain request: status %d, want the HTTP error 529", res.StatusCode)
	}
}

// TestOpenAIRecordsMore covers the Chat Completions forms TestRecordsRequests
// leaves out: system and developer messages joined, an assistant message
// with text and calls, tool results in a row, tools; and the requests the
// fake refuses.
func TestOpenAIRecordsMore(t *testing.T) {
	srv := memdirtest.StartModelServer() // no test to fail: malformed requests are part of it
	defer srv.Close()
	srv.Enqueue(memdirtest.TextReply("ok"))
	res, body := post(t, srv.OpenAIBaseURL()+"/chat/completions", `{"model":"m","max_tokens":11,"messages":[
		{"role":"system","content":"S"},{"role":"user","content":"U1"},{"role":"developer","content":"D"},
		{"role":"assistant","content":"let me see","tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{\"a\":1}"}},
			{"id":"c2","type":"function","function":{"name":"g","arguments":"{}"}}]},
		{"role":"tool","tool_call_id":"c1","content":"R1"},{"role":"tool","tool_call_id":"c2","content":[{"type":"text","text":"R2"}]},
		{"role":"assistant","content":"done"},{"role":"user","content":"U2"}],
		"tools":[{"type":"function","function":{"name":"f","description":"F","parameters":{"type":"object"}}},{"type":"function","function":{"name":"g"}}],
		"tool_choice":"auto","response_format":{"type":"json_object"}}`)
	if res.StatusCode != 200 {
		t.Fatalf("status %d: %s", res.StatusCode, body)
	}
	r := srv.LastRequest()
	wantMessages := []llm.Message{
		{Role: llm.RoleUser, Content: []llm.Block{llm.TextBlock("U1")}},
		{Role: llm.RoleAssistant, Content: []llm.Block{llm.TextBlock("let me see"),
			{Type: llm.BlockToolUse, ToolUseID: "c1", ToolName: "f", Input: json.RawMessage(`{"a":1}`)},
			{Type: llm.BlockToolUse, ToolUseID: "c2", ToolName: "g", Input: json.RawMessage(`{}`)}}},
		{Role: llm.RoleUser, Content: []llm.Block{{Type: llm.BlockToolResult, ToolUseID: "c1", Text: "R1"}, {Type: llm.BlockToolResult, ToolUseID: "c2", Text: "R2"}}},
		{Role: llm.RoleAssistant, Content: []llm.Block{llm.TextBlock("done")}},
		{Role: llm.RoleUser, Content: []llm.Block{llm.TextBlock("U2")}},
	}
	if diff := cmp.Diff(wantMessages, r.Messages); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
	got := []any{r.System, r.MaxTokens, r.Tools, r.ToolChoice, r.SchemaName, string(r.Schema)}
	want := []any{"S\n\nD", 11, []llm.Tool{{Name: "f", Description: "F", InputSchema: json.RawMessage(`{"type":"object"}`)}, {Name: "g"}}, "", "", ""}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("system, max tokens, tools, tool choice, schema (-want +got):\n%s", diff)
	}

	for _, tt := range []struct{ body, says string }{
		{`{"model":`, "malformed request"},
		{`{"messages":[{"role":"user","content":"x"}]}`, "model and messages are required"},
		{`{"model":"m","messages":[]}`, "model and messages are required"},
		{`{"model":"m","messages":[{"role":"user","content":"x"},{"role":"user","content":7}]}`, "messages[1]: json: cannot unmarshal number"},
		{`{"model":"m","messages":[{"role":"narrator","content":"x"}]}`, `messages[0]: role \"narrator\" is not supported`},
		{`{"model":"m","messages":[{"role":"user","content":"x"}],"tool_choice":{"function":{"name":5}}}`, "tool_choice: json: cannot unmarshal number"},
	} {
		res, body := post(t, srv.OpenAIBaseURL()+"/chat/completions", tt.body)
		if res.StatusCode != 400 || !strings.Contains(body, tt.says) {
			t.Errorf("%s: %d %s, want 400 saying %s", tt.body, res.StatusCode, body, tt.says)
		}
	}
}
