//go:build unix

package memtool

import "syscall"

// mkfifo makes a named pipe, a file that is neither regular nor a directory.
func mkfifo(p string) error { return syscall.Mkfifo(p, 0o600) }

// setUmask sets the process umask and returns a function restoring it.
func setUmask(m int) (restore func()) {
	old := syscall.Umask(m)
	return func() { syscall.Umask(old) }
}
