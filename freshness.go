package memdir

import (
	"fmt"
	"time"
)

// AgeDays is how many whole days old something modified at mtime is, as
// Claude Code counts: floor((now - mtime) / 24h), never negative.
func AgeDays(mtime, now time.Time) int {
	d := now.Sub(mtime)
	if d < 0 {
		return 0
	}
	return int(d / (24 * time.Hour))
}

// MemoryAge describes an age for people and models: "today", "yesterday" or
// "N days ago".
func MemoryAge(mtime, now time.Time) string {
	switch n := AgeDays(mtime, now); n {
	case 0:
		return "today"
	case 1:
		return "yesterday"
	default:
		return fmt.Sprintf("%d days ago", n)
	}
}
