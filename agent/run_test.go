package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/memdir/memdir/agent"
	"github.com/memdir/memdir/llm"
	"github.com/memdir/memdir/memdirtest"
)

// callSummary is the part of a recorded tool call most tests compare.
type callSummary struct {
	Turn    int
	ID      string
	Name    string
	IsError bool
	Denied  bool
}

func summarize(calls []agent.ToolCall) []callSummary {
	var out []callSummary
	for _, c := range calls {
		out = append(out, callSummary{c.Turn, c.ID, c.Name, c.IsError, c.Denied})
	}
	return out
}

var allTools = []string{"memory", "read_file", "grep", "glob", "ls"}

// A run reads, creates two memories (one the index), then updates one, over
// four model calls; everything it did is in the Result and on disk, and the
// requests carried the tools and the right tool results.
func TestRunCreatesThenUpdatesMemories(t *testing.T) {
	for _, c := range clients {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t)
			srv := memdirtest.NewModelServer(t)
			srv.Enqueue(
				reply(llm.Usage{InputTokens: 100, OutputTokens: 20},
					use("c1", "memory", `{"command":"view","path":"/memories"}`),
					use("c2", "read_file", `{"path":"README.md"}`)),
				reply(llm.Usage{InputTokens: 150, OutputTokens: 60, CacheReadTokens: 40},
					llm.TextBlock("Saving what I learned."),
					use("c3", "memory", `{"command":"create","path":"/memories/testing.md","file_text":"Run the tests with make test.\n"}`),
					use("c4", "memory", `{"command":"create","path":"/memories/MEMORY.md","file_text":"- [Testing](testing.md)\n"}`)),
				reply(llm.Usage{InputTokens: 170, OutputTokens: 30},
					use("c5", "memory", `{"command":"str_replace","path":"/memories/testing.md","old_str":"make test","new_str":"make test (or go test ./...)"}`)),
				reply(llm.Usage{InputTokens: 190, OutputTokens: 5}, llm.TextBlock("Saved 1 memory.")),
			)
			var journal []string
			var events []string
			res, err := agent.Run(context.Background(), &agent.Options{
				Model:        c.new(t, srv),
				System:       "You keep the memory directory.",
				MemoryDir:    f.mem,
				ProjectDir:   f.proj,
				MaxTurns:     5,
				BeforeChange: func(rel string) error { journal = append(journal, rel); return nil },
				OnEvent: func(e agent.Event) {
					s := fmt.Sprintf("%s %d", e.Kind, e.Turn)
					if e.Call != nil {
						s += " " + e.Call.ID
					}
					if e.Kind == agent.EventReply {
						s += fmt.Sprintf(" calls=%d", e.Calls)
					}
					events = append(events, s)
				},
			}, userText("Remember how to run the tests."))
			if err != nil {
				t.Fatal(err)
			}

			if res.Text != "Saved 1 memory." || res.StopReason != llm.StopEndTurn || res.Turns != 4 || res.TurnLimit {
				t.Errorf("text %q, stop %q, turns %d, limit %v; want the final reply, end_turn, 4, false", res.Text, res.StopReason, res.Turns, res.TurnLimit)
			}
			wantFiles := []agent.File{{Path: "testing.md"}, {Path: "MEMORY.md", Index: true}}
			if diff := cmp.Diff(wantFiles, res.Files); diff != "" {
				t.Errorf("Files (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]string{"testing.md"}, res.Saved()); diff != "" {
				t.Errorf("Saved (-want +got):\n%s", diff)
			}
			wantCalls := []callSummary{
				{1, "c1", "memory", false, false}, {1, "c2", "read_file", false, false},
				{2, "c3", "memory", false, false}, {2, "c4", "memory", false, false},
				{3, "c5", "memory", false, false},
			}
			if diff := cmp.Diff(wantCalls, summarize(res.ToolCalls)); diff != "" {
				t.Errorf("tool calls (-want +got):\n%s", diff)
			}
			if got := res.ToolCalls[1].Output; !strings.Contains(got, "     2\tRun the tests with make test.") {
				t.Errorf("read_file output = %q, want numbered README lines", got)
			}
			wantUsage := llm.Usage{InputTokens: 610, OutputTokens: 115, CacheReadTokens: 40, Calls: 4}
			if diff := cmp.Diff(wantUsage, res.Usage); diff != "" {
				t.Errorf("usage (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]string{"testing.md", "MEMORY.md", "testing.md"}, journal); diff != "" {
				t.Errorf("BeforeChange paths (-want +got):\n%s", diff)
			}
			wantEvents := []string{
				"turn 1", "reply 1 calls=2", "tool_call 1 c1", "tool_call 1 c2",
				"turn 2", "reply 2 calls=2", "tool_call 2 c3", "tool_call 2 c4",
				"turn 3", "reply 3 calls=1", "tool_call 3 c5",
				"turn 4", "reply 4 calls=0",
			}
			if diff := cmp.Diff(wantEvents, events); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
			got, err := os.ReadFile(filepath.Join(f.mem, "testing.md"))
			if err != nil || string(got) != "Run the tests with make test (or go test ./...).\n" {
				t.Errorf("testing.md = %q, %v", got, err)
			}

			reqs := srv.Requests()
			if len(reqs) != 4 {
				t.Fatalf("%d requests, want 4", len(reqs))
			}
			for i, r := range reqs {
				if r.System != "You keep the memory directory." {
					t.Errorf("request %d system = %q", i+1, r.System)
				}
				if diff := cmp.Diff(allTools, toolNames(r.Tools)); diff != "" {
					t.Errorf("request %d tools (-want +got):\n%s", i+1, diff)
				}
				if want := 1 + 2*i; len(r.Messages) != want {
					t.Errorf("request %d has %d messages, want %d", i+1, len(r.Messages), want)
				}
			}
			api := reqs[0].API
			for i, want := range [][]resultBlock{{{"c1", false}, {"c2", false}}, {{"c3", false}, {"c4", false}}, {{"c5", false}}} {
				msgs := reqs[i+1].Messages
				last := msgs[len(msgs)-1]
				if last.Role != llm.RoleUser {
					t.Errorf("request %d ends with a %s message", i+2, last.Role)
				}
				if diff := cmp.Diff(want, toolResults(api, last)); diff != "" {
					t.Errorf("request %d tool results (-want +got):\n%s", i+2, diff)
				}
			}
			// The assistant turn is sent back as the model gave it.
			echoed := reqs[2].Messages[3]
			if echoed.Role != llm.RoleAssistant || len(echoed.Content) != 3 || echoed.Content[0].Text != "Saving what I learned." || echoed.Content[2].ToolUseID != "c4" {
				t.Errorf("request 3 echoes the second reply as %+v", echoed)
			}
		})
	}
}

