package lexical_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/memdir/memdir/lexical"
)

var sampleDocs = []lexical.Doc{
	{ID: "feedback_flaky_tests.md", Name: "flaky-tests-root-cause", Description: "Find the root cause of flaky tests; never add retries", Body: "Reproduce with go test -count=50, fix the race, do not skip."},
	{ID: "project_invoice_test_flake.md", Name: "invoice-settlement-test-flake", Description: "TestInvoiceSettlement flakes near UTC midnight", Body: "Root cause: local-time day cutoff in settlement.Cutoff."},
	{ID: "reference_grafana.md", Name: "grafana-dashboards", Description: "Grafana dashboards for dispatch latency and errors", Body: "Dispatch / Overview shows p99 latency per endpoint."},
	{ID: "feedback_deploy_script.md", Name: "deploy-script-dry-run", Description: "部署脚本默认 --dry-run，真正执行要加 --confirm", Body: "修改部署脚本时不能去掉这个保护。"},
	{ID: "user_role.md", Name: "user-role", Description: "Backend lead on the dispatch team", Body: "Owns services/dispatch, reviews proto changes."},
}

func TestSearchRanksMatches(t *testing.T) {
	t.Parallel()
	idx := lexical.New(sampleDocs, nil)
	tests := []struct {
		query string
		first string
		terms []string
	}{
		{"TestInvoiceSettlement failed on CI", "project_invoice_test_flake.md", []string{"test", "invoic", "settlement", "testinvoicesettlement"}},
		{"where are the grafana dashboards?", "reference_grafana.md", []string{"grafana", "dashboard"}},
		// The glossary adds "deploy" and "script", which the memory also uses.
		{"改一下部署脚本", "feedback_deploy_script.md", []string{"部署", "署脚", "脚本", "script", "deploi"}},
		{"flaky tests again", "feedback_flaky_tests.md", []string{"flaki", "test"}},
	}
	for _, tt := range tests {
		hits := idx.Search(tt.query, 3)
		if len(hits) == 0 {
			t.Errorf("Search(%q) found nothing, want %s first", tt.query, tt.first)
			continue
		}
		if hits[0].ID != tt.first {
			t.Errorf("Search(%q) first = %s, want %s (hits %v)", tt.query, hits[0].ID, tt.first, hits)
		}
		if diff := cmp.Diff(tt.terms, hits[0].Terms); diff != "" {
			t.Errorf("Search(%q) matched terms (-want +got):\n%s", tt.query, diff)
		}
		for i, h := range hits {
			// A hit found through feedback terms alone has Norm 0.
			if h.Norm < 0 || h.Norm >= 1 || h.Coverage < 0 || h.Coverage > 1 {
				t.Errorf("Search(%q) hit %d: Norm %v, Coverage %v out of range", tt.query, i, h.Norm, h.Coverage)
			}
			if i > 0 && h.Score > hits[i-1].Score {
				t.Errorf("Search(%q) hits out of order at %d", tt.query, i)
			}
		}
	}
}

func TestSearchEdgeCases(t *testing.T) {
	t.Parallel()
	empty := lexical.New(nil, nil)
	if hits := empty.Search("anything at all", 5); hits != nil {
		t.Errorf("empty index: got %v", hits)
	}
	idx := lexical.New(sampleDocs, nil)
	for _, q := range []string{"", "   ", "the and of", "zzzqqq xyzzy"} {
		if hits := idx.Search(q, 5); len(hits) != 0 {
			t.Errorf("Search(%q) = %v, want nothing", q, hits)
		}
	}
	plain := lexical.New(sampleDocs, &lexical.Options{Feedback: -1})
	if hits := plain.Search("dispatch", 0); len(hits) != 2 {
		t.Errorf("Search(dispatch, 0) without feedback = %d hits, want the 2 documents that contain it", len(hits))
	}
	if hits := idx.Search("dispatch", 1); len(hits) != 1 {
		t.Errorf("Search(dispatch, 1) = %d hits, want 1", len(hits))
	}
}

