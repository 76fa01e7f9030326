package hooks

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/memdir/memdir"
)

func TestDecodeInput(t *testing.T) {
	tests := []struct {
		name, in string
		want     *Input
	}{
		{
			name: "UserPromptSubmit",
			in:   `{"session_id":"abc-1","transcript_path":"/h/t.jsonl","cwd":"/src/app","permission_mode":"default","hook_event_name":"UserPromptSubmit","prompt_id":"p1","prompt":"fix the build"}`,
			want: &Input{SessionID: "abc-1", TranscriptPath: "/h/t.jsonl", Cwd: "/src/app", PermissionMode: "default", HookEventName: UserPromptSubmit, PromptID: "p1", Prompt: new("fix the build")},
		},
		{
			name: "empty prompt is present",
			in:   `{"session_id":"a","cwd":"/","hook_event_name":"UserPromptSubmit","prompt":""}`,
			want: &Input{SessionID: "a", Cwd: "/", HookEventName: UserPromptSubmit, Prompt: new("")},
		},
		{
			name: "Stop with unknown fields",
			in:   " \n{\"session_id\":\"a\",\"transcript_path\":\"/t.jsonl\",\"cwd\":\"/x\",\"hook_event_name\":\"Stop\",\"stop_hook_active\":true,\"effort\":{\"level\":\"medium\"},\"background_tasks\":[]}\n",
			want: &Input{SessionID: "a", TranscriptPath: "/t.jsonl", Cwd: "/x", HookEventName: Stop, StopHookActive: true},
		},
		{
			name: "an event memdir ignores needs no fields",
			in:   `{"hook_event_name":"Notification","message":"hi"}`,
			want: &Input{HookEventName: "Notification"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DecodeInput([]byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got, cmpopts.IgnoreFields(Input{}, "Raw", "Agent", "AgentEvent")); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if string(got.Raw) != strings.TrimSpace(tt.in) {
				t.Errorf("Raw = %s", got.Raw)
			}
		})
	}
}

func TestDecodeInputErrors(t *testing.T) {
	tests := []struct{ in, want string }{
		{``, "hook input is empty"},
		{`  `, "hook input is empty"},
		{`null`, `not a JSON object (it begins "null")`},
		{`{"hook_event_name":"Stop"`, "not valid JSON: it ends in the middle of a value"},
		{`{"hook_event_name":}`, "not valid JSON: invalid character '}'"},
		{`{} {}`, "more than one JSON value"},
		{`{}`, "field hook_event_name is missing"},
		{`{"hook_event_name":["Stop"]}`, "field hook_event_name is a JSON array, want a string"},
		{`{"hook_event_name":"stop"}`, `field hook_event_name is "stop", which is not a Claude Code hook event`},
		{`{"hook_event_name":"Stop","cwd":"/"}`, "field session_id is missing"},
		{`{"hook_event_name":"Stop","session_id":"a/b","cwd":"/"}`, `field session_id is "a/b", which contains '/'`},
		{`{"hook_event_name":"Stop","session_id":"..","cwd":"/"}`, `field session_id is ".."`},
		{`{"hook_event_name":"Stop","session_id":"` + strings.Repeat("a", 129) + `","cwd":"/"}`, "want 1 to 128"},
		{`{"hook_event_name":"SessionEnd","session_id":"a"}`, "field cwd is missing"},
		{`{"hook_event_name":"SessionEnd","session_id":"a","cwd":"rel/dir"}`, `field cwd is "rel/dir", not an absolute path`},
		{`{"hook_event_name":"SessionEnd","session_id":"a","cwd":"/x\u0000y"}`, "field cwd contains a NUL byte"},
		{`{"hook_event_name":"SessionEnd","session_id":"a","cwd":"/","prompt_id":"a\nb"}`, "field prompt_id"},
		{`{"hook_event_name":"UserPromptSubmit","session_id":"a","cwd":"/"}`, "field prompt is missing"},
		{`{"hook_event_name":"UserPromptSubmit","session_id":"a","cwd":"/","prompt":7}`, "field prompt is a JSON number, want a string"},
		{`{"hook_event_name":"PreToolUse","session_id":"a","cwd":"/","tool_input":{}}`, "field tool_name is missing"},
		{`{"hook_event_name":"PreToolUse","session_id":"a","cwd":"/","tool_name":"Edit","tool_input":"x"}`, "field tool_input is missing or not an object"},
		{`{"hook_event_name":"Stop","session_id":"a","cwd":"/"}`, "field transcript_path is missing"},
		{`{"hook_event_name":"Stop","session_id":"a","cwd":"/","transcript_path":"t.jsonl"}`, `field transcript_path is "t.jsonl", not an absolute path`},
		{`{"hook_event_name":"Stop","session_id":"a","cwd":"/","transcript_path":"/t","stop_hook_active":1}`, "field stop_hook_active is a JSON number, want true or false"},
	}
	for _, tt := range tests {
		_, err := DecodeInput([]byte(tt.in))
		if err == nil || !strings.Contains(err.Error(), tt.want) || !errors.Is(err, memdir.ErrInvalid) {
			t.Errorf("DecodeInput(%.60s) = %v, want an ErrInvalid saying %q", tt.in, err, tt.want)
		}
	}
}

