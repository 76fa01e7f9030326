package memdir

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseIndexLine(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		line string
		want IndexEntry
		ok   bool
	}{
		{"- [Testing policy](feedback_testing.md) — run with -race", IndexEntry{Title: "Testing policy", File: "feedback_testing.md", Hook: "run with -race"}, true},
		{"* [A](a.md) - ascii dash", IndexEntry{Title: "A", File: "a.md", Hook: "ascii dash"}, true},
		{"  - [A](a.md) – en dash", IndexEntry{Title: "A", File: "a.md", Hook: "en dash"}, true},
		{"- [A](a.md): colon", IndexEntry{Title: "A", File: "a.md", Hook: "colon"}, true},
		{"- [A](a.md)", IndexEntry{Title: "A", File: "a.md"}, true},
		{"- [A \\[x\\]](team/a.md) — escaped brackets", IndexEntry{Title: "A [x]", File: "team/a.md", Hook: "escaped brackets"}, true},
		{"- [A](<my file.md>) — angle target", IndexEntry{Title: "A", File: "<my file.md>", Hook: "angle target"}, true},
		{"- [部署](project_部署.md) — 中文", IndexEntry{Title: "部署", File: "project_部署.md", Hook: "中文"}, true},
		{"- [A](a.md) — hook with (parens) and [brackets]", IndexEntry{Title: "A", File: "a.md", Hook: "hook with (parens) and [brackets]"}, true},
		{"# Heading", IndexEntry{}, false},
		{"plain prose", IndexEntry{}, false},
		{"", IndexEntry{}, false},
		{"- not a link", IndexEntry{}, false},
	} {
		got, ok := ParseIndexLine(tc.line)
		if ok != tc.ok || got != tc.want {
			t.Errorf("ParseIndexLine(%q) = %+v, %v; want %+v, %v", tc.line, got, ok, tc.want, tc.ok)
		}
	}
	if p := (IndexEntry{File: "./sub/../a.md"}).Path(); p != "a.md" {
		t.Errorf("Path() = %q, want a.md", p)
	}
	if p := (IndexEntry{File: "<my file.md>"}).Path(); p != "my file.md" {
		t.Errorf("Path() = %q", p)
	}
	if p := (IndexEntry{File: "my%20file.md"}).Path(); p != "my file.md" {
		t.Errorf("Path() = %q", p)
	}
}

func TestIndexEntryString(t *testing.T) {
	t.Parallel()
	e := IndexEntry{Title: "A [b]", File: "my file.md", Hook: "short"}
	got := e.String()
	if got != `- [A \[b\]](my%20file.md) — short` {
		t.Errorf("String() = %q", got)
	}
	back, ok := ParseIndexLine(got)
	if !ok || back.Title != "A [b]" || back.Path() != "my file.md" {
		t.Errorf("round trip = %+v, %v", back, ok)
	}
	long := IndexEntry{Title: "T", File: "t.md", Hook: strings.Repeat("word ", 60)}.String()
	if n := len([]rune(long)); n > IndexLineTarget {
		t.Errorf("long line is %d characters, want at most %d: %q", n, IndexLineTarget, long)
	}
	if !strings.HasSuffix(long, "…") {
		t.Errorf("shortened hook not marked: %q", long)
	}
}

func TestIndexUpsertRemovePreserveOtherLines(t *testing.T) {
	t.Parallel()
	in := "# Memory index\n\nSome prose the user wrote.\n- [A](a.md) — first\n<!-- keep me -->\n- [B](./b.md) — second\n- [A again](a.md) — duplicate\n\n"
	ix := ParseIndex([]byte(in))
	if !ix.Upsert("a.md", "- [A](a.md) — updated") {
		t.Fatal("Upsert reported no change")
	}
	want := "# Memory index\n\nSome prose the user wrote.\n- [A](a.md) — updated\n<!-- keep me -->\n- [B](./b.md) — second\n\n"
	if diff := cmp.Diff(want, string(ix.Bytes())); diff != "" {
		t.Errorf("after Upsert (-want +got):\n%s", diff)
	}
	if ix.Upsert("a.md", "- [A](a.md) — updated") {
		t.Error("identical Upsert reported a change")
	}
	ix.Upsert("c.md", "- [C](c.md) — new")
	want = "# Memory index\n\nSome prose the user wrote.\n- [A](a.md) — updated\n<!-- keep me -->\n- [B](./b.md) — second\n- [C](c.md) — new\n\n"
	if diff := cmp.Diff(want, string(ix.Bytes())); diff != "" {
		t.Errorf("after append (-want +got):\n%s", diff)
	}
	removed := ix.Remove("b.md")
	if diff := cmp.Diff([]string{"- [B](./b.md) — second"}, removed); diff != "" {
		t.Errorf("Remove returned (-want +got):\n%s", diff)
	}
	want = "# Memory index\n\nSome prose the user wrote.\n- [A](a.md) — updated\n<!-- keep me -->\n- [C](c.md) — new\n\n"
	if diff := cmp.Diff(want, string(ix.Bytes())); diff != "" {
		t.Errorf("after Remove (-want +got):\n%s", diff)
	}
	// An index without a final newline keeps its other bytes as they were.
	ix = ParseIndex([]byte("- [A](a.md) — x"))
	ix.Remove("zzz.md")
	if string(ix.Bytes()) != "- [A](a.md) — x" {
		t.Errorf("untouched index changed: %q", ix.Bytes())
	}
	ix = ParseIndex(nil)
	ix.Upsert("a.md", "- [A](a.md) — x")
	if string(ix.Bytes()) != "- [A](a.md) — x\n" {
		t.Errorf("new index = %q", ix.Bytes())
	}
}

