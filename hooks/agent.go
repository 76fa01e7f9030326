package hooks

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/memdir/memdir"
)

// Agent is a program whose hooks memdir answers. Codex CLI and Gemini CLI
// send hook inputs shaped like Claude Code's (session_id, transcript_path,
// cwd, hook_event_name and per-event fields), under their own event
// names, and read answers of the same kind; [DecodeAgentInput] maps their
// events onto Claude Code's, so that [Handler] does the same work for all
// three:
//
//	Claude Code        Codex CLI          Gemini CLI
//	SessionStart       SessionStart       SessionStart
//	UserPromptSubmit   UserPromptSubmit   BeforeAgent
//	PreToolUse         PreToolUse         BeforeTool
//	Stop               Stop               AfterAgent
//	SessionEnd         SessionEnd         SessionEnd
//
// The prompt id a checkpoint snapshot is named after is Claude Code's
// prompt_id, Codex's turn_id, and for Gemini, which gives the turn no id,
// "gemini-" and the event's timestamp: BeforeAgent's names the prompt's
// snapshot, and an edit is added to the latest snapshot whatever the id
// its BeforeTool carries.
type Agent string

// The agents memdir has hooks for.
const (
	Claude Agent = "claude"
	Codex  Agent = "codex"
	Gemini Agent = "gemini"
)

// Agents lists them, Claude Code first.
var Agents = []Agent{Claude, Codex, Gemini}

// ParseAgent reads an agent's name: claude, codex or gemini ("" is
// claude).
func ParseAgent(s string) (Agent, error) {
	switch a := Agent(strings.ToLower(strings.TrimSpace(s))); a {
	case "":
		return Claude, nil
	case Claude, Codex, Gemini:
		return a, nil
	}
	return "", fmt.Errorf("agent %q: want claude, codex or gemini: %w", s, memdir.ErrInvalid)
}

// Program is the agent program's name, for messages.
func (a Agent) Program() string {
	switch a {
	case Codex:
		return "Codex CLI"
	case Gemini:
		return "Gemini CLI"
	}
	return "Claude Code"
}

