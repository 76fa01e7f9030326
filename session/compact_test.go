package session_test

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/memdir/memdir/llm"
	"github.com/memdir/memdir/session"
)

// Messages of exact sizes: n tokens is 4n characters.

func textMsg(id string, role llm.Role, tokens int) session.Message {
	return session.Message{ID: id, Message: llm.Message{Role: role, Content: []llm.Block{llm.TextBlock(words(4 * tokens))}}}
}

// callMsg is an assistant message calling tools and saying nothing; each
// call counts tokens.
func callMsg(id string, tokens int, calls ...string) session.Message {
	m := session.Message{ID: id, Message: llm.Message{Role: llm.RoleAssistant}}
	for _, c := range calls {
		in := `{"c":"` + strings.Repeat("x", 4*tokens-8) + `"}`
		m.Content = append(m.Content, llm.Block{Type: llm.BlockToolUse, ToolUseID: c, Input: []byte(in)})
	}
	return m
}

// resultMsg answers calls with results of tokens each.
func resultMsg(id string, tokens int, calls ...string) session.Message {
	m := session.Message{ID: id, Message: llm.Message{Role: llm.RoleUser}}
	for _, c := range calls {
		m.Content = append(m.Content, llm.Block{Type: llm.BlockToolResult, ToolUseID: c, Text: strings.Repeat("y", 4*tokens)})
	}
	return m
}

// chat is n alternating user and assistant text messages of tokens each,
// ids m0, m1, …
func chat(n, tokens int) []session.Message {
	var out []session.Message
	for i := range n {
		role := llm.RoleUser
		if i%2 == 1 {
			role = llm.RoleAssistant
		}
		out = append(out, textMsg(fmt.Sprintf("m%d", i), role, tokens))
	}
	return out
}

