//go:build unix

package memdirtest

import (
	"os/exec"
	"syscall"
)

// ownGroup starts cmd in a process group of its own, which the context's
// cancellation kills whole.
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
}

// killGroup ends whatever cmd's process group still holds once cmd has
// exited: hooks or helpers it left running.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
