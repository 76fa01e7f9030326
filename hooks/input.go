package hooks

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/memdir/memdir"
)

// Hook event names memdir acts on.
const (
	SessionStart     = "SessionStart"
	UserPromptSubmit = "UserPromptSubmit"
	PreToolUse       = "PreToolUse"
	Stop             = "Stop"
	SessionEnd       = "SessionEnd"
)

// Events lists every hook event Claude Code fires. An input naming anything
// else is rejected as malformed.
var Events = []string{
	"SessionStart", "Setup", "InstructionsLoaded", "UserPromptSubmit", "UserPromptExpansion",
	"MessageDisplay", "PreToolUse", "PermissionRequest", "PermissionDenied", "PostToolUse",
	"PostToolUseFailure", "PostToolBatch", "Notification", "SubagentStart", "SubagentStop",
	"TaskCreated", "TaskCompleted", "Stop", "StopFailure", "TeammateIdle", "ConfigChange",
	"CwdChanged", "DirectoryAdded", "FileChanged", "WorktreeCreate", "WorktreeRemove",
	"PreCompact", "PostCompact", "Elicitation", "ElicitationResult", "SessionEnd",
}

// EditTools are the tools whose PreToolUse memdir checkpoints: they change
// one file named in their input.
var EditTools = []string{"Edit", "Write", "MultiEdit", "NotebookEdit"}

// MaxInputBytes bounds the input read from standard input. A Write tool call
// carries the whole new file, so the bound is generous.
const MaxInputBytes = 64 << 20

// Input is the JSON object Claude Code writes to a hook's standard input.
// Codex CLI and Gemini CLI send objects of the same kind, which
// [DecodeAgentInput] reads into it: their events are then named as Claude
// Code's (see [Input.AgentEvent]). Fields memdir does not use are kept in
// Raw.
type Input struct {
	// Common to every event.
	SessionID      string `json:"session_id"`
	TranscriptPath string `json:"transcript_path"`
	// Cwd is Claude's working directory: the project memdir locates the
	// memory directory from, not the hook process's directory.
	Cwd            string `json:"cwd"`
	HookEventName  string `json:"hook_event_name"`
	PermissionMode string `json:"permission_mode,omitempty"`
	// PromptID identifies the user turn; absent before the first prompt.
	PromptID  string `json:"prompt_id,omitempty"`
	AgentID   string `json:"agent_id,omitempty"`
	AgentType string `json:"agent_type,omitempty"`

	// SessionStart: startup, resume, clear, compact or fork.
	Source string `json:"source,omitempty"`
	Model  string `json:"model,omitempty"`

	// UserPromptSubmit: the text as typed (nil when the field is absent).
	Prompt *string `json:"prompt,omitempty"`

	// PreToolUse and PostToolUse.
	ToolName  string          `json:"tool_name,omitempty"`
	ToolInput json.RawMessage `json:"tool_input,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`

	// Stop and SubagentStop. StopHookActive is true when Claude is already
	// continuing because of a Stop hook.
	StopHookActive       bool   `json:"stop_hook_active,omitempty"`
	LastAssistantMessage string `json:"last_assistant_message,omitempty"`

	// SessionEnd: clear, resume, logout, prompt_input_exit or other.
	Reason string `json:"reason,omitempty"`

	// TurnID is Codex's id of the user turn (UserPromptSubmit, PreToolUse,
	// Stop); it becomes PromptID.
	TurnID string `json:"turn_id,omitempty"`
	// Timestamp is when Gemini CLI fired the event (ISO 8601).
	Timestamp string `json:"timestamp,omitempty"`
	// PromptResponse is Gemini's AfterAgent text of the answer (not
	// always exact: the transcript has the exact one).
	PromptResponse string `json:"prompt_response,omitempty"`

	// Agent is the program that sent the input; AgentEvent is its own name
	// for the event (BeforeAgent for Gemini's UserPromptSubmit), which its
	// answer must carry. Neither is part of the JSON.
	Agent      Agent  `json:"-"`
	AgentEvent string `json:"-"`

	// Raw is the whole object as read.
	Raw json.RawMessage `json:"-"`
}

