package recall

import (
	"cmp"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The head of the lexical ranking is re-scored with what BM25 does not see
// and a memory's header holds: the kind of answer a question asks for, the
// date it names against the memory's date, and the day the head's weight
// lies on. Each is a factor on the lexical score; docs/recall.md has the
// figures they were chosen on.
const (
	// rerankDepth is how many of the leading lexical hits are re-scored;
	// the rest keep their order below them.
	rerankDepth = 30
	// answerTypeBoost multiplies the score of a memory whose name or
	// description holds the kind of answer the question asks for (a time
	// for "when", a duration for "how long").
	answerTypeBoost = 0.7
	// dateBoost multiplies the score of a memory dated within the period
	// the question names ("in May 2023", "on 9 November, 2022").
	dateBoost = 0.6
	// dayBoost scales the day factor: a memory's score is multiplied by
	// 1 + dayBoost·share, share being the part of the head's score that
	// memories of its day hold (see dayFactors).
	dayBoost = 2.0
)

// rerankFactors are the parts of a lexical score's re-scoring: multipliers,
// 1 when they do not apply.
type rerankFactors struct {
	answerType, date, day float64
}

func (f rerankFactors) product() float64 { return f.answerType * f.date * f.day }

// noFactors is the re-scoring of a memory the cues do not touch.
var noFactors = rerankFactors{1, 1, 1}

// queryCues is what a query says besides its terms.
type queryCues struct {
	answer *regexp.Regexp // what the answer looks like, nil when unknown
	when   *dateSpan      // the period the query names, nil when none
}

func parseCues(query string, now time.Time) queryCues {
	return queryCues{answer: answerShape(query), when: namedDate(query, now)}
}

// rerank re-scores the leading hits of ranked (in lexical order) by the
// query's cues and returns them re-sorted, the tail unchanged; each
// memory's factors are kept with it. count says how many memories of the
// directory were last modified within each of some spans of Unix
// nanoseconds (see dayFactors).
func rerank(ranked []rankedMemory, query string, now time.Time, count func(spans [][2]int64) []int) []rankedMemory {
	if len(ranked) < 2 {
		return ranked
	}
	cues := parseCues(query, now)
	head := ranked[:min(rerankDepth, len(ranked))]
	for i := range head {
		r := &head[i]
		r.factors = cues.factors(r)
		r.score = r.lex.Score * r.factors.product()
	}
	dayFactors(head, count)
	slices.SortStableFunc(head, func(a, b rankedMemory) int { return cmp.Compare(b.score, a.score) })
	for i := range head {
		head[i].lexRank = i + 1
	}
	return ranked
}

// dayFactors multiplies the score of each memory of head by its day
// factor, 1 + dayBoost·share·min(1, h/n): share is the part of the head's
// total score held by the memories last modified on the same day as it
// (itself included), h the head's size and n how many memories of the
// directory were last modified that day (count gives it); 1 for a memory
// without a time.
//
// It is pseudo-relevance feedback on time. What was written on one day
// is often one episode (a session's memories: a conversation, an
// incident, a piece of work), and a question about that episode finds
// some of its memories by their words and not others, which say what
// else happened then in other words. When the head's weight gathers on
// one day, that day's memories are lifted together; when it is spread
// over many days, as for a question no one episode answers, each share
// is small and the order barely moves. A factor, not an addition: a
// memory lifted still needs words of its own to rise. A day that holds
// more memories than the head (a bulk import, a fresh clone, a thousand
// notes written by a script) can fill the head by chance alone, so its
// share counts h/n of itself.
func dayFactors(head []rankedMemory, count func(spans [][2]int64) []int) {
	var total float64
	for i := range head {
		total += head[i].score
	}
	if total <= 0 {
		return
	}
	// The head's days, each as a span, and the head's score on each.
	var spans [][2]int64
	var dayScore []float64
	dayOf := make([]int, len(head))
	for i := range head {
		dayOf[i] = -1
		t := head[i].h.ModTime
		if t.IsZero() {
			continue
		}
		y, m, d := t.Date()
		from := time.Date(y, m, d, 0, 0, 0, 0, t.Location())
		sp := [2]int64{from.UnixNano(), from.AddDate(0, 0, 1).UnixNano()}
		for j, s := range spans {
			if s == sp {
				dayOf[i] = j
			}
		}
		if dayOf[i] < 0 {
			dayOf[i] = len(spans)
			spans = append(spans, sp)
			dayScore = append(dayScore, 0)
		}
		dayScore[dayOf[i]] += head[i].score
	}
	if len(spans) == 0 {
		return
	}
	n := count(spans)
	for i := range head {
		if dayOf[i] < 0 || dayScore[dayOf[i]] <= 0 {
			continue
		}
		specific := 1.0
		if c := n[dayOf[i]]; c > len(head) {
			specific = float64(len(head)) / float64(c)
		}
		head[i].factors.day = 1 + dayBoost*dayScore[dayOf[i]]/total*specific
		head[i].score *= head[i].factors.day
	}
}

func (c queryCues) factors(r *rankedMemory) rerankFactors {
	f := noFactors
	if c.answer != nil && c.answer.MatchString(r.h.Name+" \n "+r.h.Description) {
		f.answerType = 1 + answerTypeBoost
	}
	if c.when != nil && !r.h.ModTime.IsZero() && c.when.contains(r.h.ModTime) {
		f.date = 1 + dateBoost
	}
	return f
}

// Answer shapes: what a time and a duration look like in English
// text. They are cues, not parsers: a memory that matches gets a nudge.
// Every pattern of this file is compiled on first use, not when the
// program starts: only a recall needs them, and compiling them took 0.7
// ms and 137 KB of every memdir process's start (GODEBUG=inittrace=1 on a
// machine with slow page faults).
var (
	timeShape     = lazyRegexp(`(?i)\b(yesterday|today|tonight|tomorrow|ago|last|next|since|recently|week|weekend|month|year|morning|evening|monday|tuesday|wednesday|thursday|friday|saturday|sunday|january|february|march|april|may|june|july|august|september|october|november|december|spring|summer|autumn|fall|winter|(19|20)\d\d)\b`)
	durationShape = lazyRegexp(`(?i)\b(\d+|one|two|three|four|five|six|seven|eight|nine|ten|several|a few|many)\s+(years?|months?|weeks?|days?|hours?|minutes?)\b|\bsince\b`)

	whenQuestion     = lazyRegexp(`(?i)^\s*(when\b|what (year|month|day|date|time)\b|which (year|month|day|date)\b)`)
	durationQuestion = lazyRegexp(`(?i)\bhow long\b`)
)

func lazyRegexp(pattern string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(pattern) })
}

