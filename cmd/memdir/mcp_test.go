package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memdir/memdir/internal/cli"
	"github.com/memdir/memdir/mcpserver"
	"github.com/memdir/memdir/memdirtest"
)

// mcpSession exercises a connected client the way a user's client would:
// list the tools, save a memory, recall it, read it back as a resource. It
// returns the saved memory's path.
func mcpSession(tb testing.TB, cs *mcp.ClientSession) string {
	tb.Helper()
	ctx := context.Background()
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		tb.Fatal(err)
	}
	var names []string
	for _, t := range tools.Tools {
		names = append(names, t.Name)
	}
	slices.Sort(names)
	if diff := cmp.Diff([]string{"forget", "memory", "recall", "save"}, names); diff != "" {
		tb.Errorf("tools (-want +got):\n%s", diff)
	}
	structured := func(tool string, args map[string]any, out any) {
		tb.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
		if err != nil {
			tb.Fatalf("%s: %v", tool, err)
		}
		if res.IsError {
			tb.Fatalf("%s: tool error: %+v", tool, res.Content[0])
		}
		data, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(data, out); err != nil {
			tb.Fatal(err)
		}
	}
	var saved mcpserver.SaveOutput
	structured("save", map[string]any{"name": "db tests", "description": "integration tests hit a real Postgres database, never mocks", "type": "feedback", "body": "Mocks hid a broken migration."}, &saved)
	if saved.Status != "created" || saved.Run == "" {
		tb.Errorf("save = %+v", saved)
	}
	var recalled mcpserver.RecallOutput
	structured("recall", map[string]any{"query": "should the tests mock the database?"}, &recalled)
	if len(recalled.Memories) != 1 || recalled.Memories[0].Path != saved.Path || recalled.Method != "lexical" {
		tb.Errorf("recall = %+v", recalled)
	}
	for uri, want := range map[string]string{
		mcpserver.IndexURI: "- [db tests](" + saved.Path + ")",
		saved.URI:          "Mocks hid a broken migration.",
	} {
		res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		if err != nil {
			tb.Fatalf("read %s: %v", uri, err)
		}
		if got := res.Contents[0].Text; !strings.Contains(got, want) {
			tb.Errorf("read %s = %q, want it to contain %q", uri, got, want)
		}
	}
	return saved.Path
}

// TestMCPCommandStdio runs 'memdir mcp' in-process, speaking MCP over pipes
// standing in for standard input and output.
func TestMCPCommandStdio(t *testing.T) {
	w := newMemWorld(t)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	var stderr bytes.Buffer
	env := &cli.Env{
		Stdin: inR, Stdout: outW, Stderr: &stderr,
		LookupEnv: func(k string) (string, bool) { v, ok := w.vars[k]; return v, ok },
		Cwd:       w.project,
		Now:       func() time.Time { return w.now },
	}
	code := make(chan int, 1)
	go func() {
		code <- Main(context.Background(), []string{"mcp"}, env)
		outW.Close()
	}()
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	cs, err := client.Connect(context.Background(), &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if cs.InitializeResult().ServerInfo.Name != "memdir" || cs.InitializeResult().ServerInfo.Version != cli.Version {
		t.Errorf("server info = %+v", cs.InitializeResult().ServerInfo)
	}
	path := mcpSession(t, cs)
	cs.Close() // closes stdin: the server ends
	if c := <-code; c != cli.ExitOK {
		t.Errorf("exit %d, stderr:\n%s", c, stderr.String())
	}
	if stderr.Len() != 0 {
		t.Errorf("stderr is not empty:\n%s", stderr.String())
	}
	if _, err := os.Stat(filepath.Join(w.memDir(t), path)); err != nil {
		t.Errorf("the memory is not in the located directory: %v", err)
	}
	// The save is journaled where 'memdir log' and 'memdir undo' find it.
	if out := w.ok(t, "log"); !strings.Contains(out, path) {
		t.Errorf("memdir log does not show the save:\n%s", out)
	}
}

func TestMCPCommandUsage(t *testing.T) {
	w := newMemWorld(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"mcp", "extra"}, "takes no arguments"},
		{[]string{"mcp", "--http", "0.0.0.0:8788"}, "only listens on a loopback address"},
		{[]string{"mcp", "--http", "8788"}, "want HOST:PORT"},
		{[]string{"serve", "--mcp", "--addr", "192.0.2.1:8787"}, "only listens on a loopback address"},
	} {
		_, stderr, code := w.run(t, tc.args...)
		if code != cli.ExitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("memdir %s: exit %d, stderr %q; want %d and %q", strings.Join(tc.args, " "), code, stderr, cli.ExitUsage, tc.want)
		}
	}
}

// TestServeMountsMCP checks the handler 'memdir serve --mcp' serves: /mcp is
// the memory directory, every other path the team server.
func TestServeMountsMCP(t *testing.T) {
	w := newMemWorld(t)
	dir := filepath.Join(t.TempDir(), "memory")
	env := &cli.Env{
		Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: io.Discard,
		LookupEnv: func(k string) (string, bool) { v, ok := w.vars[k]; return v, ok },
		Cwd:       w.project,
		Now:       func() time.Time { return w.now },
	}
	team := http.HandlerFunc(func(rw http.ResponseWriter, _ *http.Request) { io.WriteString(rw, "team server") })
	h, err := withMCP(context.Background(), env, team, "127.0.0.1:8787", dir, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(h)
	defer ts.Close()
	resp, err := http.Get(ts.URL + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "team server" {
		t.Errorf("/healthz = %q, want the team server", body)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	cs, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: ts.URL + "/mcp", DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	path := mcpSession(t, cs)
	if _, err := os.Stat(filepath.Join(dir, path)); err != nil {
		t.Errorf("the memory is not in --mcp-dir: %v", err)
	}
}

// TestMCPEndToEnd starts the memdir binary as an MCP client would and talks
// to it over its standard input and output.
func TestMCPEndToEnd(t *testing.T) {
	bin := memdirtest.BuildProgram(t, ".", "memdir")
	w := newMemWorld(t)
	cmd := exec.Command(bin, "mcp")
	cmd.Dir = w.project
	cmd.Env = []string{"HOME=" + w.home, "MEMDIR_STATE_DIR=" + w.state, "PATH=" + os.Getenv("PATH")}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	client := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, nil)
	cs, err := client.Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	path := mcpSession(t, cs)
	if err := cs.Close(); err != nil {
		t.Errorf("close: %v (stderr: %s)", err, stderr.String())
	}
	if cmd.ProcessState == nil || !cmd.ProcessState.Success() {
		t.Errorf("memdir mcp ended with %v; stderr:\n%s", cmd.ProcessState, stderr.String())
	}
	if _, err := os.Stat(filepath.Join(w.memDir(t), path)); err != nil {
		t.Errorf("the memory is not in the located directory: %v", err)
	}
}
