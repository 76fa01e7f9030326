package mcpserver_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memdir/memdir/memtool"
)

// FuzzToolCall sends arbitrary arguments to every tool and reads arbitrary
// resource URIs, as a client can: the server answers each with a result or
// an error, never a panic, and no call writes outside the memory
// directory.
func FuzzToolCall(f *testing.F) {
	for _, s := range []struct {
		tool uint8
		args string
	}{
		{0, `{"command":"view","path":"/memories"}`},
		{0, `{"command":"create","path":"/memories/a.md","file_text":"---\nname: a\ndescription: d\ntype: user\n---\nbody\n"}`},
		{0, `{"command":"str_replace","path":"/memories/a.md","old_str":"body","new_str":"\u0000"}`},
		{0, `{"command":"insert","path":"/memories/a.md","insert_line":-9,"insert_text":"x"}`},
		{0, `{"command":"view","path":"/memories/a.md","view_range":[9223372036854775807,-1]}`},
		{0, `{"command":"rename","old_path":"/memories/a.md","new_path":"/memories/../b.md"}`},
		{1, `{"query":"how do we deploy","recent_tools":["Bash"]}`},
		{1, `{"query":""}`},
		{2, `{"name":"testing policy","description":"run the tests","type":"feedback","body":"Why: x"}`},
		{2, `{"name":"\xff","description":"d","type":"user","body":"b","team":true}`},
		{3, `{"memory":"a.md"}`},
		{3, `{"memory":"../../etc/passwd"}`},
		{4, `memdir://memory/a.md`},
		{4, `memdir://memory/%2e%2e/x.md`},
		{0, `[]`},
		{2, `{"name":1}`},
	} {
		f.Add(s.tool, s.args)
	}
	fx := newFixture(f, nil)
	cs := fx.connect(f)
	tools := []string{memtool.Name, "recall", "save", "forget"}
	outside := filepath.Dir(fx.dir.Path())
	areas := map[string]bool{"memory": true, "journal": true, "review": true}
	f.Fuzz(func(t *testing.T, tool uint8, args string) {
		ctx := context.Background()
		if int(tool)%(len(tools)+1) == len(tools) {
			cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: args})
			return
		}
		var raw any = json.RawMessage(args)
		if !json.Valid([]byte(args)) {
			raw = args // the client sends it as a JSON string
		}
		cs.CallTool(ctx, &mcp.CallToolParams{Name: tools[int(tool)%(len(tools)+1)], Arguments: raw})
		entries, err := os.ReadDir(outside)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if !areas[e.Name()] && !strings.HasPrefix(e.Name(), "journal.") { // the journal's use log sits beside it
				t.Fatalf("%s %s wrote %s beside the memory directory", tools[int(tool)%(len(tools)+1)], args, e.Name())
			}
		}
	})
}
