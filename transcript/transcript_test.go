package transcript

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/memdir/memdir/llm"
)

func readFixture(tb testing.TB, name string) *Transcript {
	tb.Helper()
	t, err := ReadFile(filepath.Join("testdata", name))
	if err != nil {
		tb.Fatal(err)
	}
	return t
}

// summary is a compact view of a message for table comparisons.
type summary struct {
	UUID  string
	Role  llm.Role
	Kind  string // human, tool-result, meta, summary, command, assistant
	Text  string
	Tools []string // tool_use names, or tool_result ids with "!" for errors
}

func summarize(ms []Message) []summary {
	out := make([]summary, len(ms))
	for i, m := range ms {
		s := summary{UUID: short(m.UUID), Role: m.Role}
		switch {
		case m.Role == llm.RoleAssistant:
			s.Kind = "assistant"
			s.Text = m.Text()
		case m.IsToolResult():
			s.Kind = "tool-result"
		case m.IsCompactSummary:
			s.Kind = "summary"
		case m.IsMeta:
			s.Kind = "meta"
		case m.IsHumanPrompt():
			s.Kind = "human"
			s.Text = m.HumanText()
		default:
			s.Kind = "command"
		}
		for _, b := range m.Content {
			switch b.Type {
			case llm.BlockToolUse:
				s.Tools = append(s.Tools, b.ToolName)
			case llm.BlockToolResult:
				id := b.ToolUseID
				if b.IsError {
					id += "!"
				}
				s.Tools = append(s.Tools, id)
			}
		}
		out[i] = s
	}
	return out
}

// short keeps the distinguishing tail of a fixture UUID.
func short(uuid string) string {
	if i := strings.LastIndexByte(uuid, '-'); i >= 0 {
		return uuid[:8] + "…" + uuid[i+9:]
	}
	return uuid
}

