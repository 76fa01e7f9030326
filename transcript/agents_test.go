package transcript

import (
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The fixtures are session files Codex CLI 0.169.0 and Gemini CLI 0.61.0
// wrote for one prompt that made the model write notes.txt with a tool
// call and then answer (memdirtest's fake model), with paths replaced and
// long instruction texts shortened.

func TestReadCodex(t *testing.T) {
	t.Parallel()
	tr := readFixture(t, "codex-rollout.jsonl")
	if tr.Format != FormatCodex || tr.SessionID != "01a23462-37b8-7150-8109-0132c768c250" || len(tr.Skipped) != 0 {
		t.Fatalf("format %q, session %q, skipped %v", tr.Format, tr.SessionID, tr.Skipped)
	}
	want := []summary{
		{UUID: "line-9", Role: "user", Kind: "human", Text: "Please write a notes file."},
		{UUID: "line-12", Role: "assistant", Kind: "assistant", Tools: []string{"apply_patch"}},
		{UUID: "line-15", Role: "user", Kind: "tool-result", Tools: []string{"call_1"}},
		{UUID: "line-18", Role: "assistant", Kind: "assistant", Text: "All done: notes.txt is written."},
	}
	msgs := tr.Messages()
	if diff := cmp.Diff(want, summarizeIDs(msgs)); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
	if got := string(msgs[1].Content[0].Input); !strings.Contains(got, `"input":"*** Begin Patch\n*** Add File: notes.txt`) {
		t.Errorf("apply_patch input = %s", got)
	}
	if !strings.Contains(msgs[2].Content[0].Text, "Success. Updated the following files") || msgs[3].Model != "gpt-5.5" {
		t.Errorf("tool result %q, model %q", msgs[2].Content[0].Text, msgs[3].Model)
	}
	if rest, ok := tr.Since("line-12"); !ok || len(rest) != 2 || tr.Leaf != "line-18" {
		t.Errorf("Since(line-12) = %d messages, %v; leaf %s", len(rest), ok, tr.Leaf)
	}
	if tr.Types["response_item/message"] != 6 || tr.Types["event_msg"] == 0 {
		t.Errorf("types %v", tr.Types)
	}
}

func TestReadCodexMalformed(t *testing.T) {
	t.Parallel()
	in := strings.Join([]string{
		`{"timestamp":"2026-12-02T01:33:01.793Z","type":"session_meta","payload":{"id":"s1"}}`,
		``,
		`not json`,
		`{"type":"response_item","payload":"a string"}`,
		`{"type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"<environment_context>cwd</environment_context>"},{"type":"input_text","text":"fix the build"}]}}`,
		`{"type":"response_item","payload":{"type":"message","role":"developer","content":[{"type":"input_text","text":"hook context"}]}}`,
		`{"type":"response_item","payload":{"type":"function_call","name":"exec_command","arguments":"{\"cmd\":\"make\"}","call_id":"c1"}}`,
		`{"type":"response_item","payload":{"type":"function_call_output","call_id":"c1","output":{"content":"ok","success":true}}}`,
		`{"type":"response_item","payload":{"type":"reasoning","summary":[]}}`,
		`{"type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Fixed."}]}}`,
		`{"type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_te`,
	}, "\n")
	tr, err := ReadCodex(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	var skipped []string
	for _, s := range tr.Skipped {
		skipped = append(skipped, s.Reason[:min(len(s.Reason), 20)])
	}
	if diff := cmp.Diff([]string{"blank", "invalid JSON: not a ", "partial last line: i"}, skipped); diff != "" {
		t.Errorf("skipped (-want +got):\n%s", diff)
	}
	want := []summary{
		{UUID: "line-5", Role: "user", Kind: "human", Text: "fix the build"},
		{UUID: "line-7", Role: "assistant", Kind: "assistant", Tools: []string{"exec_command"}},
		{UUID: "line-8", Role: "user", Kind: "tool-result", Tools: []string{"c1"}},
		{UUID: "line-10", Role: "assistant", Kind: "assistant", Text: "Fixed."},
	}
	if diff := cmp.Diff(want, summarizeIDs(tr.Messages())); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
	if m := tr.Messages(); string(m[1].Content[0].Input) != `{"cmd":"make"}` || m[2].Content[0].Text != "ok" {
		t.Errorf("call input %s, output %q", m[1].Content[0].Input, m[2].Content[0].Text)
	}
}

func TestReadGemini(t *testing.T) {
	t.Parallel()
	tr := readFixture(t, "gemini-chat.jsonl")
	if tr.Format != FormatGemini || tr.SessionID != "3f0eca61-e891-4f34-8432-8350afa57646" || len(tr.Skipped) != 0 {
		t.Fatalf("format %q, session %q, skipped %v", tr.Format, tr.SessionID, tr.Skipped)
	}
	// The session context and the hook context are not the user's words;
	// the reply line written twice (the second time with its tool call)
	// is one message.
	want := []summary{
		{UUID: "c0214e79-8e8f-47c7-9b93-e74ed4eec2fa", Role: "user", Kind: "human", Text: "Please write a notes file."},
		{UUID: "3a190727-d924-451b-8731-93cf6542c9e8", Role: "assistant", Kind: "assistant", Tools: []string{"write_file"}},
		{UUID: "4967b5e7-01a0-488c-bb2c-85f62784fa36", Role: "user", Kind: "tool-result", Tools: []string{"write_file__write_file_1796175175078_0"}},
		{UUID: "fbb17307-9996-45af-b6b9-e3dec5b0cb59", Role: "assistant", Kind: "assistant", Text: "All done: notes.txt is written."},
	}
	if diff := cmp.Diff(want, summarizeIDs(tr.Messages())); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
	if rest, ok := tr.Since("4967b5e7-01a0-488c-bb2c-85f62784fa36"); !ok || len(rest) != 1 {
		t.Errorf("Since(tool result) = %d messages, %v", len(rest), ok)
	}
}

func TestReadGeminiMalformed(t *testing.T) {
	t.Parallel()
	in := strings.Join([]string{
		`{"sessionId":"g1","projectHash":"ab","startTime":"2026-12-02T01:32:54.963Z","kind":"main"}`,
		`{"id":"u1","type":"user","content":[{"text":"first"}]}`,
		`{"$set":{"messages":[{"id":"u0","type":"user","content":[{"text":"<session_context>ctx</session_context>"}]}]}}`,
		`[1,2]`,
		`{"id":"u2","type":"user","content":"typed as a string <hook_context>x</hook_context>"}`,
		`{"id":"i1","type":"info","content":"Request cancelled."}`,
		`{"type":"gemini","content":"no id"}`,
		`{"id":"g2","type":"gemini","content":"draft"}`,
		`{"id":"g2","type":"gemini","content":"final answer"}`,
		`{"id":"u3","type":"user","content":[{"te`,
	}, "\n")
	tr, err := ReadGemini(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Skipped) != 2 || tr.Skipped[0].Line != 4 || !strings.HasPrefix(tr.Skipped[1].Reason, "partial last line") {
		t.Errorf("skipped %v", tr.Skipped)
	}
	// $set replaced u1 with the session context alone, which is no message.
	want := []summary{
		{UUID: "u2", Role: "user", Kind: "human", Text: "typed as a string"},
		{UUID: "line-7", Role: "assistant", Kind: "assistant", Text: "no id"},
		{UUID: "g2", Role: "assistant", Kind: "assistant", Text: "final answer"},
	}
	if diff := cmp.Diff(want, summarizeIDs(tr.Messages())); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
	if tr.SessionID != "g1" || tr.Types["info"] != 1 || tr.Types["$set"] != 1 {
		t.Errorf("session %q, types %v", tr.SessionID, tr.Types)
	}
}

func TestDetectAgentFormats(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]Format{
		"codex-rollout.jsonl": FormatCodex, "gemini-chat.jsonl": FormatGemini,
		"session.jsonl": FormatJSONL, "compaction.jsonl": FormatJSONL, "rewind.jsonl": FormatJSONL,
	} {
		data, err := os.ReadFile("testdata/" + name)
		if err != nil {
			t.Fatal(err)
		}
		if got := Detect(data[:min(len(data), 300)]); got != want {
			t.Errorf("Detect(%s) = %q, want %q", name, got, want)
		}
	}
	for head, want := range map[string]Format{
		`{"id":"u1","type":"user","content":[]}`:                  FormatGemini,
		`{"type":"user","uuid":"a","message":{}}`:                 FormatJSONL,
		`{"timestamp":"t","type":"session_meta","payload":{"base`: FormatCodex,
		`{"$set":{"lastUpdated":"t"}}`:                            FormatGemini,
		`{"type":"summary","summary":"s","leafUuid":"x"}`:         FormatJSONL,
	} {
		if got := Detect([]byte(head)); got != want {
			t.Errorf("Detect(%s) = %q, want %q", head, got, want)
		}
	}
}

// summarizeIDs is summarize with the messages' ids whole (summarize
// shortens Claude Code's UUIDs).
func summarizeIDs(ms []Message) []summary {
	plain := make([]Message, len(ms))
	for i, m := range ms {
		plain[i] = m
		plain[i].UUID = ""
	}
	out := summarize(plain)
	for i := range out {
		out[i].UUID = ms[i].UUID
	}
	return out
}

// FuzzAgentReaders reads arbitrary input as a Codex rollout and as a
// Gemini chat: no panic, a read error only from the reader, and every
// message a user or assistant message that Since can cut after.
func FuzzAgentReaders(f *testing.F) {
	for _, name := range []string{"codex-rollout.jsonl", "gemini-chat.jsonl"} {
		data, err := os.ReadFile("testdata/" + name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
		for line := range strings.SplitSeq(string(data), "\n") {
			f.Add([]byte(line))
		}
	}
	f.Add([]byte(`{"type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"x"}],"internal_chat_message_metadata_passthrough":{"content_item_kinds":[]}}}`))
	f.Add([]byte(`{"$set":{"messages":[{"id":"a","type":"gemini","toolCalls":[{"id":"t"}]}]}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, read := range []func(string) (*Transcript, error){
			func(s string) (*Transcript, error) { return ReadCodex(strings.NewReader(s)) },
			func(s string) (*Transcript, error) { return ReadGemini(strings.NewReader(s)) },
		} {
			tr, err := read(string(data))
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range tr.Messages() {
				if m.Role != "user" && m.Role != "assistant" {
					t.Fatalf("message with role %q", m.Role)
				}
				if _, ok := tr.Since(m.UUID); !ok {
					t.Fatalf("Since(%q) does not know its own message", m.UUID)
				}
			}
		}
	})
}
