package lexical

// AnswerOptions sets the rule [Answer] uses to decide what is relevant
// enough to return without a model. A zero field means its default.
type AnswerOptions struct {
	// Max caps the answer. Default 5, as many as the model selector may pick.
	Max int
	// MinCoverage is the share of the query's IDF mass (see
	// [Hit.Coverage]) that the best of the leading Max hits must match
	// for the query to be answered at all; below it the index is judged
	// to hold nothing relevant. Default [DefaultMinCoverage].
	MinCoverage float64
	// MinRelative drops hits scoring below this fraction of the best hit's
	// score, so a strong match is not padded with noise. Default
	// [DefaultMinRelative].
	MinRelative float64
	// Anchored says the query names something the leading hits are named
	// for (a person, a product: see recall's answer rule): such a query is
	// answered whatever its coverage, because coverage cannot tell it from
	// its unanswerable twin ("what did Jon find on his walk?" when it was
	// Gina who walked), and silence there costs recall without buying
	// anything.
	Anchored bool
}

// DefaultMinRelative is the default [AnswerOptions.MinRelative]: chosen
// between 0.05, 0.1 and 0.2 on the development set and the first three
// LoCoMo conversations, checked on the other two and the open-source set
// (docs/recall.md has the figures).
const DefaultMinRelative = 0.05

// DefaultMinCoverage is the default [AnswerOptions.MinCoverage].
//
// It was set on a labelled set the ranker was never tuned on
// (testdata/eval/recall-oss.json in memdir's repository: an open-source
// Rust project's memories, with six questions no memory answers), halfway
// between the highest coverage an unanswerable question reached there
// (0.24) and the lowest a question with a relevant memory reached (0.28),
// and then checked, unchanged, on the development set the ranker was tuned
// on (recall-dev.json: six of six unanswerable questions answered with
// nothing, at the set's size and under 1,880 newer distractors).
const DefaultMinCoverage = 0.26

func (o *AnswerOptions) withDefaults() AnswerOptions {
	var r AnswerOptions
	if o != nil {
		r = *o
	}
	if r.Max <= 0 {
		r.Max = 5
	}
	if r.MinCoverage <= 0 {
		r.MinCoverage = DefaultMinCoverage
	}
	if r.MinRelative <= 0 {
		r.MinRelative = DefaultMinRelative
	}
	return r
}

// Answer picks, from hits ordered best first (as [Index.Search] returns
// them), the ones to return on their own when no model is there to choose.
// An empty result means nothing in the index is judged relevant.
//
// A hit counts only if it contains at least one of the query's own terms
// (stopwords never become terms): a document reached only through
// pseudo-relevance feedback can widen a shortlist, but it is not evidence
// enough to be shown on its own. Among the leading Max such hits, the query
// is answered only if one matches at least MinCoverage of the query's IDF
// mass (or the query is Anchored); then the answer is those hits that
// score at least MinRelative times the best.
//
// The rule is relative to what the query could match, not to an absolute
// score: Coverage divides the IDF of the query terms a document contains
// by the IDF of all the query's terms, counting those that no document
// contains at the IDF of a term one document contains (the rarest a seen
// term can be; BM25's own IDF for an unseen term would make every unseen
// word outweigh several seen ones in a small index). A question about something the directory
// never mentions ("the tmux shortcut to split a pane") has most of its
// weight in words no memory uses, so even its best hit covers little of
// it, however high its BM25 score; a question the directory can answer
// finds most of its rare words in one memory. The decision rests on the
// best hit because a second relevant memory often covers another part of
// the query.
func Answer(hits []Hit, opts *AnswerOptions) []Hit {
	o := opts.withDefaults()
	var lead []Hit
	for _, h := range hits {
		if len(lead) == o.Max {
			break
		}
		if len(h.Terms) > 0 {
			lead = append(lead, h)
		}
	}
	best := 0.0
	for _, h := range lead {
		best = max(best, h.Coverage)
	}
	if len(lead) == 0 || best < o.MinCoverage && !o.Anchored {
		return nil
	}
	var out []Hit
	for _, h := range lead {
		if h.Score >= o.MinRelative*lead[0].Score {
			out = append(out, h)
		}
	}
	return out
}
