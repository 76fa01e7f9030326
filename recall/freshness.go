package recall

import (
	"fmt"
	"time"

	"github.com/memdir/memdir"
)

// FreshnessText warns that a memory older than a day may be out of date, and
// is "" for a memory saved today or yesterday.
func FreshnessText(mtime, now time.Time) string {
	n := memdir.AgeDays(mtime, now)
	if n <= 1 {
		return ""
	}
	return fmt.Sprintf("This memory is %d days old. It records what was true when it was written, not what is true now: code, files and line numbers it mentions may have changed since. Check them against the current code before relying on them.", n)
}

// FreshnessNote is FreshnessText wrapped as a system reminder, to put before
// the content of an old memory an agent reads; "" when the memory is fresh.
func FreshnessNote(mtime, now time.Time) string {
	t := FreshnessText(mtime, now)
	if t == "" {
		return ""
	}
	return "<system-reminder>" + t + "</system-reminder>\n"
}
