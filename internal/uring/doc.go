// Package uring reads many small files with few system calls, through
// Linux's io_uring (5.6 and later).
//
// A first index build opens, stats, reads and closes every memory file:
// four system calls a file, a fifth of the build's CPU at 100,000 memories
// on a virtual machine where each call costs about a microsecond before it
// does anything. A Ring queues those operations for a batch of files and
// submits them in three calls, however many files the batch holds, and a
// stat each: a stat through the ring runs on a kernel worker thread, and
// costs more than the call.
//
// Only what memdir needs is here: a ring, and ReadFiles. Where io_uring
// is missing, forbidden (a seccomp filter, the io_uring_disabled sysctl)
// or lacks an operation, New returns an error and the caller reads the
// files one by one, as before. On systems other than Linux the package is
// empty, and its callers are files of their own for Linux.
package uring
