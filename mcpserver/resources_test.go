package mcpserver_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/locate"
	"github.com/memdir/memdir/mcpserver"
	"github.com/memdir/memdir/memdirtest"
)

func waitABit() { time.Sleep(time.Millisecond) }

func TestListResources(t *testing.T) {
	for _, tc := range []struct {
		team bool
		want []string
	}{
		{false, []string{"memdir://MEMORY.md"}},
		{true, []string{"memdir://MEMORY.md", "memdir://team/MEMORY.md"}},
	} {
		cs := newFixture(t, &mcpserver.Options{Team: tc.team}).connect(t)
		res, err := cs.ListResources(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range res.Resources {
			got = append(got, r.URI)
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("team=%v: resources (-want +got):\n%s", tc.team, diff)
		}
		tmpl, err := cs.ListResourceTemplates(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(tmpl.ResourceTemplates) != 1 || tmpl.ResourceTemplates[0].URITemplate != mcpserver.MemoryTemplate {
			t.Errorf("templates = %+v", tmpl.ResourceTemplates)
		}
	}
}

func TestReadResources(t *testing.T) {
	f := newFixture(t, &mcpserver.Options{Team: true})
	cs := f.connect(t)
	empty := readText(t, cs, mcpserver.IndexURI)
	if !strings.Contains(empty, "no memories have been saved") {
		t.Errorf("empty index = %q", empty)
	}
	memory := memoryFile("db tests", "integration tests hit a real database", memdir.TypeFeedback, "Use Postgres.\n")
	memdirtest.WriteFiles(t, f.dir.Path(), map[string]string{
		"MEMORY.md":               "---\nnote: frontmatter is not loaded\n---\n- [db tests](feedback_db_tests.md) — integration tests hit a real database\n<!-- a comment -->\n",
		"feedback_db_tests.md":    memory,
		"team/MEMORY.md":          "- [release](project_release.md) — ship on Friday\n",
		"team/project_release.md": memoryFile("release", "ship on Friday", memdir.TypeProject, "Friday.\n"),
		"notes/ünïcode ✓.md":      "unicode name\n",
	})
	cases := []struct{ uri, want string }{
		{mcpserver.IndexURI, "- [db tests](feedback_db_tests.md) — integration tests hit a real database"},
		{mcpserver.TeamIndexURI, "- [release](project_release.md) — ship on Friday"},
		{"memdir://memory/feedback_db_tests.md", memory},
		{"memdir://memory/team/project_release.md", "Friday.\n"},
		{"memdir://memory/team%2Fproject_release.md", "Friday.\n"},
		{mcpserver.MemoryURI("notes/ünïcode ✓.md"), "unicode name\n"},
	}
	for _, tc := range cases {
		got := readText(t, cs, tc.uri)
		if !strings.Contains(got, tc.want) {
			t.Errorf("read %s = %q, want it to contain %q", tc.uri, got, tc.want)
		}
	}
	if got := readText(t, cs, mcpserver.IndexURI); strings.Contains(got, "frontmatter") || strings.Contains(got, "comment") {
		t.Errorf("the index is not as loaded: %q", got)
	}
}

func TestReadResourceErrors(t *testing.T) {
	f := newFixture(t, nil)
	outside := filepath.Join(filepath.Dir(f.dir.Path()), "secret.md")
	memdirtest.WriteFiles(t, f.dir.Path(), map[string]string{"a.md": "a\n", ".hidden.md": "h\n", "binary.md": "x\x00y"})
	memdirtest.WriteFiles(t, filepath.Dir(outside), map[string]string{"secret.md": "secret\n"})
	links := os.Symlink(outside, filepath.Join(f.dir.Path(), "link.md")) == nil
	cs := f.connect(t)
	cases := []struct {
		uri      string
		wantCode int64
		wantMsg  string
	}{
		{"memdir://memory/missing.md", jsonrpc.CodeInvalidParams, "Resource not found"},
		{"memdir://memory/../secret.md", jsonrpc.CodeInvalidParams, "climbs out"},
		{"memdir://memory/%2e%2e/secret.md", jsonrpc.CodeInvalidParams, "climbs out"},
		{"memdir://memory/%252e%252e%252fsecret.md", jsonrpc.CodeInvalidParams, "percent-encoded"},
		{"memdir://memory/..%5csecret.md", jsonrpc.CodeInvalidParams, "backslash"},
		{"memdir://memory/%2Fetc%2Fpasswd.md", jsonrpc.CodeInvalidParams, "absolute"},
		{"memdir://memory/a.md%00", jsonrpc.CodeInvalidParams, "control character"},
		{"memdir://memory/%EF%BC%8E%EF%BC%8E%EF%BC%8Fsecret.md", jsonrpc.CodeInvalidParams, "Unicode normalisation"},
		{"memdir://memory/．．/secret.md", jsonrpc.CodeInvalidParams, "Resource not found"}, // not a URI: the template does not match
		{"memdir://memory/.hidden.md", jsonrpc.CodeInvalidParams, "hidden"},
		{"memdir://memory/MEMORY.md", jsonrpc.CodeInvalidParams, "is the index"},
		{"memdir://memory/a.md?x=1", jsonrpc.CodeInvalidParams, "no query"},
		{"memdir://memory/a.txt", jsonrpc.CodeInvalidParams, `ending in ".md"`},
		{"memdir://memory/binary.md", jsonrpc.CodeInvalidParams, "binary"},
		{"memdir://elsewhere/a.md", jsonrpc.CodeInvalidParams, "Resource not found"},
	}
	if links {
		cases = append(cases, struct {
			uri      string
			wantCode int64
			wantMsg  string
		}{"memdir://memory/link.md", 0, "escapes"})
	}
	for _, tc := range cases {
		_, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: tc.uri})
		var werr *jsonrpc.Error
		switch {
		case err == nil:
			t.Errorf("read %s: no error", tc.uri)
		case !errors.As(err, &werr):
			t.Errorf("read %s: error %v is not a JSON-RPC error", tc.uri, err)
		case tc.wantCode != 0 && werr.Code != tc.wantCode || !strings.Contains(werr.Message, tc.wantMsg):
			t.Errorf("read %s: error %d %q, want %d containing %q", tc.uri, werr.Code, werr.Message, tc.wantCode, tc.wantMsg)
		}
		if err != nil && strings.Contains(err.Error(), "secret\n") {
			t.Errorf("read %s leaked the outside file", tc.uri)
		}
	}
}

