package mcpserver_test

import (
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/mcpserver"
	"github.com/memdir/memdir/review"
)

var testNow = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

// fixture is a memory directory with its own journal, served by one server.
type fixture struct {
	dir      *memdir.Dir
	review   *review.Queue
	srv      *mcp.Server
	sessions *mcpserver.Sessions
}

// newFixture opens a fresh memory directory (not created yet) and its server.
// opts may be nil; the fixture fills in the directory's clock and sessions.
func newFixture(tb testing.TB, opts *mcpserver.Options) *fixture {
	tb.Helper()
	base := tb.TempDir()
	d, q, err := review.Open(filepath.Join(base, "memory"), &memdir.Options{
		Now:     func() time.Time { return testNow },
		Journal: memdir.NewJournal(filepath.Join(base, "journal"), func() time.Time { return testNow }),
	}, &review.Options{Dir: filepath.Join(base, "review")})
	if err != nil {
		tb.Fatal(err)
	}
	o := mcpserver.Options{}
	if opts != nil {
		o = *opts
	}
	if o.Now == nil {
		o.Now = func() time.Time { return testNow }
	}
	if o.Sessions == nil {
		o.Sessions = mcpserver.NewSessions()
	}
	return &fixture{dir: d, review: q, srv: mcpserver.New(d, &o), sessions: o.Sessions}
}

// connect starts a client session on the fixture's server over in-memory
// transports; the session is closed when the test ends.
func (f *fixture) connect(tb testing.TB) *mcp.ClientSession {
	tb.Helper()
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := f.srv.Connect(ctx, st, nil)
	if err != nil {
		tb.Fatal(err)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, nil)
	cs, err := client.Connect(ctx, ct, nil)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		cs.Close()
		ss.Wait()
	})
	return cs
}

// call calls a tool and returns its result; a protocol error fails the test.
func call(tb testing.TB, cs *mcp.ClientSession, tool string, args any) *mcp.CallToolResult {
	tb.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		tb.Fatalf("call %s: protocol error: %v", tool, err)
	}
	return res
}

// callOK calls a tool, fails the test if the result is an error, and decodes
// the structured output into out (when not nil).
func callOK(tb testing.TB, cs *mcp.ClientSession, tool string, args, out any) string {
	tb.Helper()
	res := call(tb, cs, tool, args)
	if res.IsError {
		tb.Fatalf("call %s %v: tool error: %s", tool, args, text(res))
	}
	if out != nil {
		data, err := json.Marshal(res.StructuredContent)
		if err != nil {
			tb.Fatal(err)
		}
		if err := json.Unmarshal(data, out); err != nil {
			tb.Fatalf("call %s: structured output %s: %v", tool, data, err)
		}
	}
	return text(res)
}

// callErr calls a tool that must fail and returns the error text.
func callErr(tb testing.TB, cs *mcp.ClientSession, tool string, args any) string {
	tb.Helper()
	res := call(tb, cs, tool, args)
	if !res.IsError {
		tb.Fatalf("call %s %v: want a tool error, got %s", tool, args, text(res))
	}
	return text(res)
}

// text joins the text content of a result.
func text(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, t.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// snapshot returns every regular file below dir with its content, keyed by
// slash path; a missing dir is empty.
func snapshot(tb testing.TB, dir string) map[string]string {
	tb.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if os.IsNotExist(err) && p == dir {
			return filepath.SkipDir
		}
		if err != nil || e.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out[filepath.ToSlash(rel)] = string(data)
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	return out
}

// memoryFile is a memory file's text in the on-disk format.
func memoryFile(name, desc string, t memdir.Type, body string) string {
	m := &memdir.Memory{Name: name, Description: desc, Type: t, Body: body}
	return string(m.Format())
}
