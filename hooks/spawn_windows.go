//go:build windows

package hooks

import "syscall"

// detachedProcess is DETACHED_PROCESS: no console shared with the hook.
const detachedProcess = 0x00000008

// detachedAttr starts the child in a process group of its own, without the
// hook's console.
func detachedAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{CreationFlags: syscall.CREATE_NEW_PROCESS_GROUP | detachedProcess}
}
