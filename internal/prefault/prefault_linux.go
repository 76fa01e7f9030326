//go:build linux

package prefault

import "golang.org/x/sys/unix"

// populate maps p's pages, writable or not, and reports whether the kernel
// took the advice.
func populate(p []byte, write bool) bool {
	advice := unix.MADV_POPULATE_READ
	if write {
		advice = unix.MADV_POPULATE_WRITE
	}
	return unix.Madvise(p, advice) == nil
}