// ParseInput reads one hook input object from r and checks it: the event is
// one Claude Code fires, and for the events memdir acts on (SessionStart,
// UserPromptSubmit, PreToolUse, Stop, SessionEnd) the fields memdir needs
// are present and well formed. Errors wrap memdir.ErrInvalid and name the
// field.
func ParseInput(r io.Reader) (*Input, error) { return ParseAgentInput(Claude, r) }

// ParseAgentInput is ParseInput for the input agent a sends (see
// [DecodeAgentInput]).
func ParseAgentInput(a Agent, r io.Reader) (*Input, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxInputBytes+1))
	if err != nil {
		return nil, fmt.Errorf("hook input: read standard input: %w", err)
	}
	if len(data) > MaxInputBytes {
		return nil, fmt.Errorf("hook input is larger than %d bytes: %w", MaxInputBytes, memdir.ErrInvalid)
	}
	return DecodeAgentInput(a, data)
}

// DecodeInput is ParseInput on bytes already read.
func DecodeInput(data []byte) (*Input, error) { return DecodeAgentInput(Claude, data) }

// DecodeAgentInput reads the hook input a of the agent programs sent: for
// Claude, as [DecodeInput]; for Codex and Gemini, the same object with
// their own event names and fields, which it maps onto Claude Code's (see
// [Agent]), then checks as DecodeInput does. Errors wrap memdir.ErrInvalid
// and name the field.
func DecodeAgentInput(a Agent, data []byte) (*Input, error) {
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return nil, fmt.Errorf("hook input is empty: memdir hook reads the JSON object %s writes to a hook's standard input: %w", a.Program(), memdir.ErrInvalid)
	}
	if trimmed[0] != '{' {
		return nil, fmt.Errorf("hook input is not a JSON object (it begins %q): %w", prefix(trimmed, 20), memdir.ErrInvalid)
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	var in Input
	if err := dec.Decode(&in); err != nil {
		return nil, fmt.Errorf("hook input is not valid JSON: %s: %w", describeJSONError(err, trimmed), memdir.ErrInvalid)
	}
	if dec.More() {
		return nil, fmt.Errorf("hook input holds more than one JSON value: %w", memdir.ErrInvalid)
	}
	in.Raw = json.RawMessage(trimmed)
	in.Agent, in.AgentEvent = a, in.HookEventName
	if err := in.adapt(); err != nil {
		return nil, fmt.Errorf("hook input: %w: %w", err, memdir.ErrInvalid)
	}
	if err := in.check(); err != nil {
		return nil, fmt.Errorf("hook input: %w: %w", err, memdir.ErrInvalid)
	}
	return &in, nil
}

// describeJSONError says what is wrong with the JSON data, without the
// input's raw bytes: encoding/json shows a bad byte as the Latin-1
// character of its value (0xff as 'ÿ'), so the offending byte is named
// here by its escape instead.
func describeJSONError(err error, data []byte) string {
	var te *json.UnmarshalTypeError
	var se *json.SyntaxError
	switch {
	case errors.As(err, &te) && te.Field != "":
		return fmt.Sprintf("field %s is a JSON %s, want %s", te.Field, te.Value, jsonKind(te.Type.Kind().String()))
	case errors.As(err, &se):
		msg := se.Error()
		if rest, ok := strings.CutPrefix(msg, "invalid character '"); ok && se.Offset >= 1 && se.Offset <= int64(len(data)) {
			if _, after, ok := strings.Cut(rest, "' "); ok {
				msg = "invalid " + quoteAt(data, int(se.Offset-1)) + " " + after
			}
		}
		return fmt.Sprintf("%s at byte %d", msg, se.Offset)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "it ends in the middle of a value"
	}
	return err.Error()
}

func jsonKind(goKind string) string {
	switch goKind {
	case "string":
		return "a string"
	case "bool":
		return "true or false"
	case "slice", "array":
		return "an array"
	case "map", "struct", "ptr":
		return "an object"
	}
	return "a " + goKind
}

func prefix(b []byte, n int) string {
	s := string(b)
	if len(s) > n {
		s = s[:n] + "…"
	}
	return strings.ToValidUTF8(s, "?")
}

// Acts reports whether memdir does anything for the event.
func Acts(event string) bool {
	switch event {
	case SessionStart, UserPromptSubmit, PreToolUse, Stop, SessionEnd:
		return true
	}
	return false
}

