package session_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/anthropic"
	"github.com/memdir/memdir/internal/flock"
	"github.com/memdir/memdir/llm"
	"github.com/memdir/memdir/memdirtest"
	"github.com/memdir/memdir/openai"
	"github.com/memdir/memdir/session"
	"github.com/memdir/memdir/transcript"
)

// Building blocks for realistic conversations. Text of n characters
// estimates at n/4 tokens.

func words(n int) string {
	const s = "the quotes cache keeps one entry per lane and refreshes it after five minutes; "
	return strings.Repeat(s, n/len(s)+1)[:n]
}

func smUser(id, text string) session.Message {
	return session.Message{ID: id, Message: llm.Message{Role: llm.RoleUser, Content: []llm.Block{llm.TextBlock(text)}}}
}

// smAssistant is an assistant message with optional text, tool calls
// (by id) and the context size its API response reported.
func smAssistant(id, text string, context int, calls ...string) session.Message {
	m := session.Message{ID: id, Message: llm.Message{Role: llm.RoleAssistant}}
	if text != "" {
		m.Content = append(m.Content, llm.TextBlock(text))
	}
	for _, c := range calls {
		m.Content = append(m.Content, llm.Block{Type: llm.BlockToolUse, ToolUseID: c, ToolName: "Bash", Input: json.RawMessage(`{"command":"go test ./..."}`)})
	}
	m.Usage = llm.Usage{InputTokens: 10, CacheReadTokens: context - 10}
	if context == 0 {
		m.Usage = llm.Usage{}
	}
	return m
}

// smResults answers tool calls, each with output of n characters.
func smResults(id string, n int, calls ...string) session.Message {
	m := session.Message{ID: id, Message: llm.Message{Role: llm.RoleUser}}
	for _, c := range calls {
		m.Content = append(m.Content, llm.Block{Type: llm.BlockToolResult, ToolUseID: c, Text: words(n)})
	}
	return m
}

func compacted(n int, ms ...session.Message) []session.Message {
	for i := range ms {
		ms[i].Compactions = n
	}
	return ms
}

// fixtureMessages reads testdata/session.jsonl, a Claude Code
// session with tool calls, split assistant records and one compaction.
func fixtureMessages(tb testing.TB) []session.Message {
	tb.Helper()
	tr, err := transcript.ReadFile(filepath.Join("testdata", "session.jsonl"))
	if err != nil {
		tb.Fatal(err)
	}
	if len(tr.Skipped) > 0 {
		tb.Fatalf("fixture has unreadable lines: %v", tr.Skipped)
	}
	var out []session.Message
	for _, m := range tr.Messages() {
		out = append(out, session.Message{Message: m.Message, ID: m.UUID, Usage: m.Usage, Compactions: m.Compactions})
	}
	return out
}

const fixtureLastID = "20000060-0000-4000-8000-000000000060"

