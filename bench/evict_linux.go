//go:build linux

package main

import (
	"os"

	"golang.org/x/sys/unix"
)

// canEvict says evictFile works here.
const canEvict = true

// evictFile drops the file at path from the page cache (its clean pages),
// as a machine busy with other work between two prompts would have: the
// user's case of a prompt whose index is no longer cached.
func evictFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED)
}
