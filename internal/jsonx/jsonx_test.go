package jsonx

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestExtract(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		text string
		want string
	}{
		{"bare object", `{"a":1}`, `{"a":1}`},
		{"bare array", `[1, 2]`, `[1, 2]`},
		{"surrounding space", "\n  {\"a\": [1, {\"b\": null}]}  \n", `{"a": [1, {"b": null}]}`},
		{"prose before and after", `Sure, here it is: {"selected_memories": ["x.md"]} Hope that helps!`, `{"selected_memories": ["x.md"]}`},
		{"json fence", "```json\n{\"a\": \"b\"}\n```", `{"a": "b"}`},
		{"plain fence", "Result:\n```\n[\"a\"]\n```\nDone.", `["a"]`},
		{"fence wins over earlier fragment", "An empty {} means none.\n```json\n{\"a\": 1}\n```", `{"a": 1}`},
		{"fence that is not json is skipped", "```sh\necho hi\n```\n{\"a\": 1}", `{"a": 1}`},
		{"braces inside strings", `{"s": "a } ] { [ \" still"}`, `{"s": "a } ] { [ \" still"}`},
		{"stray brace in prose", `I'd use a { brace here. {"ok": true}`, `{"ok": true}`},
		{"invalid candidate then valid", `{not json} then {"a": 2}`, `{"a": 2}`},
		{"first of two", `{"a": 1} {"b": 2}`, `{"a": 1}`},
		{"unicode", `Voilà : {"nom": "café ☕"}`, `{"nom": "café ☕"}`},
		{"array of objects is kept whole", `[{"a":1},{"b":2}]`, `[{"a":1},{"b":2}]`},
		{"unterminated fence", "```json\n{\"a\": 1}", `{"a": 1}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Extract(tt.text)
			if err != nil {
				t.Fatalf("Extract(%q): %v", tt.text, err)
			}
			if diff := cmp.Diff(tt.want, string(got)); diff != "" {
				t.Errorf("Extract(%q) (-want +got):\n%s", tt.text, diff)
			}
		})
	}
}

func TestExtractErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		text     string
		contains []string
	}{
		{"empty", "", []string{"empty"}},
		{"blank", " \n\t", []string{"empty"}},
		{"prose only", "I could not find any relevant memories.", []string{"no JSON object or array", `"I could not find any relevant memories."`}},
		{"truncated", `{"selected_memories": ["a.md", {"b": 1}, "c`, []string{"cut off", "max tokens"}},
		{"truncated after bracket", `Here: [`, []string{"cut off"}},
		{"invalid only", `{this is not json}`, []string{"no JSON object or array"}},
		{"long prose is cut", strings.Repeat("word ", 100), []string{"…"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Extract(tt.text)
			if err == nil {
				t.Fatalf("Extract(%q) = %s, want an error", tt.text, got)
			}
			if !errors.Is(err, ErrNoJSON) {
				t.Errorf("error %v does not wrap ErrNoJSON", err)
			}
			for _, s := range tt.contains {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not contain %q", err, s)
				}
			}
			if len(err.Error()) > 300 {
				t.Errorf("error is %d bytes long, want a short prefix of the text: %s", len(err.Error()), err)
			}
		})
	}
}

// TestExtractDegenerate checks that a reply made of thousands of openers is
// answered (with an error) instead of being scanned once per opener.
func TestExtractDegenerate(t *testing.T) {
	t.Parallel()
	text := "a " + strings.Repeat("{ x ", 50000)
	if _, err := Extract(text); !errors.Is(err, ErrNoJSON) {
		t.Fatalf("Extract(degenerate) error = %v, want ErrNoJSON", err)
	}
}

func FuzzExtract(f *testing.F) {
	for _, s := range []string{
		`{"a":1}`,
		"```json\n[1,2]\n```",
		`text {"s":"}"} more`,
		`{{{`,
		`[`,
		"",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		got, err := Extract(text)
		if err != nil {
			if !errors.Is(err, ErrNoJSON) {
				t.Fatalf("error %v does not wrap ErrNoJSON", err)
			}
			return
		}
		if !json.Valid(got) {
			t.Fatalf("Extract(%q) = %q, not valid JSON", text, got)
		}
		if got[0] != '{' && got[0] != '[' {
			t.Fatalf("Extract(%q) = %q, not an object or array", text, got)
		}
		if !strings.Contains(text, string(got)) {
			t.Fatalf("Extract(%q) = %q, not a part of the text", text, got)
		}
		// Wrapping the value in prose without brackets finds the same value.
		wrapped := "Here you go:\n" + string(got) + "\nThanks."
		again, err := Extract(wrapped)
		if err != nil || !bytes.Equal(again, got) {
			t.Fatalf("Extract(%q) = %q, %v; want %q", wrapped, again, err, got)
		}
	})
}

func BenchmarkExtract(b *testing.B) {
	reply := "Here are the memories that look relevant to the query.\n```json\n" +
		`{"selected_memories": ["build-cache.md", "ci-flakes.md", "release-steps.md"]}` + "\n```\n"
	b.SetBytes(int64(len(reply)))
	for b.Loop() {
		if _, err := Extract(reply); err != nil {
			b.Fatal(err)
		}
	}
}