func TestDecideSessionUpdate(t *testing.T) {
	// A first turn that reads a lot: 12k of context by usage, still
	// calling tools, with two calls so far.
	midTurn := []session.Message{
		smUser("u1", "Add a 5 minute cache to the quotes endpoint."),
		smAssistant("a1", "Reading the package.", 6000, "t1"),
		smResults("r1", 20000, "t1"),
		smAssistant("a2", "", 12000, "t2"),
	}
	turnOver := append(append([]session.Message{}, midTurn...),
		smResults("r2", 400, "t2"),
		smAssistant("a3", "The cache is in place and the tests pass.", 12500),
	)
	threeCalls := append(append([]session.Message{}, midTurn...),
		smResults("r2", 400, "t2"),
		smAssistant("a3", "", 12300, "t3"),
	)
	afterUpdate := session.State{Initialized: true, LastMessageID: "a3", LastSummarizedMessageID: "a3", TokensAtLastUpdate: 12500, Updates: 1}
	grown := func(context int, calls ...string) []session.Message {
		return append(append([]session.Message{}, turnOver...),
			smUser("u2", "now wire it into the handler"),
			smAssistant("a4", "", context-2000, calls...),
			smResults("r4", 100, calls...),
			smAssistant("a5", "Wired in.", context),
		)
	}
	// After a compaction the context is smaller than at the last update.
	afterCompaction := append(append([]session.Message{}, turnOver...), compacted(1,
		smUser("s1", "(summary of the conversation so far)"),
		smUser("u5", "add metrics too"),
		smAssistant("a6", "Added the two counters.", 7000),
	)...)

	type want struct {
		Update, Initialized, Estimated, LastTurnToolCalls bool
		Tokens, Growth, ToolCalls                         int
	}
	tests := []struct {
		name     string
		state    session.State
		messages []session.Message
		th       session.Thresholds
		want     want
		reason   string
	}{
		{
			name:     "below the first-update threshold",
			messages: midTurn[:2],
			want:     want{Tokens: 6000},
			reason:   "fewer than the 10000 needed before the first update",
		},
		{
			name:     "first update waits while the assistant is mid-turn with two calls",
			messages: midTurn,
			want:     want{Initialized: true, Tokens: 12000, Growth: 12000, ToolCalls: 2, LastTurnToolCalls: true},
			reason:   "only 2 tool calls",
		},
		{
			name:     "first update at a natural break",
			messages: turnOver,
			want:     want{Update: true, Initialized: true, Tokens: 12500, Growth: 12500, ToolCalls: 2},
			reason:   "the last assistant turn made no tool calls",
		},
		{
			name:     "first update on the third tool call, mid-turn",
			messages: threeCalls,
			want:     want{Update: true, Initialized: true, Tokens: 12300, Growth: 12300, ToolCalls: 3, LastTurnToolCalls: true},
			reason:   "3 tool calls",
		},
		{
			name:     "nothing new since the last update",
			state:    afterUpdate,
			messages: turnOver,
			want:     want{Initialized: true, Tokens: 12500, Growth: 0},
			reason:   "grew by 0 tokens",
		},
		{
			name:     "growth below 5000 at a natural break",
			state:    afterUpdate,
			messages: grown(17000, "t4"),
			want:     want{Initialized: true, Tokens: 17000, Growth: 4500, ToolCalls: 1},
			reason:   "fewer than the 5000 needed",
		},
		{
			name:     "growth of 5000 at a natural break",
			state:    afterUpdate,
			messages: grown(17500, "t4"),
			want:     want{Update: true, Initialized: true, Tokens: 17500, Growth: 5000, ToolCalls: 1},
		},
		{
			name:     "growth without a break needs three calls",
			state:    afterUpdate,
			messages: grown(30000, "t4", "t5")[:len(turnOver)+2],
			want:     want{Initialized: true, Tokens: 28000, Growth: 15500, ToolCalls: 2, LastTurnToolCalls: true},
			reason:   "(3 needed)",
		},
		{
			name:     "growth and three parallel calls",
			state:    afterUpdate,
			messages: grown(30000, "t4", "t5", "t6")[:len(turnOver)+2],
			want:     want{Update: true, Initialized: true, Tokens: 28000, Growth: 15500, ToolCalls: 3, LastTurnToolCalls: true},
		},
		{
			name:     "last update's message is gone: calls counted from the start",
			state:    session.State{Initialized: true, LastMessageID: "vanished", TokensAtLastUpdate: 1000},
			messages: threeCalls,
			want:     want{Update: true, Initialized: true, Tokens: 12300, Growth: 11300, ToolCalls: 3, LastTurnToolCalls: true},
		},
		{
			name:     "a compaction since the last update resets the baseline",
			state:    afterUpdate,
			messages: afterCompaction,
			want:     want{Update: true, Initialized: true, Tokens: 7000, Growth: 7000},
		},
		{
			name:     "initialized sessions stay initialized below the first threshold",
			state:    session.State{Initialized: true},
			messages: []session.Message{smUser("u1", "hi"), smAssistant("a1", "Hello.", 6000)},
			want:     want{Update: true, Initialized: true, Tokens: 6000, Growth: 6000},
		},
		{
			name:     "without usage the context is estimated at four characters a token",
			messages: []session.Message{smUser("u1", words(30000)), smAssistant("a1", words(12000), 0)},
			want:     want{Initialized: true, Update: true, Estimated: true, Tokens: 10500, Growth: 10500},
		},
		{
			name:     "estimates count only the messages since the last compaction",
			messages: append([]session.Message{smUser("u0", words(80000))}, compacted(1, smUser("u1", words(8000)), smAssistant("a1", "ok", 0))...),
			want:     want{Estimated: true, Tokens: 2001},
		},
		{
			name:     "usage plus an estimate of what follows it",
			messages: append(append([]session.Message{}, midTurn...), smResults("r2", 8000, "t2")),
			want:     want{Initialized: true, Tokens: 14000, Growth: 14000, ToolCalls: 2, LastTurnToolCalls: true},
		},
		{
			name:     "configured thresholds",
			state:    afterUpdate,
			messages: grown(15000, "t4"),
			th:       session.Thresholds{MinTokensToInit: 50000, MinTokensBetweenUpdates: 2000, ToolCallsBetweenUpdates: 1},
			want:     want{Update: true, Initialized: true, Tokens: 15000, Growth: 2500, ToolCalls: 1},
			reason:   "1 tool calls",
		},
		{
			name:   "empty conversation",
			want:   want{Estimated: true},
			reason: "empty",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := session.Decide(tt.state, tt.messages, tt.th)
			got := want{d.Update, d.Initialized, d.Estimated, d.LastTurnToolCalls, d.Tokens, d.Growth, d.ToolCalls}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("decision (-want +got):\n%s\nreason: %s", diff, d.Reason)
			}
			if !strings.Contains(d.Reason, tt.reason) {
				t.Errorf("reason %q does not say %q", d.Reason, tt.reason)
			}
		})
	}
}

func TestDecideOnFixture(t *testing.T) {
	msgs := fixtureMessages(t)
	d := session.Decide(session.State{}, msgs, session.Thresholds{})
	// The last response reported 23,065 tokens of context; nothing follows it.
	want := session.Decision{Update: true, Tokens: 23065, Initialized: true, Growth: 23065, ToolCalls: 20, Thresholds: session.Thresholds{MinTokensToInit: 10000, MinTokensBetweenUpdates: 5000, ToolCallsBetweenUpdates: 3}}
	if diff := cmp.Diff(want, d, cmpopts.IgnoreFields(session.Decision{}, "Reason")); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	// Mid-chain: the assistant has just asked for the commit.
	d = session.Decide(session.State{}, msgs[:len(msgs)-2], session.Thresholds{})
	if !d.Update || !d.LastTurnToolCalls || d.ToolCalls != 20 {
		t.Errorf("mid-chain decision = %+v", d)
	}
}

// sessionWorld is a config home, a project and a journal, all temporary.
type sessionWorld struct {
	home, project, journal string
	now                    time.Time
}

func newSessionWorld(tb testing.TB) *sessionWorld {
	tb.Helper()
	base := tb.TempDir()
	return &sessionWorld{
		home:    filepath.Join(base, "claude"),
		project: "/home/lin/src/haulr",
		journal: filepath.Join(base, "journal"),
		now:     time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC),
	}
}

func (w *sessionWorld) open(tb testing.TB, id string) *session.Notes {
	tb.Helper()
	n, err := session.Open(w.home, w.project, id, &session.Options{
		Journal: memdir.NewJournal(w.journal, func() time.Time { return w.now }),
		Now:     func() time.Time { return w.now },
	})
	if err != nil {
		tb.Fatal(err)
	}
	return n
}

