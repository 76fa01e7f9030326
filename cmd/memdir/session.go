package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/internal/cli"
	"github.com/memdir/memdir/llm"
	"github.com/memdir/memdir/locate"
	"github.com/memdir/memdir/session"
	"github.com/memdir/memdir/transcript"
)

var sessionCmd = &cli.Command{
	Name:  "session",
	Args:  "notes | update | compact  [flags]",
	Short: "per-session notes that survive compaction (session memory)",
	Long: `Session memory keeps running notes for one session in Claude Code's file,
~/.claude/projects/<project>/<session>/session-memory/summary.md, so that
when the conversation is compacted the notes can stand in for a summary.
A model keeps them up to date: it sees the conversation since its last
update and may edit that one file, nothing else.

Subcommands (the first argument):
  notes     Prints the notes (the path goes to standard error). --path prints
            only the path; --json prints the path, the notes, their sections
            with estimated tokens, whether they are still the template, and
            the update state.
  update    Reads the session's transcript and updates the notes when
            Claude Code's thresholds are met: the context has reached 10,000
            tokens (before the first update), has grown by 5,000 tokens since
            the last update (always), and either 3 tool calls were made since
            or the assistant's last turn made none. Otherwise it says why not
            and exits 0; --force updates anyway. Creates the notes from the
            template first if needed. Prints the sections that changed and
            the model's token usage. If the model changed or removed a
            heading or an italic description line, the previous notes are
            put back and the command exits 1.
  compact   Shows what session-memory compaction would do with the
            transcript now: which recent messages it would keep, and the
            size of the notes that would replace the rest, or why it would
            fall back to an LLM summary (no notes, notes still the template,
            the last summarised message not found, over --threshold).
            Changes nothing.

The session id comes from --session, else the transcript's file name
(<session>.jsonl), else $MEMDIR_SESSION_ID or $CLAUDE_SESSION_ID. The
transcript is --transcript, else <session>.jsonl in the project's
transcript directory (~/.claude/projects/<project>/). The project is the
working directory, or --project DIR.

The notes start from ~/.claude/session-memory/config/template.md when it
exists, else from the ten default sections; the update prompt is
~/.claude/session-memory/config/prompt.md when it exists, with
{{currentNotes}} and {{notesPath}} filled in. memdir keeps its own state
(the last summarised message, the context size at the last update) in
.memdir-state.json next to the notes. Every update is journaled: see
'memdir log --dir DIR' and 'memdir undo --dir DIR' with the directory the
output names.

update needs a model: MEMDIR_MODEL or --model (see 'memdir config').

Examples:
  memdir session update --transcript ~/.claude/projects/-home-me-app/$ID.jsonl
  memdir session update --session $ID --force --model anthropic:claude-haiku-4-5
  memdir session notes --session $ID
  memdir session compact --session $ID --threshold 167000 --json`,
	Setup: cli.Setup(runSession),
}

// sessionOptions holds the flag values of memdir session.
type sessionOptions struct {
	// fs is the flag set as parsed, for refusing flags the subcommand does
	// not take.
	fs                           *flag.FlagSet
	mf                           *modelFlags
	session, transcript, project string
	json, path, force            bool
	th                           session.Thresholds
	maxTurns                     int
	compact                      session.CompactOptions
}