func cat(parts ...[]session.Message) []session.Message {
	var out []session.Message
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

func one(ms ...session.Message) []session.Message { return ms }

// someNotes are notes with content.
var someNotes = strings.Replace(session.DefaultTemplate, stateLine, stateLine+"Wiring the quotes cache into the handlers.\n", 1)

func TestCompactBoundaries(t *testing.T) {
	// Tool traffic with little text: ten call/result pairs of 5,010
	// tokens between a short chat and a final answer.
	var pairs []session.Message
	for i := range 10 {
		pairs = append(pairs, callMsg(fmt.Sprintf("c%d", i), 10, fmt.Sprintf("t%d", i)), resultMsg(fmt.Sprintf("r%d", i), 5000, fmt.Sprintf("t%d", i)))
	}
	toolHeavy := cat(chat(4, 1000), pairs, one(textMsg("final", llm.RoleAssistant, 100)))

	type got struct {
		Start, KeptTokens, KeptTextMessages int
		Resumed                             bool
	}
	tests := []struct {
		name     string
		messages []session.Message
		opts     session.CompactOptions
		want     got
	}{
		{
			name:     "reaches back to 10k tokens",
			messages: chat(20, 1000),
			opts:     session.CompactOptions{LastSummarizedID: "m14"},
			want:     got{Start: 10, KeptTokens: 10000, KeptTextMessages: 10},
		},
		{
			name:     "already enough after the summarised message",
			messages: chat(40, 1000),
			opts:     session.CompactOptions{LastSummarizedID: "m19"},
			want:     got{Start: 20, KeptTokens: 20000, KeptTextMessages: 20},
		},
		{
			name: "reaches back for five messages with text",
			messages: cat(chat(10, 500), one(
				callMsg("c1", 10, "t1"), resultMsg("r1", 6000, "t1"),
				callMsg("c2", 10, "t2"), resultMsg("r2", 6000, "t2"),
				textMsg("done", llm.RoleAssistant, 100))),
			opts: session.CompactOptions{LastSummarizedID: "m9"},
			want: got{Start: 6, KeptTokens: 12120 + 2000, KeptTextMessages: 5},
		},
		{
			name:     "the 40k cap stops the search, and the cut result keeps its call",
			messages: toolHeavy,
			opts:     session.CompactOptions{LastSummarizedID: "r9"},
			// final (100) + 7 pairs (35,070) + r2 (5,000) crosses 40k;
			// c2 comes along with its result.
			want: got{Start: 8, KeptTokens: 100 + 8*5010, KeptTextMessages: 1},
		},
		{
			name:     "messages after the summarised one are kept whatever their size",
			messages: toolHeavy,
			opts:     session.CompactOptions{LastSummarizedID: "m3"},
			want:     got{Start: 4, KeptTokens: 100 + 10*5010, KeptTextMessages: 1},
		},
		{
			name: "a kept tool result brings its call along",
			messages: cat(chat(8, 1000), one(
				callMsg("c1", 10, "t1"), resultMsg("r1", 3000, "t1"),
				callMsg("c2", 10, "t2"), resultMsg("r2", 3000, "t2"),
				textMsg("done", llm.RoleAssistant, 100))),
			opts: session.CompactOptions{LastSummarizedID: "r2", MinTokens: 6000, MinTextMessages: 1},
			// The search stops at r1 (6,110 tokens), which needs c1.
			want: got{Start: 8, KeptTokens: 6120, KeptTextMessages: 1},
		},
		{
			name: "parallel calls split over two assistant records",
			messages: cat(chat(6, 1000), one(
				callMsg("c1", 10, "t1"), callMsg("c2", 10, "t2"),
				resultMsg("r12", 2000, "t1", "t2"),
				textMsg("done", llm.RoleAssistant, 100))),
			opts: session.CompactOptions{LastSummarizedID: "r12", MinTokens: 1000, MinTextMessages: 1},
			want: got{Start: 6, KeptTokens: 4120, KeptTextMessages: 1},
		},
		{
			name: "never past the last compaction",
			messages: cat(chat(10, 1000), compacted(1,
				textMsg("summary", llm.RoleUser, 500),
				textMsg("a", llm.RoleUser, 1000), textMsg("b", llm.RoleAssistant, 1000), textMsg("c", llm.RoleUser, 1000))),
			opts: session.CompactOptions{LastSummarizedID: "a"},
			want: got{Start: 10, KeptTokens: 3500, KeptTextMessages: 4},
		},
		{
			name: "a tool call before the last compaction is out of reach",
			messages: cat(chat(4, 1000), one(callMsg("c1", 10, "t1")), compacted(1,
				resultMsg("r1", 100, "t1"), textMsg("a", llm.RoleAssistant, 100))),
			opts: session.CompactOptions{LastSummarizedID: "r1"},
			want: got{Start: 5, KeptTokens: 200, KeptTextMessages: 1},
		},
		{
			name:     "resumed session: no summarised message, keep the minimum",
			messages: chat(20, 1000),
			want:     got{Start: 10, KeptTokens: 10000, KeptTextMessages: 10, Resumed: true},
		},
		{
			name:     "the summarised message is the last one",
			messages: chat(20, 1000),
			opts:     session.CompactOptions{LastSummarizedID: "m19"},
			want:     got{Start: 10, KeptTokens: 10000, KeptTextMessages: 10},
		},
		{
			name:     "configured limits",
			messages: chat(20, 1000),
			opts:     session.CompactOptions{LastSummarizedID: "m19", MinTokens: 3000, MinTextMessages: 2, MaxTokens: 100000},
			want:     got{Start: 17, KeptTokens: 3000, KeptTextMessages: 3},
		},
		{
			name:     "a short conversation is kept whole",
			messages: chat(4, 100),
			opts:     session.CompactOptions{LastSummarizedID: "m1"},
			want:     got{Start: 0, KeptTokens: 400, KeptTextMessages: 4},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := session.Compact(someNotes, tt.messages, &tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got{c.Start, c.KeptTokens, c.KeptTextMessages, c.Resumed}); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.messages[c.Start:], c.Keep); diff != "" {
				t.Errorf("Keep is not messages[Start:] (-want +got):\n%s", diff)
			}
			if c.Start < c.Floor {
				t.Errorf("start %d before floor %d", c.Start, c.Floor)
			}
			if o := orphans(c.Keep); len(o) > 0 && tt.messages[c.Floor].Compactions == 0 {
				t.Errorf("kept results without their calls: %v", o)
			}
			if c.Tokens != c.KeptTokens+c.SummaryTokens || c.SummaryTokens == 0 {
				t.Errorf("tokens %d = kept %d + summary %d?", c.Tokens, c.KeptTokens, c.SummaryTokens)
			}
		})
	}
}

