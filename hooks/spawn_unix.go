//go:build unix

package hooks

import "syscall"

// detachedAttr puts the child in a new session, away from the hook's
// process group and controlling terminal.
func detachedAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setsid: true} }
