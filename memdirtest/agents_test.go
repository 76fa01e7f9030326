package memdirtest_test

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/memdir/memdir/llm"
	"github.com/memdir/memdir/memdirtest"
)

// hookRecorder is a stand-in for memdir hook: a shell script per event that
// appends the JSON the program sends on stdin, as one line, to
// <dir>/<event>.jsonl, and prints a fixed answer.
type hookRecorder struct{ dir string }

func newHookRecorder(t *testing.T) *hookRecorder {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("the hook stand-ins are shell scripts")
	}
	return &hookRecorder{dir: t.TempDir()}
}

// command returns the command line of a hook for event that prints out.
func (r *hookRecorder) command(t *testing.T, event, out string) string {
	t.Helper()
	if strings.ContainsAny(r.dir+event+out, "' \n") {
		t.Fatalf("cannot quote %q, %q for the shell", r.dir, out)
	}
	log := filepath.Join(r.dir, event+".jsonl")
	script := "#!/bin/sh\ncat >> '" + log + "'\necho >> '" + log + "'\n"
	if out != "" {
		script += "printf '%s\\n' '" + out + "'\n"
	}
	path := filepath.Join(r.dir, event+".sh")
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// inputs returns what the hooks of event were sent, in order.
func (r *hookRecorder) inputs(t *testing.T, event string) []map[string]any {
	t.Helper()
	f, err := os.Open(filepath.Join(r.dir, event+".jsonl"))
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []map[string]any
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var v map[string]any
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			t.Fatalf("%s hook input %q: %v", event, sc.Text(), err)
		}
		out = append(out, v)
	}
	return out
}

// contextOutput is the stdout that adds text to the model's context, for
// both programs.
func contextOutput(event, text string) string {
	b, _ := json.Marshal(map[string]any{"hookSpecificOutput": map[string]any{"hookEventName": event, "additionalContext": text}})
	return string(b)
}

// agentCase is how one program is driven: its event names, the tool call
// that edits a file, and how to configure and run it.
type agentCase struct {
	name string
	// The program's names for the session's start, the prompt, the call
	// of a tool, and the end of the turn and of the session.
	start, prompt, tool, turnEnd, sessionEnd string
	// editCall is the model's call that creates notes.txt.
	editCall memdirtest.ModelReply
	// toolPath returns the edited file as a pre-tool hook sees it.
	toolPath func(in map[string]any) string
	// lastAnswer is the field of the turn-end input with the model's answer.
	lastAnswer string
	// run sets the program up with hooks and runs prompt in dir; it
	// returns the session files the program wrote.
	run func(t *testing.T, srv *memdirtest.ModelServer, dir, prompt string, hooks []memdirtest.AgentHook) []string
}

var agentCases = []agentCase{
	{
		name: "codex", start: "SessionStart", prompt: "UserPromptSubmit", tool: "PreToolUse", turnEnd: "Stop", sessionEnd: "SessionEnd",
		// apply_patch is a freeform tool: its input is the patch itself.
		editCall: memdirtest.ToolCallReply("call_1", "apply_patch", `"*** Begin Patch\n*** Add File: notes.txt\n+written by the fake model\n*** End Patch\n"`),
		toolPath: func(in map[string]any) string {
			patch, _ := in["tool_input"].(map[string]any)["command"].(string)
			for line := range strings.Lines(patch) {
				if name, ok := strings.CutPrefix(strings.TrimSpace(line), "*** Add File: "); ok {
					return name
				}
			}
			return ""
		},
		lastAnswer: "last_assistant_message",
		run: func(t *testing.T, srv *memdirtest.ModelServer, dir, prompt string, hooks []memdirtest.AgentHook) []string {
			cx := memdirtest.NewCodex(t, srv, "")
			for _, h := range hooks {
				cx.AddHook(t, h)
			}
			cx.Exec(t, dir, prompt, "--sandbox", "workspace-write")
			return cx.Sessions(t)
		},
	},
	{
		name: "gemini", start: "SessionStart", prompt: "BeforeAgent", tool: "BeforeTool", turnEnd: "AfterAgent", sessionEnd: "SessionEnd",
		editCall: memdirtest.ToolCallReply("", "write_file", `{"file_path":"notes.txt","content":"written by the fake model\n"}`),
		toolPath: func(in map[string]any) string {
			p, _ := in["tool_input"].(map[string]any)["file_path"].(string)
			return p
		},
		lastAnswer: "prompt_response",
		run: func(t *testing.T, srv *memdirtest.ModelServer, dir, prompt string, hooks []memdirtest.AgentHook) []string {
			g := memdirtest.NewGemini(t, srv, "")
			for _, h := range hooks {
				g.AddHook(t, h)
			}
			// auto_edit offers the model the editing tools and approves them.
			g.Run(t, dir, prompt, "--approval-mode", "auto_edit")
			return g.Chats(t)
		},
	},
}