// All tool calls of one reply are carried out and answered in one message,
// in order, whatever tools they use.
func TestRunParallelToolCalls(t *testing.T) {
	for _, c := range clients {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t)
			srv := memdirtest.NewModelServer(t)
			srv.Enqueue(
				reply(llm.Usage{},
					use("a", "ls", `{}`),
					use("b", "glob", `{"pattern":"**/*.go"}`),
					use("c", "grep", `{"pattern":"func \\w+\\(","glob":"*.go"}`),
					use("d", "read_file", `{"path":"src/run.go","offset":3}`),
					use("e", "memory", `{"command":"view","path":"/memories"}`),
				),
				memdirtest.TextReply("Nothing worth keeping."),
			)
			res, err := agent.Run(context.Background(), &agent.Options{Model: c.new(t, srv), MemoryDir: f.mem, ProjectDir: f.proj}, userText("look around"))
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]string{
				"a": "The project directory holds 6 entries (directories end in /, symbolic links in @):\n.git/\nREADME.md  (37 bytes)\ndocs/\nleak.txt@\nlinkdir@\nsrc/",
				"b": "2 paths match \"**/*.go\" (directories end in /):\nsrc/main.go\nsrc/run.go",
				"c": "src/main.go:3:func main() { run() }\nsrc/run.go:3:func run() {}",
				"d": "     3\tfunc run() {}",
			}
			for _, call := range res.ToolCalls {
				if w, ok := want[call.ID]; ok && call.Output != w {
					t.Errorf("%s output:\n%s\nwant:\n%s", call.Name, call.Output, w)
				}
				if call.IsError {
					t.Errorf("%s failed: %s", call.Name, call.Output)
				}
			}
			reqs := srv.Requests()
			msgs := reqs[1].Messages
			wantIDs := []resultBlock{{"a", false}, {"b", false}, {"c", false}, {"d", false}, {"e", false}}
			if diff := cmp.Diff(wantIDs, toolResults(reqs[1].API, msgs[len(msgs)-1])); diff != "" {
				t.Errorf("tool results (-want +got):\n%s", diff)
			}
			if len(msgs) != 3 {
				t.Errorf("second request has %d messages, want 3 (prompt, calls, results)", len(msgs))
			}
		})
	}
}

