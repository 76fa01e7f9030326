package mcpserver_test

import (
	"context"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memdir/memdir/mcpserver"
)

// TestHTTPHandler runs a save and two recalls over streamable HTTP: the
// session keeps its recall record across requests.
func TestHTTPHandler(t *testing.T) {
	f := newFixture(t, nil)
	ts := httptest.NewServer(mcpserver.NewHandler(f.srv, nil))
	defer ts.Close()
	ctx := context.Background()
	client := mcp.NewClient(&mcp.Implementation{Name: "http-test", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: ts.URL, DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if cs.ID() == "" {
		t.Error("no session id over HTTP")
	}
	var saved mcpserver.SaveOutput
	callOK(t, cs, "save", map[string]any{"name": "db tests", "description": "integration tests hit a real database", "type": "feedback", "body": "Use Postgres."}, &saved)
	if saved.Status != "created" {
		t.Errorf("save = %+v", saved)
	}
	var got [2][]string
	for i := range got {
		var out mcpserver.RecallOutput
		callOK(t, cs, "recall", map[string]any{"query": "do tests use a real database?"}, &out)
		got[i] = recallPaths(out)
	}
	if diff := cmp.Diff([2][]string{{saved.Path}, {}}, got); diff != "" {
		t.Errorf("recalls over HTTP (-want +got):\n%s", diff)
	}
}
