package memdirtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/memdir/memdir/llm"
)

// geminiWire speaks the Gemini API's POST
// /v1beta/models/<model>:generateContent and :streamGenerateContent, as
// Gemini CLI (through Google's genai SDK) calls them. The model and whether
// to stream come from the path, which the server decodes before the body.
//
// The API gives function calls no id of their own (clients make one up), so
// a scripted tool_use block's ToolUseID is sent as the call's id only when
// set; a recorded functionCall without an id gets its name as ToolUseID.
type geminiWire struct{}

// geminiPath splits /v1beta/models/<model>:<method>; ok is false for any
// other path.
func geminiPath(path string) (model, method string, ok bool) {
	rest, found := strings.CutPrefix(path, "/v1beta/models/")
	if !found {
		return "", "", false
	}
	model, method, found = strings.Cut(rest, ":")
	if !found || model == "" || (method != "generateContent" && method != "streamGenerateContent") {
		return "", "", false
	}
	return model, method, true
}

type geminiPart struct {
	Text         string `json:"text"`
	Thought      bool   `json:"thought"`
	FunctionCall *struct {
		ID   string          `json:"id"`
		Name string          `json:"name"`
		Args json.RawMessage `json:"args"`
	} `json:"functionCall"`
	FunctionResponse *struct {
		ID       string          `json:"id"`
		Name     string          `json:"name"`
		Response json.RawMessage `json:"response"`
	} `json:"functionResponse"`
}

type geminiContent struct {
	Role  string       `json:"role"`
	Parts []geminiPart `json:"parts"`
}

// geminiRequest is the body of a generateContent request, the fields the
// fake reads.
type geminiRequest struct {
	Contents          []geminiContent `json:"contents"`
	SystemInstruction json.RawMessage `json:"systemInstruction"`
	Tools             []struct {
		FunctionDeclarations []struct {
			Name                 string          `json:"name"`
			Description          string          `json:"description"`
			Parameters           json.RawMessage `json:"parameters"`
			ParametersJSONSchema json.RawMessage `json:"parametersJsonSchema"`
		} `json:"functionDeclarations"`
	} `json:"tools"`
	ToolConfig *struct {
		FunctionCallingConfig *struct {
			Mode                 string   `json:"mode"`
			AllowedFunctionNames []string `json:"allowedFunctionNames"`
		} `json:"functionCallingConfig"`
	} `json:"toolConfig"`
	GenerationConfig *struct {
		MaxOutputTokens    int             `json:"maxOutputTokens"`
		ResponseSchema     json.RawMessage `json:"responseSchema"`
		ResponseJSONSchema json.RawMessage `json:"responseJsonSchema"`
	} `json:"generationConfig"`
}

func (geminiWire) decode(body []byte, req *ModelRequest) error {
	var in geminiRequest
	if err := json.Unmarshal(body, &in); err != nil {
		return err
	}
	if len(in.Contents) == 0 {
		return fmt.Errorf("contents are required")
	}
	if err := decodeGeminiSystem(in.SystemInstruction, req); err != nil {
		return err
	}
	for i, c := range in.Contents {
		msg, err := geminiMessage(i, c)
		if err != nil {
			return err
		}
		req.Messages = append(req.Messages, msg)
	}
	in.decodeConfig(req)
	return nil
}

// decodeGeminiSystem sets req.System from a system instruction, if there
// is one: a Content ({"parts": [...]}) or, as the SDK also accepts, a
// string.
func decodeGeminiSystem(raw json.RawMessage, req *ModelRequest) error {
	sys := bytes.TrimSpace(raw)
	if len(sys) == 0 || string(sys) == "null" {
		return nil
	}
	if sys[0] == '"' {
		if err := json.Unmarshal(sys, &req.System); err != nil {
			return fmt.Errorf("systemInstruction: %w", err)
		}
		return nil
	}
	var c geminiContent
	if err := json.Unmarshal(sys, &c); err != nil {
		return fmt.Errorf("systemInstruction: %w", err)
	}
	var texts []string
	for _, p := range c.Parts {
		texts = append(texts, p.Text)
	}
	req.System = strings.Join(texts, "\n")
	return nil
}

// geminiMessage is content i as a neutral message: the model's is the
// assistant's, any other the user's, with thoughts left out.
func geminiMessage(i int, c geminiContent) (llm.Message, error) {
	msg := llm.Message{Role: llm.RoleUser}
	switch c.Role {
	case "user", "", "function":
	case "model":
		msg.Role = llm.RoleAssistant
	default:
		return llm.Message{}, fmt.Errorf("contents[%d]: role %q is not supported by the fake", i, c.Role)
	}
	for _, p := range c.Parts {
		switch {
		case p.FunctionCall != nil:
			id := p.FunctionCall.ID
			if id == "" {
				id = p.FunctionCall.Name
			}
			msg.Content = append(msg.Content, llm.Block{Type: llm.BlockToolUse, ToolUseID: id,
				ToolName: p.FunctionCall.Name, Input: p.FunctionCall.Args})
		case p.FunctionResponse != nil:
			id := p.FunctionResponse.ID
			if id == "" {
				id = p.FunctionResponse.Name
			}
			msg.Content = append(msg.Content, llm.Block{Type: llm.BlockToolResult, ToolUseID: id,
				Text: geminiResponseText(p.FunctionResponse.Response)})
		case p.Thought:
			// The model's thoughts, replayed: nothing a test asserts on.
		default:
			msg.Content = append(msg.Content, llm.TextBlock(p.Text))
		}
	}
	return msg, nil
}