func (f *sessionOptions) Declare(fs *flag.FlagSet) {
	f.fs = fs
	fs.StringVar(&f.session, "session", "", "session `id` (default: the transcript's file name, else $MEMDIR_SESSION_ID or $CLAUDE_SESSION_ID)")
	fs.StringVar(&f.transcript, "transcript", "", "the session's transcript `FILE` (Claude Code JSONL or a JSON message list)")
	fs.StringVar(&f.project, "project", "", "the project `DIR` the session ran in (default: the working directory)")
	fs.BoolVar(&f.json, "json", false, "print JSON")
	fs.BoolVar(&f.path, "path", false, "notes: print only the notes' path")
	fs.BoolVar(&f.force, "force", false, "update: update even when the thresholds are not met")
	fs.IntVar(&f.th.MinTokensToInit, "min-init-tokens", session.DefaultMinTokensToInit, "update: context `TOKENS` needed before the first update")
	fs.IntVar(&f.th.MinTokensBetweenUpdates, "min-growth", session.DefaultMinTokensBetweenUpdates, "update: context growth in `TOKENS` every update needs")
	fs.IntVar(&f.th.ToolCallsBetweenUpdates, "tool-calls", session.DefaultToolCallsBetweenUpdates, "update: tool `CALLS` since the last update that allow one mid-turn")
	fs.IntVar(&f.maxTurns, "max-turns", session.DefaultMaxTurns, "update: most model calls of one update (`N`)")
	fs.IntVar(&f.compact.MinTokens, "min-tokens", session.DefaultCompactMinTokens, "compact: least `TOKENS` to keep")
	fs.IntVar(&f.compact.MinTextMessages, "min-text-messages", session.DefaultCompactMinTextMessages, "compact: least messages with text to keep (`N`)")
	fs.IntVar(&f.compact.MaxTokens, "max-tokens", session.DefaultCompactMaxTokens, "compact: stop looking back once the kept messages hold `TOKENS`")
	fs.IntVar(&f.compact.AutoCompactThreshold, "threshold", 0, "compact: fall back when the compacted context would reach `TOKENS` (0: no limit)")
	f.mf = addConfigFlags(fs, "", keysModel)
}

func runSession(ctx context.Context, env *cli.Env, f *sessionOptions, args []string) error {
	if len(args) == 0 {
		return cli.Usagef("missing subcommand: notes, update or compact")
	}
	sub := args[0]
	if len(args) > 1 {
		return cli.Usagef("session %s takes no arguments, got %q", sub, args[1:])
	}
	var only []string
	switch sub {
	case "notes":
		only = []string{"force", "transcript", "min-init-tokens", "min-growth", "tool-calls", "max-turns", "min-tokens", "min-text-messages", "max-tokens", "threshold"}
	case "update":
		only = []string{"path", "min-tokens", "min-text-messages", "max-tokens", "threshold"}
	case "compact":
		only = []string{"path", "force", "min-init-tokens", "min-growth", "tool-calls", "max-turns"}
	default:
		return cli.Usagef("unknown subcommand %q: want notes, update or compact", sub)
	}
	var misplaced error
	f.fs.Visit(func(fl *flag.Flag) {
		for _, o := range only {
			if fl.Name == o && misplaced == nil {
				misplaced = cli.Usagef("--%s does not apply to session %s", o, sub)
			}
		}
	})
	if misplaced != nil {
		return misplaced
	}
	if f.maxTurns <= 0 || f.th.MinTokensToInit <= 0 || f.th.MinTokensBetweenUpdates <= 0 || f.th.ToolCallsBetweenUpdates <= 0 ||
		f.compact.MinTokens <= 0 || f.compact.MinTextMessages <= 0 || f.compact.MaxTokens <= 0 || f.compact.AutoCompactThreshold < 0 {
		return cli.Usagef("thresholds, limits and --max-turns must be more than zero")
	}

	lf := locationFlags{project: f.project}
	loc, err := lf.locate(env)
	if err != nil {
		return err
	}
	id, path, err := sessionSource(env, loc, f, sub != "notes")
	if err != nil {
		return err
	}
	notes, err := session.Open(loc.ConfigHome, loc.ProjectRoot, id, &session.Options{
		Runtime: loc.Runtime, LookupEnv: env.LookupEnv, Now: env.Now,
	})
	if err != nil {
		return err
	}
	switch sub {
	case "notes":
		return sessionNotes(env, notes, f)
	case "update":
		model, err := f.mf.loadModel(env)
		if err != nil {
			return err
		}
		if model == nil {
			return fmt.Errorf("session update needs a model to write the notes: set MEMDIR_MODEL or pass --model PROVIDER:NAME (see 'memdir config'): %w", memdir.ErrInvalid)
		}
		msgs, err := readSessionTranscript(env, path)
		if err != nil {
			return err
		}
		return sessionUpdate(ctx, env, notes, msgs, model, f)
	default:
		msgs, err := readSessionTranscript(env, path)
		if err != nil {
			return err
		}
		return sessionCompact(env, notes, msgs, path, f)
	}
}

