//go:build !unix

package agent

import "os"

// processRunning reports whether a process with this PID exists. Where
// signals cannot probe it, finding the process is the best evidence.
func processRunning(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	p.Release()
	return true
}