// decodeConfig records the function declarations, the one function the
// request forces, if any, the token limit and the response schema.
func (in *geminiRequest) decodeConfig(req *ModelRequest) {
	for _, t := range in.Tools {
		for _, f := range t.FunctionDeclarations {
			schema := f.ParametersJSONSchema
			if len(schema) == 0 {
				schema = f.Parameters
			}
			req.Tools = append(req.Tools, llm.Tool{Name: f.Name, Description: f.Description, InputSchema: schema})
		}
	}
	if tc := in.ToolConfig; tc != nil && tc.FunctionCallingConfig != nil &&
		tc.FunctionCallingConfig.Mode == "ANY" && len(tc.FunctionCallingConfig.AllowedFunctionNames) == 1 {
		req.ToolChoice = tc.FunctionCallingConfig.AllowedFunctionNames[0]
	}
	if g := in.GenerationConfig; g != nil {
		req.MaxTokens = g.MaxOutputTokens
		req.Schema = g.ResponseJSONSchema
		if len(req.Schema) == 0 {
			req.Schema = g.ResponseSchema
		}
	}
}

// geminiResponseText is a function response as tool-result text: its
// "output" when that is a string (as Gemini CLI sends), else its JSON.
func geminiResponseText(raw json.RawMessage) string {
	var v struct {
		Output *string `json:"output"`
	}
	if json.Unmarshal(raw, &v) == nil && v.Output != nil {
		return *v.Output
	}
	return string(raw)
}

// geminiStatus is the error status name the API gives each HTTP status.
var geminiStatus = map[int]string{
	400: "INVALID_ARGUMENT",
	401: "UNAUTHENTICATED",
	403: "PERMISSION_DENIED",
	404: "NOT_FOUND",
	429: "RESOURCE_EXHAUSTED",
	500: "INTERNAL",
	503: "UNAVAILABLE",
	504: "DEADLINE_EXCEEDED",
}

func (geminiWire) writeError(w http.ResponseWriter, status int, message string) {
	name, ok := geminiStatus[status]
	if !ok {
		name = "UNKNOWN"
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	writeJSON(w, map[string]any{"error": map[string]any{"code": status, "message": message, "status": name}})
}

var geminiFinish = map[llm.StopReason]string{
	llm.StopEndTurn:   "STOP",
	llm.StopToolUse:   "STOP", // the API ends a turn of function calls with STOP too
	llm.StopMaxTokens: "MAX_TOKENS",
	llm.StopOther:     "SAFETY",
}

func geminiUsage(u llm.Usage) map[string]any {
	prompt := u.InputTokens + u.CacheReadTokens + u.CacheWriteTokens
	return map[string]any{
		"promptTokenCount":        prompt,
		"candidatesTokenCount":    u.OutputTokens,
		"totalTokenCount":         prompt + u.OutputTokens,
		"cachedContentTokenCount": u.CacheReadTokens,
	}
}

// parts returns the reply's content as Gemini parts, text cut into pieces
// of at most n bytes (n <= 0: whole) so that a stream can send one piece
// per chunk. A function call is never cut: the API sends each whole.
func (geminiWire) parts(r ModelReply, n int) []map[string]any {
	var out []map[string]any
	for _, b := range r.Content {
		switch b.Type {
		case llm.BlockText:
			if n <= 0 {
				out = append(out, map[string]any{"text": b.Text})
				continue
			}
			for _, p := range pieces(b.Text, n) {
				out = append(out, map[string]any{"text": p})
			}
		case llm.BlockToolUse:
			call := map[string]any{"name": b.ToolName, "args": input(b)}
			if b.ToolUseID != "" {
				call["id"] = b.ToolUseID
			}
			out = append(out, map[string]any{"functionCall": call})
		}
	}
	return out
}

// chunk returns one GenerateContentResponse holding parts; the last one
// of a reply carries the finish reason and the usage.
func (geminiWire) chunk(req *ModelRequest, r ModelReply, seq int, parts []map[string]any, last bool) map[string]any {
	if parts == nil {
		parts = []map[string]any{}
	}
	cand := map[string]any{"content": map[string]any{"role": "model", "parts": parts}, "index": 0}
	c := map[string]any{"candidates": []any{cand}, "modelVersion": r.model(req), "responseId": fmt.Sprintf("resp_fake_%d", seq)}
	if last {
		cand["finishReason"] = geminiFinish[r.stopReason()]
		c["usageMetadata"] = geminiUsage(r.Usage)
	}
	return c
}

func (g geminiWire) writeReply(w http.ResponseWriter, req *ModelRequest, r ModelReply, seq int) {
	writeJSON(w, g.chunk(req, r, seq, g.parts(r, 0), true))
}

// writeStream sends one chunk per text piece or function call, the last
// with the finish reason and usage: as server-sent events when the request
// asked for alt=sse (as every SDK does), else as the JSON array the API
// streams otherwise.
func (g geminiWire) writeStream(w http.ResponseWriter, req *ModelRequest, r ModelReply, seq int) {
	parts := g.parts(r, 16)
	var chunks []map[string]any
	for i, p := range parts {
		chunks = append(chunks, g.chunk(req, r, seq, []map[string]any{p}, i == len(parts)-1))
	}
	if len(chunks) == 0 {
		chunks = append(chunks, g.chunk(req, r, seq, nil, true))
	}
	if q, _ := url.ParseQuery(req.RawQuery); q.Get("alt") != "sse" {
		w.Header().Set("Content-Type", "application/json")
		writeJSON(w, chunks)
		return
	}
	for _, c := range chunks {
		writeEvent(w, "", c)
	}
}
