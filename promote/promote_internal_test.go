package promote

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/internal/mdtext"
	"github.com/memdir/memdir/llm"
)

func TestSplitInstructions(t *testing.T) {
	src := "---\npaths: src/**\n---\n# Rules\n\nUse tabs\nin Go files.\n\n- Deploy through Argo.\n  Never kubectl.\n* second item\n3. numbered item\n<!-- a comment\nspanning lines -->\n| a | b |\n|---|---|\n```sh\n- not a rule\n```\n@docs/more.md\nx\n\n~~~\ncode\n~~~\nLast paragraph here.\n"
	got := splitInstructions([]byte(src))
	want := []instruction{
		{6, "Use tabs in Go files."},
		{9, "Deploy through Argo. Never kubectl."},
		{11, "second item"},
		{12, "numbered item"},
		{26, "Last paragraph here."},
	}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(instruction{})); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestPolarity(t *testing.T) {
	for _, tc := range []struct {
		text string
		neg  []string
	}{
		{"Integration tests hit a real database, never mocks.", []string{"mock"}},
		{"Don't use the ORM for reports.", []string{"orm"}},
		{"Use tabs, not spaces", []string{"space"}},
		{"Never kubectl apply to production.", []string{"kubectl"}},
		{"Replay recorded fixtures instead of live calls", []string{"live"}},
		{"不要 mock 数据库", []string{"mock"}},
		{"禁止使用缩进空格", []string{"缩进"}},
		{"Mock external HTTP services in unit tests.", nil},
		{"It's fine.", nil},
	} {
		neg, pos := polarity(tc.text)
		var got []string
		for term := range neg {
			got = append(got, term)
			if pos[term] {
				t.Errorf("%q: %q is both negated and asserted", tc.text, term)
			}
		}
		sort.Strings(got)
		if diff := cmp.Diff(tc.neg, got); diff != "" {
			t.Errorf("%q negates (-want +got):\n%s", tc.text, diff)
		}
	}
}

func TestMentionedDates(t *testing.T) {
	got := mentionedDates("freeze 2026-03-05 to 2026/3/12; launch March 20th, 2026; review 5 Apr 2026; 发布于2026年4月8日; not 2026-02-30 nor v1.2.3 nor 2026-13-01")
	var s []string
	for _, d := range got {
		s = append(s, d.Format("2006-01-02"))
	}
	sort.Strings(s)
	if diff := cmp.Diff([]string{"2026-03-05", "2026-03-12", "2026-03-20", "2026-04-05", "2026-04-08"}, s); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestOutdatedUsesTheLocalDate checks that "past" is judged by the
// calendar date of the injected clock in its own zone.
func TestOutdatedUsesTheLocalDate(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "project_launch.md"), []byte("---\nname: launch\ndescription: launch day\ntype: project\n---\nLaunch on 2026-12-01.\n"), 0o600)
	tokyo := time.FixedZone("JST", 9*3600)
	for _, tc := range []struct {
		now      time.Time
		outdated bool
	}{
		{time.Date(2026, 12, 1, 23, 59, 0, 0, tokyo), false}, // launch day itself
		{time.Date(2026, 12, 2, 0, 1, 0, 0, tokyo), true},    // still Dec 1 in UTC
		{time.Date(2026, 12, 1, 15, 1, 0, 0, time.UTC), false},
	} {
		rep, err := Review(context.Background(), Sources{MemoryDir: dir, ProjectRoot: t.TempDir()}, &Options{Now: func() time.Time { return tc.now }})
		if err != nil {
			t.Fatal(err)
		}
		got := len(rep.Items) == 1 && rep.Items[0].Kind == KindOutdated
		if got != tc.outdated {
			t.Errorf("at %s: items %+v, want outdated=%v", tc.now, rep.Items, tc.outdated)
		}
	}
}

func TestAppendRule(t *testing.T) {
	for _, tc := range []struct{ old, want string }{
		{"", "- r\n"},
		{"- a\n", "- a\n- r\n"},
		{"- a", "- a\n- r\n"},
		{"# Rules\n\nSome prose.\n", "# Rules\n\nSome prose.\n\n- r\n"},
		{"Some prose.\n\n", "Some prose.\n\n- r\n"},
	} {
		if got := string(appendRule([]byte(tc.old), "r")); got != tc.want {
			t.Errorf("appendRule(%q) = %q, want %q", tc.old, got, tc.want)
		}
	}
}

// cannedModel answers every request with the same response.
type cannedModel struct{ resp *llm.Response }

