package agent_test

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/memdir/memdir/anthropic"
	"github.com/memdir/memdir/llm"
	"github.com/memdir/memdir/memdirtest"
	"github.com/memdir/memdir/openai"
)

// client is one way of reaching the fake model server through a real SDK.
type client struct {
	name string
	new  func(tb testing.TB, srv *memdirtest.ModelServer) llm.Model
}

// clients covers both wire formats, plain and streamed. Retries are off so
// that a scripted error reaches the loop at once.
var clients = []client{
	{"anthropic", func(tb testing.TB, srv *memdirtest.ModelServer) llm.Model {
		m, err := anthropic.New(&anthropic.Options{Model: "claude-test", BaseURL: srv.AnthropicBaseURL(), APIKey: "test", MaxRetries: -1})
		return must(tb, m, err)
	}},
	{"anthropic-stream", func(tb testing.TB, srv *memdirtest.ModelServer) llm.Model {
		m, err := anthropic.New(&anthropic.Options{Model: "claude-test", BaseURL: srv.AnthropicBaseURL(), APIKey: "test", MaxRetries: -1, Stream: true})
		return must(tb, m, err)
	}},
	{"openai", func(tb testing.TB, srv *memdirtest.ModelServer) llm.Model {
		m, err := openai.New(&openai.Options{Model: "gpt-test", BaseURL: srv.OpenAIBaseURL(), APIKey: "test", MaxRetries: -1})
		return must(tb, m, err)
	}},
	{"openai-stream", func(tb testing.TB, srv *memdirtest.ModelServer) llm.Model {
		m, err := openai.New(&openai.Options{Model: "gpt-test", BaseURL: srv.OpenAIBaseURL(), APIKey: "test", MaxRetries: -1, Stream: true})
		return must(tb, m, err)
	}},
}

func must[M llm.Model](tb testing.TB, m M, err error) llm.Model {
	tb.Helper()
	if err != nil {
		tb.Fatal(err)
	}
	return m
}

// fixture is a temp tree: mem/ (the memory directory), proj/ (the project),
// and outside/ (a sibling that links in both point at and that must never
// change or leak).
type fixture struct {
	base, mem, proj, outside string
}

const secret = "TOPSECRET outside the project"

func newFixture(tb testing.TB) *fixture {
	tb.Helper()
	base := tb.TempDir()
	f := &fixture{base: base, mem: filepath.Join(base, "mem"), proj: filepath.Join(base, "proj"), outside: filepath.Join(base, "outside")}
	memdirtest.WriteFiles(tb, base, map[string]string{
		"outside/secret.txt":  secret + "\n",
		"proj/README.md":      "# Demo\nRun the tests with make test.\n",
		"proj/src/main.go":    "package main\n\nfunc main() { run() }\n",
		"proj/src/run.go":     "package main\n\nfunc run() {}\n",
		"proj/.git/config":    "[core]\n\tsecret = run\n",
		"proj/docs/notes.txt": "nothing to see\n",
	})
	if err := os.Mkdir(f.mem, 0o700); err != nil {
		tb.Fatal(err)
	}
	symlink(tb, "../outside/secret.txt", filepath.Join(f.proj, "leak.txt"))
	symlink(tb, "../outside", filepath.Join(f.proj, "linkdir"))
	symlink(tb, "../outside", filepath.Join(f.mem, "out"))
	return f
}

func symlink(tb testing.TB, target, name string) {
	tb.Helper()
	if err := os.Symlink(target, name); err != nil {
		tb.Skipf("symbolic links unavailable: %v", err)
	}
}

// tree maps every path under dir to its content ("/" for directories, "->
// target" for links), for before/after comparisons.
func tree(tb testing.TB, dir string) map[string]string {
	tb.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			t, err := os.Readlink(p)
			if err != nil {
				return err
			}
			out[rel] = "-> " + t
		case d.IsDir():
			out[rel] = "/"
		default:
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			out[rel] = string(b)
		}
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	return out
}

func use(id, name, input string) llm.Block {
	return llm.Block{Type: llm.BlockToolUse, ToolUseID: id, ToolName: name, Input: json.RawMessage(input)}
}

func reply(usage llm.Usage, blocks ...llm.Block) memdirtest.ModelReply {
	return memdirtest.ModelReply{Content: blocks, Usage: usage}
}

func userText(text string) []llm.Message {
	return []llm.Message{{Role: llm.RoleUser, Content: []llm.Block{llm.TextBlock(text)}}}
}

// toolNames lists the names of tool definitions.
func toolNames(tools []llm.Tool) []string {
	var out []string
	for _, t := range tools {
		out = append(out, t.Name)
	}
	return out
}

// resultBlock is the part of a tool_result block a test compares. The
// OpenAI wire has no error flag: the adapter prefixes the text with
// "Error: " instead, and the fake cannot tell, so Error is only compared for
// Anthropic.
type resultBlock struct {
	ID    string
	Error bool
}

func toolResults(api string, m llm.Message) []resultBlock {
	var out []resultBlock
	for _, b := range m.Content {
		if b.Type != llm.BlockToolResult {
			continue
		}
		rb := resultBlock{ID: b.ToolUseID, Error: b.IsError}
		if api == "openai" {
			rb.Error = len(b.Text) >= 7 && b.Text[:7] == "Error: "
		}
		out = append(out, rb)
	}
	return out
}
