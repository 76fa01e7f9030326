package team

import (
	"math/rand/v2"
	"testing"
)

// TestMyersIsShortest checks the diff against a dynamic-programming LCS on
// random small texts: the matched pairs are equal lines in increasing order
// and as many as the longest common subsequence has.
func TestMyersIsShortest(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	gen := func() []string {
		n := r.IntN(12)
		out := make([]string, n)
		for i := range out {
			out[i] = string(rune('a' + r.IntN(4)))
		}
		return out
	}
	for range 3000 {
		x, y := gen(), gen()
		pairs := myers(x, y)
		for i, p := range pairs {
			if x[p[0]] != y[p[1]] || i > 0 && (p[0] <= pairs[i-1][0] || p[1] <= pairs[i-1][1]) {
				t.Fatalf("myers(%q, %q) = %v: not an increasing match", x, y, pairs)
			}
		}
		dp := make([][]int, len(x)+1)
		for i := range dp {
			dp[i] = make([]int, len(y)+1)
		}
		for i := len(x) - 1; i >= 0; i-- {
			for j := len(y) - 1; j >= 0; j-- {
				if x[i] == y[j] {
					dp[i][j] = dp[i+1][j+1] + 1
				} else {
					dp[i][j] = max(dp[i+1][j], dp[i][j+1])
				}
			}
		}
		if len(pairs) != dp[0][0] {
			t.Fatalf("myers(%q, %q) matched %d lines, the LCS has %d", x, y, len(pairs), dp[0][0])
		}
		m := matchLines(x, y)
		n := 0
		for _, j := range m {
			if j >= 0 {
				n++
			}
		}
		if n != dp[0][0] {
			t.Fatalf("matchLines(%q, %q) matched %d, want %d", x, y, n, dp[0][0])
		}
	}
}
