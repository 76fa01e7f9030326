package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestServesTheProjectsMemory connects an MCP client to the host's server
// (over in-memory transports instead of stdio), saves a memory with the
// save tool and recalls it: the file lands in the directory Claude Code
// uses for the project.
func TestServesTheProjectsMemory(t *testing.T) {
	home := t.TempDir()
	project := filepath.Join(t.TempDir(), "shop")
	if err := os.MkdirAll(project, 0o700); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{
		"HOME": home, "CLAUDE_CONFIG_DIR": filepath.Join(home, ".claude"),
		"MEMDIR_STATE_DIR": filepath.Join(home, "state"), "MEMDIR_CONFIG_DIR": filepath.Join(home, "config"),
	}
	srv, err := newServer(project, func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "example-test", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()

	call := func(tool string, args map[string]any) string {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
		if err != nil || res.IsError {
			t.Fatalf("%s: %v %+v", tool, err, res)
		}
		var text strings.Builder
		for _, c := range res.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				text.WriteString(tc.Text)
			}
		}
		return text.String()
	}
	call("save", map[string]any{"name": "db tests", "description": "integration tests hit a real Postgres database, never mocks", "type": "feedback", "body": "Use Postgres in tests."})
	if got := call("recall", map[string]any{"query": "should the integration tests mock the database?"}); !strings.Contains(got, "Use Postgres in tests.") {
		t.Errorf("recall did not return the saved memory:\n%s", got)
	}
	matches, _ := filepath.Glob(filepath.Join(home, ".claude", "projects", "*", "memory", "feedback_db_tests.md"))
	if len(matches) != 1 {
		t.Errorf("the memory is not in Claude Code's directory for the project: %v", matches)
	}
}