// TestNormDropsForUnknownTerms checks the signal Answer relies on: words
// no document contains pull Norm down.
func TestNormDropsForUnknownTerms(t *testing.T) {
	t.Parallel()
	idx := lexical.New(sampleDocs, nil)
	focused := idx.Search("grafana dashboards", 1)
	diluted := idx.Search("grafana dashboards kubernetes terraform webpack", 1)
	if len(focused) == 0 || len(diluted) == 0 {
		t.Fatal("no hits")
	}
	if diluted[0].Norm >= focused[0].Norm {
		t.Errorf("Norm with unknown terms %.3f, want below %.3f", diluted[0].Norm, focused[0].Norm)
	}
}

func TestFieldWeights(t *testing.T) {
	t.Parallel()
	docs := []lexical.Doc{
		{ID: "in-name", Name: "kafka-topics", Body: "naming rules for streams"},
		{ID: "in-body", Name: "streams", Body: "kafka topics naming rules"},
	}
	for _, tt := range []struct {
		opts  *lexical.Options
		first string
	}{
		{nil, "in-name"},
		{&lexical.Options{NameWeight: 0.1, BodyWeight: 5}, "in-body"},
	} {
		hits := lexical.New(docs, tt.opts).Search("kafka topics", 2)
		if len(hits) != 2 || hits[0].ID != tt.first {
			t.Errorf("options %+v: got %v, want %s first", tt.opts, hits, tt.first)
		}
	}
}

// synthDocs returns n documents over a vocabulary with a Zipf-like
// distribution, mixing English words, identifiers and Chinese.
func synthDocs(n int, seed uint64) []lexical.Doc {
	r := rand.New(rand.NewPCG(seed, 1))
	vocab := make([]string, 0, 3000)
	for i := range 2400 {
		vocab = append(vocab, fmt.Sprintf("word%d", i))
	}
	for i := range 300 {
		vocab = append(vocab, fmt.Sprintf("Service%dHandler", i), fmt.Sprintf("pkg_%d.Func", i))
	}
	han := []rune("部署脚本集群数据库升级迁移测试缓存延迟告警面板发布回滚配置密钥权限日志")
	for i := range 200 {
		vocab = append(vocab, string([]rune{han[i%len(han)], han[(i*7+3)%len(han)], han[(i*13+5)%len(han)]}))
	}
	zipf := rand.NewZipf(r, 1.1, 2, uint64(len(vocab)-1))
	text := func(nbytes int) string {
		b := make([]byte, 0, nbytes+32)
		for len(b) < nbytes {
			if len(b) > 0 {
				b = append(b, ' ')
			}
			b = append(b, vocab[zipf.Uint64()]...)
		}
		return string(b)
	}
	docs := make([]lexical.Doc, n)
	for i := range docs {
		docs[i] = lexical.Doc{
			ID:          fmt.Sprintf("mem_%05d.md", i),
			Name:        fmt.Sprintf("memory-%d-%s", i, vocab[zipf.Uint64()]),
			Description: text(120),
			Body:        text(600),
		}
	}
	return docs
}