func TestSession(t *testing.T) {
	t.Parallel()
	tr := readFixture(t, "session.jsonl")

	want := []summary{
		{UUID: "0b7d2c10…1b01", Role: "user", Kind: "human", Text: "The TestInvoiceSettlement test is flaky again, can you look?"},
		{UUID: "b0000001…0003", Role: "assistant", Kind: "assistant", Text: "Let me read the test first.", Tools: []string{"Read"}},
		{UUID: "c0000001…0001", Role: "user", Kind: "tool-result", Tools: []string{"toolu_01Read"}},
		{UUID: "b0000002…0001", Role: "assistant", Kind: "assistant", Text: "The cutoff is computed in local time; near midnight UTC it lands on the wrong day. I'll pass a UTC clock.", Tools: []string{"Edit"}},
		{UUID: "c0000002…0001", Role: "user", Kind: "tool-result", Tools: []string{"toolu_02Edit"}},
		{UUID: "b0000003…0001", Role: "assistant", Kind: "assistant", Tools: []string{"Bash"}},
		{UUID: "c0000003…0001", Role: "user", Kind: "tool-result", Tools: []string{"toolu_03Bash!"}},
		{UUID: "b0000004…0001", Role: "assistant", Kind: "assistant", Text: "I forgot to define utcMidnight; fixed that and the test now passes 20 times in a row."},
		{UUID: "e0000001…0001", Role: "user", Kind: "meta"},
		{UUID: "e0000001…0002", Role: "user", Kind: "command"},
		{UUID: "e0000001…0003", Role: "user", Kind: "command"},
		{UUID: "0b7d2c10…1b02", Role: "user", Kind: "human", Text: "thanks, also remember that settlement cutoffs are always computed in UTC"},
		{UUID: "b0000005…0001", Role: "assistant", Kind: "assistant", Text: "Noted: settlement cutoffs use UTC."},
	}
	msgs := tr.Messages()
	if diff := cmp.Diff(want, summarize(msgs)); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}

	// The split response: three records, one message, thinking dropped.
	split := msgs[1]
	if diff := cmp.Diff([]string{
		"b0000001-0000-4000-8000-000000000001",
		"b0000001-0000-4000-8000-000000000002",
		"b0000001-0000-4000-8000-000000000003",
	}, split.PartUUIDs); diff != "" {
		t.Errorf("split message parts (-want +got):\n%s", diff)
	}
	if split.ParentUUID != "0b7d2c10-5a4e-4f3b-8c11-6d2e9f0a1b01" || split.Dropped != 1 || split.MessageID != "msg_01AbCdEfGh" || split.RequestID != "req_01XyZ" {
		t.Errorf("split message: parent %s, dropped %d, ids %s/%s", split.ParentUUID, split.Dropped, split.MessageID, split.RequestID)
	}
	if want := (llm.Usage{InputTokens: 1200, OutputTokens: 95, CacheWriteTokens: 5000, Calls: 1}); split.Usage != want {
		t.Errorf("split message usage = %+v, want the last record's %+v", split.Usage, want)
	}
	if got := string(split.Content[1].Input); got != `{"file_path":"/home/lin/src/haulr/internal/billing/settle_test.go"}` {
		t.Errorf("tool_use input = %s", got)
	}
	if want := time.Date(2026, 11, 20, 9, 14, 5, 1e6, time.UTC); !split.Timestamp.Equal(want) {
		t.Errorf("timestamp = %v, want %v", split.Timestamp, want)
	}
	if msgs[2].Content[0].Text == "" || msgs[4].Content[0].Text != "The file /home/lin/src/haulr/internal/billing/settle_test.go has been updated." {
		t.Errorf("tool result texts: %q, %q", msgs[2].Content[0].Text, msgs[4].Content[0].Text)
	}
	// The user record's parent is an attachment, which sits in the chain.
	if msgs[0].ParentUUID != "a0000001-0000-4000-8000-000000000001" {
		t.Errorf("first prompt's parent = %s, want the attachment", msgs[0].ParentUUID)
	}

	if tr.SessionID != "5f0c9a6e-3b7d-4c21-9e55-1a2b3c4d5e6f" || tr.Leaf != "b0000005-0000-4000-8000-000000000001" || tr.Orphan != "" {
		t.Errorf("session %s, leaf %s, orphan %q", tr.SessionID, tr.Leaf, tr.Orphan)
	}
	if len(tr.Skipped) != 0 || tr.Lines != 24 {
		t.Errorf("lines %d, skipped %v; want 24 and none", tr.Lines, tr.Skipped)
	}
	wantTypes := map[string]int{"queue-operation": 1, "file-history-snapshot": 1, "attachment": 2, "user": 9, "assistant": 8, "system": 1, "last-prompt": 1, "custom-title": 1}
	if diff := cmp.Diff(wantTypes, tr.Types); diff != "" {
		t.Errorf("types (-want +got):\n%s", diff)
	}

	// Every response counted once, the inline sidechain's included.
	wantUsage := llm.Usage{InputTokens: 8650, OutputTokens: 426, CacheWriteTokens: 5000, CacheReadTokens: 24200, Calls: 6}
	if got := tr.Usage(); got != wantUsage {
		t.Errorf("Usage() = %+v, want %+v", got, wantUsage)
	}

	last, ok := tr.LastHumanPrompt()
	if !ok || last.HumanText() != "thanks, also remember that settlement cutoffs are always computed in UTC" {
		t.Errorf("LastHumanPrompt = %q, %v", last.HumanText(), ok)
	}
	// Since the last prompt only the final reply's tools count: none.
	if got := tr.RecentTools(); len(got) != 0 {
		t.Errorf("RecentTools after the last prompt = %v, want none", got)
	}
}

func TestSince(t *testing.T) {
	t.Parallel()
	tr := readFixture(t, "session.jsonl")
	tests := []struct {
		name  string
		uuid  string
		first string // short UUID of the first message returned, "" for none
		n     int
		ok    bool
	}{
		{"after a message", "c0000003-0000-4000-8000-000000000001", "b0000004…0001", 6, true},
		{"after the first part of a split message", "b0000001-0000-4000-8000-000000000001", "c0000001…0001", 11, true},
		{"after the last part of a split message", "b0000001-0000-4000-8000-000000000003", "c0000001…0001", 11, true},
		{"after an attachment", "a0000001-0000-4000-8000-000000000002", "b0000002…0001", 10, true},
		{"after a system record", "d0000001-0000-4000-8000-000000000001", "e0000001…0001", 5, true},
		{"after the leaf", "b0000005-0000-4000-8000-000000000001", "", 0, true},
		{"sidechain record is not on the chain", "f0000001-0000-4000-8000-000000000001", "", 0, false},
		{"unknown", "00000000-dead-4000-8000-000000000000", "", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := tr.Since(tt.uuid)
			if ok != tt.ok || len(got) != tt.n {
				t.Fatalf("Since = %d messages, %v; want %d, %v", len(got), ok, tt.n, tt.ok)
			}
			if tt.n > 0 && short(got[0].UUID) != tt.first {
				t.Errorf("first message %s, want %s", short(got[0].UUID), tt.first)
			}
		})
	}
}

