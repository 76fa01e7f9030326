package recall

import (
	"testing"
	"time"

	"github.com/memdir/memdir"
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