// A model that keeps calling tools is stopped at MaxTurns model calls; the
// calls of the last turn are still carried out.
func TestRunTurnLimit(t *testing.T) {
	for _, tc := range []struct {
		maxTurns, want int
	}{
		{5, 5},
		{1, 1},
		{0, agent.DefaultMaxTurns},
	} {
		t.Run(fmt.Sprint(tc.maxTurns), func(t *testing.T) {
			f := newFixture(t)
			srv := memdirtest.NewModelServer(t)
			n := 0
			srv.Handle(func(*memdirtest.ModelRequest) memdirtest.ModelReply {
				n++
				r := memdirtest.ToolCallReply(fmt.Sprintf("t%d", n), "memory",
					fmt.Sprintf(`{"command":"create","path":"/memories/note%d.md","file_text":"x"}`, n))
				r.Usage = llm.Usage{InputTokens: 10, OutputTokens: 1}
				return r
			})
			res, err := agent.Run(context.Background(), &agent.Options{Model: clients[0].new(t, srv), MemoryDir: f.mem, MaxTurns: tc.maxTurns}, userText("go"))
			if err != nil {
				t.Fatal(err)
			}
			if got := len(srv.Requests()); got != tc.want {
				t.Errorf("%d model calls, want %d", got, tc.want)
			}
			if res.Turns != tc.want || !res.TurnLimit || res.StopReason != llm.StopToolUse || len(res.ToolCalls) != tc.want {
				t.Errorf("turns %d, limit %v, stop %q, %d calls; want %d, true, tool_use, %d", res.Turns, res.TurnLimit, res.StopReason, len(res.ToolCalls), tc.want, tc.want)
			}
			if _, err := os.Stat(filepath.Join(f.mem, fmt.Sprintf("note%d.md", tc.want))); err != nil {
				t.Errorf("the last turn's write was not carried out: %v", err)
			}
			if want := (llm.Usage{InputTokens: 10 * tc.want, OutputTokens: tc.want, Calls: tc.want}); res.Usage != want {
				t.Errorf("usage %+v, want %+v", res.Usage, want)
			}
		})
	}
}

