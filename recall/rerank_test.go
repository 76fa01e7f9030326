package recall

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"
	"time"

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/internal/evalset"
	"github.com/memdir/memdir/lexical"
)

func TestNamedDate(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	day := func(y int, m time.Month, d int) time.Time { return time.Date(y, m, d, 0, 0, 0, 0, time.UTC) }
	tests := []struct {
		q        string
		from, to time.Time // zero: no date named
	}{
		{"What did Gina do on 9 November, 2022?", day(2022, 11, 9), day(2022, 11, 17)},
		{"What happened on May 23, 2023 at the shelter?", day(2023, 5, 23), day(2023, 5, 31)},
		{"What workout did Maria start in December 2023?", day(2023, 12, 1), day(2024, 1, 1)},
		{"what did we decide in March about the widget", day(2026, 3, 1), day(2026, 4, 1)},
		{"what did we decide in December about the widget", day(2025, 12, 1), day(2026, 1, 1)},
		{"Which country was Tim visiting in the second week of November?", day(2026, 11, 1), day(2026, 12, 1)},
		{"what broke at the end of March?", day(2026, 3, 1), day(2026, 4, 1)},
		{"what did the end of the sprint leave open?", time.Time{}, time.Time{}},
		{"which books did she read in 2022?", day(2022, 1, 1), day(2023, 1, 1)},
		{"you may want to bump the retries", time.Time{}, time.Time{}},
		{"the v2026.11.28-3 release broke the build", time.Time{}, time.Time{}},
		{"fix the flaky test", time.Time{}, time.Time{}},
	}
	for _, tt := range tests {
		got := namedDate(tt.q, now)
		switch {
		case tt.from.IsZero() && got != nil:
			t.Errorf("%q: named %v–%v, want no date", tt.q, got.from, got.to)
		case !tt.from.IsZero() && (got == nil || !got.from.Equal(tt.from) || !got.to.Equal(tt.to)):
			t.Errorf("%q: named %+v, want %v–%v", tt.q, got, tt.from, tt.to)
		}
	}
}

// namedDate skips its patterns when mayNameDate says they cannot match; it
// must then be right: the patterns find no date in any query it skips.
func TestMayNameDateSkipsOnlyWhatNamesNoDate(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	queries := []string{
		"you may want to bump the retries", "May the build pass", "in may", "IN MAY",
		"the end of march", "we marched on", "decemberish plans", "in Sept", "in September",
		"mid-November", "since_june", "in june_", "in junE!", "in Auguſt", "deKember",
		"fix the flaky test", "v2", "2023", "version two", "", "in   October", "\tin july\n",
		"最近 in March 做了什么", "what happened in Décember", "on 9 jun", "jul 9",
	}
	for _, f := range []string{"recall-dev.json", "recall-oss.json", "recall-app.json"} {
		set, err := evalset.Load(filepath.Join("..", "testdata", "eval", f))
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range set.Queries {
			queries = append(queries, q.Query)
		}
	}
	skipped := 0
	for _, q := range queries {
		if mayNameDate(q) {
			continue
		}
		skipped++
		if d := datePatterns(q, now); d != nil {
			t.Errorf("%q: skipped, but its patterns name %v–%v", q, d.from, d.to)
		}
	}
	if skipped < len(queries)/2 {
		t.Errorf("only %d of %d queries skip the patterns", skipped, len(queries))
	}
}

func TestAnswerShape(t *testing.T) {
	t.Parallel()
	for q, want := range map[string]bool{
		"When did Caroline go to the picnic?":     true,
		"What year did John move to Seattle?":     true,
		"How long has Mel been painting?":         true,
		"why is the deploy slow?":                 false,
		"how many retries does the uploader use?": false,
	} {
		if got := answerShape(q) != nil; got != want {
			t.Errorf("%q: answer shape %v, want %v", q, got, want)
		}
	}
}

func TestAnchored(t *testing.T) {
	t.Parallel()
	lead := []rankedMemory{{h: memdir.Header{Path: "s03_caroline_02.md", Name: "caroline-found-shells-beach"}}, {h: memdir.Header{Path: "feedback_python.md", Name: "python-tooling"}}}
	for q, want := range map[string]bool{
		"What did Caroline find on her walk?":             true,
		"What did Caroline's sister say?":                 true,
		"Caroline found what?":                            false, // the first word
		"how do I center a div with CSS?":                 false, // an acronym
		"what's the difference between Mutex and RwLock?": false,
		"can the Python wheel use the buffer protocol?":   true,
	} {
		if got := anchored(q, lead); got != want {
			t.Errorf("%q: anchored %v, want %v", q, got, want)
		}
	}
}

