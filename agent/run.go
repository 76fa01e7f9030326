package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/llm"
	"github.com/memdir/memdir/memtool"
)

// Run sends messages to opts.Model with the system prompt and the tool
// definitions, carries out the tool calls of each reply, sends the results
// back, and repeats until the model answers without calling a tool or
// MaxTurns model calls have been made. messages is not modified; its last
// message is normally the user's instruction for the run.
//
// The tool calls of one reply are carried out in order and answered together
// in one user message, one tool_result per call. When the last allowed turn
// asks for tools, they are still carried out (so its writes are not lost)
// and the run ends with Result.TurnLimit set.
//
// Denied calls and failing tools are answered with an is_error tool result
// and the run goes on. The run ends with an error when the model call fails,
// when ctx is done, or when Options.BeforeChange fails. Run always returns a
// non-nil Result, which then holds what happened up to the failure,
// including the files already changed.
func Run(ctx context.Context, opts *Options, messages []llm.Message) (*Result, error) {
	res := &Result{}
	r, err := start(opts)
	if err != nil {
		return res, err
	}
	defer r.close()
	err = r.loop(ctx, res, messages)
	res.Files = slices.Clone(r.files)
	return res, err
}

// run is the state of one Run.
type run struct {
	opts Options
	only string // root-relative OnlyFile
	mem  *memtool.Tool
	proj *project // nil without project tools
	defs []llm.Tool
	log  *slog.Logger

	files   []File
	fileAt  map[string]int // index into files
	hookErr error          // BeforeChange's failure, which ends the run
}

func start(opts *Options) (*run, error) {
	if opts == nil || opts.Model == nil {
		return nil, fmt.Errorf("agent: no model given: %w", memdir.ErrInvalid)
	}
	if opts.MemoryDir == "" {
		return nil, fmt.Errorf("agent: no memory directory given: %w", memdir.ErrInvalid)
	}
	r := &run{opts: *opts, fileAt: map[string]int{}, log: opts.Logger, defs: Definitions(opts)}
	if r.opts.MaxTurns <= 0 {
		r.opts.MaxTurns = DefaultMaxTurns
	}
	if r.opts.RecordChars <= 0 {
		r.opts.RecordChars = DefaultRecordChars
	}
	if r.log == nil {
		r.log = slog.New(slog.DiscardHandler)
	}
	var err error
	if r.only, err = onlyFile(opts.OnlyFile); err != nil {
		return nil, err
	}
	r.mem, err = memtool.New(opts.MemoryDir, &memtool.Options{
		BeforeChange: r.beforeChange,
		AfterChange:  r.afterChange,
		ReadOnly:     opts.MemoryReadOnly,
		Write:        opts.Write,
		Rewrite:      anchorRewrite(opts.AnchorRoot),
	})
	if err != nil {
		return nil, fmt.Errorf("agent: %w", err)
	}
	if opts.ProjectDir != "" {
		if r.proj, err = openProject(opts.ProjectDir); err != nil {
			r.mem.Close()
			return nil, err
		}
	}
	return r, nil
}

func (r *run) close() {
	r.mem.Close()
	if r.proj != nil {
		r.proj.Close()
	}
}