// orphans returns the tool results in ms whose call is not in ms.
func orphans(ms []session.Message) []string {
	calls := map[string]bool{}
	var out []string
	for _, m := range ms {
		for _, b := range m.Content {
			if b.Type == llm.BlockToolUse {
				calls[b.ToolUseID] = true
			}
			if b.Type == llm.BlockToolResult && !calls[b.ToolUseID] {
				out = append(out, b.ToolUseID)
			}
		}
	}
	return out
}

// Every possible summarised message in the fixture: the kept messages
// never start inside a tool pair or before the compaction, and always
// include everything after the summarised message.
func TestCompactFixtureInvariants(t *testing.T) {
	msgs := fixtureMessages(t)
	for _, limits := range []session.CompactOptions{{}, {MinTokens: 1500, MinTextMessages: 2}, {MinTokens: 500, MinTextMessages: 1, MaxTokens: 1000}} {
		for i, m := range msgs {
			opts := limits
			opts.LastSummarizedID = m.ID
			c, err := session.Compact(someNotes, msgs, &opts)
			if m.Compactions == 0 {
				var fe *session.CompactFallbackError
				if !errors.As(err, &fe) || fe.Reason != session.FallbackNotFound {
					t.Errorf("summarised id %s before the compaction: err = %v, want %s", m.ID, err, session.FallbackNotFound)
				}
				continue
			}
			if err != nil {
				t.Fatalf("summarised %d: %v", i, err)
			}
			if c.Floor != 16 || c.Start < c.Floor || c.Start > i+1 {
				t.Errorf("summarised %d, limits %+v: start %d, floor %d", i, limits, c.Start, c.Floor)
			}
			if o := orphans(c.Keep); len(o) > 0 {
				t.Errorf("summarised %d, limits %+v: kept results without calls: %v", i, limits, o)
			}
		}
	}
}

func TestCompactFallbacks(t *testing.T) {
	user := "# Goal\n_what we are doing_\n- nothing yet\n"
	msgs := chat(20, 1000)
	tests := []struct {
		name, notes string
		messages    []session.Message
		opts        session.CompactOptions
		reason      string
	}{
		{"no notes", "", msgs, session.CompactOptions{}, session.FallbackNoNotes},
		{"blank notes", " \n\n", msgs, session.CompactOptions{}, session.FallbackNoNotes},
		{"default template", session.DefaultTemplate, msgs, session.CompactOptions{}, session.FallbackTemplate},
		{"user template", user, msgs, session.CompactOptions{Template: user}, session.FallbackTemplate},
		{"headings and italics only", "# A\n_a_\n\n# B\n_b_\n", msgs, session.CompactOptions{}, session.FallbackTemplate},
		{"summarised message unknown", someNotes, msgs, session.CompactOptions{LastSummarizedID: "gone"}, session.FallbackNotFound},
		{"summarised message compacted away", someNotes, cat(chat(4, 10), compacted(1, textMsg("x", llm.RoleUser, 10))), session.CompactOptions{LastSummarizedID: "m2"}, session.FallbackNotFound},
		{"over the auto-compact threshold", someNotes, msgs, session.CompactOptions{LastSummarizedID: "m19", AutoCompactThreshold: 10100}, session.FallbackOverThreshold},
		{"no messages", someNotes, nil, session.CompactOptions{}, session.FallbackEmptyMessages},
	}
	for _, tt := range tests {
		c, err := session.Compact(tt.notes, tt.messages, &tt.opts)
		var fe *session.CompactFallbackError
		if c != nil || !errors.Is(err, session.ErrCompactFallback) || !errors.As(err, &fe) || fe.Reason != tt.reason {
			t.Errorf("%s: %v, %v; want fallback %s", tt.name, c, err, tt.reason)
		}
	}
	// Just under the threshold is fine.
	c, err := session.Compact(someNotes, msgs, &session.CompactOptions{LastSummarizedID: "m19", AutoCompactThreshold: 20000})
	if err != nil || c.Tokens >= 20000 {
		t.Errorf("under the threshold: %+v, %v", c, err)
	}
}

