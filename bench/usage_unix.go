//go:build unix

package main

import (
	"os"
	"syscall"
	"time"
)

// selfCPU is this process's CPU time so far (user + system, all threads).
func selfCPU() time.Duration {
	var ru syscall.Rusage
	check(syscall.Getrusage(syscall.RUSAGE_SELF, &ru))
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// childUsage is the CPU time (user + system) and peak RSS (KiB) of a child
// that has exited.
func childUsage(ps *os.ProcessState) (cpu time.Duration, maxrssKiB int64) {
	ru := ps.SysUsage().(*syscall.Rusage)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), int64(ru.Maxrss)
}
