//go:build unix

package agent

import "syscall"

// openFlags opens files without blocking: a FIFO or device put where a
// regular file was checked would otherwise hang the run on open.
const openFlags = syscall.O_RDONLY | syscall.O_NONBLOCK