// TestDayFactors checks the feedback on time: of two memories that score
// the same, the one written on the day the head's weight lies on rises
// above the other, unless that day holds more memories than the head, and
// a head spread over as many days as memories keeps its order.
func TestDayFactors(t *testing.T) {
	t.Parallel()
	day := func(d int) time.Time { return time.Date(2026, 5, d, 12, 0, 0, 0, time.UTC) }
	mem := func(path string, score float64, when time.Time) rankedMemory {
		return rankedMemory{h: memdir.Header{Path: path, ModTime: when}, lex: lexical.Hit{ID: path, Score: score}, score: score, factors: noFactors}
	}
	ranked := []rankedMemory{
		mem("incident.md", 10, day(3)),
		mem("elsewhere.md", 4, day(9)),
		mem("same_day.md", 4, day(3)),
		mem("undated.md", 3, time.Time{}),
	}
	few := func(spans [][2]int64) []int { return make([]int, len(spans)) }
	got := rerank(ranked, "fix the flaky test", day(20), few)
	var order []string
	for _, r := range got {
		order = append(order, r.h.Path)
	}
	if want := []string{"incident.md", "same_day.md", "elsewhere.md", "undated.md"}; !slices.Equal(order, want) {
		t.Errorf("order %v, want %v", order, want)
	}
	// 14 of the head's 21 on the 3rd: 1 + 2·14/21.
	if f := got[1].factors.day; math.Abs(f-(1+dayBoost*14.0/21)) > 1e-9 {
		t.Errorf("same-day factor %v, want %v", f, 1+dayBoost*14.0/21)
	}
	if f := got[3].factors.day; f != 1 {
		t.Errorf("undated memory's factor %v, want 1", f)
	}

	// A day that holds a thousand memories (a bulk import) says little:
	// its share counts 4/1000 of itself, and the order stands.
	bulk := []rankedMemory{
		mem("imported_1.md", 10, day(3)),
		mem("real.md", 5, day(9)),
		mem("imported_2.md", 4, day(3)),
		mem("imported_3.md", 4, day(3)),
	}
	onBulkDay := func(spans [][2]int64) []int {
		out := make([]int, len(spans))
		for i, sp := range spans {
			if sp[0] == time.Date(2026, 5, 3, 0, 0, 0, 0, time.UTC).UnixNano() {
				out[i] = 1000
			} else {
				out[i] = 1
			}
		}
		return out
	}
	got = rerank(bulk, "fix the flaky test", day(20), onBulkDay)
	if got[1].h.Path != "real.md" {
		t.Errorf("bulk day: second is %s, want real.md", got[1].h.Path)
	}

	spread := []rankedMemory{mem("a.md", 10, day(1)), mem("b.md", 6, day(2)), mem("c.md", 5, day(3))}
	got = rerank(spread, "fix the flaky test", day(20), few)
	for i, want := range []string{"a.md", "b.md", "c.md"} {
		if got[i].h.Path != want {
			t.Errorf("spread head: %d is %s, want %s", i, got[i].h.Path, want)
		}
	}
}

// TestCountModified checks the day counts the day factor discounts by.
func TestCountModified(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	days := []int{3, 3, 3, 4, 9}
	for i, dd := range days {
		p := filepath.Join(dir, fmt.Sprintf("m%d.md", i))
		if err := os.WriteFile(p, []byte("---\nname: m\ndescription: a memory\ntype: user\n---\nbody\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		mt := time.Date(2026, 5, dd, 10+i, 0, 0, 0, time.UTC)
		if err := os.Chtimes(p, mt, mt); err != nil {
			t.Fatal(err)
		}
	}
	x := NewIndex(dir, nil)
	if _, err := x.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	span := func(dd int) [2]int64 {
		from := time.Date(2026, 5, dd, 0, 0, 0, 0, time.UTC)
		return [2]int64{from.UnixNano(), from.AddDate(0, 0, 1).UnixNano()}
	}
	got := x.countModified([][2]int64{span(9), span(3), span(5), span(4)})
	if want := []int{1, 3, 0, 1}; !slices.Equal(got, want) {
		t.Errorf("counts %v, want %v", got, want)
	}
}

// wordsExpression is what wordsOf scans for.
var wordsExpression = regexp.MustCompile(`\p{L}[\p{L}\p{N}'’-]*`)

func TestWordsOfAsTheExpression(t *testing.T) {
	for _, s := range []string{
		"", "What did Caroline find on her walk?", "O'Brien’s 2nd-hand API v2.1 CI/CD",
		"部署流程 İstanbul ÉCOLE naïve x²y ٣ letters", "\xff\xfeabc\xe2\x80", "--'’ a-b-c ’'",
	} {
		if got, want := wordsOf(s), wordsExpression.FindAllString(s, -1); !slices.Equal(got, want) {
			t.Errorf("wordsOf(%q) = %q, the expression finds %q", s, got, want)
		}
	}
}

func FuzzWordsOf(f *testing.F) {
	f.Add("What did Caroline find on her walk?")
	f.Add("O'Brien’s 2nd-hand x²\xff")
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := wordsOf(s), wordsExpression.FindAllString(s, -1); !slices.Equal(got, want) {
			t.Fatalf("wordsOf(%q) = %q, the expression finds %q", s, got, want)
		}
	})
}