// answerShape is what the answer to an English question looks like: a
// time for "when …?", a duration for "how long …?"; nil otherwise. (A
// count for "how many …?" was tried and left out: numbers are everywhere
// in a coding memory, and it cost the coding sets more than it gave.)
func answerShape(q string) *regexp.Regexp {
	switch {
	case whenQuestion().MatchString(q):
		return timeShape()
	case durationQuestion().MatchString(q):
		return durationShape()
	}
	return nil
}

// mayNameDate reports whether namedDate's patterns could find a date in
// q, so that most queries (a coding prompt names no date) compile none of
// them. Every pattern but inMonth needs a digit; inMonth needs a run of
// ASCII letters that is a full month's name (or "may").
func mayNameDate(q string) bool {
	for i := 0; i < len(q); {
		c := q[i]
		switch {
		case c >= '0' && c <= '9':
			return true
		case c|0x20 >= 'a' && c|0x20 <= 'z':
			j := i + 1
			for j < len(q) && q[j]|0x20 >= 'a' && q[j]|0x20 <= 'z' {
				j++
			}
			if w := strings.ToLower(q[i:j]); len(w) > 3 || w == "may" {
				if _, ok := monthNames[w]; ok {
					return true
				}
			}
			i = j
		default:
			i++
		}
	}
	return false
}

// dateSpan is a period a query names: [from, to).
type dateSpan struct{ from, to time.Time }

func (d *dateSpan) contains(t time.Time) bool {
	return !t.Before(d.from) && t.Before(d.to)
}

