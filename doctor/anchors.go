package doctor

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/anchors"
)

// Doctor findings for anchors.
const (
	FindStaleAnchor FindingKind = "stale-anchor" // an anchored file changed since the memory was written
	FindAnchorGone  FindingKind = "anchor-gone"  // an anchored file no longer exists
)

// checkAnchors adds a finding per memory whose anchors changed or went away.
// Fix never touches these: only a person can tell whether the memory still
// holds, and 'memdir anchors refresh' records that they checked.
func checkAnchors(ctx context.Context, d *memdir.Dir, mems []memdir.Header, add func(Finding)) {
	if d.ProjectRoot() == "" {
		return
	}
	memo := &anchors.Checker{Root: d.ProjectRoot()}
	for _, h := range mems {
		data, err := os.ReadFile(d.Abs(h.Path))
		if err != nil {
			continue
		}
		st := memdir.StaleAnchors(ctx, data, memo)
		var changed, gone []string
		for _, s := range st {
			if s.State == anchors.Gone {
				gone = append(gone, s.Path)
				continue
			}
			d := s.Path
			if s.Commits > 0 {
				d += fmt.Sprintf(" (%d commit(s))", s.Commits)
			}
			changed = append(changed, d)
		}
		how := "check the memory against the code, edit it if needed, then 'memdir anchors refresh " + h.Path + "'"
		if len(changed) > 0 {
			add(Finding{Kind: FindStaleAnchor, Path: h.Path, Message: "changed since the memory was written: " + strings.Join(changed, ", ") + "; " + how})
		}
		if len(gone) > 0 {
			add(Finding{Kind: FindAnchorGone, Path: h.Path, Message: "no longer exist: " + strings.Join(gone, ", ") + "; " + how})
		}
	}
}

// RefreshResult reports RefreshAnchors.
type RefreshResult struct {
	Path    string           `json:"path"`
	Anchors []anchors.Anchor `json:"anchors"`
	// RunID is the journal run that can undo the refresh ("" when nothing
	// changed).
	RunID string `json:"run_id,omitempty"`
}

// RefreshAnchors re-records a memory's anchors against the project as it is
// now, after a person checked that the memory still holds. Only the anchors
// key changes; the change is journaled.
func RefreshAnchors(ctx context.Context, d *memdir.Dir, ref string) (*RefreshResult, error) {
	if d.ProjectRoot() == "" {
		return nil, fmt.Errorf("refresh anchors: the memory directory %s has no project root to record anchors against: %w", d.Path(), memdir.ErrInvalid)
	}
	m, err := d.Get(ctx, ref)
	if err != nil {
		return nil, err
	}
	rec, err := d.Journal().Begin("anchors-refresh", d.Path())
	if err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	rec.SetSummary("anchors refresh " + m.Path)
	res, err := d.Save(ctx, m, &memdir.SaveOptions{Recorder: rec})
	run, ferr := rec.Finish(err)
	if err == nil {
		err = ferr
	}
	if err != nil {
		return nil, err
	}
	out := &RefreshResult{Path: res.Path, Anchors: []anchors.Anchor{}}
	if run != nil && len(run.ChangedFiles()) > 0 {
		out.RunID = run.ID
	}
	if saved, gerr := d.Get(ctx, res.Path); gerr == nil {
		if as, _ := saved.Anchors(); as != nil {
			out.Anchors = as
		}
	}
	return out, nil
}

// StaleMemory is a memory whose anchors changed, with the change summary.
type StaleMemory struct {
	Path    string          `json:"path"`
	Anchors []anchors.Stale `json:"anchors"`
}

// StaleMemories lists the memories whose anchored files changed or went
// away, with a change summary per file (see anchors.Changes); nil without a
// project root.
func StaleMemories(ctx context.Context, d *memdir.Dir) ([]StaleMemory, error) {
	if d.ProjectRoot() == "" || !d.Exists() {
		return nil, nil
	}
	scan, err := d.Scan(ctx, &memdir.ScanOptions{Limit: -1})
	if err != nil {
		return nil, err
	}
	var out []StaleMemory
	for _, h := range scan.Memories {
		m, err := d.Get(ctx, h.Path)
		if err != nil {
			continue
		}
		as, err := m.Anchors()
		if err != nil || len(as) == 0 {
			continue
		}
		if st := anchors.Changes(ctx, d.ProjectRoot(), as); len(st) > 0 {
			anchors.SortStale(st)
			out = append(out, StaleMemory{Path: h.Path, Anchors: st})
		}
	}
	return out, nil
}
