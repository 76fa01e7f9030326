package memdirtest_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/memdir/memdir/llm"
	"github.com/memdir/memdir/memdirtest"
)

// geminiChunk is the part of a GenerateContentResponse the tests read.
type geminiChunk struct {
	Candidates []struct {
		Content struct {
			Role  string `json:"role"`
			Parts []struct {
				Text         string `json:"text"`
				FunctionCall *struct {
					ID   string          `json:"id"`
					Name string          `json:"name"`
					Args json.RawMessage `json:"args"`
				} `json:"functionCall"`
			} `json:"parts"`
		} `json:"content"`
		FinishReason string `json:"finishReason"`
	} `json:"candidates"`
	UsageMetadata *struct {
		PromptTokenCount     int `json:"promptTokenCount"`
		CandidatesTokenCount int `json:"candidatesTokenCount"`
		TotalTokenCount      int `json:"totalTokenCount"`
	} `json:"usageMetadata"`
}

// summary is a reply as one line a test compares: the parts in order
// (text, or name(args) for a call), then the finish reason and the token
// counts of the chunk that ends it.
func summary(t *testing.T, chunks []geminiChunk) string {
	t.Helper()
	var b strings.Builder
	for i, c := range chunks {
		if len(c.Candidates) != 1 || c.Candidates[0].Content.Role != "model" {
			t.Fatalf("chunk %d: %+v", i, c)
		}
		cand := c.Candidates[0]
		for _, p := range cand.Content.Parts {
			if p.FunctionCall != nil {
				b.WriteString("[" + p.FunctionCall.ID + " " + p.FunctionCall.Name + string(p.FunctionCall.Args) + "]")
				continue
			}
			b.WriteString(p.Text)
		}
		last := i == len(chunks)-1
		if (cand.FinishReason != "") != last || (c.UsageMetadata != nil) != last {
			t.Errorf("chunk %d of %d: finishReason %q, usage %v", i, len(chunks), cand.FinishReason, c.UsageMetadata)
		}
		if last && c.UsageMetadata != nil {
			u := c.UsageMetadata
			b.WriteString(" | " + cand.FinishReason + " " + strings.Join([]string{itoa(u.PromptTokenCount), itoa(u.CandidatesTokenCount), itoa(u.TotalTokenCount)}, "/"))
		}
	}
	return b.String()
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func TestGeminiReplies(t *testing.T) {
	reply := memdirtest.ModelReply{
		Content: []llm.Block{
			llm.TextBlock("I will write the notes file now."),
			{Type: llm.BlockToolUse, ToolName: "write_file", Input: json.RawMessage(`{"file_path":"notes.txt","content":"hi"}`)},
		},
		Usage: llm.Usage{InputTokens: 30, OutputTokens: 5},
	}
	withID := memdirtest.ToolCallReply("call_9", "replace", `{"file_path":"a.go"}`)
	want := `I will write the notes file now.[ write_file{"file_path":"notes.txt","content":"hi"}] | STOP 30/5/35`
	for _, tt := range []struct {
		name   string
		path   string
		reply  memdirtest.ModelReply
		chunks int // how many chunks the reply comes in; 0: a single object, not a stream
		want   string
	}{
		{"sse stream", "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse", reply, 3, want},
		{"json array stream", "/v1beta/models/gemini-2.5-flash:streamGenerateContent", reply, 3, want},
		{"plain", "/v1beta/models/gemini-2.5-flash:generateContent", reply, 0, want},
		{"call with an id", "/v1beta/models/m:streamGenerateContent?alt=sse", withID, 1, `[call_9 replace{"file_path":"a.go"}] | STOP 0/0/0`},
		{"token limit", "/v1beta/models/m:generateContent", memdirtest.ModelReply{Content: []llm.Block{llm.TextBlock("cu")}, StopReason: llm.StopMaxTokens}, 0, "cu | MAX_TOKENS 0/0/0"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := memdirtest.NewModelServer(t)
			srv.Enqueue(tt.reply)
			res, body := post(t, srv.GeminiBaseURL()+tt.path, `{"contents":[{"role":"user","parts":[{"text":"x"}]}]}`)
			if res.StatusCode != 200 {
				t.Fatalf("status %d: %s", res.StatusCode, body)
			}
			var chunks []geminiChunk
			switch ct := res.Header.Get("Content-Type"); {
			case strings.Contains(tt.path, "alt=sse"):
				if ct != "text/event-stream" {
					t.Errorf("Content-Type %q", ct)
				}
				for _, d := range events(body, false) {
					var c geminiChunk
					if err := json.Unmarshal([]byte(d), &c); err != nil {
						t.Fatalf("event %q: %v", d, err)
					}
					chunks = append(chunks, c)
				}
			case tt.chunks > 0:
				if err := json.Unmarshal([]byte(body), &chunks); err != nil {
					t.Fatalf("not a JSON array of chunks: %v\n%s", err, body)
				}
			default:
				var c geminiChunk
				if err := json.Unmarshal([]byte(body), &c); err != nil {
					t.Fatalf("not one response: %v\n%s", err, body)
				}
				chunks = []geminiChunk{c}
			}
			if n := max(tt.chunks, 1); len(chunks) != n {
				t.Errorf("%d chunks, want %d:\n%s", len(chunks), n, body)
			}
			if got := summary(t, chunks); got != tt.want {
				t.Errorf("reply:\n got %s\nwant %s", got, tt.want)
			}
			r := srv.LastRequest()
			if r.API != "gemini" || r.Stream != strings.Contains(tt.path, ":stream") || !strings.HasPrefix(tt.path, "/v1beta/models/"+r.Model+":") {
				t.Errorf("recorded API %q, stream %v, model %q", r.API, r.Stream, r.Model)
			}
		})
	}
}

