package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/llm"
	"github.com/memdir/memdir/memdirtest"
)

// jsonKeys decodes a JSON object and returns its keys, sorted, with the keys
// of nested objects as "outer.inner".
func jsonKeys(tb testing.TB, out string) []string {
	tb.Helper()
	var v map[string]any
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		tb.Fatalf("not a JSON object: %v\n%s", err, out)
	}
	var keys []string
	for k, x := range v {
		keys = append(keys, k)
		if m, ok := x.(map[string]any); ok {
			for k2 := range m {
				keys = append(keys, k+"."+k2)
			}
		}
	}
	sort.Strings(keys)
	return keys
}

// isSnake reports whether every key is lower snake_case.
func checkSnake(tb testing.TB, cmd string, keys []string) {
	tb.Helper()
	for _, k := range keys {
		if strings.ToLower(k) != k {
			tb.Errorf("%s --json: key %q is not snake_case (keys %v)", cmd, k, keys)
		}
	}
}

func TestSaveRmMvJSONSnakeCase(t *testing.T) {
	w := newMemWorld(t)
	out := w.ok(t, "save", "--json", "--name", "grafana", "--type", "reference", "--description", "dashboards", "--body", "grafana.internal")
	keys := jsonKeys(t, out)
	checkSnake(t, "save", keys)
	for _, want := range []string{"path", "abs_path", "created", "changed", "run_id", "index.lines", "index.chars", "index.truncated", "index_warning"} {
		if !containsString(keys, want) {
			t.Errorf("save --json lacks %q: %v", want, keys)
		}
	}
	out = w.ok(t, "mv", "--json", "reference_grafana", "reference_dash")
	keys = jsonKeys(t, out)
	checkSnake(t, "mv", keys)
	for _, want := range []string{"from", "to", "run_id"} {
		if !containsString(keys, want) {
			t.Errorf("mv --json lacks %q: %v", want, keys)
		}
	}
	out = w.ok(t, "rm", "--json", "reference_dash")
	keys = jsonKeys(t, out)
	checkSnake(t, "rm", keys)
	for _, want := range []string{"path", "index_lines", "run_id"} {
		if !containsString(keys, want) {
			t.Errorf("rm --json lacks %q: %v", want, keys)
		}
	}
	var rm struct {
		Path       string   `json:"path"`
		IndexLines []string `json:"index_lines"`
		RunID      string   `json:"run_id"`
	}
	json.Unmarshal([]byte(out), &rm)
	if rm.Path != "reference_dash.md" || len(rm.IndexLines) != 1 || rm.RunID == "" {
		t.Errorf("rm --json = %+v", rm)
	}
}

