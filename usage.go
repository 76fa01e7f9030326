package memdir

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/memdir/memdir/usage"
)

// Uses returns the directory's use log, nil when counting is off
// (Options.NoUses).
func (d *Dir) Uses() *usage.Log { return d.uses }

// defaultUses returns the use log Options ask for (see Options.Uses).
func defaultUses(dir string, opts *Options, j *Journal, now func() time.Time) (*usage.Log, error) {
	switch {
	case opts.NoUses:
		return nil, nil
	case opts.Uses != nil:
		return opts.Uses, nil
	case opts.Journal != nil:
		return usage.New(filepath.Clean(j.Dir())+".uses.log", &usage.Options{Now: now}), nil
	}
	lookup := opts.LookupEnv
	if lookup == nil {
		lookup = os.LookupEnv
	}
	p, err := usage.DefaultPath(dir, lookup)
	if err != nil {
		return nil, err
	}
	return usage.New(p, &usage.Options{Now: now}), nil
}

// FindUnused is the doctor suggestion for a memory that has not been
// surfaced for a long time. It is informational: nothing fixes or deletes it.
const FindUnused FindingKind = "unused"

// DefaultUnusedDays is how long a memory goes unsurfaced before doctor
// suggests a look at it.
const DefaultUnusedDays = 90

// UnusedMemories suggests the memories not surfaced for days days or more
// (see package usage): each one was last changed at least days ago (a younger
// memory is never flagged), and was last surfaced days ago or more, or
// never in all the time counting has run, which must itself be days or
// more. Daily logs (logs/) are not memories recall surfaces and are left
// out. The findings name the memory, its uses and when it was last
// surfaced; nothing is changed.
func (d *Dir) UnusedMemories(ctx context.Context, days int, now time.Time) ([]Finding, error) {
	if days <= 0 {
		return nil, fmt.Errorf("unused memories: days must be at least 1, not %d: %w", days, ErrInvalid)
	}
	out := []Finding{}
	if !d.Exists() {
		return out, nil
	}
	st, err := d.uses.Stats(ctx)
	if err != nil {
		return nil, err
	}
	if st.Since.IsZero() || AgeDays(st.Since, now) < days {
		return out, nil
	}
	scan, err := d.Scan(ctx, &ScanOptions{Limit: -1})
	if err != nil {
		return nil, err
	}
	for _, h := range scan.Memories {
		if isDailyLog(h.Path) || AgeDays(h.ModTime, now) < days {
			continue
		}
		u := st.Get(h.Path)
		var msg string
		switch {
		case u.Uses == 0:
			msg = fmt.Sprintf("never surfaced in the %d days memdir has counted uses; last changed %s", AgeDays(st.Since, now), MemoryAge(h.ModTime, now))
		case AgeDays(u.LastUsed, now) >= days:
			msg = fmt.Sprintf("last surfaced %s (%d uses in all); last changed %s", MemoryAge(u.LastUsed, now), u.Uses, MemoryAge(h.ModTime, now))
		default:
			continue
		}
		out = append(out, Finding{Kind: FindUnused, Path: h.Path, Message: msg + ". Check that it is still true and worth keeping; 'memdir rm' removes it (undoable with 'memdir undo')"})
	}
	return out, nil
}
