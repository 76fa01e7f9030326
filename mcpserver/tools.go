package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/llm"
	"github.com/memdir/memdir/memtool"
	"github.com/memdir/memdir/recall"
	"github.com/memdir/memdir/usage"
)

// MemoryURI returns the resource URI of the memory at rel, a slash path
// relative to the memory directory.
func MemoryURI(rel string) string {
	parts := strings.Split(rel, "/")
	for i, p := range parts {
		parts[i] = url.PathEscape(p)
	}
	return memoryURIPrefix + strings.Join(parts, "/")
}

// Inputs and outputs of the tools. Their JSON schemas are inferred by the
// SDK; the jsonschema tags are the descriptions the model reads.

// MemoryInput is one memory-tool command.
type MemoryInput struct {
	Command    string  `json:"command" jsonschema:"the operation: view, create, str_replace, insert, delete or rename"`
	Path       string  `json:"path,omitempty" jsonschema:"the file or directory, /memories or a path starting with /memories/ (all commands but rename)"`
	ViewRange  []int   `json:"view_range,omitempty" jsonschema:"view only: [start, end] lines to show, 1-based and inclusive; end -1 means the end of the file"`
	FileText   *string `json:"file_text,omitempty" jsonschema:"create only: the content of the new file"`
	OldStr     *string `json:"old_str,omitempty" jsonschema:"str_replace only: the exact text to replace, which must occur exactly once"`
	NewStr     *string `json:"new_str,omitempty" jsonschema:"str_replace only: the replacement text, possibly empty"`
	InsertLine *int    `json:"insert_line,omitempty" jsonschema:"insert only: the line after which to insert; 0 inserts before the first line"`
	InsertText *string `json:"insert_text,omitempty" jsonschema:"insert only: the text to insert"`
	OldPath    string  `json:"old_path,omitempty" jsonschema:"rename only: the current path, starting with /memories/"`
	NewPath    string  `json:"new_path,omitempty" jsonschema:"rename only: the new path, starting with /memories/; it must not exist yet"`
}

// MemoryOutput is what a memory-tool command did, besides its text.
type MemoryOutput struct {
	// Result is the command's output, the same text as the content.
	Result string `json:"result"`
	// Changed lists the files changed, relative to the memory directory.
	Changed []string `json:"changed,omitempty"`
	// Run is the journal run that 'memdir undo' reverts.
	Run string `json:"run,omitempty"`
}

// RecallInput is a recall request.
type RecallInput struct {
	Query       string   `json:"query" jsonschema:"what the memories should help with: the user's request or a description of the task, in a sentence"`
	RecentTools []string `json:"recent_tools,omitempty" jsonschema:"tools you used successfully since the user's last message; memories that only explain how to use them are skipped, warnings about them are kept"`
}

// RecallOutput is what recall found.
type RecallOutput struct {
	// Method is how the memories were chosen: model, lexical, fallback
	// (the model failed, so the lexical ranker chose), skipped or empty.
	Method   string           `json:"method"`
	Reason   string           `json:"reason,omitempty"`
	Memories []RecalledMemory `json:"memories"`
	// Candidates is how many memories were considered.
	Candidates int `json:"candidates"`
	// Usage is the selector model's token usage.
	Usage llm.Usage `json:"usage"`
	// SessionBytes is how much of the session's budget (SessionBudget
	// bytes) surfaced memories have used, this call included.
	SessionBytes  int `json:"session_bytes"`
	SessionBudget int `json:"session_budget"`
}

// RecalledMemory is one memory recall surfaced.
type RecalledMemory struct {
	Path      string  `json:"path"`
	URI       string  `json:"uri"`
	Reason    string  `json:"reason"`
	Age       string  `json:"age"`
	Freshness string  `json:"freshness,omitempty"`
	Score     float64 `json:"score"`
	Truncated bool    `json:"truncated,omitempty"`
}

// SaveInput is a memory to save.
type SaveInput struct {
	Name        string `json:"name" jsonschema:"a short name for the memory, such as testing-policy; saving an existing name updates that memory"`
	Description string `json:"description" jsonschema:"one line saying what the memory is about and when it is relevant; recall decides by it"`
	Type        string `json:"type" jsonschema:"user (who the user is), feedback (how to work), project (ongoing work and decisions) or reference (where things live outside the code)"`
	Body        string `json:"body" jsonschema:"the memory itself, in Markdown; for feedback and project memories add a **Why:** line and a **How to apply:** line"`
	Team        bool   `json:"team,omitempty" jsonschema:"save into the shared team memory (only when the server has team memory on); never put secrets there"`
}

