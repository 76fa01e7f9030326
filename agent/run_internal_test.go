package agent

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/memdir/memdir/anthropic"
	"github.com/memdir/memdir/llm"
	"github.com/memdir/memdir/memtool"
)

// Tool input that is not JSON at all is answered with an error by every
// tool, never a crash; the loop echoes it to the model as {}.
func TestMalformedInput(t *testing.T) {
	base := t.TempDir()
	mem, proj := filepath.Join(base, "mem"), filepath.Join(base, "proj")
	for _, d := range []string{mem, proj} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	// The model is never called: this drives the dispatcher directly.
	model, err := anthropic.New(&anthropic.Options{Model: "unused", BaseURL: "http://127.0.0.1:1", APIKey: "x"})
	if err != nil {
		t.Fatal(err)
	}
	r, err := start(&Options{Model: model, MemoryDir: mem, ProjectDir: proj})
	if err != nil {
		t.Fatal(err)
	}
	defer r.close()
	for _, in := range []string{`{"path": "a.md"`, `not json`, `{"command":"view",}`, "\x00", `"just a string"`, `null`, ``} {
		for _, name := range []string{memtool.Name, ToolReadFile, ToolGrep, ToolGlob, ToolLs} {
			out, isErr, denied, fatal := r.call(context.Background(), llm.Block{Type: llm.BlockToolUse, ToolUseID: "x", ToolName: name, Input: json.RawMessage(in)})
			if fatal != nil || denied {
				t.Errorf("%s %q: fatal %v, denied %v", name, in, fatal, denied)
			}
			if name == ToolLs && in == `` {
				if isErr {
					t.Errorf("ls %q: %s; want the listing (no keys are required)", in, out)
				}
				continue
			}
			if !isErr || out == "" {
				t.Errorf("%s %q = %q, error %v; want an error", name, in, out, isErr)
			}
		}
	}
	echoed := echo([]llm.Block{{Type: llm.BlockToolUse, Input: json.RawMessage(`{"path": "a.md"`)}, {Type: llm.BlockToolUse, Input: json.RawMessage(`{"ok":1}`)}})
	if string(echoed[0].Input) != "{}" || string(echoed[1].Input) != `{"ok":1}` {
		t.Errorf("echo = %s, %s", echoed[0].Input, echoed[1].Input)
	}
	if got := string(recordInput(json.RawMessage(`{"path": "a.md"`))); got != `"{\"path\": \"a.md\""` {
		t.Errorf("recordInput = %s", got)
	}
}
