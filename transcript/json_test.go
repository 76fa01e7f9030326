package transcript

import (
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/llm"
)

func TestReadMessagesJSON(t *testing.T) {
	t.Parallel()
	tr := readFixture(t, "messages.json")
	if tr.Format != FormatJSON {
		t.Errorf("format %q, want json", tr.Format)
	}
	want := []llm.Message{
		{Role: "user", Content: []llm.Block{llm.TextBlock("Why does TestInvoiceSettlement fail near midnight?")}},
		{Role: "assistant", Content: []llm.Block{
			llm.TextBlock("Let me check the cutoff."),
			{Type: llm.BlockToolUse, ToolUseID: "toolu_j1", ToolName: "Read", Input: json.RawMessage(`{"file_path": "internal/billing/settle.go"}`)},
		}},
		{Role: "user", Content: []llm.Block{{Type: llm.BlockToolResult, ToolUseID: "toolu_j1", Text: "func settlementCutoff(now time.Time) time.Time {"}}},
		{Role: "assistant", Content: []llm.Block{llm.TextBlock("It truncates to the local day; use UTC.")}},
	}
	msgs := tr.Messages()
	var got []llm.Message
	for _, m := range msgs {
		got = append(got, m.Message)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
	if msgs[1].Dropped != 1 || msgs[1].UUID != "json-2" || msgs[1].ParentUUID != "json-1" || tr.Leaf != "json-4" {
		t.Errorf("message 2: dropped %d, uuid %s, parent %s; leaf %s", msgs[1].Dropped, msgs[1].UUID, msgs[1].ParentUUID, tr.Leaf)
	}
	if !msgs[2].IsToolResult() || msgs[0].IsToolResult() {
		t.Error("tool result detection is wrong")
	}
	if rest, ok := tr.Since("json-2"); !ok || len(rest) != 2 {
		t.Errorf("Since(json-2) = %d, %v; want 2, true", len(rest), ok)
	}
	last, ok := tr.LastHumanPrompt()
	if !ok || last.UUID != "json-1" {
		t.Errorf("LastHumanPrompt = %s, %v; want json-1", last.UUID, ok)
	}
	if diff := cmp.Diff([]string{"Read"}, tr.RecentTools()); diff != "" {
		t.Errorf("RecentTools (-want +got):\n%s", diff)
	}
}

func TestReadMessagesJSONErrors(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, in, want string }{
		{"not a list", `{"role":"user"}`, "decode message list"},
		{"truncated", `[{"role":"user","content":"hi"}`, "decode message list"},
		{"trailing data", `[] []`, "unexpected data after the list"},
		{"bad role", `[{"role":"user","content":"a"},{"role":"tool","content":"b"}]`, `message 2: role "tool"`},
		{"bad content", `[{"role":"user","content":42}]`, "message 1: content is neither"},
		{"bad element", `[17]`, "message 1:"},
		{"bad tool result", `[{"role":"user","content":[{"type":"tool_result","tool_use_id":"x","content":7}]}]`, "message 1: tool_result x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ReadMessagesJSON(strings.NewReader(tt.in))
			if err == nil || !strings.Contains(err.Error(), tt.want) || !errors.Is(err, memdir.ErrInvalid) {
				t.Errorf("error = %v, want ErrInvalid containing %q", err, tt.want)
			}
		})
	}
}

func TestDetect(t *testing.T) {
	t.Parallel()
	tests := []struct {
		head string
		want Format
	}{
		{`{"type":"user"}`, FormatJSONL},
		{"  \n\t{", FormatJSONL},
		{"\uFEFF[", FormatJSON},
		{`[{"role":"user"}]`, FormatJSON},
		{"", FormatJSONL},
		{"# notes", ""},
		{"\x00\x01binary", ""},
	}
	for _, tt := range tests {
		if got := Detect([]byte(tt.head)); got != tt.want {
			t.Errorf("Detect(%q) = %q, want %q", tt.head, got, tt.want)
		}
	}
}

func TestReadAny(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]Format{"session.jsonl": FormatJSONL, "messages.json": FormatJSON} {
		f, err := os.Open("testdata/" + name)
		if err != nil {
			t.Fatal(err)
		}
		tr, err := ReadAny(f)
		f.Close()
		if err != nil || tr.Format != want || len(tr.Messages()) == 0 {
			t.Errorf("ReadAny(%s) = %v, %v", name, tr, err)
		}
	}
	_, err := ReadAny(strings.NewReader("---\nname: not a transcript\n---\n"))
	if err == nil || !errors.Is(err, memdir.ErrInvalid) || !strings.Contains(err.Error(), "unrecognised transcript format") {
		t.Errorf("ReadAny(markdown) error = %v", err)
	}
	path := t.TempDir() + "/notes.md"
	if err := os.WriteFile(path, []byte("# not JSON"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadFile(path); err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("ReadFile error = %v, want it to name %s", err, path)
	}
}

