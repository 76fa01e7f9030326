package evalset

import (
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
)

// Ranker returns the files it recalls for a query, best first. An empty
// result means "nothing relevant".
type Ranker func(query string) []string

// Options controls an evaluation.
type Options struct {
	// Ks are the cut-offs to report. Default 5 and 30.
	Ks []int
}

// Report is the result of an evaluation.
//
// Averages over queries are macro averages: each query counts once,
// whatever its number of relevant files. Recall, precision and MRR are
// averaged over the queries that have relevant files; queries with none are
// scored by NoneEmpty alone.
type Report struct {
	Ks []int `json:"ks"`
	// Queries counts all queries; WithRelevant those with at least one
	// relevant file; NoRelevant the others.
	Queries      int `json:"queries"`
	WithRelevant int `json:"with_relevant"`
	NoRelevant   int `json:"no_relevant"`

	// Recall[k] is the mean share of a query's relevant files found in the
	// first k results.
	Recall map[int]float64 `json:"recall"`
	// Precision[k] is the mean share of the first k slots holding a
	// relevant file; the denominator is k even when fewer results came back.
	Precision map[int]float64 `json:"precision"`
	// MRR is the mean reciprocal rank of the first relevant file (0 when
	// none is returned).
	MRR float64 `json:"mrr"`

	// NoneEmpty is the share of no-relevant queries answered with nothing
	// (1 when there are no such queries).
	NoneEmpty float64 `json:"none_empty"`
	// AnswerableEmpty is the share of queries with relevant files answered
	// with nothing: silence separates when NoneEmpty is well above it.
	AnswerableEmpty float64 `json:"answerable_empty"`
	// Answered counts queries with relevant files that got a non-empty
	// answer; AnsweredRecall[k] is Recall[k] over those queries only.
	Answered       int             `json:"answered"`
	AnsweredRecall map[int]float64 `json:"answered_recall"`

	PerQuery []QueryResult `json:"per_query"`
}

// QueryResult is the evaluation of one query.
type QueryResult struct {
	ID       string   `json:"id"`
	Query    string   `json:"query"`
	Tags     []string `json:"tags,omitempty"`
	Relevant []string `json:"relevant"`
	// Ranked is what the ranker returned, duplicates removed.
	Ranked    []string        `json:"ranked"`
	Recall    map[int]float64 `json:"recall,omitempty"`
	Precision map[int]float64 `json:"precision,omitempty"`
	// Rank is the 1-based position of the first relevant file, 0 if none.
	Rank int `json:"rank"`
	// Missed lists the relevant files not within the largest cut-off.
	Missed []string `json:"missed,omitempty"`
}

// Evaluate runs rank on every query of s and scores the answers.
func Evaluate(s *Set, rank Ranker, opts *Options) *Report {
	ks := cutoffs(opts)
	maxK := ks[len(ks)-1]
	var per []QueryResult
	for _, q := range s.Queries {
		per = append(per, scoreQuery(q, dedupe(rank(q.Query)), ks, maxK))
	}
	return aggregate(per, ks)
}

// Pool scores the queries of several reports (of the same cut-offs) as one
// evaluation: each query counts once, whichever set it came from.
func Pool(reports ...*Report) *Report {
	var per []QueryResult
	var ks []int
	for _, r := range reports {
		per = append(per, r.PerQuery...)
		if ks == nil {
			ks = r.Ks
		}
	}
	if ks == nil {
		ks = cutoffs(nil)
	}
	return aggregate(per, ks)
}

func cutoffs(opts *Options) []int {
	ks := []int{5, 30}
	if opts != nil && len(opts.Ks) > 0 {
		ks = slices.Clone(opts.Ks)
		slices.Sort(ks)
		ks = slices.Compact(ks)
	}
	return ks
}

// scoreQuery scores one query's answer.
func scoreQuery(q Query, ranked []string, ks []int, maxK int) QueryResult {
	qr := QueryResult{ID: q.ID, Query: q.Query, Tags: q.Tags(), Relevant: q.Relevant, Ranked: ranked}
	if len(q.Relevant) == 0 {
		return qr
	}
	relevant := make(map[string]bool, len(q.Relevant))
	for _, f := range q.Relevant {
		relevant[f] = true
	}
	for i, f := range qr.Ranked {
		if relevant[f] {
			qr.Rank = i + 1
			break
		}
	}
	qr.Recall = make(map[int]float64, len(ks))
	qr.Precision = make(map[int]float64, len(ks))
	for _, k := range ks {
		hits := 0
		for _, f := range qr.Ranked[:min(k, len(qr.Ranked))] {
			if relevant[f] {
				hits++
			}
		}
		qr.Recall[k] = float64(hits) / float64(len(relevant))
		qr.Precision[k] = float64(hits) / float64(k)
	}
	top := qr.Ranked[:min(maxK, len(qr.Ranked))]
	for _, f := range q.Relevant {
		if !slices.Contains(top, f) {
			qr.Missed = append(qr.Missed, f)
		}
	}
	return qr
}

