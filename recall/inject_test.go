package recall

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/memdir/memdir/internal/mdtext"
)

func TestFit(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		max      int
		header   string
		parts    []string
		want     string
		included []bool
	}{
		{"all fit", 100, "H", []string{"aa", "bb"}, "H\n\naa\n\nbb", []bool{true, true}},
		{"skip the long one", 12, "H", []string{"aaaa", "bbbbbbbbbb", "cc"}, "H\n\naaaa\n\ncc", []bool{true, false, true}},
		{"exactly the limit", 7, "H", []string{"aaaa"}, "H\n\naaaa", []bool{true}},
		{"one over", 6, "H", []string{"aaaa"}, "", []bool{false}},
		{"nothing fits", 5, "H", []string{"aaaaaa"}, "", []bool{false}},
		{"surrogate pairs count twice", 7, "H", []string{"😀😀"}, "H\n\n😀😀", []bool{true}},
		{"surrogate pairs count twice", 6, "H", []string{"😀😀"}, "", []bool{false}},
		{"no header", 10, "", []string{"aa", "bb"}, "aa\n\nbb", []bool{true, true}},
	}
	for _, tt := range tests {
		got, included := fit(tt.max, tt.header, "\n\n", tt.parts)
		if got != tt.want || !cmp.Equal(included, tt.included) {
			t.Errorf("%s: fit(%d) = %q, %v; want %q, %v", tt.name, tt.max, got, included, tt.want, tt.included)
		}
		if mdtext.UTF16Len(got) > tt.max {
			t.Errorf("%s: %d characters, more than %d", tt.name, mdtext.UTF16Len(got), tt.max)
		}
	}
}

// TestInjectForms: the same memories as hook context (a header, then each
// memory, within the cap) and as system reminders (no cap), with the
// session's record of what went in.
func TestInjectForms(t *testing.T) {
	t.Parallel()
	res := &Result{Memories: []Recalled{
		{Path: "a.md", AbsPath: "/m/a.md", Header: "Memory: /m/a.md:", Content: "short"},
		{Path: "b.md", AbsPath: "/m/b.md", Header: "Memory: /m/b.md:", Content: strings.Repeat("x", MaxContextChars)},
		{Path: "c.md", AbsPath: "/m/c.md", Header: "Memory: /m/c.md:", Content: "also short"},
	}}
	hook := Inject("/m", res, nil)
	if !cmp.Equal(hook.Included, []bool{true, false, true}) || !cmp.Equal(hook.Paths, []string{"a.md", "c.md"}) ||
		!cmp.Equal(hook.AbsPaths, []string{"/m/a.md", "/m/c.md"}) || hook.Bytes != len("short")+len("also short") {
		t.Errorf("hook injection = %+v", hook)
	}
	if !strings.HasPrefix(hook.Text, "Memories saved in earlier conversations that may be relevant to this prompt, recalled by memdir from /m.") ||
		!strings.HasSuffix(hook.Text, "\n\nMemory: /m/a.md:\n\nshort\n\nMemory: /m/c.md:\n\nalso short") {
		t.Errorf("hook text = %q", hook.Text)
	}
	tool := Inject("/m", res, &InjectOptions{Reminders: true, MaxChars: -1})
	if want := res.Memories[0].Render() + res.Memories[1].Render() + res.Memories[2].Render(); tool.Text != want {
		t.Errorf("reminders text = %q, want every memory rendered", tool.Text)
	}
	if none := Inject("/m", &Result{}, nil); none.Text != "" || len(none.Included) != 0 || none.Paths != nil {
		t.Errorf("injection of no memories = %+v", none)
	}
}