// Forbidden and malformed calls are answered with errors, recorded, and
// change nothing; the run goes on to the model's final answer.
func TestRunForbidden(t *testing.T) {
	type want struct {
		name    string
		isError bool
		denied  bool
		says    string // a phrase the answer must contain
	}
	calls := []struct {
		input string
		want
	}{
		{`{"command":"rm -rf ~ && cat /etc/passwd"}`, want{"bash", true, true, `The tool "bash" is not available here: only the memory tool and the read-only project tools (read_file, grep, glob, ls) are available. There is no shell`}},
		{`{"file_path":"OUTSIDE/escape.md","content":"x"}`, want{"Write", true, true, "files can be changed only through the memory tool, inside /memories"}},
		{`{"file_path":"MEM/a.md","old_string":"a","new_string":"b"}`, want{"Edit", true, true, `The tool "Edit" is not available`}},
		{`{"url":"http://127.0.0.1/"}`, want{"web_fetch", true, true, `"web_fetch" is not available`}},
		{`{}`, want{"memory_v2", true, true, `"memory_v2" is not available`}},
		{`{"command":"create","path":"/memories/../escape.md","file_text":"x"}`, want{"memory", true, false, "Path /memories/../escape.md would escape /memories directory"}},
		{`{"command":"create","path":"/memories/%2e%2e/escape.md","file_text":"x"}`, want{"memory", true, false, "would escape /memories directory (.. when percent-decoded)"}},
		{`{"command":"create","path":"/memoriesfoo/escape.md","file_text":"x"}`, want{"memory", true, false, "Path /memoriesfoo/escape.md would escape /memories directory"}},
		{`{"command":"create","path":"/memories/out/escape.md","file_text":"x"}`, want{"memory", true, false, "/memories/out"}},
		{`{"command":"view","path":"/memories/out/secret.txt"}`, want{"memory", true, false, "/memories/out"}},
		{`{"command":"create","path":5}`, want{"memory", true, false, `key "path"`}},
		{`{"path":"leak.txt"}`, want{"read_file", true, false, "the symbolic link leak.txt leads outside the project directory"}},
		{`{"path":"linkdir/secret.txt"}`, want{"read_file", true, false, "the symbolic link linkdir leads outside"}},
		{`{"path":"../outside/secret.txt"}`, want{"read_file", true, false, `".." segments may not be used`}},
		{`{"path":"%2e%2e/outside/secret.txt"}`, want{"read_file", true, false, "decoded or normalised"}},
		{`{"path":"OUTSIDE/secret.txt"}`, want{"read_file", true, false, "outside the project directory"}},
		{`{"path":"README.md","file_path":"x"}`, want{"read_file", true, false, `unknown key "file_path"; the keys are path, offset, limit`}},
		{`{"path":"README.md","offset":"10"}`, want{"read_file", true, false, `key "offset" must be an integer, not "10"`}},
		{`[1,2]`, want{"read_file", true, false, "must be a JSON object"}},
		{`{"pattern":"TOPSECRET","path":"linkdir"}`, want{"grep", true, false, "leads outside"}},
		{`{"pattern":"TOPSECRET"}`, want{"grep", false, false, `No matches for "TOPSECRET"`}},
		{`{"pattern":"(unclosed"}`, want{"grep", true, false, "not a valid regular expression"}},
		{`{"pattern":"**/*","path":"linkdir"}`, want{"glob", true, false, "leads outside"}},
		{`{"pattern":"[z-a]"}`, want{"glob", true, false, "runs backwards"}},
		{`{"path":"linkdir"}`, want{"ls", true, false, "leads outside"}},
	}
	for _, c := range clients {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t)
			var blocks []llm.Block
			for i, call := range calls {
				in := strings.NewReplacer("OUTSIDE", f.outside, "MEM", f.mem).Replace(call.input)
				blocks = append(blocks, use(fmt.Sprintf("x%d", i), call.name, in))
			}
			srv := memdirtest.NewModelServer(t)
			srv.Enqueue(reply(llm.Usage{}, blocks...), memdirtest.TextReply("I could not do any of that."))
			beforeOut, beforeMem := tree(t, f.outside), tree(t, f.mem)

			res, err := agent.Run(context.Background(), &agent.Options{Model: c.new(t, srv), MemoryDir: f.mem, ProjectDir: f.proj}, userText("try everything"))
			if err != nil {
				t.Fatal(err)
			}
			if len(res.ToolCalls) != len(calls) {
				t.Fatalf("%d tool calls recorded, want %d", len(res.ToolCalls), len(calls))
			}
			var wantResults []resultBlock
			for i, call := range calls {
				got := res.ToolCalls[i]
				if got.Name != call.name || got.IsError != call.isError || got.Denied != call.denied {
					t.Errorf("%s %s: is_error %v, denied %v; want %v, %v (output %q)", call.name, call.input, got.IsError, got.Denied, call.isError, call.denied, got.Output)
				}
				if !strings.Contains(got.Output, call.says) {
					t.Errorf("%s %s answered %q, want it to say %q", call.name, call.input, got.Output, call.says)
				}
				if strings.Contains(got.Output, "TOPSECRET outside") || (!strings.Contains(call.input, "OUTSIDE") && strings.Contains(got.Output, f.base)) {
					t.Errorf("%s %s leaked %q", call.name, call.input, got.Output)
				}
				wantResults = append(wantResults, resultBlock{fmt.Sprintf("x%d", i), call.isError})
			}
			if res.Text != "I could not do any of that." || len(res.Files) != 0 {
				t.Errorf("text %q, files %v", res.Text, res.Files)
			}
			if diff := cmp.Diff(beforeOut, tree(t, f.outside)); diff != "" {
				t.Errorf("outside changed (-before +after):\n%s", diff)
			}
			if diff := cmp.Diff(beforeMem, tree(t, f.mem)); diff != "" {
				t.Errorf("memory directory changed (-before +after):\n%s", diff)
			}
			if _, err := os.Lstat(filepath.Join(f.base, "escape.md")); err == nil {
				t.Error("escape.md was written next to the memory directory")
			}
			reqs := srv.Requests()
			msgs := reqs[1].Messages
			if diff := cmp.Diff(wantResults, toolResults(reqs[1].API, msgs[len(msgs)-1])); diff != "" {
				t.Errorf("tool results sent (-want +got):\n%s", diff)
			}
			// The call whose input was not an object is echoed as {}.
			for _, b := range msgs[1].Content {
				if b.ToolUseID == "x18" && string(b.Input) != "{}" {
					t.Errorf("the array input was echoed as %s", b.Input)
				}
			}
			if got := string(res.ToolCalls[18].Input); got != "[1,2]" {
				t.Errorf("recorded input %s, want [1,2]", got)
			}
		})
	}
}