func (r *run) loop(ctx context.Context, res *Result, messages []llm.Message) error {
	if len(messages) == 0 {
		return fmt.Errorf("agent: no messages to send: %w", memdir.ErrInvalid)
	}
	msgs := slices.Clone(messages)
	for turn := 1; ; turn++ {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("agent: stopped before model call %d: %w", turn, err)
		}
		r.emit(Event{Kind: EventTurn, Turn: turn})
		resp, err := r.opts.Model.Generate(ctx, &llm.Request{
			System:    r.opts.System,
			Messages:  msgs,
			Tools:     r.defs,
			MaxTokens: r.opts.MaxTokens,
		})
		if err != nil {
			return fmt.Errorf("agent: model call %d: %w", turn, err)
		}
		res.Turns = turn
		res.Usage.Add(resp.Usage)
		res.StopReason = resp.StopReason
		res.Text = resp.Text()
		uses := resp.ToolUses()
		r.log.DebugContext(ctx, "agent: reply", slog.Int("turn", turn), slog.Int("tool_calls", len(uses)), slog.String("stop_reason", string(resp.StopReason)))
		r.emit(Event{Kind: EventReply, Turn: turn, Text: res.Text, Calls: len(uses)})
		if len(uses) == 0 {
			return nil
		}
		msgs = append(msgs, llm.Message{Role: llm.RoleAssistant, Content: echo(resp.Content)})
		results := make([]llm.Block, 0, len(uses))
		for _, u := range uses {
			out, isErr, denied, fatal := r.call(ctx, u)
			call := ToolCall{
				Turn: turn, ID: u.ToolUseID, Name: u.ToolName, Input: recordInput(u.Input),
				Output: shorten(out, r.opts.RecordChars), IsError: isErr, Denied: denied,
			}
			res.ToolCalls = append(res.ToolCalls, call)
			r.log.DebugContext(ctx, "agent: tool call", slog.Int("turn", turn), slog.String("tool", u.ToolName), slog.Bool("is_error", isErr), slog.Bool("denied", denied))
			r.emit(Event{Kind: EventToolCall, Turn: turn, Call: &call})
			if fatal != nil {
				return fatal
			}
			results = append(results, llm.Block{Type: llm.BlockToolResult, ToolUseID: u.ToolUseID, Text: out, IsError: isErr})
		}
		msgs = append(msgs, llm.Message{Role: llm.RoleUser, Content: results})
		if turn >= r.opts.MaxTurns {
			res.TurnLimit = true
			return nil
		}
	}
}

func (r *run) emit(e Event) {
	if r.opts.OnEvent != nil {
		r.opts.OnEvent(e)
	}
}

// call carries out one tool call under the policy. out is the text for the
// model; fatal, when set, ends the run.
func (r *run) call(ctx context.Context, u llm.Block) (out string, isErr, denied bool, fatal error) {
	var err error
	switch {
	case u.ToolName == memtool.Name:
		out, denied, err = r.memory(ctx, u.Input)
	case r.proj != nil && u.ToolName == ToolReadFile:
		out, err = r.proj.readFile(ctx, u.Input)
	case r.proj != nil && u.ToolName == ToolGrep:
		out, err = r.proj.grep(ctx, u.Input)
	case r.proj != nil && u.ToolName == ToolGlob:
		out, err = r.proj.glob(ctx, u.Input)
	case r.proj != nil && u.ToolName == ToolLs:
		out, err = r.proj.ls(ctx, u.Input)
	default:
		return r.denial(u.ToolName), true, true, nil
	}
	switch {
	case r.hookErr != nil:
		return err.Error(), true, false, r.hookErr
	case ctx.Err() != nil:
		return "The run was stopped.", true, false, fmt.Errorf("agent: %s call %q: %w", u.ToolName, u.ToolUseID, ctx.Err())
	case err != nil:
		return err.Error(), true, denied, nil
	case out == "":
		return "(no output)", false, false, nil
	}
	return out, false, false, nil
}

// denial is the answer to a call of a tool the run does not offer.
func (r *run) denial(name string) string {
	allowed := "only the memory tool is available"
	if r.proj != nil {
		allowed = "only the memory tool and the read-only project tools (" + strings.Join(projectToolNames, ", ") + ") are available"
	}
	writes := "files can be changed only through the memory tool, inside " + memtool.Prefix
	if r.opts.MemoryReadOnly {
		writes = "no file can be changed in this session"
	}
	return fmt.Sprintf("The tool %q is not available here: %s. There is no shell, and %s.", shorten(name, 64), allowed, writes)
}

// memoryWrites are the memory-tool commands that change files.
var memoryWrites = []string{"create", "str_replace", "insert", "delete", "rename"}

