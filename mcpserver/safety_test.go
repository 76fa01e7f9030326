package mcpserver_test

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memdir/memdir/mcpserver"
	"github.com/memdir/memdir/memdirtest"
)

// TestHTTPChecksOrigin sends an initialize request over streamable HTTP with
// various Origin and Host headers: a foreign Origin is refused with 403 (as
// the MCP specification requires), the server's own or none is served, and
// the Host check still holds.
func TestHTTPChecksOrigin(t *testing.T) {
	f := newFixture(t, nil)
	ts := httptest.NewServer(mcpserver.NewHandler(f.srv, nil))
	defer ts.Close()
	host := strings.TrimPrefix(ts.URL, "http://")
	_, port, err := net.SplitHostPort(host)
	if err != nil {
		t.Fatal(err)
	}
	const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	cases := []struct {
		name    string
		origins []string
		host    string
		want    int
	}{
		{"no origin", nil, "", http.StatusOK},
		{"own origin", []string{ts.URL}, "", http.StatusOK},
		{"own origin, other case", []string{"HTTP://" + strings.ToUpper(host)}, "", http.StatusOK},
		{"foreign origin", []string{"http://evil.example"}, "", http.StatusForbidden},
		{"foreign port", []string{"http://127.0.0.1:1"}, "", http.StatusForbidden},
		{"https for http", []string{"https://" + host}, "", http.StatusForbidden},
		{"null origin", []string{"null"}, "", http.StatusForbidden},
		{"origin with a path", []string{ts.URL + "/x"}, "", http.StatusForbidden},
		{"two origins", []string{ts.URL, "http://evil.example"}, "", http.StatusForbidden},
		{"foreign host", nil, "evil.example", http.StatusForbidden},
		{"foreign host, matching origin", []string{"http://evil.example"}, "evil.example", http.StatusForbidden},
		// The server's own names: it listens on 127.0.0.1, which is also
		// localhost and, to a browser, the same machine as [::1].
		{"localhost, sent to 127.0.0.1", []string{"http://localhost:" + port}, "", http.StatusOK},
		{"LOCALHOST, sent to 127.0.0.1", []string{"http://LOCALHOST:" + port}, "", http.StatusOK},
		{"[::1], sent to 127.0.0.1", []string{"http://[::1]:" + port}, "", http.StatusOK},
		{"127.0.0.1, sent to localhost", []string{ts.URL}, "localhost:" + port, http.StatusOK},
		{"localhost, sent to localhost", []string{"http://localhost:" + port}, "localhost:" + port, http.StatusOK},
		{"localhost, other port", []string{"http://localhost:1"}, "", http.StatusForbidden},
		{"localhost without a port", []string{"http://localhost"}, "", http.StatusForbidden},
		{"https localhost", []string{"https://localhost:" + port}, "", http.StatusForbidden},
		{"a name under localhost", []string{"http://localhost.evil.example:" + port}, "", http.StatusForbidden},
		{"another loopback address", []string{"http://127.0.0.2:" + port}, "", http.StatusForbidden},
		{"the unspecified address", []string{"http://0.0.0.0:" + port}, "", http.StatusForbidden},
		{"foreign origin, own port", []string{"http://evil.example:" + port}, "localhost:" + port, http.StatusForbidden},
		{"localhost with a path", []string{"http://localhost:" + port + "/"}, "", http.StatusForbidden},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest("POST", ts.URL, strings.NewReader(initialize))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			for _, o := range tc.origins {
				req.Header.Add("Origin", o)
			}
			if tc.host != "" {
				req.Host = tc.host
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tc.want {
				t.Errorf("status %d, want %d", resp.StatusCode, tc.want)
			}
		})
	}
}

