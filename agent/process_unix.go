//go:build unix

package agent

import (
	"errors"
	"syscall"
)

// processRunning reports whether a process with this PID exists (one owned
// by another user counts).
func processRunning(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