func readText(tb testing.TB, cs *mcp.ClientSession, uri string) string {
	tb.Helper()
	res, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: uri})
	if err != nil {
		tb.Fatalf("read %s: %v", uri, err)
	}
	if len(res.Contents) != 1 || res.Contents[0].MIMEType != "text/markdown" {
		tb.Fatalf("read %s: contents %+v", uri, res.Contents)
	}
	return res.Contents[0].Text
}

func TestMemoryPrompt(t *testing.T) {
	f := newFixture(t, &mcpserver.Options{Team: true, Location: &locate.Location{ConfigHome: "/home/u/.claude", ProjectRoot: "/work/p"}})
	plain := newFixture(t, nil)
	memdirtest.WriteFiles(t, f.dir.Path(), map[string]string{"MEMORY.md": "- [db tests](feedback_db_tests.md) — real database\n", "team/MEMORY.md": "- [release](project_release.md) — Friday\n"})
	cs, plainCS := f.connect(t), plain.connect(t)

	list, err := cs.ListPrompts(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Prompts) != 1 || list.Prompts[0].Name != "memory" || len(list.Prompts[0].Arguments) != 3 {
		t.Fatalf("prompts = %+v", list.Prompts)
	}
	cases := []struct {
		name    string
		cs      *mcp.ClientSession
		args    map[string]string
		want    []string
		notWant []string
		wantErr string
	}{
		{"default individual", plainCS, nil, []string{plain.dir.Path() + string(filepath.Separator), "the memdir MCP server"}, []string{"team/"}, ""},
		{"default team when team is on", cs, nil, []string{f.dir.Path() + string(filepath.Separator) + "team" + string(filepath.Separator)}, []string{"Contents of"}, ""},
		{"individual", cs, map[string]string{"mode": "individual"}, []string{f.dir.Path()}, []string{"team" + string(filepath.Separator)}, ""},
		{"daily-log", cs, map[string]string{"mode": "daily-log"}, []string{"logs/"}, nil, ""},
		{"with index", cs, map[string]string{"mode": "team", "with_index": "true"}, []string{"real database", "Friday", "shared team memory"}, nil, ""},
		{"search", cs, map[string]string{"search": "yes"}, []string{"/home/u/.claude/projects/"}, nil, ""},
		{"search without a location", plainCS, map[string]string{"search": "true"}, nil, nil, "location"},
		{"bad mode", cs, map[string]string{"mode": "galaxy"}, nil, nil, `"galaxy"`},
		{"agent mode", cs, map[string]string{"mode": "agent"}, nil, nil, "individual, team or daily-log"},
		{"bad bool", cs, map[string]string{"with_index": "perhaps"}, nil, nil, "true or false"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res, err := tc.cs.GetPrompt(context.Background(), &mcp.GetPromptParams{Name: "memory", Arguments: tc.args})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Errorf("error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Messages) != 1 || res.Messages[0].Role != "user" {
				t.Fatalf("messages = %+v", res.Messages)
			}
			got := res.Messages[0].Content.(*mcp.TextContent).Text
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("prompt does not contain %q", w)
				}
			}
			for _, w := range tc.notWant {
				if strings.Contains(got, w) {
					t.Errorf("prompt contains %q", w)
				}
			}
		})
	}
}
