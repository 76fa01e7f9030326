package secrets

import (
	"slices"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestConcurrentScan scans from several goroutines at once. The rules'
// patterns are compiled on first use, so run on its own under the race
// detector (go test -race -run TestConcurrentScan) it also shows that the
// first scans may race each other.
func TestConcurrentScan(t *testing.T) {
	t.Parallel()
	pos, _ := vectors()
	const workers = 8
	got := make([][][]Match, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for _, p := range pos {
				got[w] = append(got[w], Scan(p.text()))
			}
		})
	}
	wg.Wait()
	for i, p := range pos {
		if !slices.ContainsFunc(got[0][i], func(m Match) bool { return m.RuleID == p.rule }) {
			t.Errorf("%s/%s: Scan = %v, want a %s match", p.rule, p.name, got[0][i], p.rule)
		}
	}
	for w := 1; w < workers; w++ {
		if diff := cmp.Diff(got[0], got[w]); diff != "" {
			t.Errorf("worker %d saw other matches than worker 0 (-0 +%d):\n%s", w, w, diff)
		}
	}
}