func (m cannedModel) Generate(context.Context, *llm.Request) (*llm.Response, error) {
	return m.resp, nil
}

// TestModelItemsAnswerNotJSON checks, with a model that reports no usage
// (the adapters count the call themselves), that the call is counted and
// an answer with no JSON in it is refused before anything else is checked.
func TestModelItemsAnswerNotJSON(t *testing.T) {
	rv := &reviewer{entries: []*reviewEntry{{Subject: Subject{Ref: "M1", Layer: LayerAuto, Path: "a.md"}}}}
	m := cannedModel{&llm.Response{Content: []llm.Block{llm.TextBlock("Everything looks fine.")}}}
	items, usage, err := rv.modelItems(context.Background(), m, "", nil)
	if err == nil || !strings.HasPrefix(err.Error(), "the model's answer is not JSON: ") || items != nil {
		t.Errorf("items %v, err %v; want the answer refused as not JSON", items, err)
	}
	if usage.Calls != 1 {
		t.Errorf("usage %+v; want the call counted", usage)
	}
}

// FuzzSplitInstructions checks that any instruction file splits without
// panicking into one-line entries whose line numbers are in the file.
func FuzzSplitInstructions(f *testing.F) {
	for _, s := range []string{"- a b\n", "---\nx: 1\n---\n- a b\n", "```\n- a b", "<!-- x\n- a b", "para one\npara two\n\n1) x y\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		lines := strings.Count(mdtext.Normalize(data), "\n") + 1
		for _, in := range splitInstructions(data) {
			if in.line < 1 || in.line > lines {
				t.Fatalf("line %d outside 1..%d", in.line, lines)
			}
			if strings.ContainsAny(in.text, "\n\r") || !utf8.ValidString(in.text) {
				t.Fatalf("entry %q is not one valid line", in.text)
			}
		}
		neg, pos := polarity(string(data))
		for t2 := range neg {
			if pos[t2] {
				t.Fatalf("%q both negated and asserted", t2)
			}
		}
		mentionedDates(string(data))
	})
}

// benchWorld writes n memories (a fifth of them near duplicates) and a
// CLAUDE.md of 100 rules.
func benchWorld(b *testing.B, n int) Sources {
	b.Helper()
	base := b.TempDir()
	src := Sources{MemoryDir: filepath.Join(base, "memory"), ProjectRoot: filepath.Join(base, "project"), ConfigHome: filepath.Join(base, "cfg")}
	os.MkdirAll(src.MemoryDir, 0o700)
	os.MkdirAll(src.ProjectRoot, 0o700)
	r := rand.New(rand.NewPCG(8, 8))
	words := strings.Fields("deploy build test release database cache queue worker api client server index recall token schema migration review branch merge commit lint format style logging metrics alert oncall pager grafana argo kubectl terraform docker postgres redis kafka invoice billing payment ledger report export import sync backup")
	sentence := func(k int) string {
		ws := make([]string, k)
		for i := range ws {
			ws[i] = words[r.IntN(len(words))]
		}
		return strings.Join(ws, " ")
	}
	types := []memdir.Type{memdir.TypeUser, memdir.TypeFeedback, memdir.TypeProject, memdir.TypeReference}
	var prev string
	for i := range n {
		body := sentence(12)
		if i%5 == 4 {
			body = prev + " " + sentence(2)
		}
		prev = body
		content := fmt.Sprintf("---\nname: memory %d\ndescription: %s\ntype: %s\n---\n\n%s\n\n**Why:** %s\n", i, sentence(8), types[i%4], body, sentence(6))
		os.WriteFile(filepath.Join(src.MemoryDir, fmt.Sprintf("m%05d.md", i)), []byte(content), 0o600)
	}
	var md strings.Builder
	for range 100 {
		md.WriteString("- " + sentence(10) + "\n")
	}
	os.WriteFile(filepath.Join(src.ProjectRoot, "CLAUDE.md"), []byte(md.String()), 0o600)
	return src
}

func BenchmarkReview(b *testing.B) {
	for _, n := range []int{200, 2000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			src := benchWorld(b, n)
			now := func() time.Time { return time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC) }
			var items int
			for b.Loop() {
				rep, err := Review(context.Background(), src, &Options{Now: now})
				if err != nil {
					b.Fatal(err)
				}
				items = len(rep.Items)
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/float64(n), "µs/memory")
			b.ReportMetric(float64(items), "items")
		})
	}
}
