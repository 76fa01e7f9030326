package lexical_test

import (
	"os"
	"strings"
	"testing"

	"github.com/memdir/memdir/internal/evalset"
	"github.com/memdir/memdir/lexical"
)

// devSet is the labelled recall set the project's targets are measured on.
const devSet = "../testdata/eval/recall-dev.json"

const shortlistK = 30

// The project's targets (issue 3): lexical recall@5 and shortlist
// recall@30. They are enforced when MEMDIR_EVAL_TARGETS=1; the ranker does
// not reach them yet (see the figures this test logs), and a red test in
// every run would hide real regressions.
const (
	targetRecall5  = 0.75
	targetRecall30 = 0.97
)

// Regression floors, just under the figures measured with the glossary, the
// CJK-aware Norm and the -ion stemming rule (recall@5 0.790, recall@30
// 0.971, every no-relevant query answered with nothing, answered recall@5
// 0.778): any change to the tokenizer or scoring that loses ground fails
// here.
const (
	floorRecall5   = 0.77
	floorRecall30  = 0.97 // the project target itself
	floorNoneEmpty = 0.99
	floorAnswered5 = 0.76
)

const (
	// enforceTargets names the variable that turns the targets into failures.
	enforceTargets = "MEMDIR_EVAL_TARGETS"
	// newestManifestN is the size of Claude Code's manifest, the baseline.
	newestManifestN = 200
)

func loadDevIndex(tb testing.TB) (*evalset.Set, *lexical.Index) {
	tb.Helper()
	set, err := evalset.Load(devSet)
	if err != nil {
		tb.Fatal(err)
	}
	docs := make([]lexical.Doc, len(set.Memories))
	for i, m := range set.Memories {
		docs[i] = lexical.Doc{ID: m.File, Name: m.Name, Description: m.Description, Body: m.Body}
	}
	return set, lexical.New(docs, nil)
}

func ids(hits []lexical.Hit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.ID
	}
	return out
}

func logReport(tb testing.TB, title string, r *evalset.Report) {
	tb.Helper()
	var b strings.Builder
	if err := r.WriteText(&b); err != nil {
		tb.Fatal(err)
	}
	tb.Logf("%s:\n%s", title, b.String())
}

// TestDevSet runs the labelled dev set through the index with default
// options and logs recall, precision, MRR and the handling of queries with
// no relevant memory, for the shortlist and for the answer-alone rule.
func TestDevSet(t *testing.T) {
	t.Parallel()
	set, idx := loadDevIndex(t)

	shortlist := evalset.Evaluate(set, func(q string) []string {
		return ids(idx.Search(q, shortlistK))
	}, nil)
	logReport(t, "shortlist (top 30, no threshold)", shortlist)

	answer := evalset.Evaluate(set, func(q string) []string {
		return ids(lexical.Answer(idx.Search(q, shortlistK), nil))
	}, nil)
	logReport(t, "answer alone (lexical.Answer defaults)", answer)

	newest := evalset.Evaluate(set, func(string) []string { return set.Newest(shortlistK) }, nil)
	manifest := evalset.Evaluate(set, func(string) []string { return set.Newest(newestManifestN) }, &evalset.Options{Ks: []int{newestManifestN}})
	t.Logf("baselines: the %d newest files recall@30=%.3f; Claude Code's %d-newest manifest recall@%d=%.3f (%d memories)",
		shortlistK, newest.Recall[30], newestManifestN, newestManifestN, manifest.Recall[newestManifestN], len(set.Memories))

	checks := []struct {
		name        string
		got, floor  float64
		target      float64 // 0: no project target
		targetLabel string
	}{
		{"shortlist recall@5", shortlist.Recall[5], floorRecall5, targetRecall5, "lexical recall@5"},
		{"shortlist recall@30", shortlist.Recall[30], floorRecall30, targetRecall30, "shortlist recall@30"},
		{"answer none-empty", answer.NoneEmpty, floorNoneEmpty, 0, ""},
		{"answer answered-recall@5", answer.AnsweredRecall[5], floorAnswered5, 0, ""},
	}
	strict := os.Getenv(enforceTargets) == "1"
	for _, c := range checks {
		if c.got < c.floor {
			t.Errorf("%s = %.3f, below the regression floor %.2f", c.name, c.got, c.floor)
		}
		if c.target == 0 || c.got >= c.target {
			continue
		}
		if strict {
			t.Errorf("%s = %.3f, below the project target %.2f", c.targetLabel, c.got, c.target)
		} else {
			t.Logf("NOTE: %s = %.3f is below the project target %.2f (set %s=1 to fail on it)", c.targetLabel, c.got, c.target, enforceTargets)
		}
	}
}