// SaveOutput says what save did.
type SaveOutput struct {
	Path string `json:"path"`
	URI  string `json:"uri"`
	// Status is created, updated or unchanged.
	Status string `json:"status"`
	// Run is the journal run that 'memdir undo' reverts ("" if unchanged).
	Run string `json:"run,omitempty"`
	// IndexWarning is set when MEMORY.md is over the size agents load.
	IndexWarning string `json:"index_warning,omitempty"`
}

// ForgetInput names a memory to remove.
type ForgetInput struct {
	Memory string `json:"memory" jsonschema:"the memory's name, or its file path relative to the memory directory (such as feedback_testing.md or team/project_release.md)"`
}

// ForgetOutput says what forget removed.
type ForgetOutput struct {
	Path string `json:"path"`
	// IndexLines are the MEMORY.md lines removed with the file.
	IndexLines []string `json:"index_lines,omitempty"`
	// Run is the journal run that 'memdir undo' reverts to restore it.
	Run string `json:"run"`
}

func (s *server) addTools(srv *mcp.Server) {
	yes := true
	no := false
	// Every schema is inferred from the input type, with optional
	// properties given plain types (see plainTypes).
	mcp.AddTool(srv, &mcp.Tool{
		Name:        memtool.Name,
		Title:       "Memory files",
		Description: memtool.Definition().Description,
		InputSchema: memoryInputSchema(),
		Annotations: &mcp.ToolAnnotations{DestructiveHint: &yes, OpenWorldHint: &no},
	}, forModel(s.memoryTool))
	mcp.AddTool(srv, &mcp.Tool{
		Name:  "recall",
		Title: "Recall memories",
		Description: "Find the saved memories relevant to a request and return them, each with its age and, when it is old, a warning to verify it. " +
			"Call it before answering anything that may depend on earlier conversations, the user's preferences or past decisions. " +
			"A memory already shown in this session is not shown again.",
		InputSchema: inputSchema[RecallInput](),
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: &no},
	}, forModel(s.recallTool))
	mcp.AddTool(srv, &mcp.Tool{
		Name:  "save",
		Title: "Save a memory",
		Description: "Save a memory for future conversations: a Markdown file plus its line in MEMORY.md, written atomically. " +
			"Saving a name that exists updates that memory. Save what will help later and cannot be read from the code or its history.",
		InputSchema: enumSchema[SaveInput]("type", memdir.Types),
		// Destructive: saving a name that exists replaces that memory.
		Annotations: &mcp.ToolAnnotations{IdempotentHint: true, DestructiveHint: &yes, OpenWorldHint: &no},
	}, forModel(s.saveTool))
	mcp.AddTool(srv, &mcp.Tool{
		Name:        "forget",
		Title:       "Forget a memory",
		Description: "Delete a memory and its line in MEMORY.md, when the user asks to forget something or a memory is wrong. The user can restore it with 'memdir undo'.",
		InputSchema: inputSchema[ForgetInput](),
		Annotations: &mcp.ToolAnnotations{DestructiveHint: &yes, OpenWorldHint: &no},
	}, forModel(s.forgetTool))
}

// inputSchema infers the input schema of T, declaring optional properties
// with plain types (see plainTypes).
func inputSchema[T any]() *jsonschema.Schema {
	sch, err := jsonschema.For[T](nil)
	if err != nil {
		panic(fmt.Sprintf("mcpserver: schema of %T: %v", *new(T), err))
	}
	return plainTypes(sch)
}

// enumSchema infers the input schema of T and restricts the string property
// prop to values, so that clients and models see the choices.
func enumSchema[T any, E ~string](prop string, values []E) *jsonschema.Schema {
	sch := inputSchema[T]()
	for _, v := range values {
		sch.Properties[prop].Enum = append(sch.Properties[prop].Enum, string(v))
	}
	return sch
}

// memoryInputSchema lists the commands and, like the memory tool itself,
// accepts keys it does not know: models sometimes add their own.
func memoryInputSchema() *jsonschema.Schema {
	sch := enumSchema[MemoryInput]("command", memtool.Commands)
	sch.AdditionalProperties = nil
	return sch
}

