package screen

import (
	"strings"
	"testing"
)

// benchMemory is a realistic 2 KB project memory: frontmatter, prose, a
// list, inline code and a URL, with nothing a rule should flag.
func benchMemory(tb testing.TB) string {
	tb.Helper()
	var b strings.Builder
	b.WriteString("---\nname: deploy-notes\ndescription: How deploys and tests work in this repository\ntype: project\n---\n\n")
	para := "Deploys go through the release pipeline on every merge to main; the staging health check is `curl -fsS http://localhost:8080/healthz`. " +
		"Prefer table-driven tests with cmp.Diff, run `go test -race ./store/` before saying a change is done, and never push directly to main.\n" +
		"- Dashboards: https://grafana.example.com/d/web\n- Secrets live in the 1Password vault; never commit .env.\n\n"
	for b.Len() < 2048 {
		b.WriteString(para)
	}
	return b.String()[:2048]
}

func BenchmarkCheck2KB(b *testing.B) {
	text := benchMemory(b)
	if fs := Check(text); len(fs) != 0 {
		b.Fatalf("benchmark memory is flagged: %v", fs)
	}
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		Check(text)
	}
}

// BenchmarkPrepareRules is the one-off cost of the first Check in a
// process: compiling, splitting and indexing the rule table.
func BenchmarkPrepareRules(b *testing.B) {
	for b.Loop() {
		rs, ts := splitRules(phraseRuleTable), splitRules(tightRuleTable)
		newLitIndex(rs)
		newLitIndex(ts)
	}
}
