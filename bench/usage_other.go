//go:build !unix

package main

import (
	"os"
	"time"
)

// selfCPU is zero where getrusage(2) does not exist: the comparisons that
// use it then show 0 for this process's own CPU time.
func selfCPU() time.Duration { return 0 }

// childUsage is the CPU time (user + system) of a child that has exited. The
// peak RSS is not known without getrusage(2), so it is 0.
func childUsage(ps *os.ProcessState) (cpu time.Duration, maxrssKiB int64) {
	return ps.UserTime() + ps.SystemTime(), 0
}