// aggregate averages per-query results into a report.
func aggregate(per []QueryResult, ks []int) *Report {
	r := &Report{
		Ks:             ks,
		Queries:        len(per),
		Recall:         make(map[int]float64),
		Precision:      make(map[int]float64),
		AnsweredRecall: make(map[int]float64),
		PerQuery:       per,
	}
	noneEmpty := 0
	for _, qr := range per {
		if len(qr.Relevant) == 0 {
			r.NoRelevant++
			if len(qr.Ranked) == 0 {
				noneEmpty++
			}
			continue
		}
		r.WithRelevant++
		for _, k := range ks {
			r.Recall[k] += qr.Recall[k]
			r.Precision[k] += qr.Precision[k]
			if len(qr.Ranked) > 0 {
				r.AnsweredRecall[k] += qr.Recall[k]
			}
		}
		if len(qr.Ranked) > 0 {
			r.Answered++
		}
		if qr.Rank > 0 {
			r.MRR += 1 / float64(qr.Rank)
		}
	}
	for _, k := range ks {
		r.Recall[k] = mean(r.Recall[k], r.WithRelevant)
		r.Precision[k] = mean(r.Precision[k], r.WithRelevant)
		r.AnsweredRecall[k] = mean(r.AnsweredRecall[k], r.Answered)
	}
	r.MRR = mean(r.MRR, r.WithRelevant)
	r.NoneEmpty = 1
	if r.NoRelevant > 0 {
		r.NoneEmpty = float64(noneEmpty) / float64(r.NoRelevant)
	}
	r.AnswerableEmpty = mean(float64(r.WithRelevant-r.Answered), r.WithRelevant)
	return r
}

// ByTag scores the queries of each tag apart, for the tags the queries
// carry (a query with several tags counts in each).
func (r *Report) ByTag() map[string]*Report {
	groups := map[string][]QueryResult{}
	for _, q := range r.PerQuery {
		for _, t := range q.Tags {
			groups[t] = append(groups[t], q)
		}
	}
	out := make(map[string]*Report, len(groups))
	for t, per := range groups {
		out[t] = aggregate(per, r.Ks)
	}
	return out
}

func mean(sum float64, n int) float64 {
	if n == 0 {
		return 0
	}
	return sum / float64(n)
}

func dedupe(files []string) []string {
	out := make([]string, 0, len(files))
	seen := make(map[string]bool, len(files))
	for _, f := range files {
		if !seen[f] {
			seen[f] = true
			out = append(out, f)
		}
	}
	return out
}

// Summary returns the headline figures on one line.
func (r *Report) Summary() string {
	var b strings.Builder
	for _, k := range r.Ks {
		fmt.Fprintf(&b, "recall@%d=%.3f precision@%d=%.3f ", k, r.Recall[k], k, r.Precision[k])
	}
	fmt.Fprintf(&b, "MRR=%.3f none-empty=%.3f (%d queries) answered=%d/%d", r.MRR, r.NoneEmpty, r.NoRelevant, r.Answered, r.WithRelevant)
	for _, k := range r.Ks {
		fmt.Fprintf(&b, " answered-recall@%d=%.3f", k, r.AnsweredRecall[k])
	}
	return b.String()
}

// WriteText writes the summary, recall per tag, and every query that missed
// a relevant file or answered a no-relevant query, for logs and notes.
func (r *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintln(&b, r.Summary())
	k := r.Ks[0]
	byTag := make(map[string][]float64)
	for _, q := range r.PerQuery {
		if len(q.Relevant) == 0 {
			continue
		}
		for _, t := range q.Tags {
			byTag[t] = append(byTag[t], q.Recall[k])
		}
	}
	tags := make([]string, 0, len(byTag))
	for t := range byTag {
		tags = append(tags, t)
	}
	sort.Strings(tags)
	for _, t := range tags {
		var sum float64
		for _, v := range byTag[t] {
			sum += v
		}
		fmt.Fprintf(&b, "  [%s] recall@%d=%.3f over %d queries\n", t, k, sum/float64(len(byTag[t])), len(byTag[t]))
	}
	for _, q := range r.PerQuery {
		switch {
		case len(q.Relevant) == 0 && len(q.Ranked) > 0:
			fmt.Fprintf(&b, "%s answered a no-relevant query with %d files (first %s): %s\n", q.ID, len(q.Ranked), q.Ranked[0], q.Query)
		case len(q.Relevant) > 0 && q.Recall[k] < 1:
			fmt.Fprintf(&b, "%s recall@%d=%.2f rank=%d missed@%d=%v: %s\n", q.ID, k, q.Recall[k], q.Rank, r.Ks[len(r.Ks)-1], q.Missed, q.Query)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}