// sessionSource resolves the session id and, when wanted, the transcript
// path: --session, else the transcript's file name, else the environment;
// --transcript, else <session>.jsonl in the project's transcript directory.
func sessionSource(env *cli.Env, loc *locate.Location, f *sessionOptions, wantTranscript bool) (id, path string, err error) {
	id, path = f.session, f.transcript
	if path != "" && !filepath.IsAbs(path) {
		path = filepath.Join(env.Cwd, path)
	}
	if id == "" && path != "" {
		base := filepath.Base(path)
		id = strings.TrimSuffix(strings.TrimSuffix(base, ".jsonl"), ".json")
	}
	for _, v := range cli.SessionEnvVars {
		if id == "" {
			id = env.Getenv(v)
		}
	}
	if id == "" {
		return "", "", cli.Usagef("no session id: pass --session or --transcript, or set $%s", strings.Join(cli.SessionEnvVars, " or $"))
	}
	if err := session.CheckID(id); err != nil {
		return "", "", err
	}
	if wantTranscript && path == "" {
		path = filepath.Join(loc.TranscriptDir(), id+".jsonl")
	}
	return id, path, nil
}

// readSessionTranscript reads a transcript into session messages.
func readSessionTranscript(env *cli.Env, path string) ([]session.Message, error) {
	tr, err := transcript.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w (pass --transcript FILE): %w", err, memdir.ErrNotFound)
	}
	if err != nil {
		return nil, err
	}
	if n := len(tr.Skipped); n > 0 {
		fmt.Fprintf(env.Stderr, "note: skipped %s of %s that could not be read (first: line %d, %s)\n",
			cli.Plural(n, "line", "lines"), path, tr.Skipped[0].Line, tr.Skipped[0].Reason)
	}
	var out []session.Message
	for _, m := range tr.Messages() {
		out = append(out, session.Message{Message: m.Message, ID: m.UUID, Usage: m.Usage, Compactions: m.Compactions})
	}
	return out, nil
}

type sessionNotesJSON struct {
	SessionID string            `json:"session_id"`
	Path      string            `json:"path"`
	Notes     string            `json:"notes"`
	Template  bool              `json:"template"`
	Tokens    int               `json:"tokens"`
	Sections  []session.Section `json:"sections"`
	State     session.State     `json:"state"`
}

// sessionPathJSON is 'memdir session --path --json'.
type sessionPathJSON struct {
	SessionID string `json:"session_id"`
	Path      string `json:"path"`
}

func sessionNotes(env *cli.Env, n *session.Notes, f *sessionOptions) error {
	if f.path {
		return cli.Emit(env, f.json, sessionPathJSON{SessionID: n.SessionID(), Path: n.Path()}, func(w io.Writer) error {
			fmt.Fprintln(w, n.Path())
			return nil
		})
	}
	text, err := n.Read()
	if err != nil {
		return err
	}
	tmpl, err := n.Template()
	if err != nil {
		return err
	}
	st, err := n.State()
	if err != nil {
		return err
	}
	_, sections := session.ParseNotes(text)
	tokens := session.EstimateTokens(llm.Message{Content: []llm.Block{llm.TextBlock(text)}})
	isTmpl := session.IsTemplate(text, tmpl)
	if sections == nil {
		sections = []session.Section{}
	}
	return cli.Emit(env, f.json, sessionNotesJSON{SessionID: n.SessionID(), Path: n.Path(), Notes: text, Template: isTmpl, Tokens: tokens, Sections: sections, State: st}, func(w io.Writer) error {
		io.WriteString(w, text)
		if text != "" && !strings.HasSuffix(text, "\n") {
			fmt.Fprintln(w)
		}
		what := fmt.Sprintf("about %d tokens, %s", tokens, cli.Plural(st.Updates, "update", "updates"))
		if isTmpl {
			what += "; still the empty template"
		}
		fmt.Fprintf(env.Stderr, "session notes: %s (%s)\n", n.Path(), what)
		return nil
	})
}

func sessionUpdate(ctx context.Context, env *cli.Env, n *session.Notes, msgs []session.Message, model llm.Model, f *sessionOptions) error {
	if env.StderrIsTerminal && !f.json {
		fmt.Fprintf(env.Stderr, "Checking the notes of session %s…\n", n.SessionID())
	}
	res, err := n.Update(ctx, msgs, &session.UpdateOptions{
		Model: model, Thresholds: f.th, Force: f.force, MaxTurns: f.maxTurns,
	})
	if res == nil {
		return err
	}
	if jerr := cli.Emit(env, f.json, res, func(w io.Writer) error { printSessionUpdate(w, n, res); return nil }); jerr != nil {
		return jerr
	}
	if err != nil {
		return fmt.Errorf("updating the notes of session %s: %w", n.SessionID(), err)
	}
	if res.RolledBack {
		if f.json {
			return &cli.ExitError{Code: cli.ExitFailure}
		}
		return fmt.Errorf("the model broke the notes' structure (%s); the previous notes were put back", res.Problem)
	}
	return nil
}