// TestIncrementalMatchesRebuild checks that an index kept current with
// Put and Remove (through several compactions) ranks exactly like one
// built from the final documents.
func TestIncrementalMatchesRebuild(t *testing.T) {
	t.Parallel()
	docs := synthDocs(400, 1)
	idx := lexical.New(docs[:300], nil)
	live := make(map[string]lexical.Doc)
	for _, d := range docs[:300] {
		live[d.ID] = d
	}
	r := rand.New(rand.NewPCG(2, 2))
	for step := range 600 {
		switch op := r.IntN(3); {
		case op == 0 && len(live) > 0: // remove
			id := fmt.Sprintf("mem_%05d.md", r.IntN(400))
			_, had := live[id]
			if got := idx.Remove(id); got != had {
				t.Fatalf("step %d: Remove(%s) = %v, want %v", step, id, got, had)
			}
			delete(live, id)
		case op == 1: // replace with another document's text
			d := docs[r.IntN(len(docs))]
			d.ID = fmt.Sprintf("mem_%05d.md", r.IntN(400))
			idx.Put(d)
			live[d.ID] = d
		default: // add back an original
			d := docs[r.IntN(len(docs))]
			idx.Put(d)
			live[d.ID] = d
		}
	}
	final := make([]lexical.Doc, 0, len(live))
	for _, d := range live {
		final = append(final, d)
	}
	fresh := lexical.New(final, nil)
	if idx.Len() != fresh.Len() {
		t.Fatalf("Len = %d, want %d", idx.Len(), fresh.Len())
	}
	approx := cmpopts.EquateApprox(0, 1e-9)
	for i := range 50 {
		q := docs[i*7].Description[:60]
		if diff := cmp.Diff(fresh.Search(q, 20), idx.Search(q, 20), approx); diff != "" {
			t.Fatalf("query %q: incremental differs from rebuild (-rebuild +incremental):\n%s", q, diff)
		}
	}
	for id := range live {
		if !idx.Has(id) {
			t.Errorf("Has(%s) = false for a live document", id)
		}
	}
}

func TestPutReplaces(t *testing.T) {
	t.Parallel()
	idx := lexical.New(sampleDocs, nil)
	idx.Put(lexical.Doc{ID: "reference_grafana.md", Name: "kibana", Description: "Kibana for logs"})
	if hits := idx.Search("grafana", 5); len(hits) != 0 {
		t.Errorf("old text still found after replace: %v", hits)
	}
	if hits := idx.Search("kibana", 5); len(hits) != 1 || hits[0].ID != "reference_grafana.md" {
		t.Errorf("new text not found after replace: %v", hits)
	}
	if idx.Len() != len(sampleDocs) {
		t.Errorf("Len = %d after replace, want %d", idx.Len(), len(sampleDocs))
	}
	if idx.Remove("no-such-doc") {
		t.Error("Remove of an unknown ID reported true")
	}
}

// TestConcurrentSearchAndUpdate is for the race detector.
func TestConcurrentSearchAndUpdate(t *testing.T) {
	t.Parallel()
	docs := synthDocs(200, 3)
	idx := lexical.New(docs, nil)
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := range 50 {
				idx.Search(docs[(w*50+i)%len(docs)].Description, 10)
			}
		})
	}
	wg.Go(func() {
		for i := range 200 {
			if i%2 == 0 {
				idx.Remove(docs[i].ID)
			} else {
				idx.Put(docs[i])
			}
		}
	})
	wg.Wait()
}

