package agent

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"path"
	"strings"

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/llm"
	"github.com/memdir/memdir/memtool"
)

// Defaults for [Options].
const (
	// DefaultMaxTurns bounds a run whose Options.MaxTurns is zero. Claude
	// Code leaves consolidation unbounded; a bound keeps a confused model
	// from looping on a background job.
	DefaultMaxTurns = 30
	// DefaultRecordChars is how much of each tool output a Result keeps.
	DefaultRecordChars = 2000
)

// Options configure a run. Model and MemoryDir are required.
type Options struct {
	// Model answers each turn.
	Model llm.Model
	// System is the system prompt sent with every call.
	System string
	// MemoryDir is the directory the memory tool works on (the model sees
	// it as /memories). It must exist.
	MemoryDir string
	// AnchorRoot is the project that memories written by the run record
	// code anchors against (see memdir.AnchorContent); "" records none.
	AnchorRoot string
	// ProjectDir is the directory the read-only project tools (read_file,
	// grep, glob, ls) work on. Empty disables them: only the memory tool is
	// offered, and calls to the project tools are denied.
	ProjectDir string
	// MaxTurns caps the model calls of the run (5 for extraction). Zero
	// means DefaultMaxTurns.
	MaxTurns int
	// MaxTokens caps each reply; zero leaves it to the model adapter.
	MaxTokens int
	// MemoryReadOnly allows only the memory tool's view command.
	MemoryReadOnly bool
	// OnlyFile, when set, restricts memory changes to this one file: create,
	// str_replace and insert on it are allowed, every other change (another
	// path, delete, rename) is denied. It is root-relative ("summary.md") or
	// a memory-tool path ("/memories/summary.md"). Session-memory notes use
	// it.
	OnlyFile string
	// BeforeChange is called with the root-relative slash path of each
	// memory file or directory just before the memory tool changes it, so
	// the caller can journal it for undo. An error stops that change and
	// ends the run with the error: a run that cannot be undone must not go
	// on writing.
	BeforeChange func(relPath string) error
	// Write, when set, is the memory tool's write hook
	// (memtool.Options.Write): extraction and dream pass
	// memdir.Dir.WriteGuard, so their writes carry provenance and
	// suspicious ones are held for review.
	Write func(relPath string, old, content []byte) ([]byte, error)
	// OnEvent, when set, is called synchronously as the run progresses, for
	// progress displays. It must not block for long.
	OnEvent func(Event)
	// RecordChars caps the tool output kept in Result.ToolCalls (the model
	// always gets the whole output). Zero means DefaultRecordChars.
	RecordChars int
	// Logger receives a debug record per turn and tool call; nil discards.
	Logger *slog.Logger
}

// Result is what a run did. Run returns it even when it fails, so that the
// files already changed are known and can be undone.
type Result struct {
	// Text is the text of the model's last reply.
	Text string `json:"text"`
	// StopReason is why the last reply ended; it is tool_use when the run
	// stopped at the turn limit.
	StopReason llm.StopReason `json:"stop_reason,omitempty"`
	// Turns is the number of model calls that were answered.
	Turns int `json:"turns"`
	// TurnLimit reports that the run stopped because it reached MaxTurns
	// while the model still wanted to call tools.
	TurnLimit bool `json:"turn_limit,omitempty"`
	// Files are the memory paths the run changed, in the order first
	// changed, each once.
	Files []File `json:"files"`
	// ToolCalls are every tool call of the run, in order.
	ToolCalls []ToolCall `json:"tool_calls"`
	// Usage sums the tokens of all model calls.
	Usage llm.Usage `json:"usage"`
}

// File is a memory path a run changed.
type File struct {
	// Path is relative to the memory directory, slash-separated.
	Path string `json:"path"`
	// Index marks a MEMORY.md file, which callers counting saved memories
	// leave out.
	Index bool `json:"index,omitempty"`
	// Removed reports that the path no longer exists after the run (it was
	// deleted or renamed away).
	Removed bool `json:"removed,omitempty"`
}

// Saved returns the paths of the memory files the run wrote and that still
// exist, MEMORY.md files left out: what "Saved N memories" counts.
func (r *Result) Saved() []string {
	var out []string
	for _, f := range r.Files {
		if !f.Index && !f.Removed {
			out = append(out, f.Path)
		}
	}
	return out
}

// ToolCall records one tool call and its outcome.
type ToolCall struct {
	// Turn is the model call that asked for it, from 1.
	Turn int    `json:"turn"`
	ID   string `json:"id"`
	Name string `json:"name"`
	// Input is the call's arguments. Arguments that were not valid JSON are
	// kept as a JSON string.
	Input json.RawMessage `json:"input"`
	// Output is the text sent back to the model, cut to RecordChars.
	Output  string `json:"output"`
	IsError bool   `json:"is_error,omitempty"`
	// Denied reports that the policy refused the call: a tool that is not
	// offered, or a memory change this run may not make.
	Denied bool `json:"denied,omitempty"`
}

// EventKind says what an [Event] reports.
type EventKind string

// Event kinds.
const (
	// EventTurn: a model call is about to be made.
	EventTurn EventKind = "turn"
	// EventReply: the model answered; Text and Calls describe the reply.
	EventReply EventKind = "reply"
	// EventToolCall: a tool call was handled; Call holds it.
	EventToolCall EventKind = "tool_call"
)

// Event reports progress to Options.OnEvent.
type Event struct {
	Kind EventKind
	Turn int
	// Text is the reply's text (EventReply).
	Text string
	// Calls is the number of tool calls in the reply (EventReply).
	Calls int
	// Call is the finished tool call (EventToolCall).
	Call *ToolCall
}

// Definitions returns the tool definitions a run with opts offers the model,
// in the order they are sent: the memory tool, then the project tools when
// ProjectDir is set. Their descriptions tell the model about MemoryReadOnly
// and OnlyFile.
func Definitions(opts *Options) []llm.Tool {
	var o Options
	if opts != nil {
		o = *opts
	}
	mem := memtool.Definition()
	switch only, err := onlyFile(o.OnlyFile); {
	case o.MemoryReadOnly:
		mem.Description += "\n\nIn this session the memory directory is read-only: only the view command works."
	case err == nil && only != "":
		mem.Description += fmt.Sprintf("\n\nIn this session only %s may be changed (create, str_replace, insert); other files are read-only, and delete and rename are not available.", memtool.MemoryPath(only))
	}
	defs := []llm.Tool{mem}
	if o.ProjectDir != "" {
		for _, name := range projectToolNames {
			defs = append(defs, projectTools[name])
		}
	}
	return defs
}

// onlyFile normalises Options.OnlyFile to a root-relative path.
func onlyFile(name string) (string, error) {
	if name == "" {
		return "", nil
	}
	p := name
	if !strings.HasPrefix(p, "/") {
		p = memtool.Prefix + "/" + p
	}
	rel, err := memtool.Resolve(p)
	if err != nil {
		return "", fmt.Errorf("agent: OnlyFile %q: %w", name, err)
	}
	if rel == "." {
		return "", fmt.Errorf("agent: OnlyFile %q names the memory directory, not a file: %w", name, memdir.ErrInvalid)
	}
	return rel, nil
}

// isIndex reports whether a memory path is a MEMORY.md index.
func isIndex(rel string) bool { return path.Base(rel) == "MEMORY.md" }