func printSessionUpdate(w io.Writer, n *session.Notes, res *session.UpdateResult) {
	fmt.Fprintf(w, "Session %s: %s\n", res.SessionID, res.Path)
	d := res.Decision
	src := "reported by the API"
	if d.Estimated {
		src = "estimated"
	}
	if d.Initialized {
		fmt.Fprintf(w, "Context: %d tokens (%s), %d since the last update, %s since the last update.\n", d.Tokens, src, d.Growth, cli.Plural(d.ToolCalls, "tool call", "tool calls"))
	} else {
		fmt.Fprintf(w, "Context: %d tokens (%s).\n", d.Tokens, src)
	}
	if !res.Updated {
		fmt.Fprintf(w, "Not updated: %s. (--force updates anyway)\n", d.Reason)
		return
	}
	if d.Update {
		fmt.Fprintf(w, "Due: %s.\n", d.Reason)
	} else {
		fmt.Fprintf(w, "Forced: %s.\n", d.Reason)
	}
	if res.Created {
		fmt.Fprintln(w, "Created the notes from the template.")
	}
	sent := cli.Plural(res.Messages, "message", "messages")
	if res.Omitted > 0 {
		sent += fmt.Sprintf(" (%d earlier ones left out for length)", res.Omitted)
	}
	fmt.Fprintf(w, "Sent the model %s since the last update.\n", sent)
	switch {
	case res.RolledBack:
		fmt.Fprintf(w, "Put back the previous notes: the model broke their structure (%s).\n", res.Problem)
		fmt.Fprintf(w, "The model's version is journaled; to see it: memdir undo --dir %s %s\n", sessionQuote(n.Dir()), res.RestoreRunID)
	case res.Changed && len(res.Sections) > 0:
		fmt.Fprintf(w, "Updated %s (notes about %d → %d tokens).\n", strings.Join(res.Sections, ", "), res.TokensBefore, res.TokensAfter)
	case res.Changed:
		fmt.Fprintf(w, "Updated the notes outside their sections (about %d → %d tokens).\n", res.TokensBefore, res.TokensAfter)
	default:
		fmt.Fprintln(w, "The model made no changes.")
	}
	if e := res.Edit; e != nil {
		fmt.Fprintf(w, "Model: %s, %s", cli.Plural(e.Turns, "turn", "turns"), cli.Plural(e.ToolCalls, "tool call", "tool calls"))
		if e.Denied > 0 {
			fmt.Fprintf(w, " (%d refused)", e.Denied)
		}
		if e.TurnLimit {
			fmt.Fprint(w, ", stopped at the turn limit")
		}
		fmt.Fprintf(w, "; tokens: %d in, %d out", e.Usage.InputTokens+e.Usage.CacheReadTokens+e.Usage.CacheWriteTokens, e.Usage.OutputTokens)
		if e.Usage.CacheReadTokens > 0 {
			fmt.Fprintf(w, " (%d read from cache)", e.Usage.CacheReadTokens)
		}
		fmt.Fprintln(w, ".")
	}
	if res.Changed {
		fmt.Fprintf(w, "Undo with: memdir undo --dir %s %s\n", sessionQuote(n.Dir()), res.RunID)
	}
}

// sessionQuote quotes a path for pasting into a POSIX shell when it needs it.
func sessionQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/._-+:@%", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// sessionKept describes one message compaction would keep.
type sessionKept struct {
	Index       int    `json:"index"`
	ID          string `json:"id"`
	Role        string `json:"role"`
	Tokens      int    `json:"tokens"`
	Text        bool   `json:"text"`
	ToolUses    int    `json:"tool_uses,omitempty"`
	ToolResults int    `json:"tool_results,omitempty"`
	Preview     string `json:"preview,omitempty"`
}