func TestParseInputTooLarge(t *testing.T) {
	in := `{"hook_event_name":"Notification","message":"` + strings.Repeat("x", MaxInputBytes) + `"}`
	if _, err := ParseInput(strings.NewReader(in)); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("ParseInput of %d bytes: %v", len(in), err)
	}
}

func TestEditedFile(t *testing.T) {
	tests := []struct {
		tool, input string
		want        string
		edits       bool
		err         string
	}{
		{"Edit", `{"file_path":"/a/b.go","old_string":"x","new_string":"y"}`, "/a/b.go", true, ""},
		{"Write", `{"file_path":"rel.txt","content":"hi"}`, "rel.txt", true, ""},
		{"MultiEdit", `{"file_path":"/m.go","edits":[]}`, "/m.go", true, ""},
		{"NotebookEdit", `{"notebook_path":"/n.ipynb","new_source":"x"}`, "/n.ipynb", true, ""},
		{"NotebookEdit", `{"file_path":"/n.ipynb"}`, "/n.ipynb", true, ""},
		{"Bash", `{"command":"rm -rf /"}`, "", false, ""},
		{"Edit", `{"old_string":"x"}`, "", true, "field tool_input.file_path of the Edit call is missing"},
		{"Edit", `{"file_path":""}`, "", true, "field tool_input.file_path of the Edit call is missing"},
		{"Edit", `{"file_path":3}`, "", true, "field file_path is a JSON number, want a string"},
		{"NotebookEdit", `{}`, "", true, "field tool_input.notebook_path of the NotebookEdit call is missing"},
		{"Write", `{"file_path":"/a\u0000b"}`, "", true, "NUL"},
	}
	for _, tt := range tests {
		in := &Input{ToolName: tt.tool, ToolInput: []byte(tt.input)}
		got, edits, err := in.EditedFile()
		if got != tt.want || edits != tt.edits || (err == nil) != (tt.err == "") || err != nil && !strings.Contains(err.Error(), tt.err) {
			t.Errorf("%s %s: %q, %t, %v; want %q, %t, %q", tt.tool, tt.input, got, edits, err, tt.want, tt.edits, tt.err)
		}
	}
}

// FuzzDecodeInput: any bytes either fail with ErrInvalid or give an input
// whose event is a Claude Code event and, for the events memdir acts on,
// whose session id is a plain file name and cwd an absolute path.
func FuzzDecodeInput(f *testing.F) {
	for _, s := range []string{
		`{"session_id":"a","transcript_path":"/t","cwd":"/x","hook_event_name":"Stop","stop_hook_active":false}`,
		`{"session_id":"a","cwd":"/x","hook_event_name":"UserPromptSubmit","prompt":"hi there","prompt_id":"p"}`,
		`{"session_id":"a","cwd":"/x","hook_event_name":"PreToolUse","tool_name":"Edit","tool_input":{"file_path":"/f"}}`,
		`{"hook_event_name":"PostToolUse"}`, `{"hook_event_name":"Stop"`, `[]`, "",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		in, err := DecodeInput(data)
		if err != nil {
			if !errors.Is(err, memdir.ErrInvalid) {
				t.Fatalf("error without ErrInvalid: %v", err)
			}
			return
		}
		if !slices.Contains(Events, in.HookEventName) {
			t.Fatalf("event %q accepted", in.HookEventName)
		}
		if !Acts(in.HookEventName) {
			return
		}
		if filepath.Base(in.SessionID) != in.SessionID || !filepath.IsLocal(in.SessionID) || !filepath.IsAbs(in.Cwd) {
			t.Fatalf("session %q, cwd %q accepted", in.SessionID, in.Cwd)
		}
		if in.HookEventName == PreToolUse {
			if p, _, err := in.EditedFile(); err == nil && strings.ContainsRune(p, 0) {
				t.Fatalf("path with NUL accepted: %q", p)
			}
		}
	})
}