// TestGeminiRecordsRequests checks the neutral form of a request body
// shaped as Gemini CLI sends one after a tool call.
func TestGeminiRecordsRequests(t *testing.T) {
	srv := memdirtest.NewModelServer(t)
	srv.Enqueue(memdirtest.TextReply("ok"))
	body := `{"contents":[
		{"role":"user","parts":[{"text":"<session_context/>"},{"text":"make notes"},{"text":"<hook_context>MARKER</hook_context>"}]},
		{"role":"model","parts":[{"text":"thinking...","thought":true},
			{"functionCall":{"id":"write_file_1","name":"write_file","args":{"file_path":"notes.txt"}},"thoughtSignature":"sig"}]},
		{"role":"user","parts":[{"functionResponse":{"id":"write_file_1","name":"write_file","response":{"output":"Wrote notes.txt"}}}]},
		{"role":"user","parts":[{"functionResponse":{"name":"glob","response":{"files":["a"]}}}]}],
		"systemInstruction":{"parts":[{"text":"You are a CLI agent."}]},
		"tools":[{"functionDeclarations":[{"name":"write_file","parametersJsonSchema":{"type":"object"}},{"name":"glob","parameters":{"type":"OBJECT"}}]}],
		"toolConfig":{"functionCallingConfig":{"mode":"ANY","allowedFunctionNames":["write_file"]}},
		"generationConfig":{"maxOutputTokens":99,"responseJsonSchema":{"type":"object"}}}`
	if res, out := post(t, srv.GeminiBaseURL()+"/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse", body); res.StatusCode != 200 {
		t.Fatalf("status %d: %s", res.StatusCode, out)
	}
	r := srv.LastRequest()
	wantMessages := []llm.Message{
		{Role: llm.RoleUser, Content: []llm.Block{llm.TextBlock("<session_context/>"), llm.TextBlock("make notes"), llm.TextBlock("<hook_context>MARKER</hook_context>")}},
		{Role: llm.RoleAssistant, Content: []llm.Block{{Type: llm.BlockToolUse, ToolUseID: "write_file_1", ToolName: "write_file", Input: json.RawMessage(`{"file_path":"notes.txt"}`)}}},
		{Role: llm.RoleUser, Content: []llm.Block{{Type: llm.BlockToolResult, ToolUseID: "write_file_1", Text: "Wrote notes.txt"}}},
		{Role: llm.RoleUser, Content: []llm.Block{{Type: llm.BlockToolResult, ToolUseID: "glob", Text: `{"files":["a"]}`}}},
	}
	if diff := cmp.Diff(wantMessages, r.Messages); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
	var tools []string
	for _, tool := range r.Tools {
		tools = append(tools, tool.Name+string(tool.InputSchema))
	}
	got := []any{r.Model, r.System, tools, r.ToolChoice, r.MaxTokens, string(r.Schema)}
	want := []any{"gemini-2.5-flash", "You are a CLI agent.", []string{`write_file{"type":"object"}`, `glob{"type":"OBJECT"}`}, "write_file", 99, `{"type":"object"}`}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("model, system, tools, tool choice, max tokens, schema (-want +got):\n%s", diff)
	}
	for _, tt := range []struct {
		s    string
		want bool
	}{{"MARKER", true}, {"CLI agent", true}, {"Wrote notes", true}, {"notes.txt", true}, {"thinking", false}} {
		if got := r.Contains(tt.s); got != tt.want {
			t.Errorf("Contains(%q) = %v, want %v", tt.s, got, tt.want)
		}
	}
}

