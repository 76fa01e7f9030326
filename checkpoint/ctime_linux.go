//go:build linux

package checkpoint

import (
	"io/fs"
	"syscall"
	"time"
)

// changeTime returns the inode change time. No user-level tool can set it
// back, so an edit that restores an old mtime is still noticed.
func changeTime(fi fs.FileInfo) time.Time {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return time.Unix(st.Ctim.Unix())
	}
	return fi.ModTime()
}