func TestTruncateSessionNotes(t *testing.T) {
	var long strings.Builder
	for i := range 100 {
		fmt.Fprintf(&long, "- step %03d: %s\n", i, words(90))
	}
	notes := strings.Replace(someNotes, worklogLine, worklogLine+long.String(), 1)
	got, cut := session.TruncateNotes(notes)
	if diff := cmp.Diff([]string{"# Worklog"}, cut); diff != "" {
		t.Errorf("cut sections (-want +got):\n%s", diff)
	}
	_, before := session.ParseNotes(notes)
	_, after := session.ParseNotes(got)
	if session.CheckStructure(notes, got) != "" {
		t.Errorf("truncation broke the structure: %s", session.CheckStructure(notes, got))
	}
	for i := range after {
		if after[i].Heading == "# Worklog" {
			body := after[i].Body
			if n := utf8.RuneCountInString(body); n > 8000+100 || !strings.HasSuffix(body, "[… the rest of this section was cut for length …]") || !strings.Contains(body, "- step 070") || strings.Contains(body, "- step 090") {
				t.Errorf("worklog cut to %d characters:\n…%s", n, body[len(body)-300:])
			}
			continue
		}
		if after[i].Body != before[i].Body {
			t.Errorf("section %s changed", after[i].Heading)
		}
	}

	// Notes within budget come back as they were.
	for _, n := range []string{someNotes, "# A\n_a_\nx\n", "preamble\n\n# A\n_a_\n", "# A\n", ""} {
		if got, cut := session.TruncateNotes(n); got != n || cut != nil {
			t.Errorf("TruncateNotes(%q) = %q, %v", n, got, cut)
		}
	}
	// One long paragraph is cut, not dropped.
	para := "# A\n_a_\n" + words(20000) + "\n"
	got, _ = session.TruncateNotes(para)
	if n := utf8.RuneCountInString(got); n < 7900 || n > 8200 {
		t.Errorf("a one-line section came out at %d characters", n)
	}
}

