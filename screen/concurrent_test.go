package screen

import (
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestConcurrentCheck screens from several goroutines at once and compares
// with screening one text after another. The phrase rules are compiled on
// first use, so run on its own under the race detector (go test -race -run
// TestConcurrentCheck) it also shows that the first checks may race each
// other.
func TestConcurrentCheck(t *testing.T) {
	texts := append(load(t, "hostile.json"), load(t, "benign.json")...)
	const workers = 8
	got := make([][][]Finding, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for _, s := range texts {
				got[w] = append(got[w], Check(s.Text))
			}
		})
	}
	wg.Wait()
	var want [][]Finding
	for _, s := range texts {
		want = append(want, Check(s.Text))
	}
	for w := range workers {
		if diff := cmp.Diff(want, got[w]); diff != "" {
			t.Errorf("worker %d (-sequential +concurrent):\n%s", w, diff)
		}
	}
}