func TestRecentTools(t *testing.T) {
	t.Parallel()
	tr := readFixture(t, "session.jsonl")
	// Cut the conversation before the meta records: the last prompt is the
	// first one, after which Read and Edit succeeded and Bash failed.
	b := newBuilder()
	data, err := os.ReadFile("testdata/session.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	for i, line := range strings.Split(string(data), "\n")[:14] {
		b.line(i+1, []byte(line), true)
	}
	cut := b.finish()
	if diff := cmp.Diff([]string{"Read", "Edit"}, cut.RecentTools()); diff != "" {
		t.Errorf("RecentTools (-want +got):\n%s", diff)
	}
	if len(tr.Messages()) <= len(cut.Messages()) {
		t.Error("the cut transcript should be shorter")
	}
}

func TestCompaction(t *testing.T) {
	t.Parallel()
	tr := readFixture(t, "compaction.jsonl")
	msgs := tr.Messages()
	if len(msgs) != 12 {
		t.Fatalf("got %d messages across both compactions, want 12: %v", len(msgs), summarize(msgs))
	}
	bs := tr.Boundaries()
	want := []Boundary{
		{UUID: "22222222-0000-4000-8000-000000000001", LogicalParentUUID: "11111111-0000-4000-8000-000000000006", Timestamp: time.Date(2026, 11, 21, 8, 10, 0, 0, time.UTC), Trigger: "manual", PreTokens: 48211, Index: 6, Line: 7},
		{UUID: "33333333-0000-4000-8000-000000000001", LogicalParentUUID: "22222222-0000-4000-8000-000000000004", Timestamp: time.Date(2026, 11, 21, 9, 40, 0, 0, time.UTC), Trigger: "auto", PreTokens: 160022, Index: 9, Line: 11},
	}
	if diff := cmp.Diff(want, bs); diff != "" {
		t.Errorf("boundaries (-want +got):\n%s", diff)
	}
	since := tr.SinceLastCompaction()
	if diff := cmp.Diff([]summary{
		{UUID: "33333333…0002", Role: "user", Kind: "summary"},
		{UUID: "33333333…0003", Role: "user", Kind: "human", Text: "open the PR"},
		{UUID: "33333333…0004", Role: "assistant", Kind: "assistant", Text: "Opened PR #4812."},
	}, summarize(since)); diff != "" {
		t.Errorf("SinceLastCompaction (-want +got):\n%s", diff)
	}
	if !since[0].IsVisibleInTranscriptOnly || since[0].IsHumanPrompt() {
		t.Error("the compaction summary must be flagged and not count as a human prompt")
	}
	for i, m := range msgs {
		wantC := 0
		switch {
		case i >= 9:
			wantC = 2
		case i >= 6:
			wantC = 1
		}
		if m.Compactions != wantC {
			t.Errorf("message %d: Compactions %d, want %d", i, m.Compactions, wantC)
		}
	}
	// A cursor on a pre-compaction message is still on the chain.
	got, ok := tr.Since("11111111-0000-4000-8000-000000000006")
	if !ok || len(got) != 6 {
		t.Errorf("Since(pre-compaction message) = %d, %v; want 6, true", len(got), ok)
	}
	got, ok = tr.Since("33333333-0000-4000-8000-000000000001")
	if !ok || len(got) != 3 {
		t.Errorf("Since(boundary) = %d, %v; want 3, true", len(got), ok)
	}
}