type sessionCompactJSON struct {
	SessionID  string               `json:"session_id"`
	Path       string               `json:"path"`
	Transcript string               `json:"transcript"`
	Messages   int                  `json:"messages"`
	Fallback   *sessionFallbackJSON `json:"fallback,omitempty"`
	Compaction *session.Compaction  `json:"compaction,omitempty"`
	Kept       []sessionKept        `json:"kept,omitempty"`
}

type sessionFallbackJSON struct {
	Reason string `json:"reason"`
	Detail string `json:"detail"`
}

func sessionCompact(env *cli.Env, n *session.Notes, msgs []session.Message, transcriptPath string, f *sessionOptions) error {
	opts := f.compact
	opts.TranscriptPath = transcriptPath
	c, err := n.Compact(msgs, &opts)
	out := sessionCompactJSON{SessionID: n.SessionID(), Path: n.Path(), Transcript: transcriptPath, Messages: len(msgs)}
	var fe *session.CompactFallbackError
	switch {
	case errors.As(err, &fe):
		out.Fallback = &sessionFallbackJSON{Reason: fe.Reason, Detail: fe.Detail}
	case err != nil:
		return err
	default:
		out.Compaction = c
		for i, m := range c.Keep {
			out.Kept = append(out.Kept, sessionDescribeKept(c.Start+i, m))
		}
	}
	return cli.Emit(env, f.json, out, func(w io.Writer) error {
		fmt.Fprintf(w, "Session %s: %s, notes %s\n", n.SessionID(), cli.Plural(len(msgs), "message", "messages"), n.Path())
		if out.Fallback != nil {
			fmt.Fprintf(w, "Would fall back to an LLM summary: %s.\n", fe.Detail)
			return nil
		}
		if c.Floor > 0 {
			fmt.Fprintf(w, "The last compaction comes before message %d; nothing earlier is kept.\n", c.Floor)
		}
		if c.Resumed {
			fmt.Fprintln(w, "No update has recorded which messages the notes cover; only the minimum is kept.")
		}
		if len(c.Keep) == 0 {
			fmt.Fprintln(w, "Would keep no messages.")
		} else {
			fmt.Fprintf(w, "Would keep messages %d–%d: %s, about %d tokens, %d with text.\n", c.Start, c.Start+len(c.Keep)-1, cli.Plural(len(c.Keep), "message", "messages"), c.KeptTokens, c.KeptTextMessages)
		}
		fmt.Fprintf(w, "Summary: the notes, %d characters (about %d tokens)", len([]rune(c.Summary)), c.SummaryTokens)
		if len(c.Truncated) > 0 {
			fmt.Fprintf(w, "; cut for length: %s", strings.Join(c.Truncated, ", "))
		}
		fmt.Fprintf(w, ".\nContext after compaction: about %d tokens.\n", c.Tokens)
		if len(out.Kept) > 0 {
			fmt.Fprintln(w)
			tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "INDEX\tROLE\tTOKENS\tKIND\tSTART")
			for _, k := range out.Kept {
				fmt.Fprintf(tw, "%d\t%s\t%d\t%s\t%s\n", k.Index, k.Role, k.Tokens, sessionKeptKind(k), k.Preview)
			}
			tw.Flush()
		}
		return nil
	})
}

func sessionDescribeKept(i int, m session.Message) sessionKept {
	k := sessionKept{Index: i, ID: m.ID, Role: string(m.Role), Tokens: session.EstimateTokens(m.Message)}
	for _, b := range m.Content {
		switch b.Type {
		case llm.BlockText:
			if b.Text != "" {
				k.Text = true
				if k.Preview == "" {
					k.Preview = sessionPreview(b.Text, 60)
				}
			}
		case llm.BlockToolUse:
			k.ToolUses++
			if k.Preview == "" {
				k.Preview = "→ " + b.ToolName
			}
		case llm.BlockToolResult:
			k.ToolResults++
		}
	}
	return k
}

func sessionKeptKind(k sessionKept) string {
	var parts []string
	if k.Text {
		parts = append(parts, "text")
	}
	if k.ToolUses > 0 {
		parts = append(parts, cli.Plural(k.ToolUses, "call", "calls"))
	}
	if k.ToolResults > 0 {
		parts = append(parts, cli.Plural(k.ToolResults, "result", "results"))
	}
	return strings.Join(parts, "+")
}

// sessionPreview is the start of s on one line.
func sessionPreview(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