// The policy options: a read-only memory directory, one writable file, no
// project tools.
func TestRunPolicyOptions(t *testing.T) {
	type step struct {
		name, input string
		isError     bool
		denied      bool
	}
	for _, tc := range []struct {
		name      string
		opts      agent.Options
		tools     []string
		steps     []step
		wantFiles []agent.File
	}{
		{
			name:  "read-only memory",
			opts:  agent.Options{MemoryReadOnly: true},
			tools: allTools,
			steps: []step{
				{"memory", `{"command":"view","path":"/memories/seed.md"}`, false, false},
				{"memory", `{"command":"create","path":"/memories/new.md","file_text":"x"}`, true, true},
				{"memory", `{"command":"str_replace","path":"/memories/seed.md","old_str":"seed","new_str":"x"}`, true, true},
				{"memory", `{"command":"delete","path":"/memories/seed.md"}`, true, true},
				{"read_file", `{"path":"README.md"}`, false, false},
			},
		},
		{
			name:  "one file",
			opts:  agent.Options{OnlyFile: "/memories/notes/summary.md"},
			tools: allTools,
			steps: []step{
				{"memory", `{"command":"create","path":"/memories/notes/summary.md","file_text":"# Notes\n"}`, false, false},
				{"memory", `{"command":"insert","path":"/memories/notes/summary.md","insert_line":1,"insert_text":"done\n"}`, false, false},
				{"memory", `{"command":"create","path":"/memories/other.md","file_text":"x"}`, true, true},
				{"memory", `{"command":"str_replace","path":"/memories/seed.md","old_str":"seed","new_str":"x"}`, true, true},
				{"memory", `{"command":"rename","old_path":"/memories/notes/summary.md","new_path":"/memories/x.md"}`, true, true},
				{"memory", `{"command":"delete","path":"/memories/notes/summary.md"}`, true, true},
				{"memory", `{"command":"view","path":"/memories/seed.md"}`, false, false},
			},
			wantFiles: []agent.File{{Path: "notes/summary.md"}},
		},
		{
			name:  "no project tools",
			opts:  agent.Options{ProjectDir: "-"},
			tools: []string{"memory"},
			steps: []step{
				{"read_file", `{"path":"README.md"}`, true, true},
				{"ls", `{}`, true, true},
				{"memory", `{"command":"create","path":"/memories/new.md","file_text":"x"}`, false, false},
			},
			wantFiles: []agent.File{{Path: "new.md"}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			memdirtest.WriteFiles(t, f.mem, map[string]string{"seed.md": "seed\n", "notes/.keep": ""})
			srv := memdirtest.NewModelServer(t)
			var blocks []llm.Block
			for i, s := range tc.steps {
				blocks = append(blocks, use(fmt.Sprint(i), s.name, s.input))
			}
			srv.Enqueue(reply(llm.Usage{}, blocks...), memdirtest.TextReply("ok"))
			opts := tc.opts
			opts.Model, opts.MemoryDir = clients[0].new(t, srv), f.mem
			switch opts.ProjectDir {
			case "":
				opts.ProjectDir = f.proj
			case "-":
				opts.ProjectDir = ""
			}
			res, err := agent.Run(context.Background(), &opts, userText("go"))
			if err != nil {
				t.Fatal(err)
			}
			var want, got []step
			for i, s := range tc.steps {
				want = append(want, s)
				c := res.ToolCalls[i]
				got = append(got, step{c.Name, s.input, c.IsError, c.Denied})
			}
			if diff := cmp.Diff(want, got, cmp.AllowUnexported(step{})); diff != "" {
				t.Errorf("calls (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.tools, toolNames(srv.Requests()[0].Tools)); diff != "" {
				t.Errorf("tools offered (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantFiles, res.Files); diff != "" {
				t.Errorf("files (-want +got):\n%s", diff)
			}
			if b, _ := os.ReadFile(filepath.Join(f.mem, "seed.md")); string(b) != "seed\n" {
				t.Errorf("seed.md changed to %q", b)
			}
		})
	}
}

// A model error ends the run; the Result keeps the files already written so
// they can be undone.
func TestRunModelErrorKeepsPartialResult(t *testing.T) {
	for _, c := range clients {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t)
			srv := memdirtest.NewModelServer(t)
			srv.Enqueue(
				reply(llm.Usage{InputTokens: 7, OutputTokens: 3}, use("w", "memory", `{"command":"create","path":"/memories/a.md","file_text":"a"}`)),
				memdirtest.ErrorReply(500, "the model fell over"),
			)
			res, err := agent.Run(context.Background(), &agent.Options{Model: c.new(t, srv), MemoryDir: f.mem}, userText("go"))
			var me *llm.ModelError
			if !errors.As(err, &me) || me.StatusCode != 500 {
				t.Fatalf("err = %v, want a ModelError with status 500", err)
			}
			if !strings.Contains(err.Error(), "model call 2") {
				t.Errorf("err = %q, want it to name model call 2", err)
			}
			if diff := cmp.Diff([]agent.File{{Path: "a.md"}}, res.Files); diff != "" {
				t.Errorf("files (-want +got):\n%s", diff)
			}
			if res.Turns != 1 || len(res.ToolCalls) != 1 || res.Usage.InputTokens != 7 {
				t.Errorf("turns %d, %d calls, usage %+v", res.Turns, len(res.ToolCalls), res.Usage)
			}
		})
	}
}