func TestFormatFileSize(t *testing.T) {
	t.Parallel()
	for n, want := range map[int]string{
		0: "0 bytes", 1023: "1023 bytes", 1024: "1KB", 1280: "1.3KB", 1536: "1.5KB",
		25000: "24.4KB", 26000: "25.4KB", 1048575: "1024KB", 1048576: "1MB", 5 << 20: "5MB",
		1 << 30: "1GB",
	} {
		if got := FormatFileSize(n); got != want {
			t.Errorf("FormatFileSize(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestTruncateIndex(t *testing.T) {
	t.Parallel()
	line := func(i int) string { return fmt.Sprintf("- [M%d](m%d.md) — hook", i, i) }
	lines := func(n int, f func(int) string) string {
		var b []string
		for i := range n {
			b = append(b, f(i))
		}
		return strings.Join(b, "\n")
	}
	const tail = ". Only part of it was loaded. Keep index entries to one line under ~200 chars; move detail into topic files."

	t.Run("fits", func(t *testing.T) {
		raw := "\n\n" + lines(200, line) + "\n\n"
		got, st := TruncateIndex(raw)
		if got != strings.TrimSpace(raw) || st.Truncated() || st.Lines != 200 {
			t.Errorf("fitting index changed: %+v", st)
		}
	})
	t.Run("lines only", func(t *testing.T) {
		raw := lines(250, line)
		got, st := TruncateIndex(raw)
		want := lines(200, line) + "\n\n> WARNING: MEMORY.md is 250 lines (limit: 200)" + tail
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
		if !st.LineTruncated || st.CharTruncated {
			t.Errorf("status = %+v", st)
		}
	})
	t.Run("chars only", func(t *testing.T) {
		// ASCII lines, so byte offsets are UTF-16 offsets.
		long := func(i int) string { return fmt.Sprintf("- [M%d](m%d.md) - %s", i, i, strings.Repeat("x", 280)) }
		raw := lines(100, long)
		got, st := TruncateIndex(raw)
		// Cut at the last newline at or before unit 25,000.
		cut := strings.LastIndex(raw[:25001], "\n")
		want := raw[:cut] + "\n\n> WARNING: MEMORY.md is " + FormatFileSize(len(raw)) + " (limit: 24.4KB) — index entries are too long" + tail
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
		if st.LineTruncated || !st.CharTruncated {
			t.Errorf("status = %+v", st)
		}
	})
	t.Run("both", func(t *testing.T) {
		long := func(i int) string { return fmt.Sprintf("- [M%d](m%d.md) - %s", i, i, strings.Repeat("y", 200)) }
		raw := lines(300, long)
		got, st := TruncateIndex(raw)
		first200 := lines(200, long)
		cut := strings.LastIndex(first200[:25001], "\n")
		want := first200[:cut] + "\n\n> WARNING: MEMORY.md is 300 lines and " + FormatFileSize(len(raw)) + tail
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
		if !st.LineTruncated || !st.CharTruncated {
			t.Errorf("status = %+v", st)
		}
	})
	t.Run("lines cut brings it under the char limit", func(t *testing.T) {
		long := func(i int) string { return fmt.Sprintf("- [M%d](m%d.md) - %s", i, i, strings.Repeat("z", 100)) }
		raw := lines(260, long) // about 31,000 chars in all, 24,000 in 200 lines
		got, _ := TruncateIndex(raw)
		want := lines(200, long) + "\n\n> WARNING: MEMORY.md is 260 lines and " + FormatFileSize(len(raw)) + tail
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	})
	t.Run("no newline to cut at", func(t *testing.T) {
		raw := strings.Repeat("a", 30000)
		got, _ := TruncateIndex(raw)
		if !strings.HasPrefix(got, strings.Repeat("a", 25000)+"\n\n> WARNING") {
			t.Errorf("hard cut wrong: %q…", got[:40])
		}
	})
	t.Run("chars counted in UTF-16 units", func(t *testing.T) {
		raw := strings.Repeat("项", 24999) // 24,999 units, 74,997 bytes
		if _, st := TruncateIndex(raw); st.Truncated() {
			t.Errorf("CJK index under 25,000 units was truncated: %+v", st)
		}
		raw = strings.Repeat("😀", 12501) // 25,002 units
		if _, st := TruncateIndex(raw); !st.CharTruncated {
			t.Errorf("astral index over 25,000 units not truncated: %+v", st)
		}
	})
}

func TestLoadIndexTextStripsCommentsAndFrontmatter(t *testing.T) {
	t.Parallel()
	got, _ := LoadIndexText([]byte("---\ntitle: x\n---\n<!-- private\nnote -->\n- [A](a.md) — hook\n"))
	if got != "- [A](a.md) — hook" {
		t.Errorf("LoadIndexText = %q", got)
	}
}

func FuzzParseIndexLine(f *testing.F) {
	for _, s := range []string{"- [A](a.md) — h", "* [x\\]](<a b.md>) - y", "- [](.md)", "- [a](b(c).md)"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		e, ok := ParseIndexLine(line)
		if !ok || strings.ContainsAny(e.Title+e.Hook+e.File, "\n\r") {
			return
		}
		// What we write for a parsed entry parses back to the same target.
		again, ok := ParseIndexLine(e.String())
		if !ok {
			t.Fatalf("String() of %+v does not parse: %q", e, e.String())
		}
		if e.Path() != "" && again.Path() != e.Path() {
			t.Fatalf("target changed: %q -> %q (line %q)", e.Path(), again.Path(), e.String())
		}
	})
}
