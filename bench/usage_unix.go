//go:build unix

package main

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
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

// peakRSS runs cmd under /usr/bin/time and returns the peak RSS (KiB) it
// reports, or 0 when there is no /usr/bin/time.
//
// The peak in cmd's own rusage would be wrong: Go starts a child with
// clone(CLONE_VM|CLONE_VFORK), so at exec the kernel folds the high-water
// mark of the memory the child shared, this process's, into the child's
// peak, and every child of a bench that has generated 100,000 memories
// would show the bench's 200 MB. time(1) forks its child, which starts
// from time's own small memory.
func peakRSS(cmd *exec.Cmd) int64 {
	const timeBin = "/usr/bin/time"
	if _, err := os.Stat(timeBin); err != nil || cmd.Err != nil {
		return 0
	}
	out, err := os.CreateTemp("", "bench-rss-*")
	check(err)
	defer os.Remove(out.Name())
	out.Close()
	wrapped := exec.Command(timeBin, append([]string{"-f", "%M", "-o", out.Name(), cmd.Path}, cmd.Args[1:]...)...)
	wrapped.Dir, wrapped.Env, wrapped.Stdin = cmd.Dir, cmd.Env, cmd.Stdin
	res, err := wrapped.CombinedOutput()
	check(errOut(err, res))
	data, err := os.ReadFile(out.Name())
	check(err)
	kib, err := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
	if err != nil {
		check(fmt.Errorf("peak RSS of %s: time(1) wrote %q", cmd.Path, data))
	}
	return kib
}