// Cancelling the context ends the run after the tool call in progress.
func TestRunCancelled(t *testing.T) {
	f := newFixture(t)
	srv := memdirtest.NewModelServer(t)
	srv.Enqueue(reply(llm.Usage{},
		use("w", "memory", `{"command":"create","path":"/memories/a.md","file_text":"a"}`),
		use("v", "memory", `{"command":"view","path":"/memories"}`)))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	res, err := agent.Run(ctx, &agent.Options{
		Model: clients[0].new(t, srv), MemoryDir: f.mem,
		OnEvent: func(e agent.Event) {
			if e.Kind == agent.EventToolCall {
				cancel()
			}
		},
	}, userText("go"))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if diff := cmp.Diff([]agent.File{{Path: "a.md"}}, res.Files); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
	if len(res.ToolCalls) != 2 || !res.ToolCalls[1].IsError {
		t.Errorf("tool calls %+v, want the write and a failed view", res.ToolCalls)
	}
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("%d model calls after cancelling, want 1", n)
	}
}

// A failing BeforeChange (the journal) stops the change and the run.
func TestRunBeforeChangeFailure(t *testing.T) {
	f := newFixture(t)
	srv := memdirtest.NewModelServer(t)
	srv.Enqueue(reply(llm.Usage{},
		use("a", "memory", `{"command":"create","path":"/memories/a.md","file_text":"a"}`),
		use("b", "memory", `{"command":"create","path":"/memories/b.md","file_text":"b"}`),
		use("c", "memory", `{"command":"create","path":"/memories/c.md","file_text":"c"}`)))
	diskFull := errors.New("journal: disk full")
	res, err := agent.Run(context.Background(), &agent.Options{
		Model: clients[0].new(t, srv), MemoryDir: f.mem,
		BeforeChange: func(rel string) error {
			if rel == "b.md" {
				return diskFull
			}
			return nil
		},
	}, userText("go"))
	if !errors.Is(err, diskFull) || !strings.Contains(err.Error(), "b.md") {
		t.Fatalf("err = %v, want the journal error naming b.md", err)
	}
	if diff := cmp.Diff([]agent.File{{Path: "a.md"}}, res.Files); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]callSummary{{1, "a", "memory", false, false}, {1, "b", "memory", true, false}}, summarize(res.ToolCalls)); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
	for _, name := range []string{"b.md", "c.md"} {
		if _, err := os.Stat(filepath.Join(f.mem, name)); err == nil {
			t.Errorf("%s was written", name)
		}
	}
}

