package linediff

import (
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func lines(s string) []string { return Split(s) }

func TestSplitLines(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"a", []string{"a"}},
		{"a\n", []string{"a\n"}},
		{"a\nb", []string{"a\n", "b"}},
		{"\n\n", []string{"\n", "\n"}},
	} {
		if diff := cmp.Diff(tc.want, lines(tc.in)); diff != "" {
			t.Errorf("Split(%q) (-want +got):\n%s", tc.in, diff)
		}
	}
}

func TestLineStats(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		a, b           string
		added, removed int
	}{
		{"", "", 0, 0},
		{"a\n", "a\n", 0, 0},
		{"", "a\nb\n", 2, 0},
		{"a\nb\n", "", 0, 2},
		{"a\nb\nc\n", "a\nc\n", 0, 1},
		{"a\nc\n", "a\nb\nc\n", 1, 0},
		{"a\nb\nc\n", "a\nB\nc\n", 1, 1},
		{"a\nb", "a\nb\n", 1, 1}, // a final newline is a change to the last line
		{"a\nb\nc\nd\n", "d\nc\nb\na\n", 3, 3},
		{"x\na\nb\nc\n", "a\nb\nc\ny\n", 1, 1},
	} {
		ops, approx := Diff(lines(tc.a), lines(tc.b), 0)
		added, removed := Stats(ops)
		if added != tc.added || removed != tc.removed || approx {
			t.Errorf("diff(%q, %q) = +%d -%d approx=%v, want +%d -%d", tc.a, tc.b, added, removed, approx, tc.added, tc.removed)
		}
	}
}

// lcs is the textbook dynamic program, the reference for minimality.
func lcs(a, b []string) int {
	dp := make([][]int, len(a)+1)
	for i := range dp {
		dp[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				dp[i][j] = dp[i+1][j+1] + 1
			} else {
				dp[i][j] = max(dp[i+1][j], dp[i][j+1])
			}
		}
	}
	return dp[0][0]
}

// checkScript fails unless ops walks a and b in order, line by line, so that
// replaying it turns a into b, and every op carries the position the other
// side has reached (unified hunk headers rely on it), and no deletion
// follows an insertion in one block of changes.
func checkScript(t *testing.T, a, b []string, ops []Op) {
	t.Helper()
	i, j := 0, 0
	inserted := false
	for k, op := range ops {
		ok := op.A == i && op.B == j
		switch op.Kind {
		case Equal:
			ok = ok && i < len(a) && j < len(b) && a[i] == b[j]
			i, j = i+1, j+1
			inserted = false
		case Delete:
			ok = ok && i < len(a) && !inserted
			i++
		case Insert:
			ok = ok && j < len(b)
			j++
			inserted = true
		}
		if !ok {
			t.Fatalf("op %d %+v out of step at a[%d] b[%d]:\na=%q\nb=%q", k, op, i, j, a, b)
		}
	}
	if i != len(a) || j != len(b) {
		t.Fatalf("script ends at a[%d] b[%d], want a[%d] b[%d]", i, j, len(a), len(b))
	}
}

func TestDiffIsMinimalOnRandomInputs(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	alphabet := []string{"a\n", "b\n", "c\n", "d\n", "}\n", "\n"}
	gen := func() []string {
		out := make([]string, r.IntN(30))
		for i := range out {
			out[i] = alphabet[r.IntN(len(alphabet))]
		}
		return out
	}
	for range 2000 {
		a, b := gen(), gen()
		ops, approx := Diff(a, b, 0)
		checkScript(t, a, b, ops)
		added, removed := Stats(ops)
		common := lcs(a, b)
		if approx || added != len(b)-common || removed != len(a)-common {
			t.Fatalf("diff(%q, %q) = +%d -%d, want +%d -%d", a, b, added, removed, len(b)-common, len(a)-common)
		}
	}
}

func TestUnified(t *testing.T) {
	t.Parallel()
	a := lines("1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n")
	b := lines("1\n2\nthree\n4\n5\n6\n7\n8\n9\n10\n11\n12\n13")
	ops, _ := Diff(a, b, 0)
	want := `--- a/f
+++ b/f
@@ -1,6 +1,6 @@
 1
 2
-3
+three
 4
 5
 6
@@ -10,3 +10,4 @@
 10
 11
 12
+13
\ No newline at end of file
`
	if diff := cmp.Diff(want, Unified("a/f", "b/f", a, b, ops, Format{Context: 3})); diff != "" {
		t.Errorf("unified (-want +got):\n%s", diff)
	}
	if got := Unified("a", "b", a, a, nil, Format{Context: 3}); got != "" {
		t.Errorf("unified of no changes = %q", got)
	}
}

func TestUnifiedFormat(t *testing.T) {
	t.Parallel()
	a := lines("1\n2\n3\n4\n")
	b := lines("1\nzwei\n3\n4\n5\n")
	ops, _ := Diff(a, b, 0)
	for _, tc := range []struct {
		f    Format
		want string
	}{
		{Format{Context: 0}, "--- a\n+++ b\n@@ -2 +2 @@\n-2\n+zwei\n@@ -4,0 +5 @@\n+5\n"},
		{Format{Context: 0, FullRanges: true}, "--- a\n+++ b\n@@ -2,1 +2,1 @@\n-2\n+zwei\n@@ -4,0 +5,1 @@\n+5\n"},
		{Format{Context: 1, FullRanges: true}, "--- a\n+++ b\n@@ -1,4 +1,5 @@\n 1\n-2\n+zwei\n 3\n 4\n+5\n"},
	} {
		if diff := cmp.Diff(tc.want, Unified("a", "b", a, b, ops, tc.f)); diff != "" {
			t.Errorf("Unified with %+v (-want +got):\n%s", tc.f, diff)
		}
	}
}

func TestDiffBudgetFallsBackToReplace(t *testing.T) {
	t.Parallel()
	var a, b []string
	for i := range 3000 {
		a = append(a, string(rune('a'+i%7))+"\n")
		b = append(b, string(rune('a'+i%11))+"\n")
	}
	ops, approx := Diff(a, b, 1000)
	checkScript(t, a, b, ops)
	if !approx {
		t.Errorf("a diff cut short by its budget is not marked approximate")
	}
	full, approx := Diff(a, b, 0)
	if approx {
		t.Errorf("the default budget ran out on 3,000 lines")
	}
	if x, y := Stats(full); x+y >= 6000 {
		t.Errorf("full diff +%d -%d is no better than replacing everything", x, y)
	}
}

func FuzzDiffLines(f *testing.F) {
	f.Add("a\nb\nc\n", "a\nc\nd")
	f.Add("", "x")
	f.Add("same\n", "same\n")
	f.Fuzz(func(t *testing.T, x, y string) {
		a, b := lines(x), lines(y)
		ops, _ := Diff(a, b, 0)
		checkScript(t, a, b, ops)
		if len(a)*len(b) <= 10000 {
			added, removed := Stats(ops)
			common := lcs(a, b)
			if added != len(b)-common || removed != len(a)-common {
				t.Fatalf("not minimal: +%d -%d, want +%d -%d", added, removed, len(b)-common, len(a)-common)
			}
		}
		_ = Unified("a", "b", a, b, ops, Format{Context: 3})
	})
}
