package lexical

// AnswerOptions sets the rule [Answer] uses to decide what is relevant
// enough to return without a model. A zero field means its default.
type AnswerOptions struct {
	// Max caps the answer. Default 5, as many as the model selector may pick.
	Max int
	// MinNorm is the Norm the best hit needs for the query to be answered
	// at all; below it the index is judged to hold nothing relevant.
	// Default 0.13.
	MinNorm float64
	// MinRelative drops hits scoring below this fraction of the best hit's
	// score, so a strong match is not padded with noise. Default 0.2.
	MinRelative float64
}

func (o *AnswerOptions) withDefaults() AnswerOptions {
	var r AnswerOptions
	if o != nil {
		r = *o
	}
	if r.Max <= 0 {
		r.Max = 5
	}
	if r.MinNorm <= 0 {
		r.MinNorm = 0.13
	}
	if r.MinRelative <= 0 {
		r.MinRelative = 0.2
	}
	return r
}

// Answer picks, from hits ordered best first (as [Index.Search] returns
// them), the ones to return on their own when no model is there to choose.
// The query is answered only if the best hit's Norm reaches MinNorm; then
// the answer is the leading hits, at most Max, that score at least
// MinRelative times the best score. An empty result means nothing in the
// index is judged relevant.
//
// The decision rests on the best hit alone because Norm measures how much
// of the query a document explains: a second or third relevant memory
// often covers a different part of the query and has a low Norm of its own.
func Answer(hits []Hit, opts *AnswerOptions) []Hit {
	o := opts.withDefaults()
	if len(hits) == 0 || hits[0].Norm < o.MinNorm {
		return nil
	}
	var out []Hit
	for _, h := range hits[:min(len(hits), o.Max)] {
		if h.Score < o.MinRelative*hits[0].Score {
			break
		}
		out = append(out, h)
	}
	return out
}