// Bad options are reported before any model call, with a non-nil Result.
func TestRunBadOptions(t *testing.T) {
	f := newFixture(t)
	srv := memdirtest.NewModelServer(t)
	model := clients[0].new(t, srv)
	for _, tc := range []struct {
		name string
		opts *agent.Options
		msgs []llm.Message
		want string
	}{
		{"nil options", nil, userText("x"), "no model"},
		{"no memory dir", &agent.Options{Model: model}, userText("x"), "no memory directory"},
		{"missing memory dir", &agent.Options{Model: model, MemoryDir: filepath.Join(f.base, "nope")}, userText("x"), "does not exist"},
		{"missing project dir", &agent.Options{Model: model, MemoryDir: f.mem, ProjectDir: filepath.Join(f.base, "nope")}, userText("x"), "project directory"},
		{"bad only file", &agent.Options{Model: model, MemoryDir: f.mem, OnlyFile: "../x.md"}, userText("x"), "OnlyFile"},
		{"only file is the root", &agent.Options{Model: model, MemoryDir: f.mem, OnlyFile: "/memories"}, userText("x"), "not a file"},
		{"no messages", &agent.Options{Model: model, MemoryDir: f.mem}, nil, "no messages"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := agent.Run(context.Background(), tc.opts, tc.msgs)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want it to mention %q", err, tc.want)
			}
			if res == nil {
				t.Error("nil Result")
			}
		})
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d model calls, want none", n)
	}
}

// The Result encodes as JSON even when a tool input was not JSON, so the
// CLI can print it.
func TestResultJSON(t *testing.T) {
	res := &agent.Result{ToolCalls: []agent.ToolCall{{Name: "x", Input: json.RawMessage(`{"a":1}`)}}, Files: []agent.File{{Path: "MEMORY.md", Index: true}}}
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"text":"","turns":0,"files":[{"path":"MEMORY.md","index":true}],"tool_calls":[{"turn":0,"id":"","name":"x","input":{"a":1},"output":""}],"usage":{"input_tokens":0,"output_tokens":0,"calls":0}}`
	if diff := cmp.Diff(want, string(b)); diff != "" {
		t.Errorf("JSON (-want +got):\n%s", diff)
	}
}