func TestGeminiErrors(t *testing.T) {
	srv := memdirtest.StartModelServer() // no test to fail: bad requests are the point
	defer srv.Close()
	srv.Enqueue(memdirtest.ErrorReply(429, "quota"))
	for _, tt := range []struct {
		path, body string
		status     int
		says       string
	}{
		{"/v1beta/models/m:streamGenerateContent?alt=sse", `{"contents":[{"parts":[{"text":"x"}]}]}`, 429, `{"error":{"code":429,"message":"quota","status":"RESOURCE_EXHAUSTED"}}`},
		{"/v1beta/models/m:generateContent", `{"contents":[]}`, 400, `"status":"INVALID_ARGUMENT"`},
		{"/v1beta/models/m:generateContent", `{"contents":[{"role":"narrator","parts":[]}]}`, 400, `role \"narrator\"`},
		{"/v1beta/models/m:countTokens", `{}`, 404, "no route"},
	} {
		res, body := post(t, srv.GeminiBaseURL()+tt.path, tt.body)
		if res.StatusCode != tt.status || !strings.Contains(body, tt.says) {
			t.Errorf("%s %s: %d %s, want %d with %s", tt.path, tt.body, res.StatusCode, body, tt.status, tt.says)
		}
	}
}

// TestGeminiRecordsShortForms covers the forms TestGeminiRecordsRequests
// leaves out: a system instruction given as a string, a function call
// without an id, the older responseSchema, and a role left out; and the
// bodies the fake refuses.
func TestGeminiRecordsShortForms(t *testing.T) {
	srv := memdirtest.StartModelServer() // no test to fail: malformed requests are part of it
	defer srv.Close()
	srv.Enqueue(memdirtest.TextReply("ok"))
	body := `{"contents":[{"parts":[{"text":"hi"}]},{"role":"model","parts":[{"text":"calling"},{"functionCall":{"name":"glob","args":{"p":"*"}}}]},
		{"role":"function","parts":[{"functionResponse":{"name":"glob","response":{"output":"a.txt"}}}]}],
		"systemInstruction":"Be brief.","generationConfig":{"responseSchema":{"type":"OBJECT"}},
		"toolConfig":{"functionCallingConfig":{"mode":"ANY","allowedFunctionNames":["glob","ls"]}}}`
	if res, out := post(t, srv.GeminiBaseURL()+"/v1beta/models/gemini-2.5-pro:generateContent", body); res.StatusCode != 200 {
		t.Fatalf("status %d: %s", res.StatusCode, out)
	}
	r := srv.LastRequest()
	wantMessages := []llm.Message{
		{Role: llm.RoleUser, Content: []llm.Block{llm.TextBlock("hi")}},
		{Role: llm.RoleAssistant, Content: []llm.Block{llm.TextBlock("calling"), {Type: llm.BlockToolUse, ToolUseID: "glob", ToolName: "glob", Input: json.RawMessage(`{"p":"*"}`)}}},
		{Role: llm.RoleUser, Content: []llm.Block{{Type: llm.BlockToolResult, ToolUseID: "glob", Text: "a.txt"}}},
	}
	if diff := cmp.Diff(wantMessages, r.Messages); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
	got := []any{r.Model, r.Stream, r.System, r.ToolChoice, r.MaxTokens, string(r.Schema)}
	want := []any{"gemini-2.5-pro", false, "Be brief.", "", 0, `{"type":"OBJECT"}`}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("model, stream, system, tool choice, max tokens, schema (-want +got):\n%s", diff)
	}

	for _, tt := range []struct{ body, says string }{
		{`{"contents":`, "malformed request"},
		{`{"contents":[{"parts":[{"text":"x"}]}],"systemInstruction":5}`, "systemInstruction: json: cannot unmarshal number"},
		{`{"contents":[{"parts":[{"text":"x"}]},{"role":"tool","parts":[]}]}`, `contents[1]: role \"tool\" is not supported`},
	} {
		res, out := post(t, srv.GeminiBaseURL()+"/v1beta/models/m:generateContent", tt.body)
		if res.StatusCode != 400 || !strings.Contains(out, tt.says) {
			t.Errorf("%s: %d %s, want 400 saying %s", tt.body, res.StatusCode, out, tt.says)
		}
	}
}
