package ui

import (
	"errors"
	"net/http"
	"time"

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/review"
	"github.com/memdir/memdir/screen"
)

// The review page: writes that injection screening held back (see
// memdir.Dir.HeldWrites), with their content, and the person's decision.
// Accept and reject are memdir review accept|reject: an accepted write is
// a journal run that Undo reverses; a rejected one is only marked.

// reviewFinding is one screening finding with its rule explained.
type reviewFinding struct {
	screen.Finding
	About string `json:"about"`
}

// reviewItem is one held write as the page shows it.
type reviewItem struct {
	ID      string     `json:"id"`
	Path    string     `json:"path"`
	Op      string     `json:"op"`
	State   string     `json:"state"`
	Existed bool       `json:"existed"`
	Queued  time.Time  `json:"queued"`
	Decided *time.Time `json:"decided,omitempty"`
	RunID   string     `json:"run_id,omitempty"`
	// UndoneBy names the run that undid the accept RunID: the item is
	// pending again.
	UndoneBy string `json:"undone_by,omitempty"`
	// By is the provenance in words; Provenance the record itself.
	By         string             `json:"by"`
	Provenance *memdir.Provenance `json:"provenance"`
	Findings   []reviewFinding    `json:"findings"`
	// Content is the held file; Visible the same with hidden characters
	// written out as <U+XXXX>, which is what the page shows.
	Content string `json:"content"`
	Visible string `json:"visible"`
}

func newReviewItem(it *review.HeldWrite) reviewItem {
	out := reviewItem{
		ID: it.ID, Path: it.Path, Op: it.Op, State: it.State, Existed: it.Existed,
		Queued: it.Queued, Decided: it.Decided, RunID: it.RunID, UndoneBy: it.UndoneBy,
		By: it.Provenance.String(), Provenance: it.Provenance,
		Findings: make([]reviewFinding, 0, len(it.Findings)),
		Content:  it.Content, Visible: review.ShowHidden(it.Content),
	}
	for _, f := range it.Findings {
		out.Findings = append(out.Findings, reviewFinding{Finding: f, About: screen.Rules[f.Rule]})
	}
	return out
}

// reviewResponse is the review queue.
type reviewResponse struct {
	ReviewDir string       `json:"review_dir"`
	Items     []reviewItem `json:"items"`
	Problems  []string     `json:"problems"`
}

// apiReview lists the review queue: pending items, or every item with
// all=true.
func (s *Server) apiReview(r *http.Request) (*reviewResponse, error) {
	all := r.URL.Query().Get("all") == "true"
	held, errs := s.review.List(all)
	items := make([]reviewItem, 0, len(held))
	for _, it := range held {
		items = append(items, newReviewItem(it))
	}
	problems := make([]string, 0, len(errs))
	for _, e := range errs {
		problems = append(problems, e.Error())
	}
	return &reviewResponse{ReviewDir: s.review.Dir(), Items: items, Problems: problems}, nil
}

type decideRequest struct {
	ID string `json:"id"`
}

// decideResponse is a held write after the decision, and the journal run
// of an accepted one.
type decideResponse struct {
	Item reviewItem `json:"item"`
	Run  string     `json:"run,omitempty"`
}

// apiReviewDecide accepts or rejects one held write.
func (s *Server) apiReviewDecide(accept bool) func(r *http.Request) (*decideResponse, error) {
	return func(r *http.Request) (*decideResponse, error) {
		var req decideRequest
		if err := decode(r, &req); err != nil {
			return nil, err
		}
		if req.ID == "" {
			return nil, errorf(http.StatusBadRequest, "review: no held write id given")
		}
		var it *review.HeldWrite
		var err error
		if accept {
			it, err = s.review.Accept(r.Context(), s.d, req.ID)
		} else {
			it, err = s.review.Reject(r.Context(), req.ID)
		}
		if err != nil {
			if it != nil && errors.Is(err, memdir.ErrExists) {
				// Already decided, or the file changed since: say which.
				e := errorf(http.StatusConflict, "%v", err)
				e.more = errorResponse{State: it.State}
				return nil, e
			}
			return nil, err
		}
		return &decideResponse{Item: newReviewItem(it), Run: it.RunID}, nil
	}
}
