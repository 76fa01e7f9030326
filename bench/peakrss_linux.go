package main

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
)

// peakRSS runs cmd under /usr/bin/time and returns the peak RSS (KiB) it
// reports, or 0 (unknown) when there is no GNU time(1) to run it or the run
// fails: the command already ran for the CPU figures, so a missing peak
// does not end the bench.
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
	if wrapped.Run() != nil {
		return 0
	}
	data, err := os.ReadFile(out.Name())
	if err != nil {
		return 0
	}
	kib, err := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
	if err != nil {
		return 0
	}
	return kib
}