func TestCompactSummary(t *testing.T) {
	notes := strings.Replace(someNotes, worklogLine, worklogLine+words(9000)+"\n", 1)
	c, err := session.Compact(notes, chat(20, 1000), &session.CompactOptions{
		LastSummarizedID: "m14", NotesPath: "/home/lin/.claude/projects/x/s/session-memory/summary.md", TranscriptPath: "/home/lin/.claude/projects/x/s.jsonl",
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{
		"<session_notes>\n# Session Title\n",
		"Wiring the quotes cache into the handlers.",
		"</session_notes>",
		"Some sections of the notes were cut for length. The full notes are in /home/lin/.claude/projects/x/s/session-memory/summary.md.",
		"the full transcript is in /home/lin/.claude/projects/x/s.jsonl",
		"The most recent messages follow as they were.",
	} {
		if !strings.Contains(c.Summary, s) {
			t.Errorf("summary lacks %q", s)
		}
	}
	if strings.Contains(c.Summary, words(9000)) || len(c.Truncated) != 1 {
		t.Errorf("summary holds the uncut section (truncated %v)", c.Truncated)
	}
}

func TestSessionNotesCompact(t *testing.T) {
	w := newSessionWorld(t)
	n := w.open(t, "s1")
	msgs := chat(20, 1000)
	if _, err := n.Compact(msgs, nil); !errors.Is(err, session.ErrCompactFallback) {
		t.Errorf("no notes: %v", err)
	}
	if _, err := n.Ensure(); err != nil {
		t.Fatal(err)
	}
	if _, err := n.Compact(msgs, nil); !errors.Is(err, session.ErrCompactFallback) {
		t.Errorf("template notes: %v", err)
	}
	writeFile(t, n.Path(), someNotes)
	writeFile(t, filepath.Join(n.Dir(), session.StateFile), `{"last_summarized_message_id":"m14"}`)
	c, err := n.Compact(msgs, &session.CompactOptions{LastSummarizedID: "ignored", MinTokens: 2000})
	if err != nil {
		t.Fatal(err)
	}
	if c.Start != 15 || c.Resumed {
		t.Errorf("start %d, resumed %v; want 15 from the state's summarised id", c.Start, c.Resumed)
	}
}

func FuzzSessionNotes(f *testing.F) {
	f.Add(session.DefaultTemplate)
	f.Add(someNotes)
	f.Add("pre\r\n# A  \r\n_a_\r\nbody\r\n# B\n\n_b_\n")
	f.Add("# A\n" + strings.Repeat("x", 9000))
	f.Add("#\n# \n_\n__\n# _x_")
	f.Fuzz(func(t *testing.T, notes string) {
		if session.CheckStructure(notes, notes) != "" {
			t.Fatalf("notes differ from themselves: %s", session.CheckStructure(notes, notes))
		}
		if !session.IsTemplate(notes, notes) {
			t.Fatal("notes are not their own template")
		}
		_, before := session.ParseNotes(notes)
		got, cut := session.TruncateNotes(notes)
		_, after := session.ParseNotes(got)
		if len(after) != len(before) {
			t.Fatalf("truncation turned %d sections into %d", len(before), len(after))
		}
		for i := range after {
			if after[i].Heading != before[i].Heading {
				t.Fatalf("heading %q became %q", before[i].Heading, after[i].Heading)
			}
			if n := utf8.RuneCountInString(after[i].Body); n > 8000+60 {
				t.Fatalf("section %q is %d characters after truncation", after[i].Heading, n)
			}
			if len(cut) == 0 && after[i].Body != before[i].Body {
				t.Fatalf("uncut section %q changed", after[i].Heading)
			}
		}
	})
}

func FuzzCheckSessionID(f *testing.F) {
	for _, s := range []string{"5d0c9a3e-41b7-4c2a-9e55-0f1e2d3c4b5a", "..", "a/b", "%2e%2e", "con", "a\x00", " ", "x.jsonl"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, id string) {
		if session.CheckID(id) != nil {
			return
		}
		p := filepath.Join("/base", "projects", "p", id, "session-memory")
		if filepath.Dir(filepath.Dir(p)) != filepath.Join("/base", "projects", "p") || filepath.Base(filepath.Dir(p)) != id {
			t.Fatalf("accepted id %q leaves its directory: %s", id, p)
		}
	})
}

// BenchmarkCompact measures the keep search on long sessions of
// tool-heavy turns, where it walks back furthest.
func BenchmarkCompact(b *testing.B) {
	for _, n := range []int{200, 2000, 20000} {
		var msgs []session.Message
		for i := range n / 4 {
			id := fmt.Sprint(i)
			msgs = append(msgs, textMsg("u"+id, llm.RoleUser, 20), callMsg("c"+id, 10, "t"+id), resultMsg("r"+id, 30, "t"+id), textMsg("a"+id, llm.RoleAssistant, 5))
		}
		opts := &session.CompactOptions{LastSummarizedID: msgs[len(msgs)/2].ID}
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			var kept int
			for b.Loop() {
				c, err := session.Compact(someNotes, msgs, opts)
				if err != nil {
					b.Fatal(err)
				}
				kept = len(c.Keep)
			}
			b.ReportMetric(float64(kept), "kept-msgs")
		})
	}
}

// BenchmarkDecide measures the threshold check a host makes after every
// model response.
func BenchmarkDecide(b *testing.B) {
	for _, n := range []int{200, 2000, 20000} {
		var msgs []session.Message
		for i := range n / 4 {
			id := fmt.Sprint(i)
			msgs = append(msgs, smUser("u"+id, words(200)), smAssistant("a"+id, "", 1000+i*10, "t"+id), smResults("r"+id, 400, "t"+id), smAssistant("f"+id, "done", 1000+i*10+200))
		}
		st := session.State{Initialized: true, LastMessageID: msgs[len(msgs)/2].ID}
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for b.Loop() {
				session.Decide(st, msgs, session.Thresholds{})
			}
		})
	}
}
