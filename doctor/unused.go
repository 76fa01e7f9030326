package doctor

import (
	"context"
	"fmt"
	"time"

	"github.com/memdir/memdir"
)

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
func Unused(ctx context.Context, d *memdir.Dir, days int, now time.Time) ([]Finding, error) {
	if days <= 0 {
		return nil, fmt.Errorf("unused memories: days must be at least 1, not %d: %w", days, memdir.ErrInvalid)
	}
	out := []Finding{}
	if !d.Exists() {
		return out, nil
	}
	st, err := d.Uses().Stats(ctx)
	if err != nil {
		return nil, err
	}
	if st.Since.IsZero() || memdir.AgeDays(st.Since, now) < days {
		return out, nil
	}
	scan, err := d.Scan(ctx, &memdir.ScanOptions{Limit: -1})
	if err != nil {
		return nil, err
	}
	for _, h := range scan.Memories {
		if isDailyLog(h.Path) || memdir.AgeDays(h.ModTime, now) < days {
			continue
		}
		u := st.Get(h.Path)
		var msg string
		switch {
		case u.Uses == 0:
			msg = fmt.Sprintf("never surfaced in the %d days memdir has counted uses; last changed %s", memdir.AgeDays(st.Since, now), memdir.MemoryAge(h.ModTime, now))
		case memdir.AgeDays(u.LastUsed, now) >= days:
			msg = fmt.Sprintf("last surfaced %s (%d uses in all); last changed %s", memdir.MemoryAge(u.LastUsed, now), u.Uses, memdir.MemoryAge(h.ModTime, now))
		default:
			continue
		}
		out = append(out, Finding{Kind: FindUnused, Path: h.Path, Message: msg + ". Check that it is still true and worth keeping; 'memdir rm' removes it (undoable with 'memdir undo')"})
	}
	return out, nil
}
