package mdtext

import (
	"regexp"
	"testing"
)

// TestSplitFrontmatterMatchesPattern checks the hand-written matcher against
// Claude Code's regular expression on tricky inputs.
func TestSplitFrontmatterMatchesPattern(t *testing.T) {
	t.Parallel()
	re := regexp.MustCompile(`\A---[\t\n\v\f\r ]*\n([\s\S]*?)---[\t\n\v\f\r ]*\n?`)
	for _, s := range []string{
		"---\nname: a\n---\nbody", "---\n\n\nname: a\n---\n\n\nbody", "--- \t\nname: a---b\n---\n",
		"---name: a\n---\n", "---\nno close", "x---\n---\n", "---\n---", "---\n---\n---\n", "", "---",
		"---\r\nname: a\r\n---\r\nbody", "---\nname: a\n--- trailing\nbody",
	} {
		front, start, ok := SplitFrontmatter(s)
		m := re.FindStringSubmatchIndex(s)
		if ok != (m != nil) {
			t.Errorf("%q: ok = %v, regexp matched = %v", s, ok, m != nil)
			continue
		}
		if ok && (front != s[m[2]:m[3]] || start != m[1]) {
			t.Errorf("%q: got (%q, %d), regexp (%q, %d)", s, front, start, s[m[2]:m[3]], m[1])
		}
	}
}

func FuzzSplitFrontmatter(f *testing.F) {
	f.Add("---\nname: a\n---\nbody")
	f.Add("---  \n \n---\n")
	re := regexp.MustCompile(`\A---[\t\n\v\f\r ]*\n([\s\S]*?)---[\t\n\v\f\r ]*\n?`)
	f.Fuzz(func(t *testing.T, s string) {
		front, start, ok := SplitFrontmatter(s)
		m := re.FindStringSubmatchIndex(s)
		if ok != (m != nil) || ok && (front != s[m[2]:m[3]] || start != m[1]) {
			t.Fatalf("%q: SplitFrontmatter = (%q, %d, %v), regexp = %v", s, front, start, ok, m)
		}
	})
}