// refusal is a memory-tool call the session's policy does not allow. Like the
// tool's own failures it is a [memtool.Error]: its text is written for the
// model, as a sentence, and goes back as the tool result.
func refusal(format string, args ...any) error {
	return &memtool.Error{Msg: fmt.Sprintf(format, args...)}
}

// memory runs a memory-tool call under MemoryReadOnly and OnlyFile.
func (r *run) memory(ctx context.Context, input json.RawMessage) (out string, denied bool, err error) {
	c, err := memtool.Decode(input)
	if err != nil {
		return "", false, err
	}
	if slices.Contains(memoryWrites, c.Command) {
		if r.opts.MemoryReadOnly {
			return "", true, refusal("The memory directory is read-only in this session: only the memory tool's view command may be used.")
		}
		if r.only != "" {
			if c.Command == "delete" || c.Command == "rename" {
				return "", true, refusal("In this session the memory tool may change only %s, with create, str_replace or insert; %s is not allowed.", memtool.MemoryPath(r.only), c.Command)
			}
			if c.Path != "" {
				rel, err := memtool.Resolve(c.Path)
				if err != nil {
					return "", false, err
				}
				if rel != r.only {
					return "", true, refusal("In this session the memory tool may change only %s, not %s.", memtool.MemoryPath(r.only), memtool.MemoryPath(rel))
				}
			}
		}
	}
	out, err = r.mem.Run(ctx, c)
	return out, false, err
}

// errNotOnlyFile backs up the OnlyFile check in memory: memtool asks before
// every change, whatever the command.
var errNotOnlyFile = errors.New("only one file may be changed in this session")

func (r *run) beforeChange(rel string) error {
	if r.only != "" && rel != r.only {
		return errNotOnlyFile
	}
	if r.opts.BeforeChange == nil {
		return nil
	}
	if err := r.opts.BeforeChange(rel); err != nil {
		r.hookErr = fmt.Errorf("agent: BeforeChange refused memory path %s: %w", rel, err)
		return err
	}
	return nil
}

func (r *run) afterChange(op string, rels ...string) {
	switch {
	case op == "delete" && len(rels) == 1:
		r.record(rels[0], true)
	case op == "rename" && len(rels) == 2:
		r.record(rels[0], true)
		r.record(rels[1], false)
	case len(rels) > 0:
		r.record(rels[0], false)
	}
}

func (r *run) record(rel string, removed bool) {
	if i, ok := r.fileAt[rel]; ok {
		r.files[i].Removed = removed
		return
	}
	r.fileAt[rel] = len(r.files)
	r.files = append(r.files, File{Path: rel, Index: isIndex(rel), Removed: removed})
}

// echo returns a reply's content for the conversation history. Tool inputs
// that are not JSON objects are replaced by {}: the providers reject them in
// a request, and the tool result already tells the model what was wrong.
func echo(content []llm.Block) []llm.Block {
	out := slices.Clone(content)
	for i, b := range out {
		if b.Type == llm.BlockToolUse && !isObject(b.Input) {
			out[i].Input = json.RawMessage(`{}`)
		}
	}
	return out
}

func isObject(v json.RawMessage) bool {
	v = bytes.TrimSpace(v)
	return len(v) > 0 && v[0] == '{' && json.Valid(v)
}

// recordInput keeps a call's arguments for the Result, quoting input that
// is not JSON so that the Result still encodes.
func recordInput(v json.RawMessage) json.RawMessage {
	if len(bytes.TrimSpace(v)) == 0 {
		return json.RawMessage(`{}`)
	}
	if json.Valid(v) {
		return slices.Clone(v)
	}
	q, _ := json.Marshal(string(v))
	return q
}

// anchorRewrite records code anchors in the memory files a run writes.
func anchorRewrite(root string) func(string, []byte) []byte {
	if root == "" {
		return nil
	}
	return func(_ string, data []byte) []byte {
		return memdir.AnchorContent(context.Background(), root, data)
	}
}