// TestAgentHooksReachModel runs each real agent program against the fake
// model server with hooks that record their input and add context, and
// checks that the context reached the model, that a tool call edited a
// file, and what each event told the hooks.
func TestAgentHooksReachModel(t *testing.T) {
	for _, tt := range agentCases {
		t.Run(tt.name, func(t *testing.T) {
			srv := memdirtest.NewModelServer(t)
			srv.Enqueue(tt.editCall, memdirtest.TextReply("All done: notes.txt is written."))
			rec := newHookRecorder(t)
			startMarker, promptMarker := "memdirtest-start-7d41", "memdirtest-prompt-93ac"
			hooks := []memdirtest.AgentHook{
				{Event: tt.start, Matcher: "startup", Command: rec.command(t, tt.start, contextOutput(tt.start, startMarker))},
				{Event: tt.prompt, Command: rec.command(t, tt.prompt, contextOutput(tt.prompt, promptMarker))},
				{Event: tt.tool, Command: rec.command(t, tt.tool, "")},
				{Event: tt.turnEnd, Command: rec.command(t, tt.turnEnd, "")},
				{Event: tt.sessionEnd, Command: rec.command(t, tt.sessionEnd, ""), Timeout: 3 * time.Second},
			}
			dir := t.TempDir()
			prompt := "Please write a notes file."
			sessions := tt.run(t, srv, dir, prompt, hooks)

			reqs := srv.Requests()
			if len(reqs) != 2 {
				t.Fatalf("the model got %d requests, want 2 (the call, then its result)", len(reqs))
			}
			for _, m := range []string{startMarker, promptMarker, prompt} {
				if !reqs[0].Contains(m) {
					t.Errorf("the model's first request lacks %q:\n%s", m, reqs[0].Body)
				}
			}
			if b, err := os.ReadFile(filepath.Join(dir, "notes.txt")); err != nil || string(b) != "written by the fake model\n" {
				t.Errorf("notes.txt = %q, %v; want the file the tool call wrote", b, err)
			}
			var result string
			for _, m := range reqs[1].Messages {
				for _, b := range m.Content {
					if b.Type == llm.BlockToolResult {
						result = b.Text
					}
				}
			}
			if !strings.Contains(result, "notes.txt") {
				t.Errorf("the tool result sent back = %q, want one naming notes.txt", result)
			}

			realDir, _ := filepath.EvalSymlinks(dir)
			for _, ev := range []string{tt.start, tt.prompt, tt.tool, tt.turnEnd, tt.sessionEnd} {
				ins := rec.inputs(t, ev)
				if len(ins) != 1 {
					t.Errorf("%s hook ran %d times, want once", ev, len(ins))
					continue
				}
				in := ins[0]
				cwd, _ := in["cwd"].(string)
				if realCwd, _ := filepath.EvalSymlinks(cwd); in["hook_event_name"] != ev || in["session_id"] == "" || realCwd != realDir {
					t.Errorf("%s hook input: hook_event_name %v, session_id %v, cwd %v", ev, in["hook_event_name"], in["session_id"], in["cwd"])
				}
				tp, _ := in["transcript_path"].(string)
				if _, err := os.Stat(tp); err != nil {
					t.Errorf("%s hook input: transcript_path %q: %v", ev, tp, err)
				}
			}
			if in := rec.inputs(t, tt.start); len(in) == 1 && in[0]["source"] != "startup" {
				t.Errorf("%s source = %v, want startup", tt.start, in[0]["source"])
			}
			if in := rec.inputs(t, tt.prompt); len(in) == 1 && !strings.Contains(in[0]["prompt"].(string), prompt) {
				t.Errorf("%s prompt = %q, want the prompt", tt.prompt, in[0]["prompt"])
			}
			if in := rec.inputs(t, tt.tool); len(in) == 1 && tt.toolPath(in[0]) != "notes.txt" {
				t.Errorf("%s names the edited file %q, want notes.txt: %v", tt.tool, tt.toolPath(in[0]), in[0])
			}
			// Gemini CLI builds prompt_response from the streamed chunks, not
			// always exactly (0.61.0 joined and repeated pieces of this one);
			// the session file has the exact text.
			if in := rec.inputs(t, tt.turnEnd); len(in) == 1 && !strings.HasPrefix(fmt.Sprint(in[0][tt.lastAnswer]), "All done: notes.") {
				t.Errorf("%s %s = %q, want the model's last answer", tt.turnEnd, tt.lastAnswer, in[0][tt.lastAnswer])
			}

			// The session file holds the conversation, for extraction.
			if len(sessions) != 1 {
				t.Fatalf("%d session files, want 1: %v", len(sessions), sessions)
			}
			b, err := os.ReadFile(sessions[0])
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range []string{prompt, "All done: notes.txt is written."} {
				if !strings.Contains(string(b), s) {
					t.Errorf("session file %s lacks %q", sessions[0], s)
				}
			}
			if in := rec.inputs(t, tt.prompt); len(in) == 1 && in[0]["transcript_path"] != sessions[0] {
				t.Errorf("transcript_path %v, want the session file %s", in[0]["transcript_path"], sessions[0])
			}
		})
	}
}