func TestAnswer(t *testing.T) {
	t.Parallel()
	hits := []lexical.Hit{
		{ID: "a", Score: 10, Coverage: 0.6, Terms: []string{"deploy", "prod"}},
		{ID: "b", Score: 5, Coverage: 0.3, Terms: []string{"deploy"}},
		{ID: "c", Score: 2.5, Coverage: 0.3, Terms: []string{"prod"}},
		{ID: "d", Score: 0.4, Coverage: 0.3, Terms: []string{"prod"}},
	}
	feedbackOnly := []lexical.Hit{
		{ID: "x", Score: 10, Coverage: 0},
		{ID: "a", Score: 4, Coverage: 0.4, Terms: []string{"deploy"}},
	}
	tests := []struct {
		name string
		hits []lexical.Hit
		opts *lexical.AnswerOptions
		want []string
	}{
		{"defaults keep hits above a twentieth of the best", hits, nil, []string{"a", "b", "c"}},
		{"max caps", hits, &lexical.AnswerOptions{Max: 2}, []string{"a", "b"}},
		{"relative cut", hits, &lexical.AnswerOptions{MinRelative: 0.5}, []string{"a", "b"}},
		{"low coverage means nothing relevant", hits, &lexical.AnswerOptions{MinCoverage: 0.7}, []string{}},
		{"an anchored query is answered whatever its coverage", hits, &lexical.AnswerOptions{MinCoverage: 0.7, Anchored: true}, []string{"a", "b", "c"}},
		{"a hit without a query term is never returned", feedbackOnly, nil, []string{"a"}},
		{"only feedback hits means nothing relevant", feedbackOnly[:1], nil, []string{}},
		{"no hits", nil, nil, []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ids(lexical.Answer(tt.hits, tt.opts))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestAnswerUnrelatedQuestions: questions about things a directory never
// mentions get nothing, even when one of their words occurs in it.
func TestAnswerUnrelatedQuestions(t *testing.T) {
	t.Parallel()
	idx := lexical.New([]lexical.Doc{
		{ID: "deploy.md", Name: "deploy-process", Description: "Production deploys go through the blue/green script, never kubectl apply", Body: "Split traffic 10/90 first; watch the error budget."},
		{ID: "codes.md", Name: "airport-codes", Description: "Shipment origins use IATA airport codes in upper case", Body: "Validate them against the table in `geo/iata.csv`."},
		{ID: "review.md", Name: "review-style", Description: "Small PRs, one concern each", Body: "The description says why."},
	}, nil)
	for _, q := range []string{"what is the tmux shortcut to split a pane?", "how do I center a div vertically with flexbox?"} {
		if got := ids(lexical.Answer(idx.Search(q, 30), nil)); len(got) != 0 {
			t.Errorf("Answer(%q) = %v, want nothing", q, got)
		}
	}
	if got := ids(lexical.Answer(idx.Search("how do we deploy to production?", 30), nil)); len(got) == 0 || got[0] != "deploy.md" {
		t.Errorf("Answer(deploy question) = %v, want deploy.md first", got)
	}
}

func ExampleIndex_Search() {
	idx := lexical.New([]lexical.Doc{
		{ID: "feedback_flaky_tests.md", Name: "flaky-tests-root-cause", Description: "Find the root cause of flaky tests; never add retries"},
		{ID: "reference_grafana.md", Name: "grafana-dashboards", Description: "Grafana dashboards for dispatch latency"},
	}, nil)
	for _, h := range idx.Search("the checkout test is flaky again", 30) {
		fmt.Printf("%s %v\n", h.ID, h.Terms)
	}
	// Output:
	// feedback_flaky_tests.md [test flaki]
}

// In a directory of one or two memories, a question that shares most of its
// words with a memory is answered, though it uses words no memory holds;
// one that shares nothing, or only a word, still gets nothing.
func TestAnswerSmallIndex(t *testing.T) {
	t.Parallel()
	deploy := lexical.Doc{ID: "project_deploy.md", Name: "deploy", Description: "How the billing service is deployed to production behind the load balancer",
		Body: "Run make deploy-prod; the load balancer flips after the health checks pass."}
	tabs := lexical.Doc{ID: "user_tabs.md", Name: "tabs", Description: "The user prefers tabs in Makefiles", Body: "Always tabs, never spaces."}
	for _, docs := range [][]lexical.Doc{{deploy}, {deploy, tabs}} {
		idx := lexical.New(docs, nil)
		if got := ids(lexical.Answer(idx.Search("the load balancer keeps failing health checks after a release", 30), nil)); !slices.Equal(got, []string{"project_deploy.md"}) {
			t.Errorf("%d docs: answer %v, want the deploy memory", len(docs), got)
		}
		for _, q := range []string{"tmux shortcut to split a pane", "regex for an IATA airport code in the checkout form"} {
			if got := ids(lexical.Answer(idx.Search(q, 30), nil)); len(got) != 0 {
				t.Errorf("%d docs: Answer(%q) = %v, want nothing", len(docs), q, got)
			}
		}
	}
}