// memoryTool runs one memory-tool command. Commands that change files hold
// the directory lock and are journaled as one run of kind "mcp".
func (s *server) memoryTool(ctx context.Context, _ *mcp.CallToolRequest, in MemoryInput) (*mcp.CallToolResult, MemoryOutput, error) {
	cmd := memtool.Command{
		Command: in.Command, Path: in.Path, ViewRange: in.ViewRange, FileText: in.FileText,
		OldStr: in.OldStr, NewStr: in.NewStr, InsertLine: in.InsertLine, InsertText: in.InsertText,
		OldPath: in.OldPath, NewPath: in.NewPath,
	}
	var out MemoryOutput
	if err := s.dir.Ensure(); err != nil {
		return nil, out, err
	}
	if cmd.Command == "view" {
		tool, err := memtool.New(s.dir.Path(), &memtool.Options{ReadOnly: true,
			AfterView: memtool.CountViews(ctx, s.dir.Uses(), func(err error) { s.log.Warn("memory tool: view not counted", "err", err) })})
		if err != nil {
			return nil, out, err
		}
		defer tool.Close()
		if out.Result, err = tool.Run(ctx, cmd); err != nil {
			return nil, out, err
		}
		return textResult(out.Result), out, nil
	}

	started, ran := false, false
	run, err := s.dir.Change(ctx, "mcp", nil, func(rec *memdir.Recorder) error {
		started = true
		hook := &journalHook{rec: rec, dir: s.dir}
		tool, err := memtool.New(s.dir.Path(), &memtool.Options{
			BeforeChange: hook.before,
			AfterChange:  func(_ string, rels ...string) { out.Changed = append(out.Changed, rels...) },
			// The agent's writes carry provenance; suspicious ones are held
			// for a person's review ('memdir review') and not written.
			Write: s.dir.WriteGuard(&memdir.Provenance{By: memdir.ByAgent, Via: "memory-tool"}),
			Rewrite: func(_ string, data []byte) []byte {
				return memdir.AnchorContent(ctx, s.dir.ProjectRoot(), data)
			},
		})
		if err != nil {
			return err
		}
		defer tool.Close()
		out.Result, err = tool.Run(ctx, cmd)
		rec.SetSummary("memory tool " + cmd.Command + " " + strings.TrimSpace(cmd.Path+" "+cmd.OldPath+" "+cmd.NewPath))
		ran = err == nil
		return err
	})
	switch {
	case err != nil && !started:
		return nil, out, fmt.Errorf("could not lock the memory directory or start the journal that makes the change undoable, so nothing was changed: %w", err)
	case err != nil && ran:
		return nil, out, fmt.Errorf("%s, but %w", out.Result, err)
	case err != nil:
		return nil, out, err
	}
	if run != nil && len(run.ChangedFiles()) > 0 {
		out.Run = run.ID
	}
	s.log.Debug("memory tool", "command", cmd.Command, "changed", out.Changed, "run", out.Run)
	return textResult(out.Result), out, nil
}

