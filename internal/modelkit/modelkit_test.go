package modelkit

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/llm"
)

func TestServerMessage(t *testing.T) {
	tests := []struct{ body, want string }{
		{`{"type":"error","error":{"type":"not_found_error","message":"model: x"}}`, "model: x"},
		{`{"error":{"message":"Incorrect API key","type":"invalid_request_error","code":"invalid_api_key"}}`, "Incorrect API key"},
		{`{"error":{"code":404,"message":"model not loaded","type":"not_found_error"}}`, "model not loaded"},
		{`{"error":"model \"llama3\" not found, try pulling it first"}`, `model "llama3" not found, try pulling it first`},
		{`{"object":"error","message":"The model does not exist.","code":404}`, "The model does not exist."},
		{`{"detail":"Not Found"}`, "Not Found"},
		{"<html>\n  <body>Bad Gateway</body>\n</html>", "<html> <body>Bad Gateway</body> </html>"},
		{"", ""},
		{strings.Repeat("é", 400), strings.Repeat("é", 150) + "…"},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, ServerMessage([]byte(tt.body))); diff != "" {
			t.Errorf("ServerMessage(%.40q) (-want +got):\n%s", tt.body, diff)
		}
	}
}

func TestStatusKinds(t *testing.T) {
	c := &Caller{Provider: "p", Model: "m", BaseURL: "http://h/v1", KeyEnv: "P_KEY", KeySet: true, Tries: 3}
	tests := []struct {
		status int
		said   string
		kind   llm.ModelErrorKind
	}{
		{401, "", llm.ModelAuth},
		{403, "", llm.ModelAuth},
		{404, "", llm.ModelNotFound},
		{400, "model 'x' not found", llm.ModelNotFound},
		{400, "The model `x` does not exist.", llm.ModelNotFound},
		{400, "Unknown model: x", llm.ModelNotFound},
		{400, "max_tokens: too large", llm.ModelBadRequest},
		{413, "", llm.ModelBadRequest},
		{422, "", llm.ModelBadRequest},
		{429, "", llm.ModelRateLimit},
		{500, "", llm.ModelServer},
		{529, "", llm.ModelServer},
	}
	for _, tt := range tests {
		err := c.StatusError(tt.status, tt.said, nil)
		var me *llm.ModelError
		if !errors.As(err, &me) || me.Kind != tt.kind || me.StatusCode != tt.status {
			t.Errorf("StatusError(%d, %q) = %#v, want kind %s", tt.status, tt.said, err, tt.kind)
		}
	}
}

func TestStructured(t *testing.T) {
	c := &Caller{Provider: "p", Model: "m"}
	use := llm.Block{Type: llm.BlockToolUse, ToolUseID: "t", ToolName: "f"}
	resp := &llm.Response{Content: []llm.Block{llm.TextBlock("Here: "), use, llm.TextBlock(`{"a":1} bye`)}}
	if err := c.Structured(resp); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]llm.Block{llm.TextBlock(`{"a":1}`), use}, resp.Content); diff != "" {
		t.Errorf("content (-want +got):\n%s", diff)
	}
	err := c.Structured(&llm.Response{Content: []llm.Block{llm.TextBlock(`{"a":`)}, StopReason: llm.StopMaxTokens})
	var me *llm.ModelError
	if !errors.As(err, &me) || me.Kind != llm.ModelBadResponse || !strings.Contains(me.Message, "max tokens") {
		t.Errorf("Structured(truncated) = %v, want a bad_response about max tokens", err)
	}
}

func TestSchemaMap(t *testing.T) {
	got, err := SchemaMap(json.RawMessage(`{"type":"object","required":["a"]}`))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]any{"type": "object", "required": []any{"a"}}, got); diff != "" {
		t.Errorf("SchemaMap (-want +got):\n%s", diff)
	}
	for _, bad := range []string{``, `null`, `[1]`, `"x"`, `{`} {
		if _, err := SchemaMap(json.RawMessage(bad)); !errors.Is(err, memdir.ErrInvalid) {
			t.Errorf("SchemaMap(%q) error = %v, want ErrInvalid", bad, err)
		}
	}
}

func TestErrorTypeStatus(t *testing.T) {
	tests := []struct {
		names []string
		want  int
	}{
		{[]string{"overloaded_error"}, 529},
		{[]string{"rate_limit_exceeded", "requests"}, 429},
		{[]string{"", "server_error"}, 500},
		{[]string{"no_such_type"}, 0},
		{nil, 0},
	}
	for _, tt := range tests {
		if got := ErrorTypeStatus(tt.names...); got != tt.want {
			t.Errorf("ErrorTypeStatus(%q) = %d, want %d", tt.names, got, tt.want)
		}
	}
	err := (&Caller{Provider: "p", Model: "m"}).StatusError(0, "llama runner crashed", nil)
	var me *llm.ModelError
	if !errors.As(err, &me) || me.Kind != llm.ModelBadResponse || !strings.Contains(me.Message, "llama runner crashed") {
		t.Errorf("StatusError(0) = %v, want a bad_response quoting the server", err)
	}
}
