package hooks

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/memdir/memdir"
)

// The inputs are what Codex CLI 0.169.0 and Gemini CLI 0.61.0 sent a hook,
// shortened.
func TestDecodeAgentInput(t *testing.T) {
	const codexCommon = `"session_id":"01a2-s","transcript_path":"/h/.codex/sessions/r.jsonl","cwd":"/src/app",`
	const geminiCommon = `"session_id":"3f0e-g","transcript_path":"/h/.gemini/tmp/app/chats/s.jsonl","cwd":"/src/app",`
	tests := []struct {
		name  string
		agent Agent
		in    string
		want  *Input
	}{
		{
			name: "Codex UserPromptSubmit", agent: Codex,
			in:   `{` + codexCommon + `"turn_id":"01a2-t","hook_event_name":"UserPromptSubmit","model":"gpt-5.5","permission_mode":"bypassPermissions","prompt":"fix the build"}`,
			want: &Input{SessionID: "01a2-s", TranscriptPath: "/h/.codex/sessions/r.jsonl", Cwd: "/src/app", HookEventName: UserPromptSubmit, AgentEvent: UserPromptSubmit, TurnID: "01a2-t", PromptID: "01a2-t", Model: "gpt-5.5", PermissionMode: "bypassPermissions", Prompt: new("fix the build")},
		},
		{
			name: "Codex Stop", agent: Codex,
			in:   `{` + codexCommon + `"turn_id":"01a2-t","hook_event_name":"Stop","stop_hook_active":false,"last_assistant_message":"Done."}`,
			want: &Input{SessionID: "01a2-s", TranscriptPath: "/h/.codex/sessions/r.jsonl", Cwd: "/src/app", HookEventName: Stop, AgentEvent: Stop, TurnID: "01a2-t", PromptID: "01a2-t", LastAssistantMessage: "Done."},
		},
		{
			name: "Codex PostToolUse is not acted on", agent: Codex,
			in:   `{"hook_event_name":"PostToolUse","tool_response":"ok"}`,
			want: &Input{HookEventName: "PostToolUse", AgentEvent: "PostToolUse"},
		},
		{
			name: "Gemini BeforeAgent is the prompt, without the session start's context", agent: Gemini,
			in:   `{` + geminiCommon + `"hook_event_name":"BeforeAgent","timestamp":"2026-12-02T01:32:54.992Z","prompt":"<hook_context>index</hook_context>\n\nfix the build"}`,
			want: &Input{SessionID: "3f0e-g", TranscriptPath: "/h/.gemini/tmp/app/chats/s.jsonl", Cwd: "/src/app", HookEventName: UserPromptSubmit, AgentEvent: "BeforeAgent", Timestamp: "2026-12-02T01:32:54.992Z", PromptID: "gemini-2026-12-02T01:32:54.992Z", Prompt: new("fix the build")},
		},
		{
			name: "Gemini BeforeTool", agent: Gemini,
			in:   `{` + geminiCommon + `"hook_event_name":"BeforeTool","timestamp":"2026-12-02T01:32:55.210Z","tool_name":"write_file","tool_input":{"file_path":"notes.txt","content":"x"}}`,
			want: &Input{SessionID: "3f0e-g", TranscriptPath: "/h/.gemini/tmp/app/chats/s.jsonl", Cwd: "/src/app", HookEventName: PreToolUse, AgentEvent: "BeforeTool", Timestamp: "2026-12-02T01:32:55.210Z", PromptID: "gemini-2026-12-02T01:32:55.210Z", ToolName: "write_file", ToolInput: []byte(`{"file_path":"notes.txt","content":"x"}`)},
		},
		{
			name: "Gemini AfterAgent is the stop", agent: Gemini,
			in:   `{` + geminiCommon + `"hook_event_name":"AfterAgent","timestamp":"t","prompt":"p","prompt_response":"All done.","stop_hook_active":false}`,
			want: &Input{SessionID: "3f0e-g", TranscriptPath: "/h/.gemini/tmp/app/chats/s.jsonl", Cwd: "/src/app", HookEventName: Stop, AgentEvent: "AfterAgent", Timestamp: "t", Prompt: new("p"), PromptResponse: "All done."},
		},
		{
			name: "Gemini BeforeModel keeps its name", agent: Gemini,
			in:   `{"hook_event_name":"BeforeModel","llm_request":{}}`,
			want: &Input{HookEventName: "BeforeModel", AgentEvent: "BeforeModel"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DecodeAgentInput(tt.agent, []byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			tt.want.Agent = tt.agent
			if diff := cmp.Diff(tt.want, got, cmpopts.IgnoreFields(Input{}, "Raw")); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestDecodeAgentInputErrors(t *testing.T) {
	tests := []struct {
		agent   Agent
		in, err string
	}{
		{Codex, ``, "the JSON object Codex CLI writes"},
		{Codex, `{"hook_event_name":"BeforeAgent"}`, `field hook_event_name is "BeforeAgent", which is not a Codex CLI hook event`},
		{Gemini, `{"hook_event_name":"UserPromptSubmit"}`, `field hook_event_name is "UserPromptSubmit", which is not a Gemini CLI hook event`},
		{Gemini, `{"session_id":"g","cwd":"/x","hook_event_name":"BeforeAgent"}`, "field prompt is missing"},
		{Gemini, `{"session_id":"g","cwd":"/x","hook_event_name":"AfterAgent"}`, "field transcript_path is missing"},
		{Codex, `{"session_id":"c","cwd":"/x","hook_event_name":"PreToolUse","tool_name":"apply_patch","tool_input":"patch"}`, "field tool_input is missing or not an object"},
		{Codex, `{"session_id":"c","cwd":"relative","hook_event_name":"SessionStart"}`, `field cwd is "relative", not an absolute path`},
		{Gemini, `{"session_id":"g","cwd":"/x","hook_event_name":"BeforeAgent","prompt":3}`, "field prompt is a JSON number, want a string"},
	}
	for _, tt := range tests {
		_, err := DecodeAgentInput(tt.agent, []byte(tt.in))
		if err == nil || !errors.Is(err, memdir.ErrInvalid) || !strings.Contains(err.Error(), tt.err) {
			t.Errorf("%s %s: %v, want ErrInvalid with %q", tt.agent, tt.in, err, tt.err)
		}
	}
}

func TestEditedFiles(t *testing.T) {
	patch := func(body string) string {
		return `{"command":` + strings.ReplaceAll(`"*** Begin Patch\n`+body+`*** End Patch\n"`, "\t", "") + `}`
	}
	tests := []struct {
		agent       Agent
		tool, input string
		want        []string
		edits       bool
		err         string
	}{
		{Codex, "apply_patch", patch(`*** Add File: notes.txt\n+hi\n`), []string{"notes.txt"}, true, ""},
		{Codex, "apply_patch", patch(`*** Update File: a.go\n*** Move to: b.go\n@@\n-x\n+y\n*** Delete File: /abs/c.go\n*** Update File: a.go\n`), []string{"a.go", "b.go", "/abs/c.go"}, true, ""},
		{Codex, "apply_patch", patch(`+*** Add File: inside a line\n`), nil, true, "names no file"},
		{Codex, "apply_patch", `{"input":"x"}`, nil, true, "field tool_input.command of the apply_patch call is missing"},
		{Codex, "apply_patch", `{"command":"*** Add File: a\u0000b\n"}`, nil, true, "NUL"},
		{Codex, "Bash", `{"command":"echo hi > f"}`, nil, false, ""},
		{Gemini, "write_file", `{"file_path":"notes.txt","content":"x"}`, []string{"notes.txt"}, true, ""},
		{Gemini, "replace", `{"file_path":"/src/a.go","old_string":"x","new_string":"y"}`, []string{"/src/a.go"}, true, ""},
		{Gemini, "replace", `{"instruction":"x"}`, nil, true, "field tool_input.file_path of the replace call is missing"},
		{Gemini, "read_file", `{"file_path":"a"}`, nil, false, ""},
		{Claude, "Write", `{"file_path":"/a"}`, []string{"/a"}, true, ""},
		{Claude, "write_file", `{"file_path":"/a"}`, nil, false, ""},
	}
	for _, tt := range tests {
		in := &Input{Agent: tt.agent, ToolName: tt.tool, ToolInput: []byte(tt.input)}
		got, edits, err := in.EditedFiles()
		if !cmp.Equal(got, tt.want) || edits != tt.edits || (err == nil) != (tt.err == "") || err != nil && !strings.Contains(err.Error(), tt.err) {
			t.Errorf("%s %s %s: %q, %t, %v; want %q, %t, %q", tt.agent, tt.tool, tt.input, got, edits, err, tt.want, tt.edits, tt.err)
		}
	}
}

func TestAgentEventNames(t *testing.T) {
	for _, tt := range []struct {
		agent       Agent
		event, want string
	}{
		{Gemini, UserPromptSubmit, "BeforeAgent"}, {Gemini, PreToolUse, "BeforeTool"}, {Gemini, Stop, "AfterAgent"},
		{Gemini, SessionStart, SessionStart}, {Gemini, "SubagentStop", ""},
		{Codex, UserPromptSubmit, UserPromptSubmit}, {Codex, "Notification", ""}, {Claude, "Notification", "Notification"},
	} {
		if got := tt.agent.AgentEvent(tt.event); got != tt.want {
			t.Errorf("%s.AgentEvent(%s) = %q, want %q", tt.agent, tt.event, got, tt.want)
		}
	}
	if a, err := ParseAgent(" Codex "); a != Codex || err != nil {
		t.Errorf("ParseAgent(Codex) = %q, %v", a, err)
	}
	if _, err := ParseAgent("cursor"); err == nil || !strings.Contains(err.Error(), "want claude, codex or gemini") {
		t.Errorf("ParseAgent(cursor) = %v", err)
	}
}

// FuzzDecodeAgentInput is FuzzDecodeInput for Codex and Gemini inputs:
// ErrInvalid or a checked input, and no edited path with a NUL.
func FuzzDecodeAgentInput(f *testing.F) {
	for _, s := range []string{
		`{"session_id":"a","transcript_path":"/t","cwd":"/x","hook_event_name":"AfterAgent","stop_hook_active":false}`,
		`{"session_id":"a","cwd":"/x","hook_event_name":"BeforeAgent","prompt":"<hook_context>i</hook_context>hi","timestamp":"t"}`,
		`{"session_id":"a","cwd":"/x","hook_event_name":"PreToolUse","tool_name":"apply_patch","turn_id":"t","tool_input":{"command":"*** Add File: f\n"}}`,
		`{"session_id":"a","cwd":"/x","hook_event_name":"BeforeTool","tool_name":"replace","tool_input":{"file_path":"f"}}`,
		`{"hook_event_name":"PostToolUse"}`, `[]`, "",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, a := range []Agent{Codex, Gemini} {
			in, err := DecodeAgentInput(a, data)
			if err != nil {
				if !errors.Is(err, memdir.ErrInvalid) {
					t.Fatalf("error without ErrInvalid: %v", err)
				}
				continue
			}
			if !Acts(in.HookEventName) {
				continue
			}
			if err := CheckSessionID(in.SessionID); err != nil || !filepath.IsAbs(in.Cwd) {
				t.Fatalf("session %q, cwd %q accepted", in.SessionID, in.Cwd)
			}
			if ps, _, err := in.EditedFiles(); err == nil {
				for _, p := range ps {
					if strings.ContainsRune(p, 0) || p == "" {
						t.Fatalf("path %q accepted", p)
					}
				}
			}
		}
	})
}