// CodexEvents and GeminiEvents list the hook events of Codex CLI 0.169.0
// and Gemini CLI 0.61.0. An input naming anything else is rejected as
// malformed.
var (
	CodexEvents  = []string{"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "PreCompact", "PostCompact", "Stop", "SessionEnd"}
	GeminiEvents = []string{"SessionStart", "BeforeAgent", "AfterAgent", "BeforeTool", "AfterTool", "BeforeModel", "AfterModel", "BeforeToolSelection", "PreCompress", "Notification", "SessionEnd"}
)

// geminiEvent maps Gemini CLI's events onto Claude Code's; the others keep
// their names and memdir does nothing for them.
var geminiEvent = map[string]string{
	"BeforeAgent": UserPromptSubmit,
	"BeforeTool":  PreToolUse,
	"AfterAgent":  Stop,
	"AfterTool":   "PostToolUse",
	"PreCompress": "PreCompact",
}

// AgentEvent returns agent a's name for the Claude Code event, "" when
// the agent has no such event.
func (a Agent) AgentEvent(event string) string {
	switch a {
	case Codex:
		if slices.Contains(CodexEvents, event) {
			return event
		}
		return ""
	case Gemini:
		for g, c := range geminiEvent {
			if c == event {
				return g
			}
		}
		if slices.Contains(GeminiEvents, event) {
			return event
		}
		return ""
	}
	return event
}

// events is the agent's list of hook events.
func (a Agent) events() []string {
	switch a {
	case Codex:
		return CodexEvents
	case Gemini:
		return GeminiEvents
	}
	return Events
}

// CodexEditTools and GeminiEditTools are the tools whose pre-tool event
// memdir checkpoints: Codex's apply_patch (the files its patch names) and
// Gemini's write_file and replace (tool_input.file_path).
var (
	CodexEditTools  = []string{"apply_patch"}
	GeminiEditTools = []string{"write_file", "replace"}
)

// adapt checks the agent's event name and maps the agent's event and
// fields onto Claude Code's.
func (in *Input) adapt() error {
	if in.Agent == "" {
		in.Agent = Claude
	}
	if in.HookEventName == "" {
		return errors.New("field hook_event_name is missing")
	}
	if !slices.Contains(in.Agent.events(), in.HookEventName) {
		return fmt.Errorf("field hook_event_name is %q, which is not a %s hook event", in.HookEventName, in.Agent.Program())
	}
	switch in.Agent {
	case Codex:
		if in.PromptID == "" {
			in.PromptID = in.TurnID
		}
	case Gemini:
		if ev, ok := geminiEvent[in.HookEventName]; ok {
			in.HookEventName = ev
		}
		if in.PromptID == "" && in.Timestamp != "" && (in.HookEventName == UserPromptSubmit || in.HookEventName == PreToolUse) {
			in.PromptID = "gemini-" + in.Timestamp
		}
		if in.Prompt != nil {
			// The SessionStart hook's context is prepended to the prompt a
			// BeforeAgent hook sees: it is not what the user asked.
			p := strings.TrimSpace(cutSections(*in.Prompt, "<hook_context>", "</hook_context>"))
			in.Prompt = &p
		}
	}
	return nil
}

// cutSections removes every open…end section of s.
func cutSections(s, open, end string) string {
	for {
		i := strings.Index(s, open)
		if i < 0 {
			return s
		}
		j := strings.Index(s[i:], end)
		if j < 0 {
			return s
		}
		s = s[:i] + s[i+j+len(end):]
	}
}

// EditedFiles returns the files a pre-tool call of an edit tool is about
// to change, as the call names them (relative paths are relative to the
// input's cwd): for Claude Code, [Input.EditedFile]; for Codex's
// apply_patch, every file its patch adds, updates, deletes or moves to;
// for Gemini's write_file and replace, tool_input.file_path. ok is false
// for tools that are not edit tools.
func (in *Input) EditedFiles() (paths []string, ok bool, err error) {
	switch in.Agent {
	case Codex:
		if !slices.Contains(CodexEditTools, in.ToolName) {
			return nil, false, nil
		}
		paths, err = patchFiles(in.ToolName, in.ToolInput)
		return paths, true, err
	case Gemini:
		if !slices.Contains(GeminiEditTools, in.ToolName) {
			return nil, false, nil
		}
		p, err := filePath(in.ToolName, in.ToolInput)
		if err != nil {
			return nil, true, err
		}
		return []string{p}, true, nil
	}
	p, ok, err := in.EditedFile()
	if !ok || err != nil {
		return nil, ok, err
	}
	return []string{p}, true, nil
}

// patchHeaders begin the lines of an apply_patch patch that name a file.
var patchHeaders = []string{"*** Add File: ", "*** Update File: ", "*** Delete File: ", "*** Move to: "}

// patchFiles returns the files an apply_patch call's patch
// (tool_input.command) names, each once, in order.
func patchFiles(tool string, raw json.RawMessage) ([]string, error) {
	var ti struct {
		Command *string `json:"command"`
	}
	if err := json.Unmarshal(raw, &ti); err != nil {
		return nil, fmt.Errorf("hook input: field tool_input of %s: %s: %w", tool, describeJSONError(err, raw), memdir.ErrInvalid)
	}
	if ti.Command == nil {
		return nil, fmt.Errorf("hook input: field tool_input.command of the %s call is missing: %w", tool, memdir.ErrInvalid)
	}
	var out []string
	for line := range strings.Lines(*ti.Command) {
		line = strings.TrimRight(line, "\r\n")
		for _, h := range patchHeaders {
			name, found := strings.CutPrefix(line, h)
			name = strings.TrimSpace(name)
			switch {
			case !found || name == "":
			case strings.ContainsRune(name, 0):
				return nil, fmt.Errorf("hook input: field tool_input.command of the %s call names a file with a NUL byte: %w", tool, memdir.ErrInvalid)
			case !slices.Contains(out, name):
				out = append(out, name)
			}
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("hook input: field tool_input.command of the %s call names no file (no \"*** Add File:\", \"*** Update File:\" or \"*** Delete File:\" line): %w", tool, memdir.ErrInvalid)
	}
	return out, nil
}