func writeFile(tb testing.TB, path, content string) {
	tb.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		tb.Fatal(err)
	}
}

func readFile(tb testing.TB, path string) string {
	tb.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	return string(b)
}

func TestSessionNotesPath(t *testing.T) {
	w := newSessionWorld(t)
	n := w.open(t, "5d0c9a3e-41b7-4c2a-9e55-0f1e2d3c4b5a")
	want := filepath.Join(w.home, "projects", "-home-lin-src-haulr", "5d0c9a3e-41b7-4c2a-9e55-0f1e2d3c4b5a", "session-memory", "summary.md")
	if n.Path() != want {
		t.Errorf("Path = %s, want %s", n.Path(), want)
	}
	if n.TemplatePath() != filepath.Join(w.home, "session-memory", "config", "template.md") ||
		n.PromptPath() != filepath.Join(w.home, "session-memory", "config", "prompt.md") {
		t.Errorf("config paths %s, %s", n.TemplatePath(), n.PromptPath())
	}
	for _, id := range []string{"", ".", "..", "a/b", `a\b`, "a\x00b", "tab\there", "../../etc", strings.Repeat("x", 256), "\xff"} {
		_, err := session.Open(w.home, w.project, id, nil)
		if !errors.Is(err, memdir.ErrInvalid) {
			t.Errorf("session id %q: err = %v, want ErrInvalid", id, err)
		}
	}
	if _, err := session.Open("relative", w.project, "s", nil); !errors.Is(err, memdir.ErrInvalid) {
		t.Errorf("relative config home: %v", err)
	}
	if _, err := session.Open(w.home, "", "s", nil); !errors.Is(err, memdir.ErrInvalid) {
		t.Errorf("empty project: %v", err)
	}
}

func TestEnsureCreatesOnceWithModes(t *testing.T) {
	w := newSessionWorld(t)
	n := w.open(t, "s1")
	if _, err := n.Read(); !errors.Is(err, memdir.ErrNotFound) {
		t.Fatalf("Read before Ensure: %v, want ErrNotFound", err)
	}
	created, err := n.Ensure()
	if err != nil || !created {
		t.Fatalf("Ensure = %v, %v; want created", created, err)
	}
	got, err := n.Read()
	if err != nil || got != session.DefaultTemplate {
		t.Fatalf("notes = %q, %v; want the default template", got, err)
	}
	for path, mode := range map[string]fs.FileMode{n.Dir(): 0o700 | fs.ModeDir, n.Path(): 0o600} {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode() != mode {
			t.Errorf("%s: mode %v, want %v", path, fi.Mode(), mode)
		}
	}
	// Existing notes are never overwritten, not even by a new template.
	writeFile(t, n.Path(), "# Session Title\n_t_\nmine\n")
	writeFile(t, n.TemplatePath(), "# Other\n_o_\n")
	if created, err := n.Ensure(); err != nil || created {
		t.Errorf("second Ensure = %v, %v; want not created", created, err)
	}
	if got := readFile(t, n.Path()); got != "# Session Title\n_t_\nmine\n" {
		t.Errorf("notes overwritten: %q", got)
	}
}

func TestEnsureRefusesLinksOut(t *testing.T) {
	w := newSessionWorld(t)
	n := w.open(t, "s1")
	outside := filepath.Join(t.TempDir(), "secret.md")
	writeFile(t, outside, "not yours\n")
	if err := os.MkdirAll(n.Dir(), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, n.Path()); err != nil {
		t.Skipf("symbolic links unavailable: %v", err)
	}
	if created, err := n.Ensure(); err != nil || created {
		t.Errorf("Ensure over a link = %v, %v; want it left alone", created, err)
	}
	if _, err := n.Read(); err == nil {
		t.Error("Read followed a link out of the session-memory directory")
	}
	if got := readFile(t, outside); got != "not yours\n" {
		t.Errorf("outside file changed: %q", got)
	}
}