// FuzzParseLine feeds arbitrary lines to the record parser and the
// builder: they must never panic, and a line that is not a JSON object is
// always reported as skipped.
func FuzzParseLine(f *testing.F) {
	data, err := os.ReadFile("testdata/session.jsonl")
	if err != nil {
		f.Fatal(err)
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		f.Add([]byte(line))
	}
	f.Add([]byte(`{"type":"user","message":{"content":[{"type":"tool_result","content":[{"type":"text"}]}]},"uuid":"x","parentUuid":"x"}`))
	f.Add([]byte(`{"type":"system","subtype":"compact_boundary","uuid":"b","logicalParentUuid":"b"}`))
	f.Add([]byte(`{"type":"assistant","message":{"id":"m","content":"x","usage":{"input_tokens":-1}},"uuid":"u"}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		b := newBuilder()
		b.line(1, line, true)
		b.line(2, line, false) // the same line again, as a cut-short last line
		tr := b.finish()
		_, err := parseRecord(line)
		if err != nil && len(tr.Skipped) == 0 && len(line) > 0 {
			t.Fatalf("unparsable line %q not reported", line)
		}
		for _, m := range tr.Messages() {
			if m.Role != llm.RoleUser && m.Role != llm.RoleAssistant {
				t.Fatalf("message with role %q", m.Role)
			}
			_ = m.HumanText()
		}
		tr.LastHumanPrompt()
		tr.RecentTools()
		tr.SinceLastCompaction()
	})
}

// FuzzRead reads arbitrary multi-line input: no panic, every message is on
// the chain (Since of its UUID works), and the line count adds up.
func FuzzRead(f *testing.F) {
	// Short seeds: the fixtures are covered by the unit tests, and small
	// inputs keep the fuzzer's mutations meaningful.
	for _, seed := range []string{
		`{"parentUuid":null,"type":"user","message":{"role":"user","content":"hi"},"uuid":"a"}` + "\n" +
			`{"parentUuid":"a","type":"assistant","message":{"id":"m","role":"assistant","content":[{"type":"tool_use","id":"t","name":"Read","input":{}}]},"requestId":"r","uuid":"b"}` + "\n" +
			`{"parentUuid":"b","type":"assistant","message":{"id":"m","role":"assistant","content":[{"type":"text","text":"x"}]},"requestId":"r","uuid":"c"}` + "\n" +
			`{"parentUuid":"c","type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":"ok"}]},"uuid":"d"}`,
		`{"parentUuid":null,"logicalParentUuid":"z","type":"system","subtype":"compact_boundary","uuid":"b"}` + "\n" +
			`{"parentUuid":"b","type":"user","isCompactSummary":true,"message":{"role":"user","content":"summary"},"uuid":"s"}` + "\n" +
			`{"type":"last-prompt","leafUuid":"b"}` + "\n\n" + `{"type":"user"`,
		`{"parentUuid":"x","type":"user","message":{"role":"user","content":"<system-reminder>r</system-reminder>q"},"uuid":"y","isSidechain":true}` + "\n" + `[]`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		tr, err := Read(strings.NewReader(string(data)))
		if err != nil {
			t.Fatal(err)
		}
		if want := strings.Count(string(data), "\n"); tr.Lines < want || tr.Lines > want+1 {
			t.Fatalf("Lines = %d for %d newlines", tr.Lines, want)
		}
		msgs := tr.Messages()
		for i, m := range msgs {
			rest, ok := tr.Since(m.UUID)
			if !ok || len(rest) != len(msgs)-i-1 {
				t.Fatalf("Since(message %d) = %d, %v; want %d", i, len(rest), ok, len(msgs)-i-1)
			}
			if m.UUID == "" || len(m.PartUUIDs) == 0 || m.PartUUIDs[len(m.PartUUIDs)-1] != m.UUID {
				t.Fatalf("message %d: UUID %q, parts %v", i, m.UUID, m.PartUUIDs)
			}
		}
		for _, bd := range tr.Boundaries() {
			if bd.Index < 0 || bd.Index > len(msgs) {
				t.Fatalf("boundary index %d out of range", bd.Index)
			}
		}
	})
}