// TestSchemasArePlain checks that no tool declares a nullable (union) type,
// which some clients cannot fill in, and that leaving an optional argument
// out or sending it as null both mean "none".
func TestSchemasArePlain(t *testing.T) {
	f := newFixture(t, nil)
	cs := f.connect(t)
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"memory.view_range": "array", "memory.insert_line": "integer", "recall.recent_tools": "array", "memory.file_text": "string"}
	got := map[string]string{}
	for _, tool := range res.Tools {
		data, _ := json.Marshal(tool.InputSchema)
		var s struct {
			Properties map[string]struct {
				Type any `json:"type"`
			} `json:"properties"`
		}
		if err := json.Unmarshal(data, &s); err != nil {
			t.Fatal(err)
		}
		for name, p := range s.Properties {
			typ, ok := p.Type.(string)
			if !ok {
				t.Errorf("tool %s: property %s has type %v; want a plain type", tool.Name, name, p.Type)
			}
			if _, ok := want[tool.Name+"."+name]; ok {
				got[tool.Name+"."+name] = typ
			}
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("property types (-want +got):\n%s", diff)
	}

	callOK(t, cs, "memory", map[string]any{"command": "create", "path": "/memories/a.md", "file_text": "one\ntwo\nthree\n"}, nil)
	if got := callOK(t, cs, "memory", map[string]any{"command": "view", "path": "/memories/a.md", "view_range": []int{2, 2}}, nil); !strings.Contains(got, "two") || strings.Contains(got, "one") {
		t.Errorf("view with a range = %q", got)
	}
	if got := callOK(t, cs, "memory", map[string]any{"command": "view", "path": "/memories/a.md", "view_range": nil}, nil); !strings.Contains(got, "one") || !strings.Contains(got, "three") {
		t.Errorf("view with a null range = %q", got)
	}
	callOK(t, cs, "memory", map[string]any{"command": "insert", "path": "/memories/a.md", "insert_line": 1, "insert_text": "1.5\n"}, nil)
	if got := callErr(t, cs, "memory", map[string]any{"command": "insert", "path": "/memories/a.md", "insert_line": nil, "insert_text": "x\n"}); !strings.Contains(got, "insert_line") {
		t.Errorf("insert with a null insert_line: %q does not name insert_line", got)
	}
	callOK(t, cs, "save", map[string]any{"name": "db tests", "description": "integration tests hit a real database", "type": "feedback", "body": "Use Postgres."}, nil)
	var out mcpserver.RecallOutput
	callOK(t, cs, "recall", map[string]any{"query": "do tests use a real database?", "recent_tools": nil}, &out)
	if len(out.Memories) != 1 {
		t.Errorf("recall with null recent_tools = %+v", out)
	}
	callOK(t, cs, "recall", map[string]any{"query": "database tests again", "recent_tools": []string{"Bash"}}, &out)
}

func TestToolAnnotations(t *testing.T) {
	cs := newFixture(t, nil).connect(t)
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, tool := range res.Tools {
		a := tool.Annotations
		got[tool.Name] = a != nil && !a.ReadOnlyHint && (a.DestructiveHint == nil || *a.DestructiveHint)
	}
	// save replaces the memory of the same name, so it is destructive too.
	want := map[string]bool{"memory": true, "recall": false, "save": true, "forget": true}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("destructive tools (-want +got):\n%s", diff)
	}
}

// TestErrorsReadAsEnglish checks that the error texts a model reads carry
// no Go sentinel text.
func TestErrorsReadAsEnglish(t *testing.T) {
	f := newFixture(t, nil)
	cs := f.connect(t)
	memdirtest.WriteFiles(t, f.dir.Path(), map[string]string{
		"a.md": memoryFile("twin", "one of two", "user", "a"),
		"b.md": memoryFile("twin", "the other", "user", "b"),
	})
	msgs := []string{
		callErr(t, cs, "save", map[string]any{"name": "x", "description": "d", "type": "user", "body": "b", "team": true}),
		callErr(t, cs, "save", map[string]any{"name": " ", "description": "d", "type": "user", "body": "b"}),
		callErr(t, cs, "save", map[string]any{"name": "x", "description": "d", "type": "user", "body": "a\x00b"}),
		callErr(t, cs, "save", map[string]any{"name": "twin", "description": "d", "type": "user", "body": "b"}),
		callErr(t, cs, "forget", map[string]any{"memory": ""}),
		callErr(t, cs, "forget", map[string]any{"memory": "../x.md"}),
		callErr(t, cs, "forget", map[string]any{"memory": "twin"}),
		callErr(t, cs, "recall", map[string]any{"query": " "}),
	}
	for _, uri := range []string{"memdir://memory/../x.md", "memdir://memory/a.md?q"} {
		_, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: uri})
		var werr *jsonrpc.Error
		if !errors.As(err, &werr) {
			t.Fatalf("read %s: %v", uri, err)
		}
		msgs = append(msgs, werr.Message)
	}
	for _, m := range msgs {
		if strings.Contains(m, ": invalid") {
			t.Errorf("the model reads Go sentinel text: %q", m)
		}
	}
}
