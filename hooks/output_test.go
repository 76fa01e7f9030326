package hooks

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestLen(t *testing.T) {
	tests := []struct {
		s    string
		want int
	}{
		{"", 0}, {"abc", 3}, {"é", 1}, {"部署", 2}, {"😀", 2}, {"\xff", 1},
	}
	for _, tt := range tests {
		if got := Len(tt.s); got != tt.want {
			t.Errorf("Len(%q) = %d, want %d", tt.s, got, tt.want)
		}
	}
}

func TestTruncate(t *testing.T) {
	tests := []struct {
		s    string
		max  int
		want string
		cut  bool
	}{
		{"one\ntwo\nthree", 100, "one\ntwo\nthree", false},
		{"one\ntwo\nthree", 13, "one\ntwo\nthree", false},
		{"one\ntwo\nthree", 12, "one\ntwo\n…", true},
		{"one\ntwo\nthree", 8, "one\n…", true},
		{"abcdefghij", 9, "abcdefg\n…", true},
		{"部署部署部署", 4, "部署\n…", true},
		{"😀😀😀", 5, "😀\n…", true},
		{"abc", 1, "", true},
	}
	for _, tt := range tests {
		got, cut := Truncate(tt.s, tt.max, "…")
		if got != tt.want || cut != tt.cut {
			t.Errorf("Truncate(%q, %d) = %q, %t; want %q, %t", tt.s, tt.max, got, cut, tt.want, tt.cut)
		}
		if Len(got) > tt.max {
			t.Errorf("Truncate(%q, %d): %d characters", tt.s, tt.max, Len(got))
		}
	}
}

func TestOutputWrite(t *testing.T) {
	tests := []struct {
		o    *Output
		want string
	}{
		{nil, ""},
		{&Output{}, ""},
		{WithContext(UserPromptSubmit, ""), ""},
		{WithContext(UserPromptSubmit, "a <b> & c"), `{"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"a <b> & c"}}` + "\n"},
		{&Output{SystemMessage: "memdir: pull failed"}, `{"systemMessage":"memdir: pull failed"}` + "\n"},
	}
	for _, tt := range tests {
		var b bytes.Buffer
		if err := tt.o.Write(&b); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tt.want, b.String()); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
		if b.Len() > 0 && !strings.HasPrefix(b.String(), "{") {
			t.Errorf("output does not start with '{': Claude Code would read it as text")
		}
	}
}
