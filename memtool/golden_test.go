package memtool

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// TestGoldenSession runs a scripted session covering every command's
// success and error texts and compares the transcript with
// testdata/session.txtar. Regenerate with: go test ./memtool -run Golden -update
func TestGoldenSession(t *testing.T) {
	t.Parallel()
	tool, root := mustTool(t, &Options{MaxFileBytes: 256, MaxViewChars: 400})
	var long []string
	for i := 1; i <= 40; i++ {
		long = append(long, fmt.Sprintf("entry %02d", i))
	}
	mustWrite(t, root, map[string]string{
		"user.md":              "# User\n- prefers tabs\n- works in Go\n",
		"project/overview.md":  "one\ntwo\nthree\nfour\nfive\nsix\n",
		"project/deep/a/b.md":  "deep\n",
		"project/todo.md":      "- [ ] ship\n- [ ] ship\n",
		"log.md":               strings.Join(long, "\n") + "\n",
		"blob.bin":             "\x00\x01\x02",
		".hidden.md":           "not listed",
		"node_modules/x/y.js":  "not listed",
		"project/.cache/z.txt": "not listed",
	})
	steps := []string{
		// view
		`{"command":"view","path":"/memories"}`,
		`{"command":"view","path":"/memories/project/"}`,
		`{"command":"view","path":"/memories/user.md"}`,
		`{"command":"view","path":"/memories/project/overview.md","view_range":[2,4]}`,
		`{"command":"view","path":"/memories/project/overview.md","view_range":[5,-1]}`,
		`{"command":"view","path":"/memories/project/overview.md","view_range":[5,60]}`,
		`{"command":"view","path":"/memories/project/overview.md","view_range":[0,2]}`,
		`{"command":"view","path":"/memories/project/overview.md","view_range":[4,3]}`,
		`{"command":"view","path":"/memories/log.md"}`,
		`{"command":"view","path":"/memories/log.md","view_range":[27,-1]}`,
		`{"command":"view","path":"/memories/blob.bin"}`,
		`{"command":"view","path":"/memories/nope.md"}`,
		`{"command":"view","path":"/memoriesfoo"}`,
		`{"command":"view","path":"/memories/../etc/passwd"}`,
		`{"command":"view","path":"/memories/%2e%2e%2fetc%2fpasswd"}`,
		`{"command":"view","path":"/memories/%252e%252e%252fetc"}`,
		`{"command":"view","path":"/memories/．．／etc"}`,
		`{"command":"view","path":"/memories/..\\etc"}`,
		`{"command":"view","path":"/memories/.hidden.md"}`,
		// create
		`{"command":"create","path":"/memories/feedback.md","file_text":"- keep answers short\n"}`,
		`{"command":"create","path":"/memories/people/alice.md","file_text":"Alice owns the billing service.\n"}`,
		`{"command":"create","path":"/memories/user.md","file_text":"replace?"}`,
		`{"command":"create","path":"/memories","file_text":"x"}`,
		`{"command":"create","path":"/memories/huge.md","file_text":"` + strings.Repeat("x", 300) + `"}`,
		`{"command":"create","path":"/memories/user.md/x.md","file_text":"x"}`,
		// str_replace
		`{"command":"str_replace","path":"/memories/project/overview.md","old_str":"four","new_str":"FOUR\nfour and a half"}`,
		`{"command":"str_replace","path":"/memories/project/overview.md","old_str":"seven","new_str":"7"}`,
		`{"command":"str_replace","path":"/memories/project/todo.md","old_str":"- [ ] ship","new_str":"- [x] ship"}`,
		`{"command":"str_replace","path":"/memories/nope.md","old_str":"a","new_str":"b"}`,
		`{"command":"str_replace","path":"/memories/project","old_str":"a","new_str":"b"}`,
		`{"command":"str_replace","path":"/memories/user.md","old_str":"","new_str":"b"}`,
		`{"command":"str_replace","path":"/memories/blob.bin","old_str":"a","new_str":"b"}`,
		// insert
		`{"command":"insert","path":"/memories/user.md","insert_line":0,"insert_text":"<!-- reviewed -->"}`,
		`{"command":"insert","path":"/memories/user.md","insert_line":4,"insert_text":"- likes short answers\n"}`,
		`{"command":"insert","path":"/memories/user.md","insert_line":9,"insert_text":"x"}`,
		`{"command":"insert","path":"/memories/user.md","insert_line":-1,"insert_text":"x"}`,
		`{"command":"insert","path":"/memories/nope.md","insert_line":0,"insert_text":"x"}`,
		`{"command":"view","path":"/memories/user.md"}`,
		// rename
		`{"command":"rename","old_path":"/memories/feedback.md","new_path":"/memories/archive/2026/feedback.md"}`,
		`{"command":"rename","old_path":"/memories/feedback.md","new_path":"/memories/x.md"}`,
		`{"command":"rename","old_path":"/memories/user.md","new_path":"/memories/people/alice.md"}`,
		`{"command":"rename","old_path":"/memories/project","new_path":"/memories/project/inner"}`,
		`{"command":"rename","old_path":"/memories","new_path":"/memories/all"}`,
		`{"command":"rename","old_path":"/memories/user.md","new_path":"/memoriesfoo/user.md"}`,
		// delete
		`{"command":"delete","path":"/memories/people/alice.md"}`,
		`{"command":"delete","path":"/memories/project"}`,
		`{"command":"delete","path":"/memories/project"}`,
		`{"command":"delete","path":"/memories"}`,
		`{"command":"delete","path":"/memories/"}`,
		`{"command":"delete","path":"/memoriesfoo"}`,
		// malformed input
		`{"command":"remember","path":"/memories"}`,
		`{"path":"/memories"}`,
		`{"command":"view","path":42}`,
		`{"command":"str_replace","path":"/memories/user.md","new_str":"x"}`,
		`not json`,
		// final state
		`{"command":"view","path":"/memories"}`,
	}
	// The transcript is written in txtar form by hand: go-internal's txtar
	// needs golang.org/x/tools, which is not in go.mod.
	var b strings.Builder
	b.WriteString("A memory-tool session: each \"NN in\" is a tool_use input, \"NN out\" the result, \"NN error\" an is_error result.\n" +
		"Generated by TestGoldenSession; regenerate with go test ./memtool -run Golden -update.\n")
	for i, in := range steps {
		out, err := tool.Execute(context.Background(), json.RawMessage(in))
		kind := "out"
		if err != nil {
			kind, out = "error", err.Error()
			// The reference's messages carry no "Error: " prefix (a tool
			// runner adds its own), and neither do memdir's.
			if strings.HasPrefix(out, "Error") {
				t.Errorf("%s: message %q starts with Error", in, out)
			}
		}
		out = dirSizesElided(out)
		fmt.Fprintf(&b, "-- %02d in --\n%s\n-- %02d %s --\n%s\n", i+1, in, i+1, kind, out)
		checkNoTemp(t, root)
	}
	got := []byte(b.String())
	golden := filepath.Join("testdata", "session.txtar")
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("session differs from %s (-want +got):\n%s", golden, diff)
	}
}

// dirSizesElided replaces the sizes of directories in a listing with
// "<dir>": a listing shows what the filesystem reports for a directory
// (4K on ext4, other values on tmpfs or btrfs), which the golden file cannot
// pin down. TestViewDirectory checks those sizes against os.Lstat.
func dirSizesElided(out string) string {
	if !strings.HasPrefix(out, "Here're the files and directories") {
		return out
	}
	lines := strings.Split(out, "\n")
	for i, l := range lines {
		size, name, ok := strings.Cut(l, "\t")
		if ok && i > 0 && (i == 1 || strings.HasSuffix(name, "/")) && size != "" {
			lines[i] = "<dir>\t" + name
		}
	}
	return strings.Join(lines, "\n")
}