func TestRewind(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("testdata/rewind.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	lastPrompt := func(leaf string) string {
		return fmt.Sprintf(`{"type":"last-prompt","lastPrompt":"x","leafUuid":%q,"sessionId":"9d3c2b1a-0f1e-4d2c-8b3a-112233445566"}`+"\n", leaf)
	}
	tests := []struct {
		name string
		text string
		want []string // message UUID tails
	}{
		{"newest branch wins", string(data), []string{"0001", "0002", "0005", "0006"}},
		{"last-prompt names the other branch", string(data) + lastPrompt("44444444-0000-4000-8000-000000000004"), []string{"0001", "0002", "0003", "0004"}},
		{"last-prompt naming an ancestor does not cut the chain", string(data) + lastPrompt("44444444-0000-4000-8000-000000000005"), []string{"0001", "0002", "0005", "0006"}},
		{"last-prompt naming an unknown record is ignored", string(data) + lastPrompt("44444444-0000-4000-8000-0000000000aa"), []string{"0001", "0002", "0005", "0006"}},
		{"an earlier last-prompt is stale", lastPrompt("44444444-0000-4000-8000-000000000004") + string(data), []string{"0001", "0002", "0005", "0006"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr, err := Read(strings.NewReader(tt.text))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, m := range tr.Messages() {
				got = append(got, m.UUID[len(m.UUID)-4:])
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("chain (-want +got):\n%s", diff)
			}
		})
	}
	tr, _ := Read(strings.NewReader(string(data)))
	if _, ok := tr.Since("44444444-0000-4000-8000-000000000003"); ok {
		t.Error("Since on the abandoned branch should report false")
	}
	// Both branches cost tokens.
	if u := tr.Usage(); u.Calls != 3 || u.InputTokens != 1800 {
		t.Errorf("Usage() = %+v, want 3 calls and 1800 input tokens", u)
	}
}

func TestMalformed(t *testing.T) {
	t.Parallel()
	tr := readFixture(t, "malformed.jsonl")
	wantSkipped := []struct {
		line   int
		reason string
	}{
		{2, "blank"},
		{3, "invalid JSON"},
		{4, "invalid JSON: not a JSON object"},
		{7, "user record without a message"},
		{10, "user record: content is neither a string nor a list of blocks"},
		{13, "partial last line: invalid JSON"},
	}
	if len(tr.Skipped) != len(wantSkipped) {
		t.Fatalf("skipped %v, want lines %v", tr.Skipped, wantSkipped)
	}
	for i, w := range wantSkipped {
		if s := tr.Skipped[i]; s.Line != w.line || !strings.HasPrefix(s.Reason, w.reason) {
			t.Errorf("skipped[%d] = %d %q, want %d %q…", i, s.Line, s.Reason, w.line, w.reason)
		}
	}
	var got []string
	for _, m := range tr.Messages() {
		got = append(got, m.UUID[len(m.UUID)-4:]+" "+m.Text())
	}
	// The record with broken content and the progress record stay in the
	// chain (they link the last prompt to the first messages) but are not
	// messages.
	if diff := cmp.Diff([]string{"0001 hello there", "0002 Hi! What can I do?", "0005 still there?"}, got); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
	if tr.Lines != 13 || tr.Types["mode"] != 1 || tr.Types["progress"] != 1 || tr.Types["cost-state"] != 1 {
		t.Errorf("lines %d, types %v", tr.Lines, tr.Types)
	}
	if rest, ok := tr.Since("55555555-0000-4000-8000-000000000004"); !ok || len(rest) != 1 {
		t.Errorf("Since(progress record) = %d, %v; want the last prompt", len(rest), ok)
	}
}

