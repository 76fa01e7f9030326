//go:build !linux

package main

import "os/exec"

// peakRSS is 0 (unknown): elsewhere time(1) is not GNU's, whose -f and -o
// peakRSS uses on Linux.
func peakRSS(cmd *exec.Cmd) int64 { return 0 }