// recallTool surfaces the memories relevant to a query, skipping those this
// session has already seen and keeping within its byte budget.
func (s *server) recallTool(ctx context.Context, req *mcp.CallToolRequest, in RecallInput) (*mcp.CallToolResult, RecallOutput, error) {
	out := RecallOutput{Memories: []RecalledMemory{}, SessionBudget: recall.SessionBudget}
	if strings.TrimSpace(in.Query) == "" {
		return nil, out, fmt.Errorf("recall needs a query: describe what the memories should help with, such as the user's request: %w", memdir.ErrInvalid)
	}
	key := s.sessionKey(req.Session)
	surfaced, used := s.sessions.Surfaced(key)
	res, err := recall.Recall(ctx, s.dir, in.Query, &recall.Options{
		Model:             s.opts.Model,
		ManifestTokens:    s.opts.ManifestTokens,
		Embedder:          s.opts.Embedder,
		EmbedCache:        s.opts.EmbedCache,
		EmbedOptions:      s.opts.EmbedOptions,
		Index:             s.index,
		Surfaced:          surfaced,
		RecentTools:       in.RecentTools,
		AllowShortQueries: true,
		Budget:            recall.SessionBudget,
		SessionBytes:      used,
		Now:               s.opts.Now,
		Logger:            s.log,
		Via:               usage.MCP,
	})
	if err != nil {
		return nil, out, fmt.Errorf("recall failed: %w", err)
	}
	if res.VectorsMissing > 0 {
		s.fillVectors()
	}
	inj := recall.Inject(s.dir.Path(), res, &recall.InjectOptions{Reminders: true, MaxChars: -1})
	for _, m := range res.Memories {
		out.Memories = append(out.Memories, RecalledMemory{
			Path: m.Path, URI: MemoryURI(m.Path), Reason: m.Reason, Age: m.Age,
			Freshness: m.Freshness, Score: m.Score, Truncated: m.Truncated,
		})
	}
	s.sessions.Add(key, inj.Paths, inj.Bytes)
	out.Method, out.Reason, out.Candidates, out.Usage = string(res.Method), res.Reason, res.Candidates, res.Usage
	out.SessionBytes = used + res.Bytes
	text := inj.Text
	if len(res.Memories) == 0 {
		text = "No saved memory is relevant to this query"
		if res.Reason != "" {
			text += " (" + res.Reason + ")"
		}
		text += "."
	}
	return textResult(text), out, nil
}

// saveTool writes a memory and its index line.
func (s *server) saveTool(ctx context.Context, _ *mcp.CallToolRequest, in SaveInput) (*mcp.CallToolResult, SaveOutput, error) {
	var out SaveOutput
	t := memdir.ParseType(in.Type)
	if t == "" {
		return nil, out, fmt.Errorf("type %q is not a memory type: use user, feedback, project or reference: %w", in.Type, memdir.ErrInvalid)
	}
	if in.Team && !s.opts.Team {
		return nil, out, fmt.Errorf("team memory is off on this server, so %q was not saved; save it without team, or ask the user to start the server with team memory on: %w", in.Name, memdir.ErrInvalid)
	}
	m := &memdir.Memory{Name: strings.TrimSpace(in.Name), Description: strings.TrimSpace(in.Description), Type: t, Body: in.Body}
	res, err := s.dir.Save(ctx, m, &memdir.SaveOptions{Team: in.Team, Origin: &memdir.Provenance{By: memdir.ByAgent, Via: "mcp"}})
	if err != nil {
		return nil, out, err
	}
	out = SaveOutput{Path: res.Path, URI: MemoryURI(res.Path), Status: "updated", Run: res.RunID, IndexWarning: res.Index.Warning()}
	switch {
	case res.Created:
		out.Status = "created"
	case !res.Changed:
		out.Status = "unchanged"
	}
	return nil, out, nil
}

// forgetTool removes a memory and its index lines.
func (s *server) forgetTool(ctx context.Context, _ *mcp.CallToolRequest, in ForgetInput) (*mcp.CallToolResult, ForgetOutput, error) {
	var out ForgetOutput
	if strings.TrimSpace(in.Memory) == "" {
		return nil, out, fmt.Errorf("forget needs the memory's name or file path: %w", memdir.ErrInvalid)
	}
	res, err := s.dir.Remove(ctx, in.Memory, nil)
	if err != nil {
		if errors.Is(err, memdir.ErrNotFound) {
			return nil, out, fmt.Errorf("%w; recall or the memdir://MEMORY.md resource shows the memories there are", err)
		}
		return nil, out, err
	}
	return nil, ForgetOutput{Path: res.Path, IndexLines: res.IndexLines, Run: res.RunID}, nil
}

func textResult(text string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}
}

// fillVectors embeds, in the background and one fill at a time, the
// memories a recall ranked without a vector: the server lives long enough
// for the next recall to fuse them, and no call waits for it.
func (s *server) fillVectors() {
	if s.opts.EmbedCache == nil || !s.filling.CompareAndSwap(false, true) {
		return
	}
	go func() {
		defer s.filling.Store(false)
		st, err := recall.FillVectors(context.Background(), s.dir, s.index, s.opts.Embedder, s.opts.EmbedCache, s.opts.EmbedOptions)
		if err != nil {
			s.log.Warn("memory vectors not filled", "err", err)
			return
		}
		s.log.Debug("memory vectors filled", "embedded", st.Embedded)
	}()
}