// TestCodexSkipsUntrustedHooks checks what makes trust matter: a hook
// without a trust record in config.toml does not run, and nothing says so.
func TestCodexSkipsUntrustedHooks(t *testing.T) {
	srv := memdirtest.NewModelServer(t)
	srv.Enqueue(memdirtest.TextReply("hello"))
	rec := newHookRecorder(t)
	cx := memdirtest.NewCodex(t, srv, "")
	cx.AddHook(t, memdirtest.AgentHook{Event: "UserPromptSubmit", Command: rec.command(t, "UserPromptSubmit", contextOutput("UserPromptSubmit", "untrusted-marker")), Untrusted: true})
	run := cx.Exec(t, t.TempDir(), "hi")
	if r := srv.LastRequest(); r == nil || r.Contains("untrusted-marker") {
		t.Errorf("an untrusted hook's context reached the model")
	}
	if in := rec.inputs(t, "UserPromptSubmit"); len(in) != 0 {
		t.Errorf("the untrusted hook ran %d times", len(in))
	}
	if strings.Contains(run.Stderr, "hook: UserPromptSubmit") {
		t.Errorf("codex reported running the untrusted hook:\n%s", run.Stderr)
	}
}

// TestCodexHookHash checks the trust hash against the ones Codex 0.169.0
// itself reported (as currentHash, through its app server's hooks/list)
// for these hooks.
func TestCodexHookHash(t *testing.T) {
	const cmd = "/tmp/explore/cx/hook.sh"
	for _, tt := range []struct {
		event, matcher, command string
		timeout                 int
		status                  string
		want                    string
	}{
		{"SessionStart", "startup", cmd, 30, "", "sha256:844e3c6f6702f4acb0f7e2d1192917ac59ee3b94b9dafef49ca80974a69fb35b"},
		{"UserPromptSubmit", "", cmd, 30, "", "sha256:71814ee165b4671f6200b54df4d927e4bbdd6de4b78629b19c07c6970442a2e2"},
		{"PreToolUse", "", cmd, 30, "", "sha256:9a6744b6157b9a9daf552747e527b7160dede76d81ebb7a2dedde1adc1e08405"},
		{"PostToolUse", "", cmd, 30, "", "sha256:cd1d9025701ee0367d53e45b724e4a3566292515064e85ade0a8f0de20378555"},
		{"Stop", "", cmd, 30, "", "sha256:79f9be26a09434c1bca05a604abf755d12b28d4e4ea82c58f7737abed4961436"},
		{"SessionEnd", "", cmd, 3, "", "sha256:ecdfbe4e90458585e731cfb1ac4d8eefa8fb3e8786e6ea9056d232a61aec58a5"},
		// Shell syntax is hashed as written, with no HTML escaping of < > &.
		{"UserPromptSubmit", "", `memdir hook --agent codex <in >out && echo "done" 'x'`, 10, "", "sha256:c1aeb3c036273feb0ec8444fc3931802df9e9ee0b6eebb49cbc1eae96e18386a"},
		// A hook without a timeout gets Codex's default, 600 s.
		{"PreToolUse", "apply_patch|Edit", "/opt/my tools/memdir hook", 600, "", "sha256:9683850c64bb803ba112396fa11ce27678432c39118c29d7d8956d43cb067f52"},
		{"Stop", "", "memdir hook é", 10, "saving", "sha256:82281b35f306bc56e3fb1244bc31aa0de744deab774c7af1252226d6bb6896ff"},
		// UserPromptSubmit and Stop ignore matchers; SessionEnd keeps them.
		{"UserPromptSubmit", "x", "h", 10, "", memdirtest.CodexHookHash("UserPromptSubmit", "", "h", 10, "")},
		{"Stop", "y", "h", 10, "", memdirtest.CodexHookHash("Stop", "", "h", 10, "")},
		{"SessionEnd", "other", "h", 1, "", "sha256:" + sha256Hex(`{"event_name":"session_end","hooks":[{"async":false,"command":"h","timeout":1,"type":"command"}],"matcher":"other"}`)},
	} {
		if got := memdirtest.CodexHookHash(tt.event, tt.matcher, tt.command, tt.timeout, tt.status); got != tt.want {
			t.Errorf("CodexHookHash(%q, %q, %q, %d, %q) = %s, want %s", tt.event, tt.matcher, tt.command, tt.timeout, tt.status, got, tt.want)
		}
	}
}

func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}