func TestExtractJSONReportsRefusedCalls(t *testing.T) {
	w := newMemWorld(t)
	path := writeTranscript(t, t.TempDir(), "3f2a.jsonl", jsonlUser, jsonlBot)
	srv := w.useFakeModel(t)
	srv.Enqueue(
		memdirtest.ModelReply{Content: []llm.Block{{Type: llm.BlockToolUse, ToolUseID: "t1", ToolName: "bash", Input: json.RawMessage(`{"command":"rm -rf /"}`)}}},
		memdirtest.TextReply("Nothing to save."),
	)
	out := w.ok(t, "extract", "--json", "--transcript", path)
	var res struct {
		ToolCalls *int `json:"tool_calls"`
		Denied    *int `json:"denied"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	if res.ToolCalls == nil || *res.ToolCalls != 1 || res.Denied == nil || *res.Denied != 1 {
		t.Errorf("extract --json does not report the refused call (want tool_calls 1, denied 1):\n%s", out)
	}
	srv.Enqueue(
		memdirtest.ModelReply{Content: []llm.Block{{Type: llm.BlockToolUse, ToolUseID: "t2", ToolName: "bash", Input: json.RawMessage(`{"command":"ls"}`)}}},
		memdirtest.TextReply("Nothing to save."),
	)
	other := writeTranscript(t, t.TempDir(), "9b7c.jsonl", jsonlUser, jsonlBot)
	_, errOut, code := w.run(t, "extract", "--transcript", other, "--session", "9b7c")
	if code != 0 || !strings.Contains(errOut, "model: 2 turns, 1 tool call (1 refused), ") {
		t.Errorf("extract: exit %d, stderr %q", code, errOut)
	}
}

func TestOneIsSingular(t *testing.T) {
	w, _ := embedWorld(t)
	w.ok(t, "rm", "project_deploy")
	w.ok(t, "rm", "feedback_testing")
	out := w.ok(t, "embed")
	if !strings.HasPrefix(out, "1 memory: 1 embedded with openai:nomic-embed-text (1 request, ") {
		t.Errorf("embed printed %q", out)
	}
	_, errOut, _ := w.run(t, "list")
	if !strings.HasPrefix(errOut, "1 of 1 memory in ") {
		t.Errorf("list summary %q", errOut)
	}
}

func TestListAlignsWideCharacters(t *testing.T) {
	w := newMemWorld(t)
	w.ok(t, "save", "--name", "日本語メモ", "--type", "project", "--description", "wide", "--body", "b")
	w.ok(t, "save", "--name", "plain", "--type", "project", "--description", "narrow", "--body", "b")
	w.ok(t, "save", "--name", "🚀 launch", "--type", "project", "--description", "emoji", "--body", "b")
	out := w.ok(t, "list")
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 4 {
		t.Fatalf("list printed %q", out)
	}
	// Every description starts in the same terminal column.
	col := -1
	for _, l := range lines {
		i := strings.LastIndex(l, "  ")
		if i < 0 {
			t.Fatalf("no column gap in %q", l)
		}
		c := displayWidth(l[:i+2])
		if col == -1 {
			col = c
		} else if c != col {
			t.Errorf("last column of %q starts at cell %d, want %d\n%s", l, c, col, out)
		}
	}
	if displayWidth("日本語") != 6 || displayWidth("🚀") != 2 || displayWidth("é") != 1 || displayWidth("e\u0301") != 1 {
		t.Errorf("displayWidth: 日本語 %d, 🚀 %d, é %d, e+combining %d", displayWidth("日本語"), displayWidth("🚀"), displayWidth("é"), displayWidth("e\u0301"))
	}
}

func TestIndexJSONEmptyIndexHasNoLines(t *testing.T) {
	w := newMemWorld(t)
	dir := w.memDir(t)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, content := range []string{"", "\n\n  \n"} {
		if err := os.WriteFile(filepath.Join(dir, "MEMORY.md"), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		var res struct {
			Exists bool `json:"exists"`
			Lines  int  `json:"lines"`
			Chars  int  `json:"chars"`
		}
		if err := json.Unmarshal([]byte(w.ok(t, "index", "--json")), &res); err != nil {
			t.Fatal(err)
		}
		if !res.Exists || res.Lines != 0 || res.Chars != 0 {
			t.Errorf("index --json of MEMORY.md %q: %+v, want exists, 0 lines, 0 chars", content, res)
		}
	}
	if st := memdir.MeasureIndex("- [a](a.md) — x\n"); st.Lines != 1 {
		t.Errorf("one line measured as %d", st.Lines)
	}
}

func TestUnknownAgentWarns(t *testing.T) {
	w := newMemWorld(t)
	_, errOut, code := w.run(t, "list", "--agent", "nosuch", "--scope", "user")
	if code != 0 || !strings.Contains(errOut, `warning: no agent named "nosuch" is defined`) {
		t.Errorf("--agent nosuch: exit %d, stderr %q", code, errOut)
	}
	agents := filepath.Join(w.home, ".claude", "agents")
	os.MkdirAll(agents, 0o700)
	os.WriteFile(filepath.Join(agents, "reviewer.md"), []byte("---\nname: reviewer\ndescription: reviews code\nmemory: user\n---\nReview.\n"), 0o600)
	_, errOut, code = w.run(t, "list", "--agent", "reviewer", "--scope", "user")
	if code != 0 || strings.Contains(errOut, "warning") {
		t.Errorf("--agent reviewer: exit %d, stderr %q", code, errOut)
	}
}

func TestMissingHomeIsNotCreated(t *testing.T) {
	w := newMemWorld(t)
	if err := os.Remove(w.home); err != nil {
		t.Fatal(err)
	}
	_, errOut, code := w.run(t, "save", "--name", "a", "--type", "user", "--description", "d", "--body", "b")
	if code == 0 || !strings.Contains(errOut, w.home) || !strings.Contains(errOut, "does not exist") {
		t.Errorf("save with a missing HOME: exit %d, stderr %q", code, errOut)
	}
	if _, err := os.Stat(w.home); !os.IsNotExist(err) {
		t.Errorf("HOME was created: %v", err)
	}
	// With --dir the user says where: that still works.
	w.ok(t, "save", "--dir", filepath.Join(w.state, "mem"), "--name", "a", "--type", "user", "--description", "d", "--body", "b")
}