func TestHugeLine(t *testing.T) {
	big := strings.Repeat("0123456789abcdef", 5<<20/16) // 5 MiB of prompt text
	rec := func(uuid, parent, text string) string {
		p := "null"
		if parent != "" {
			p = `"` + parent + `"`
		}
		b, _ := json.Marshal(text)
		return fmt.Sprintf(`{"parentUuid":%s,"type":"user","message":{"role":"user","content":%s},"uuid":"%s","timestamp":"2026-11-24T00:00:00.000Z"}`, p, b, uuid)
	}
	input := rec("u1", "", "first") + "\n" + rec("u2", "u1", big) + "\n" + rec("u3", "u2", "after the big one") + "\n"
	tr, err := Read(strings.NewReader(input))
	if err != nil {
		t.Fatal(err)
	}
	msgs := tr.Messages()
	if len(msgs) != 3 || len(msgs[1].Text()) != len(big) || msgs[2].Text() != "after the big one" {
		t.Fatalf("got %d messages (middle %d bytes), want 3 with the 5 MiB one intact", len(msgs), len(msgs[1].Text()))
	}

	// Past the limit the line is skipped and reading goes on.
	old := maxLineBytes
	maxLineBytes = 1 << 20
	t.Cleanup(func() { maxLineBytes = old })
	tr, err = Read(strings.NewReader(input))
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Skipped) != 1 || tr.Skipped[0].Line != 2 || !strings.Contains(tr.Skipped[0].Reason, "longer than") {
		t.Errorf("skipped = %v, want line 2 too long", tr.Skipped)
	}
	if tr.Leaf != "u3" || tr.Orphan != "u2" || len(tr.Messages()) != 1 {
		t.Errorf("leaf %s, orphan %s, %d messages; want u3 alone with u2 missing", tr.Leaf, tr.Orphan, len(tr.Messages()))
	}
}

func TestEdgeInputs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		in       string
		messages int
		skipped  int
	}{
		{"empty", "", 0, 0},
		{"only newlines", "\n\n\n", 0, 3},
		{"crlf line endings", `{"parentUuid":null,"type":"user","message":{"role":"user","content":"hi"},"uuid":"a"}` + "\r\n", 1, 0},
		{"byte order mark", "\uFEFF" + `{"parentUuid":null,"type":"user","message":{"role":"user","content":"hi"},"uuid":"a"}`, 1, 0},
		{"parent cycle", `{"parentUuid":"b","type":"user","message":{"role":"user","content":"x"},"uuid":"a"}` + "\n" + `{"parentUuid":"a","type":"assistant","message":{"role":"assistant","content":"y"},"uuid":"b"}`, 2, 0},
		{"no uuids", `{"type":"user","message":{"role":"user","content":"hi"}}`, 0, 0},
		{"null content", `{"parentUuid":null,"type":"user","message":{"role":"user","content":null},"uuid":"a"}`, 1, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr, err := Read(strings.NewReader(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if len(tr.Messages()) != tt.messages || len(tr.Skipped) != tt.skipped {
				t.Errorf("%d messages, skipped %v; want %d and %d", len(tr.Messages()), tr.Skipped, tt.messages, tt.skipped)
			}
		})
	}
}

type failingReader struct{ data string }

func (r *failingReader) Read(p []byte) (int, error) {
	if r.data == "" {
		return 0, errors.New("disk on fire")
	}
	n := copy(p, r.data)
	r.data = r.data[n:]
	return n, nil
}

func TestReadError(t *testing.T) {
	t.Parallel()
	_, err := Read(&failingReader{data: `{"type":"user"}` + "\n"})
	if err == nil || !strings.Contains(err.Error(), "disk on fire") {
		t.Errorf("Read error = %v, want the reader's error", err)
	}
	_, err = ReadFile(filepath.Join(t.TempDir(), "nope.jsonl"))
	if err == nil || !strings.Contains(err.Error(), "nope.jsonl") || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("ReadFile error = %v, want a not-exist error naming the file", err)
	}
}

func TestStripWrappers(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"plain text", "plain text"},
		{"fix it\n\n<system-reminder>\nfile opened\n</system-reminder>", "fix it"},
		{"<command-name>/remember</command-name>\n<command-message>remember</command-message>\n<command-args>use UTC for cutoffs</command-args>", "use UTC for cutoffs"},
		{"<local-command-stdout>done</local-command-stdout>", ""},
		{"a\n<system-reminder>x</system-reminder>\n\n\n\nb", "a\n\nb"},
		{"two <system-reminder>1</system-reminder> reminders <system-reminder>2</system-reminder> here", "two  reminders  here"},
		{"unclosed <system-reminder> stays", "unclosed <system-reminder> stays"},
		{"<bash-input>ls</bash-input><bash-stdout>a b</bash-stdout><bash-stderr></bash-stderr>", ""},
		{"compare a < b", "compare a < b"},
	}
	for _, tt := range tests {
		if got := StripWrappers(tt.in); got != tt.want {
			t.Errorf("StripWrappers(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
