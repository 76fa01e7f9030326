//go:build unix

package memdirtest

import (
	"syscall"
	"time"
)

// CPUTime returns the process's user plus system CPU time, for benchmarks
// that report CPU per operation beside wall time.
func CPUTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