func (in *Input) check() error {
	if !Acts(in.HookEventName) {
		return nil
	}
	if err := CheckSessionID(in.SessionID); err != nil {
		return err
	}
	switch {
	case in.Cwd == "":
		return errors.New("field cwd is missing")
	case !filepath.IsAbs(in.Cwd):
		return fmt.Errorf("field cwd is %q, not an absolute path", in.Cwd)
	case strings.ContainsRune(in.Cwd, 0):
		return errors.New("field cwd contains a NUL byte")
	}
	if in.PromptID != "" {
		if err := checkPromptID(in.PromptID); err != nil {
			return err
		}
	}
	switch in.HookEventName {
	case UserPromptSubmit:
		if in.Prompt == nil {
			return errors.New("field prompt is missing")
		}
	case PreToolUse:
		if in.ToolName == "" {
			return errors.New("field tool_name is missing")
		}
		if len(in.ToolInput) == 0 || in.ToolInput[0] != '{' {
			return errors.New("field tool_input is missing or not an object")
		}
	case Stop:
		if in.TranscriptPath == "" {
			return errors.New("field transcript_path is missing")
		}
		if !filepath.IsAbs(in.TranscriptPath) {
			return fmt.Errorf("field transcript_path is %q, not an absolute path", in.TranscriptPath)
		}
	}
	return nil
}

// CheckSessionID accepts the session ids Claude Code uses (UUIDs) and
// anything else made of 1 to 128 letters, digits, '.', '_' and '-': memdir
// names files after it.
func CheckSessionID(id string) error {
	if id == "" {
		return errors.New("field session_id is missing")
	}
	if id == "." || id == ".." || len(id) > 128 {
		return fmt.Errorf("field session_id is %q: want 1 to 128 letters, digits, '.', '_' or '-'", id)
	}
	for _, r := range id {
		if !(r < utf8.RuneSelf && (r == '.' || r == '_' || r == '-' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')) {
			return fmt.Errorf("field session_id is %q, which contains %q: want letters, digits, '.', '_' or '-'", id, r)
		}
	}
	return nil
}

func checkPromptID(id string) error {
	if len(id) > 256 || !utf8.ValidString(id) || strings.IndexFunc(id, unicode.IsControl) >= 0 {
		return fmt.Errorf("field prompt_id %.40q is not a short line of text", id)
	}
	return nil
}

// EditedFile returns the file a PreToolUse call of an edit tool is about to
// change: tool_input.file_path, or tool_input.notebook_path for
// NotebookEdit. ok is false for tools that are not edit tools.
func (in *Input) EditedFile() (path string, ok bool, err error) {
	if !slices.Contains(EditTools, in.ToolName) {
		return "", false, nil
	}
	p, err := filePath(in.ToolName, in.ToolInput)
	return p, true, err
}

// filePath returns the file a call of tool names in its input:
// tool_input.file_path, or tool_input.notebook_path for NotebookEdit.
func filePath(tool string, raw json.RawMessage) (string, error) {
	var ti struct {
		FilePath     *string `json:"file_path"`
		NotebookPath *string `json:"notebook_path"`
	}
	if err := json.Unmarshal(raw, &ti); err != nil {
		return "", fmt.Errorf("hook input: field tool_input of %s: %s: %w", tool, describeJSONError(err, raw), memdir.ErrInvalid)
	}
	field, p := "tool_input.file_path", ti.FilePath
	if tool == "NotebookEdit" && ti.NotebookPath != nil {
		field, p = "tool_input.notebook_path", ti.NotebookPath
	}
	switch {
	case p == nil || *p == "":
		if tool == "NotebookEdit" {
			field = "tool_input.notebook_path"
		}
		return "", fmt.Errorf("hook input: field %s of the %s call is missing: %w", field, tool, memdir.ErrInvalid)
	case strings.ContainsRune(*p, 0):
		return "", fmt.Errorf("hook input: field %s contains a NUL byte: %w", field, memdir.ErrInvalid)
	}
	return *p, nil
}

// quoteAt names the character starting at data[i] for a message: a valid
// printable UTF-8 character quoted, any other byte by its escape.
func quoteAt(data []byte, i int) string {
	r, n := utf8.DecodeRune(data[i:])
	if r == utf8.RuneError && n <= 1 || !unicode.IsPrint(r) {
		return fmt.Sprintf("byte %q", data[i:i+1])
	}
	return "character '" + string(r) + "'"
}
