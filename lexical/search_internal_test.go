package lexical

import "testing"

func TestDenseQuery(t *testing.T) {
	q := func(dfs ...int32) []queryTerm {
		var out []queryTerm
		for _, df := range dfs {
			out = append(out, queryTerm{df: df})
		}
		return out
	}
	for _, c := range []struct {
		query []queryTerm
		n     int
		want  bool
	}{
		{q(), 100000, false},
		{q(10, 20, 3), 100000, false},
		{q(3000, 124), 100000, false},
		{q(3000, 125), 100000, true}, // 3,125 = n/32
		{q(-1, 50000), 100000, true},
		{q(0, 1), 20, true}, // a tiny index: the accumulator is under two pages anyway
	} {
		if got := denseQuery(c.query, c.n); got != c.want {
			t.Errorf("denseQuery(%v, %d) = %v, want %v", c.query, c.n, got, c.want)
		}
	}
}