func TestSessionTemplates(t *testing.T) {
	w := newSessionWorld(t)
	n := w.open(t, "s1")
	tmpl, err := n.Template()
	if err != nil || tmpl != session.DefaultTemplate {
		t.Fatalf("default template: %q, %v", tmpl, err)
	}
	_, sections := session.ParseNotes(tmpl)
	var titles []string
	for _, s := range sections {
		titles = append(titles, s.Title())
		if s.Description == "" || s.Tokens == 0 {
			t.Errorf("section %q has no italic description", s.Heading)
		}
	}
	wantTitles := []string{"Session Title", "Current State", "Task specification", "Files and Functions", "Workflow", "Errors & Corrections", "Codebase and System Documentation", "Learnings", "Key results", "Worklog"}
	if diff := cmp.Diff(wantTitles, titles); diff != "" {
		t.Errorf("default sections (-want +got):\n%s", diff)
	}

	user := "# Goal\n_what we are doing_\n\n# Log\n_what happened_\n"
	writeFile(t, n.TemplatePath(), user)
	if created, err := n.Ensure(); err != nil || !created {
		t.Fatal(created, err)
	}
	if got := readFile(t, n.Path()); got != user {
		t.Errorf("notes from the user's template = %q", got)
	}
	for name, bad := range map[string]string{"binary": "# A\x00\x01", "latin-1": "# Caf\xe9\n", "huge": strings.Repeat("x", 300<<10)} {
		writeFile(t, n.TemplatePath(), bad)
		if _, err := n.Template(); err == nil || !strings.Contains(err.Error(), n.TemplatePath()) {
			t.Errorf("%s template: err = %v, want one naming the file", name, err)
		}
	}
	if err := os.Remove(n.TemplatePath()); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(n.TemplatePath(), 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := n.Template(); err == nil {
		t.Error("a directory as template.md was accepted")
	}
}

func TestIsSessionTemplate(t *testing.T) {
	user := "# Goal\n_what we are doing_\n- nothing yet\n"
	tests := []struct {
		name, notes, template string
		want                  bool
	}{
		{"default, untouched", session.DefaultTemplate, session.DefaultTemplate, true},
		{"default, whitespace differs", "\n\n" + strings.TrimSpace(session.DefaultTemplate) + "\n\n\n", session.DefaultTemplate, true},
		{"another template's wording, no content", "# Session Title\n_A short title_\n\n# Current State\n_What now_\n", session.DefaultTemplate, true},
		{"default with content", strings.Replace(session.DefaultTemplate, "# Worklog\n", "# Worklog\n- added the cache\n", 1) + "- step\n", session.DefaultTemplate, false},
		{"user template with a placeholder line, untouched", user, user, true},
		{"user template, placeholder replaced", strings.Replace(user, "- nothing yet", "- cache quotes", 1), user, false},
		{"text before the first heading", "stray\n# A\n_a_\n", session.DefaultTemplate, false},
		{"no headings", "just text", session.DefaultTemplate, false},
	}
	for _, tt := range tests {
		if got := session.IsTemplate(tt.notes, tt.template); got != tt.want {
			t.Errorf("%s: IsTemplate = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestBuildSessionPrompt(t *testing.T) {
	notes := "# Current State\n_now_\nuses {{notesPath}} literally, and $1\n"
	got := session.BuildPrompt("Notes at {{notesPath}}:\n{{currentNotes}}\nKeep {{unknown}} and {{ notesPath }}.", notes, "/memories/summary.md")
	want := "Notes at /memories/summary.md:\n" + notes + "\nKeep {{unknown}} and {{ notesPath }}."
	if got != want {
		t.Errorf("substitution:\n got %q\nwant %q", got, want)
	}
	def := session.BuildPrompt(session.DefaultPrompt, session.DefaultTemplate, "/memories/summary.md")
	for _, s := range []string{"<current_notes>\n" + session.DefaultTemplate + "\n</current_notes>", "The notes file is /memories/summary.md.", "str_replace", "Current State", "2000 tokens"} {
		if !strings.Contains(def, s) {
			t.Errorf("default prompt lacks %q", s)
		}
	}
	if strings.Contains(def, "{{") || strings.Contains(def, "over their limit") || strings.Contains(def, "whole file. Shorten") {
		t.Errorf("default prompt for small notes has leftovers or reminders:\n%s", def)
	}

	// Reminders: one oversized section, then the whole file over budget.
	big := strings.Replace(session.DefaultTemplate, "# Worklog\n", "# Worklog\n"+words(8400)+"\n", 1)
	p := session.BuildPrompt("{{currentNotes}}", big, "x")
	if !strings.Contains(p, "These sections are over their limit and must be shortened:\n- \"# Worklog\": about 2") || strings.Contains(p, "whole file") {
		t.Errorf("section reminder missing or wrong:\n%s", p[len(big):])
	}
	huge := big
	for _, h := range []string{"# Learnings\n", "# Key results\n", "# Files and Functions\n", "# Workflow\n", "# Current State\n", "# Task specification\n"} {
		huge = strings.Replace(huge, h, h+words(8200)+"\n", 1)
	}
	p = session.BuildPrompt("{{currentNotes}}", huge, "x")[len(huge):]
	if !strings.Contains(p, "over the 12000-token limit for the whole file") || !strings.Contains(p, "Sections to shorten:") || strings.Count(p, "\n- ") != 7 {
		t.Errorf("budget reminder missing or wrong:\n%s", p)
	}
	if i, j := strings.Index(p, `"# Worklog"`), strings.Index(p, `"# Learnings"`); i < 0 || j < 0 || i > j {
		t.Errorf("oversized sections not listed largest first:\n%s", p)
	}
}

func TestCheckSessionStructure(t *testing.T) {
	base := "# Title\n_the title_\nHaulr quotes cache\n\n# Log\n_steps_\n- one\n"
	tests := []struct {
		name, after, want string
	}{
		{"content edited", strings.Replace(base, "- one", "- one\n- two\n## detail\nmore", 1), ""},
		{"CRLF and trailing spaces", strings.ReplaceAll(strings.Replace(base, "# Log", "# Log  ", 1), "\n", "\r\n"), ""},
		{"heading renamed", strings.Replace(base, "# Log", "# Worklog", 1), `heading "# Log" became "# Worklog"`},
		{"section removed", "# Title\n_the title_\nx\n", `section "# Log" was removed`},
		{"section added", base + "# Extra\n_x_\n", `section "# Extra" was added`},
		{"italic line changed", strings.Replace(base, "_steps_", "_what we did_", 1), `the italic line of section "# Log" became "_what we did_"`},
		{"italic line removed", strings.Replace(base, "_steps_\n", "", 1), `section "# Log" lost its italic description line "_steps_"`},
		{"content above the italic line", strings.Replace(base, "# Log\n", "# Log\nfirst!\n", 1), `lost its italic description line`},
		{"wiped", "", `section "# Title" was removed`},
	}
	for _, tt := range tests {
		if got := session.CheckStructure(base, tt.after); !strings.Contains(got, tt.want) || (tt.want == "") != (got == "") {
			t.Errorf("%s: CheckStructure = %q, want %q", tt.name, got, tt.want)
		}
	}
	plain := "# A\nno italics\n"
	if got := session.CheckStructure(plain, "# A\n_now italic_\n"); !strings.Contains(got, "gained an italic line") {
		t.Errorf("gained italic: %q", got)
	}
}

func TestSessionState(t *testing.T) {
	w := newSessionWorld(t)
	n := w.open(t, "s1")
	st, err := n.State()
	if err != nil || st != (session.State{SessionID: "s1"}) {
		t.Fatalf("fresh state = %+v, %v", st, err)
	}
	writeFile(t, filepath.Join(n.Dir(), session.StateFile), "{not json")
	if _, err := n.State(); !errors.Is(err, memdir.ErrInvalid) || !strings.Contains(err.Error(), session.StateFile) {
		t.Errorf("broken state: %v", err)
	}
	if _, err := n.Decide(nil, session.Thresholds{}); err == nil {
		t.Error("Decide ignored a broken state file")
	}
}

// noModel stands in where an update must stop before the model is asked.
type noModel struct{}

func (noModel) Generate(context.Context, *llm.Request) (*llm.Response, error) {
	return nil, errors.New("the model was called")
}

type smClient struct {
	name string
	new  func(srv *memdirtest.ModelServer) (llm.Model, error)
}

var smClients = []smClient{
	{"anthropic", func(srv *memdirtest.ModelServer) (llm.Model, error) {
		return anthropic.New(&anthropic.Options{Model: "claude-test", BaseURL: srv.AnthropicBaseURL(), APIKey: "test", MaxRetries: -1})
	}},
	{"anthropic-stream", func(srv *memdirtest.ModelServer) (llm.Model, error) {
		return anthropic.New(&anthropic.Options{Model: "claude-test", BaseURL: srv.AnthropicBaseURL(), APIKey: "test", MaxRetries: -1, Stream: true})
	}},
	{"openai", func(srv *memdirtest.ModelServer) (llm.Model, error) {
		return openai.New(&openai.Options{Model: "gpt-test", BaseURL: srv.OpenAIBaseURL(), APIKey: "test", MaxRetries: -1})
	}},
	{"openai-stream", func(srv *memdirtest.ModelServer) (llm.Model, error) {
		return openai.New(&openai.Options{Model: "gpt-test", BaseURL: srv.OpenAIBaseURL(), APIKey: "test", MaxRetries: -1, Stream: true})
	}},
}

func newModel(tb testing.TB, c smClient, srv *memdirtest.ModelServer) llm.Model {
	tb.Helper()
	m, err := c.new(srv)
	if err != nil {
		tb.Fatal(err)
	}
	return m
}

// replace is a memory-tool str_replace call on the notes.
func replace(id, old, new string) llm.Block {
	in, _ := json.Marshal(map[string]string{"command": "str_replace", "path": "/memories/summary.md", "old_str": old, "new_str": new})
	return llm.Block{Type: llm.BlockToolUse, ToolUseID: id, ToolName: "memory", Input: in}
}

const (
	stateLine   = "_What is under way at this moment, what is still open, and the immediate next steps_\n"
	worklogLine = "_Each step tried or done, one terse line per step_\n"
)

// goodEdit fills Current State and Worklog in one reply of two parallel
// calls, then stops.
func goodEdit() []memdirtest.ModelReply {
	return []memdirtest.ModelReply{
		{Content: []llm.Block{
			replace("e1", stateLine, stateLine+"Quotes cache wired into the six handlers and committed as 9f3c2a1.\n"),
			replace("e2", worklogLine, worklogLine+"- cache with 5 min TTL, c.now() clock\n- handlers use cache.Get; hit/miss counters\n"),
		}, Usage: llm.Usage{InputTokens: 7000, OutputTokens: 120}},
		{Content: []llm.Block{llm.TextBlock("Done.")}, Usage: llm.Usage{InputTokens: 7300, OutputTokens: 3}},
	}
}

func TestUpdateThroughRealClients(t *testing.T) {
	for _, c := range smClients {
		t.Run(c.name, func(t *testing.T) {
			w := newSessionWorld(t)
			n := w.open(t, "5d0c9a3e-41b7-4c2a-9e55-0f1e2d3c4b5a")
			srv := memdirtest.NewModelServer(t)
			srv.Enqueue(goodEdit()...)
			msgs := fixtureMessages(t)
			res, err := n.Update(context.Background(), msgs, &session.UpdateOptions{Model: newModel(t, c, srv)})
			if err != nil {
				t.Fatal(err)
			}
			if !res.Updated || !res.Created || !res.Changed || res.RolledBack || res.Messages != len(msgs) {
				t.Errorf("result = %+v", res)
			}
			if diff := cmp.Diff([]string{"Current State", "Worklog"}, res.Sections); diff != "" {
				t.Errorf("changed sections (-want +got):\n%s", diff)
			}
			if res.Edit == nil || res.Edit.Turns != 2 || res.Edit.ToolCalls != 2 || res.Edit.Denied != 0 || res.Edit.Usage.InputTokens != 14300 {
				t.Errorf("edit = %+v", res.Edit)
			}
			want := strings.Replace(session.DefaultTemplate, stateLine, stateLine+"Quotes cache wired into the six handlers and committed as 9f3c2a1.\n", 1)
			want = strings.Replace(want, worklogLine, worklogLine+"- cache with 5 min TTL, c.now() clock\n- handlers use cache.Get; hit/miss counters\n", 1)
			if got := readFile(t, n.Path()); got != want {
				t.Errorf("notes:\n%s", got)
			}
			wantState := session.State{
				SessionID: "5d0c9a3e-41b7-4c2a-9e55-0f1e2d3c4b5a", Initialized: true,
				LastMessageID: fixtureLastID, LastSummarizedMessageID: fixtureLastID,
				TokensAtLastUpdate: 23065, CompactionsAtLastUpdate: 1, Updates: 1, UpdatedAt: w.now,
			}
			st, err := n.State()
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(wantState, st); diff != "" {
				t.Errorf("state (-want +got):\n%s", diff)
			}

			// What the model was sent: the memory tool alone, the
			// conversation as text, then the prompt with the notes.
			req := srv.Requests()[0]
			if len(req.Tools) != 1 || req.Tools[0].Name != "memory" || !strings.Contains(req.Tools[0].Description, "only /memories/summary.md may be changed") {
				t.Errorf("tools = %+v", req.Tools)
			}
			if !strings.Contains(req.System, "running notes") {
				t.Errorf("system prompt = %q", req.System)
			}
			text := req.Messages[0].Content[0].Text
			for _, s := range []string{
				"<conversation>\n[user]\nThe quotes endpoint is slow under load.",
				"(tool call Bash, id toolu_003)",
				"(tool error for id toolu_003) === RUN",
				"Committed as 9f3c2a1 on quotes-cache.\n\n</conversation>",
				"The notes file is /memories/summary.md.",
				"<current_notes>\n" + session.DefaultTemplate + "\n</current_notes>",
			} {
				if !strings.Contains(text, s) {
					t.Errorf("request lacks %q", s)
				}
			}

			// Nothing new: the next call does not reach the model.
			res, err = n.Update(context.Background(), msgs, &session.UpdateOptions{Model: newModel(t, c, srv)})
			if err != nil || res.Updated || !strings.Contains(res.Decision.Reason, "grew by 0 tokens") {
				t.Errorf("second update = %+v, %v", res, err)
			}
			if len(srv.Requests()) != 2 {
				t.Errorf("%d requests, want 2", len(srv.Requests()))
			}
		})
	}
}

func TestUpdateRollsBackBrokenStructure(t *testing.T) {
	w := newSessionWorld(t)
	n := w.open(t, "s1")
	msgs := fixtureMessages(t)
	srv := memdirtest.NewModelServer(t)
	m := newModel(t, smClients[0], srv)
	srv.Enqueue(goodEdit()...)
	if _, err := n.Update(context.Background(), msgs, &session.UpdateOptions{Model: m}); err != nil {
		t.Fatal(err)
	}
	before := readFile(t, n.Path())
	stBefore, _ := n.State()

	// The model renames a heading and rewrites an italic line.
	srv.Enqueue(
		memdirtest.ModelReply{Content: []llm.Block{
			replace("b1", "# Current State\n", "# Status\n"),
			replace("b2", "- cache with 5 min TTL", "- cache with a 5 minute TTL"),
		}},
		memdirtest.TextReply("Done."),
	)
	res, err := n.Update(context.Background(), msgs, &session.UpdateOptions{Model: m, Force: true})
	if err != nil {
		t.Fatal(err)
	}
	if !res.RolledBack || res.Changed || !strings.Contains(res.Problem, `heading "# Current State" became "# Status"`) || res.RestoreRunID == "" {
		t.Errorf("result = %+v", res)
	}
	if got := readFile(t, n.Path()); got != before {
		t.Errorf("notes not put back:\n%s", got)
	}
	if st, _ := n.State(); st != stBefore {
		t.Errorf("state advanced after a rollback: %+v", st)
	}
	// Both runs are journaled: undoing the restore brings back what the
	// model wrote.
	j := n.Journal()
	run, err := j.Run(res.RunID)
	if err != nil || run.State != memdir.RunFailed || !strings.Contains(run.Error, "broke the notes' structure") {
		t.Fatalf("model's run = %+v, %v", run, err)
	}
	d, err := memdir.Open(n.Dir(), &memdir.Options{Journal: j})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Undo(context.Background(), res.RestoreRunID, nil); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, n.Path()); !strings.Contains(got, "# Status\n") || !strings.Contains(got, "a 5 minute TTL") {
		t.Errorf("undoing the restore did not recover the model's version:\n%s", got)
	}
}

func TestUpdateKeepsModelToTheNotes(t *testing.T) {
	w := newSessionWorld(t)
	n := w.open(t, "s1")
	srv := memdirtest.NewModelServer(t)
	create, _ := json.Marshal(map[string]string{"command": "create", "path": "/memories/other.md", "file_text": "x"})
	del, _ := json.Marshal(map[string]string{"command": "delete", "path": "/memories/summary.md"})
	srv.Enqueue(
		memdirtest.ModelReply{Content: []llm.Block{
			{Type: llm.BlockToolUse, ToolUseID: "x1", ToolName: "memory", Input: create},
			{Type: llm.BlockToolUse, ToolUseID: "x2", ToolName: "memory", Input: del},
			{Type: llm.BlockToolUse, ToolUseID: "x3", ToolName: "bash", Input: json.RawMessage(`{"command":"rm -rf ~"}`)},
			{Type: llm.BlockToolUse, ToolUseID: "x4", ToolName: "memory", Input: json.RawMessage(`{"command":"view","path":"/memories"}`)},
		}},
		memdirtest.TextReply("Done."),
	)
	res, err := n.Update(context.Background(), fixtureMessages(t), &session.UpdateOptions{Model: newModel(t, smClients[0], srv)})
	if err != nil {
		t.Fatal(err)
	}
	if res.Edit.Denied != 3 || res.Changed {
		t.Errorf("result = %+v, edit %+v", res, res.Edit)
	}
	entries, _ := os.ReadDir(n.Dir())
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if diff := cmp.Diff([]string{session.StateFile, "summary.md"}, names); diff != "" {
		t.Errorf("session-memory directory (-want +got):\n%s", diff)
	}
	// The model's view of the directory does not show the state file.
	out := srv.Requests()[1].Messages[2].Content[3].Text
	if strings.Contains(out, "state") || !strings.Contains(out, "summary.md") {
		t.Errorf("view output = %q", out)
	}
}

func TestUpdateSummarizedIDOnlyAtBreaks(t *testing.T) {
	w := newSessionWorld(t)
	n := w.open(t, "s1")
	msgs := fixtureMessages(t)
	midChain := msgs[:len(msgs)-2] // ends with the assistant's git commit call
	srv := memdirtest.NewModelServer(t)
	srv.Enqueue(goodEdit()...)
	res, err := n.Update(context.Background(), midChain, &session.UpdateOptions{Model: newModel(t, smClients[0], srv)})
	if err != nil || !res.Updated {
		t.Fatal(res, err)
	}
	if res.State.LastMessageID != midChain[len(midChain)-1].ID || res.State.LastSummarizedMessageID != "" {
		t.Errorf("state after a mid-chain update = %+v", res.State)
	}
	// The next update sends only what came after the last one.
	srv.Enqueue(memdirtest.TextReply("Nothing to add."))
	res, err = n.Update(context.Background(), msgs, &session.UpdateOptions{Model: newModel(t, smClients[0], srv), Force: true})
	if err != nil || res.Messages != 2 || res.State.LastSummarizedMessageID != fixtureLastID || res.Changed {
		t.Fatalf("second update = %+v, %v", res, err)
	}
	text := srv.LastRequest().Messages[0].Content[0].Text
	if strings.Contains(text, "The quotes endpoint is slow") || !strings.Contains(text, "Committed as 9f3c2a1") {
		t.Errorf("second update sent the wrong messages:\n%s", text[:min(len(text), 600)])
	}
	if !strings.Contains(text, "Quotes cache wired into the six handlers") {
		t.Error("the prompt does not carry the current notes")
	}
}

func TestUpdateSendsRecentMessagesWhenLong(t *testing.T) {
	w := newSessionWorld(t)
	n := w.open(t, "s1")
	srv := memdirtest.NewModelServer(t)
	srv.Enqueue(memdirtest.TextReply("ok"))
	msgs := fixtureMessages(t)
	res, err := n.Update(context.Background(), msgs, &session.UpdateOptions{Model: newModel(t, smClients[0], srv), MaxConversationChars: 3000})
	if err != nil {
		t.Fatal(err)
	}
	if res.Omitted == 0 || res.Messages+res.Omitted != len(msgs) {
		t.Errorf("messages %d, omitted %d of %d", res.Messages, res.Omitted, len(msgs))
	}
	text := srv.LastRequest().Messages[0].Content[0].Text
	if !strings.Contains(text, fmt.Sprintf("(%d earlier messages are left out; the notes cover them.)", res.Omitted)) || !strings.Contains(text, "Committed as 9f3c2a1") {
		t.Errorf("conversation:\n%s", text[:min(len(text), 800)])
	}
}

func TestUpdateFailures(t *testing.T) {
	msgs := fixtureMessages(t)
	t.Run("model error leaves the state", func(t *testing.T) {
		w := newSessionWorld(t)
		n := w.open(t, "s1")
		srv := memdirtest.NewModelServer(t)
		srv.Enqueue(memdirtest.ErrorReply(500, "overloaded"))
		res, err := n.Update(context.Background(), msgs, &session.UpdateOptions{Model: newModel(t, smClients[0], srv)})
		var me *llm.ModelError
		if !errors.As(err, &me) || res == nil || !res.Updated {
			t.Fatalf("Update = %+v, %v; want a model error with the result", res, err)
		}
		if st, _ := n.State(); st.Updates != 0 || st.LastMessageID != "" {
			t.Errorf("state advanced after a failure: %+v", st)
		}
	})
	t.Run("below the thresholds nothing is created", func(t *testing.T) {
		w := newSessionWorld(t)
		n := w.open(t, "s1")
		srv := memdirtest.NewModelServer(t)
		short := []session.Message{smUser("u1", "hi"), smAssistant("a1", "hello", 900)}
		res, err := n.Update(context.Background(), short, &session.UpdateOptions{Model: newModel(t, smClients[0], srv)})
		if err != nil || res.Updated {
			t.Fatalf("Update = %+v, %v", res, err)
		}
		if _, err := os.Stat(n.Dir()); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("session-memory directory created without an update: %v", err)
		}
	})
	t.Run("crossing the first threshold is remembered", func(t *testing.T) {
		w := newSessionWorld(t)
		n := w.open(t, "s1")
		midTurn := []session.Message{smUser("u1", "go"), smAssistant("a1", "", 12000, "t1")}
		res, err := n.Update(context.Background(), midTurn, &session.UpdateOptions{Model: noModel{}})
		if err != nil || res.Updated || !res.State.Initialized {
			t.Fatalf("Update = %+v, %v", res, err)
		}
		if st, _ := n.State(); !st.Initialized || st.Updates != 0 {
			t.Errorf("state = %+v", st)
		}
	})
	t.Run("locked", func(t *testing.T) {
		w := newSessionWorld(t)
		n := w.open(t, "s1")
		if err := os.MkdirAll(n.Dir(), 0o700); err != nil {
			t.Fatal(err)
		}
		l, err := flock.Acquire(context.Background(), n.Dir())
		if err != nil {
			t.Fatal(err)
		}
		defer l.Unlock()
		_, err = n.Update(context.Background(), msgs, &session.UpdateOptions{Model: noModel{}, Force: true})
		if !errors.Is(err, memdir.ErrLocked) {
			t.Errorf("err = %v, want ErrLocked", err)
		}
	})
	t.Run("bad input", func(t *testing.T) {
		w := newSessionWorld(t)
		n := w.open(t, "s1")
		if _, err := n.Update(context.Background(), msgs, nil); !errors.Is(err, memdir.ErrInvalid) {
			t.Errorf("no model: %v", err)
		}
		if _, err := n.Update(context.Background(), nil, &session.UpdateOptions{Model: noModel{}}); !errors.Is(err, memdir.ErrInvalid) {
			t.Errorf("no messages: %v", err)
		}
		writeFile(t, n.PromptPath(), "bad \xff prompt")
		if _, err := n.Update(context.Background(), msgs, &session.UpdateOptions{Model: noModel{}, Force: true}); err == nil || !strings.Contains(err.Error(), "prompt.md") {
			t.Errorf("broken prompt.md: %v", err)
		}
	})
}

func TestUpdateUsesUserPrompt(t *testing.T) {
	w := newSessionWorld(t)
	n := w.open(t, "s1")
	writeFile(t, n.PromptPath(), "Edit {{notesPath}} only. Now:\n{{currentNotes}}\nEnd.")
	srv := memdirtest.NewModelServer(t)
	srv.Enqueue(memdirtest.TextReply("ok"))
	if _, err := n.Update(context.Background(), fixtureMessages(t), &session.UpdateOptions{Model: newModel(t, smClients[0], srv)}); err != nil {
		t.Fatal(err)
	}
	text := srv.LastRequest().Messages[0].Content[0].Text
	if !strings.HasSuffix(text, "</conversation>\n\nEdit /memories/summary.md only. Now:\n"+session.DefaultTemplate+"\nEnd.") {
		t.Errorf("prompt.md not used:\n%s", text[len(text)-400:])
	}
}

func TestUpdateIsUndoable(t *testing.T) {
	w := newSessionWorld(t)
	n := w.open(t, "s1")
	srv := memdirtest.NewModelServer(t)
	srv.Enqueue(goodEdit()...)
	msgs := fixtureMessages(t)
	if _, err := n.Ensure(); err != nil {
		t.Fatal(err)
	}
	res, err := n.Update(context.Background(), msgs, &session.UpdateOptions{Model: newModel(t, smClients[0], srv)})
	if err != nil || !res.Changed {
		t.Fatal(res, err)
	}
	run, err := n.Journal().Run(res.RunID)
	if err != nil || run.Kind != "session-notes" || run.Usage == nil || run.Usage.OutputTokens != 123 {
		t.Fatalf("journal run = %+v, %v", run, err)
	}
	d, err := memdir.Open(n.Dir(), &memdir.Options{Journal: n.Journal()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Undo(context.Background(), res.RunID, nil); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, n.Path()); got != session.DefaultTemplate {
		t.Errorf("undo left:\n%s", got)
	}
	// Nothing else appears, not even an index.
	entries, _ := os.ReadDir(n.Dir())
	for _, e := range entries {
		switch e.Name() {
		case "summary.md", session.StateFile:
		default:
			t.Errorf("undo left %s in the session-memory directory", e.Name())
		}
	}
}

// A host keeps a session's notes up to date after each model response and,
// when the context is full, compacts with them instead of asking a model
// for a summary.
func ExampleNotes_Update() {
	home, _ := os.MkdirTemp("", "claude")
	defer os.RemoveAll(home)

	// A fake model that fills in Current State; a real host passes its
	// configured model.
	srv := memdirtest.StartModelServer()
	defer srv.Close()
	srv.Enqueue(
		memdirtest.ModelReply{Content: []llm.Block{replace("e1", stateLine, stateLine+"Quotes cache wired in; committed.\n")}},
		memdirtest.TextReply("Done."),
	)
	model, err := anthropic.New(&anthropic.Options{Model: "claude-haiku-4-5", BaseURL: srv.AnthropicBaseURL(), APIKey: "test"})
	if err != nil {
		log.Fatal(err)
	}

	notes, err := session.Open(home, "/home/lin/src/haulr", "5d0c9a3e", &session.Options{
		Journal: memdir.NewJournal(home+"/journal", nil),
	})
	if err != nil {
		log.Fatal(err)
	}
	conversation := []session.Message{
		{ID: "u1", Message: llm.Message{Role: llm.RoleUser, Content: []llm.Block{llm.TextBlock("Cache the quotes endpoint for 5 minutes per lane.")}}},
		{ID: "a1", Message: llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{llm.TextBlock("Done and committed as 9f3c2a1.")}},
			Usage: llm.Usage{InputTokens: 20, CacheReadTokens: 14000, OutputTokens: 300}},
	}
	res, err := notes.Update(context.Background(), conversation, &session.UpdateOptions{Model: model})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Decision.Reason)
	fmt.Println("changed:", res.Sections)

	// Later, with the context full:
	c, err := notes.Compact(conversation, nil)
	if errors.Is(err, session.ErrCompactFallback) {
		fmt.Println("summarise with a model:", err)
		return
	}
	fmt.Printf("keep %d messages from %d; summary of about %d tokens\n", len(c.Keep), c.Start, c.SummaryTokens)
	// Output:
	// the context grew by 14320 tokens and the last assistant turn made no tool calls
	// changed: [Current State]
	// keep 2 messages from 0; summary of about 341 tokens
}

func ExampleCompact() {
	notes := "# Current State\n_What is under way_\nHandlers use the cache; metrics next.\n"
	var msgs []session.Message
	for i, text := range []string{"Cache the quotes.", "Cached.", "Now the handlers.", "Handlers done.", "Add metrics.", "Adding them now."} {
		role := llm.RoleUser
		if i%2 == 1 {
			role = llm.RoleAssistant
		}
		msgs = append(msgs, session.Message{ID: fmt.Sprint("m", i), Message: llm.Message{Role: role, Content: []llm.Block{llm.TextBlock(text)}}})
	}
	// The notes cover everything up to m3; keep at least two messages with text.
	c, err := session.Compact(notes, msgs, &session.CompactOptions{LastSummarizedID: "m3", MinTokens: 1, MinTextMessages: 2})
	if err != nil {
		fmt.Println("fall back:", err)
		return
	}
	for _, m := range c.Keep {
		fmt.Println(m.ID, m.Content[0].Text)
	}
	_, err = session.Compact(notes, msgs, &session.CompactOptions{LastSummarizedID: "m3", AutoCompactThreshold: 50})
	fmt.Println(errors.Is(err, session.ErrCompactFallback), err)
	// Output:
	// m4 Add metrics.
	// m5 Adding them now.
	// true session-memory compaction not possible: the compacted conversation would hold about 121 tokens, not under the auto-compact threshold of 50
}