var (
	monthNames = map[string]time.Month{
		"january": 1, "february": 2, "march": 3, "april": 4, "may": 5, "june": 6, "july": 7,
		"august": 8, "september": 9, "october": 10, "november": 11, "december": 12,
		"jan": 1, "feb": 2, "mar": 3, "apr": 4, "jun": 6, "jul": 7, "aug": 8, "sep": 9, "sept": 9, "oct": 10, "nov": 11, "dec": 12,
	}
	// "9 November, 2022", "November 9, 2022", "May 2023", "in March".
	dayMonth  = lazyRegexp(`(?i)\b(\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?([a-z]+)\.?,?(?:\s+((?:19|20)\d\d))?\b`)
	monthDay  = lazyRegexp(`(?i)\b([a-z]+)\.?\s+(\d{1,2})(?:st|nd|rd|th)?,?(?:\s+((?:19|20)\d\d))?\b`)
	monthYear = lazyRegexp(`(?i)\b(?:in|during|of|since|from|before|after|early|late|mid)?\s*([a-z]+)\.?,?\s+((?:19|20)\d\d)\b`)
	inMonth   = lazyRegexp(`(?i)\b(?:in|during|early|late|mid|last|this|since|(?:week|weekend|beginning|start|end|middle|half|part)\s+of)\s+([a-z]+)\b`)
	bareYear  = lazyRegexp(`\b((?:19|20)\d\d)\b`)
)

// namedDate returns the period an English query names, if any: a day (and
// the week after it, as memories are often written a few days after what
// they record), a month, or a year. A month without a year is the latest
// such month not after now; a part of one ("the second week of November",
// "the end of March") is read as the month. "May" counts as a month only
// with a day or a year beside it, or after "in" (or "of", in those parts).
func namedDate(q string, now time.Time) *dateSpan {
	if !mayNameDate(q) {
		return nil
	}
	return datePatterns(q, now)
}

// datePatterns is namedDate without the test that spares the patterns.
func datePatterns(q string, now time.Time) *dateSpan {
	day := func(y int, m time.Month, d int) *dateSpan {
		from := time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
		return &dateSpan{from, from.AddDate(0, 0, 8)}
	}
	yearOr := func(s string, m time.Month) int {
		if y, err := strconv.Atoi(s); err == nil {
			return y
		}
		y := now.Year()
		if m > now.Month() {
			y--
		}
		return y
	}
	for _, m := range dayMonth().FindAllStringSubmatch(q, -1) {
		if mon, ok := monthNames[strings.ToLower(m[2])]; ok {
			if d, _ := strconv.Atoi(m[1]); d >= 1 && d <= 31 {
				return day(yearOr(m[3], mon), mon, d)
			}
		}
	}
	for _, m := range monthDay().FindAllStringSubmatch(q, -1) {
		if mon, ok := monthNames[strings.ToLower(m[1])]; ok {
			if d, _ := strconv.Atoi(m[2]); d >= 1 && d <= 31 {
				return day(yearOr(m[3], mon), mon, d)
			}
		}
	}
	month := func(y int, m time.Month) *dateSpan {
		from := time.Date(y, m, 1, 0, 0, 0, 0, time.UTC)
		return &dateSpan{from, from.AddDate(0, 1, 0)}
	}
	for _, m := range monthYear().FindAllStringSubmatch(q, -1) {
		if mon, ok := monthNames[strings.ToLower(m[1])]; ok {
			return month(yearOr(m[2], mon), mon)
		}
	}
	for _, m := range inMonth().FindAllStringSubmatch(q, -1) {
		// Full month names only: "in mar" is rarely March.
		w := strings.ToLower(m[1])
		if mon, ok := monthNames[w]; ok && (len(w) > 3 || w == "may") {
			return month(yearOr("", mon), mon)
		}
	}
	for _, m := range bareYear().FindAllStringSubmatchIndex(q, -1) {
		// Not a part of a version, tag or ISO date ("2026.11.28-3").
		if end := m[3]; end < len(q) && strings.ContainsRune(".-/_", rune(q[end])) || m[2] > 0 && strings.ContainsRune(".-/_", rune(q[m[2]-1])) {
			continue
		}
		y, _ := strconv.Atoi(q[m[2]:m[3]])
		from := time.Date(y, 1, 1, 0, 0, 0, 0, time.UTC)
		return &dateSpan{from, from.AddDate(1, 0, 0)}
	}
	return nil
}
