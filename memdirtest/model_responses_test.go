package memdirtest_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"

	"github.com/memdir/memdir/llm"
	"github.com/memdir/memdir/memdirtest"
)

func responsesClient(srv *memdirtest.ModelServer) *sdk.Client {
	c := sdk.NewClient(option.WithBaseURL(srv.OpenAIBaseURL()), option.WithAPIKey("test"), option.WithMaxRetries(0))
	return &c
}

// textToolsReply says something, calls a function tool and a custom
// (freeform) tool, the mix a Codex turn has.
func textToolsReply() memdirtest.ModelReply {
	return memdirtest.ModelReply{
		Content: []llm.Block{
			llm.TextBlock("Let me look at the repository first."),
			{Type: llm.BlockToolUse, ToolUseID: "call_1", ToolName: "exec_command", Input: json.RawMessage(`{"cmd":"ls -la"}`)},
			{Type: llm.BlockToolUse, ToolUseID: "call_2", ToolName: "apply_patch", Input: json.RawMessage(`"*** Begin Patch\n*** Add File: a.txt\n+hi\n*** End Patch\n"`)},
		},
		Usage: llm.Usage{InputTokens: 100, CacheReadTokens: 20, OutputTokens: 7},
	}
}

// TestResponsesStreamSDK drives the fake with the OpenAI SDK's streaming
// Responses client and checks the event sequence and what it adds up to.
func TestResponsesStreamSDK(t *testing.T) {
	srv := memdirtest.NewModelServer(t)
	srv.Enqueue(textToolsReply())
	client := responsesClient(srv)
	stream := client.Responses.NewStreaming(context.Background(), responses.ResponseNewParams{
		Model: "gpt-5.5",
		Input: responses.ResponseNewParamsInputUnion{OfString: sdk.String("list the files")},
	})
	var types []string
	var text strings.Builder
	var done *responses.Response
	last := int64(-1)
	for stream.Next() {
		ev := stream.Current()
		types = append(types, ev.Type)
		if ev.SequenceNumber != last+1 {
			t.Errorf("event %s has sequence_number %d after %d", ev.Type, ev.SequenceNumber, last)
		}
		last = ev.SequenceNumber
		if ev.Type == "response.output_text.delta" {
			text.WriteString(ev.Delta)
		}
		if ev.Type == "response.completed" {
			r := ev.AsResponseCompleted().Response
			done = &r
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	want := []string{"response.created", "response.in_progress",
		"response.output_item.added", "response.content_part.added",
		"response.output_text.delta", "response.output_text.delta", "response.output_text.delta",
		"response.output_text.done", "response.content_part.done", "response.output_item.done",
		"response.output_item.added", "response.function_call_arguments.delta", "response.function_call_arguments.done", "response.output_item.done",
		"response.output_item.added"}
	for range 4 {
		want = append(want, "response.custom_tool_call_input.delta")
	}
	want = append(want, "response.custom_tool_call_input.done", "response.output_item.done", "response.completed")
	if diff := cmp.Diff(want, types); diff != "" {
		t.Errorf("event types (-want +got):\n%s", diff)
	}
	if text.String() != "Let me look at the repository first." {
		t.Errorf("text deltas add up to %q", text.String())
	}
	if done == nil {
		t.Fatal("no response.completed")
	}
	if done.OutputText() != "Let me look at the repository first." || done.Status != "completed" {
		t.Errorf("completed response: text %q, status %q", done.OutputText(), done.Status)
	}
	type item struct{ Type, CallID, Name, Arguments, Input string }
	var items []item
	for _, o := range done.Output {
		items = append(items, item{o.Type, o.CallID, o.Name, o.Arguments.OfString, o.Input})
	}
	wantItems := []item{
		{Type: "message"},
		{"function_call", "call_1", "exec_command", `{"cmd":"ls -la"}`, ""},
		{"custom_tool_call", "call_2", "apply_patch", "", "*** Begin Patch\n*** Add File: a.txt\n+hi\n*** End Patch\n"},
	}
	if diff := cmp.Diff(wantItems, items); diff != "" {
		t.Errorf("output items (-want +got):\n%s", diff)
	}
	if u := done.Usage; u.InputTokens != 120 || u.InputTokensDetails.CachedTokens != 20 || u.OutputTokens != 7 || u.TotalTokens != 127 {
		t.Errorf("usage = %+v", u)
	}
	if r := srv.LastRequest(); r.API != "responses" || !r.Stream || r.Model != "gpt-5.5" {
		t.Errorf("recorded API %q, stream %v, model %q", r.API, r.Stream, r.Model)
	}
}

func TestResponsesPlainSDK(t *testing.T) {
	srv := memdirtest.NewModelServer(t)
	srv.Enqueue(memdirtest.TextReply("plain answer"))
	resp, err := responsesClient(srv).Responses.New(context.Background(), responses.ResponseNewParams{
		Model:        "m",
		Instructions: sdk.String("be brief"),
		Input:        responses.ResponseNewParamsInputUnion{OfString: sdk.String("hello")},
	})
	if err != nil {
		t.Fatal(err)
	}
	if resp.OutputText() != "plain answer" || resp.Status != "completed" {
		t.Errorf("response: text %q, status %q", resp.OutputText(), resp.Status)
	}
	if r := srv.LastRequest(); r.Stream || r.System != "be brief" || !r.Contains("hello") {
		t.Errorf("recorded stream %v, system %q, messages %+v", r.Stream, r.System, r.Messages)
	}
}

// TestResponsesStopReasons checks how a reply's end is told: completed,
// or incomplete at the token limit.
func TestResponsesStopReasons(t *testing.T) {
	for _, tt := range []struct {
		stop      llm.StopReason
		lastEvent string
		status    string
	}{
		{"", "response.completed", `"status":"completed"`},
		{llm.StopMaxTokens, "response.incomplete", `"incomplete_details":{"reason":"max_output_tokens"}`},
	} {
		srv := memdirtest.NewModelServer(t)
		r := memdirtest.TextReply("cut")
		r.StopReason = tt.stop
		srv.Enqueue(r, r)
		_, body := post(t, srv.OpenAIBaseURL()+"/responses", `{"model":"m","stream":true,"input":"x"}`)
		names := events(body, true)
		if got := names[len(names)-1]; got != tt.lastEvent {
			t.Errorf("stop %q: last event %q, want %q", tt.stop, got, tt.lastEvent)
		}
		if _, plain := post(t, srv.OpenAIBaseURL()+"/responses", `{"model":"m","input":"x"}`); !strings.Contains(plain, tt.status) {
			t.Errorf("stop %q: plain response lacks %s:\n%s", tt.stop, tt.status, plain)
		}
	}
}

// TestResponsesRecordsRequests checks the neutral form of request bodies
// shaped as Codex sends them.
func TestResponsesRecordsRequests(t *testing.T) {
	type neutral struct {
		System, ToolChoice, SchemaName, Schema string
		MaxTokens                              int
		Messages                               []llm.Message
		Tools                                  []string
	}
	for _, tt := range []struct {
		name string
		body string
		want neutral
	}{
		{
			name: "string input",
			body: `{"model":"m","instructions":"I","input":"hello","max_output_tokens":50}`,
			want: neutral{System: "I", MaxTokens: 50, Messages: []llm.Message{{Role: llm.RoleUser, Content: []llm.Block{llm.TextBlock("hello")}}}},
		},
		{
			name: "codex turn",
			body: `{"model":"gpt-5.5","stream":true,"input":[
				{"type":"message","role":"developer","content":[{"type":"input_text","text":"D1"}]},
				{"type":"message","role":"user","content":[{"type":"input_text","text":"<environment_context/>"}]},
				{"type":"message","role":"user","content":[{"type":"input_text","text":"make a file"}]},
				{"type":"message","role":"developer","content":[{"type":"input_text","text":"HOOK CONTEXT"}]},
				{"type":"reasoning","summary":[],"encrypted_content":"xyz"},
				{"type":"message","role":"assistant","content":[{"type":"output_text","text":"on it"}]},
				{"type":"custom_tool_call","call_id":"c1","name":"apply_patch","input":"*** Begin Patch"},
				{"type":"function_call","call_id":"c2","name":"exec_command","arguments":"{\"cmd\":\"ls\"}"},
				{"type":"custom_tool_call_output","call_id":"c1","output":"Success"},
				{"type":"function_call_output","call_id":"c2","output":[{"type":"input_text","text":"a.txt"}]},
				{"role":"user","content":"thanks"}],
				"tools":[{"type":"function","name":"exec_command","parameters":{"type":"object"}},
				{"type":"custom","name":"apply_patch","format":{"type":"grammar"}},{"type":"web_search"}],
				"tool_choice":"auto"}`,
			want: neutral{System: "D1\n\nHOOK CONTEXT", Tools: []string{"exec_command", "apply_patch"}, Messages: []llm.Message{
				{Role: llm.RoleUser, Content: []llm.Block{llm.TextBlock("<environment_context/>"), llm.TextBlock("make a file")}},
				{Role: llm.RoleAssistant, Content: []llm.Block{llm.TextBlock("on it"),
					{Type: llm.BlockToolUse, ToolUseID: "c1", ToolName: "apply_patch", Input: json.RawMessage(`"*** Begin Patch"`)},
					{Type: llm.BlockToolUse, ToolUseID: "c2", ToolName: "exec_command", Input: json.RawMessage(`{"cmd":"ls"}`)}}},
				{Role: llm.RoleUser, Content: []llm.Block{
					{Type: llm.BlockToolResult, ToolUseID: "c1", Text: "Success"},
					{Type: llm.BlockToolResult, ToolUseID: "c2", Text: "a.txt"},
					llm.TextBlock("thanks")}},
			}},
		},
		{
			name: "forced tool and schema",
			body: `{"model":"m","input":[{"role":"user","content":"x"}],"tool_choice":{"type":"function","name":"f"},
				"text":{"format":{"type":"json_schema","name":"n","schema":{"type":"object"}}}}`,
			want: neutral{ToolChoice: "f", SchemaName: "n", Schema: `{"type":"object"}`,
				Messages: []llm.Message{{Role: llm.RoleUser, Content: []llm.Block{llm.TextBlock("x")}}}},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := memdirtest.NewModelServer(t)
			srv.Enqueue(memdirtest.TextReply("ok"))
			if res, body := post(t, srv.OpenAIBaseURL()+"/responses", tt.body); res.StatusCode != 200 {
				t.Fatalf("status %d: %s", res.StatusCode, body)
			}
			r := srv.LastRequest()
			got := neutral{System: r.System, ToolChoice: r.ToolChoice, SchemaName: r.SchemaName, Schema: string(r.Schema),
				MaxTokens: r.MaxTokens, Messages: r.Messages}
			for _, tool := range r.Tools {
				got.Tools = append(got.Tools, tool.Name)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("recorded request (-want +got):\n%s", diff)
			}
		})
	}
}

func TestResponsesMalformed(t *testing.T) {
	srv := memdirtest.StartModelServer() // no test to fail: malformed requests are the point
	defer srv.Close()
	for _, tt := range []struct{ body, says string }{
		{`{"model":`, "malformed request"},
		{`{"input":"x"}`, "model is required"},
		{`{"model":"m"}`, "input is required"},
		{`{"model":"m","input":[{"type":"hologram"}]}`, `item type \"hologram\"`},
		{`{"model":"m","input":[{"role":"narrator","content":"x"}]}`, `role \"narrator\"`},
		{`{"model":"m","input":[1]}`, "input: json: cannot unmarshal number"},
		{`{"model":"m","input":[{"role":"user","content":"x"},{"type":"message","role":"user","content":5}]}`, "input[1]: json: cannot unmarshal number"},
		{`{"model":"m","input":[{"type":"function_call_output","call_id":"c","output":{"text":"x"}}]}`, "input[0] output: json: cannot unmarshal object"},
		{`{"model":"m","input":"x","tool_choice":{"type":"function","name":5}}`, "tool_choice: json: cannot unmarshal number"},
	} {
		res, body := post(t, srv.OpenAIBaseURL()+"/responses", tt.body)
		if res.StatusCode != 400 || !strings.Contains(body, tt.says) || !strings.Contains(body, `"type":"invalid_request_error"`) {
			t.Errorf("%s: %d %s, want 400 saying %s", tt.body, res.StatusCode, body, tt.says)
		}
	}
	srv.Enqueue(memdirtest.ErrorReply(429, "slow down"))
	res, body := post(t, srv.OpenAIBaseURL()+"/responses", `{"model":"m","stream":true,"input":"x"}`)
	if res.StatusCode != 429 || body != `{"error":{"code":"rate_limit_exceeded","message":"slow down","param":null,"type":"invalid_request_error"}}` {
		t.Errorf("error reply: %d %s", res.StatusCode, body)
	}
}
