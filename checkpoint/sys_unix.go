//go:build unix

package checkpoint

import (
	"io/fs"
	"syscall"
)

// oNoFollow makes open fail on a symbolic link in the last path component,
// and oNonBlock keeps open from hanging on a FIFO swapped in after lstat.
const (
	oNoFollow = syscall.O_NOFOLLOW
	oNonBlock = syscall.O_NONBLOCK
)

// fileID identifies a file independently of its name.
type fileID struct{ dev, ino uint64 }

func statID(fi fs.FileInfo) fileID {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return fileID{dev: uint64(st.Dev), ino: uint64(st.Ino)}
	}
	return fileID{}
}

func linkCount(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}
