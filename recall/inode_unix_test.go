//go:build unix

package recall

import (
	"os"
	"syscall"
)

// inodeOf is fi's inode number, to tell a file replaced from one left alone.
func inodeOf(fi os.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Ino)
	}
	return 0
}
