//go:build linux

package checkpoint

import (
	"io/fs"
	"syscall"
	"time"
)

// stillFingerprinted reports whether the file at abs is, by one lstat, a
// regular file with a single link that fp matches: what snapshotLocked's
// lstat, checkRegular and fingerprint.matches together decide for an
// unchanged file, without the fs.FileInfo each os.Lstat allocates (a
// fifth of a snapshot's page faults at 1,000 files). False sends the file
// down the full path, which decides it again and names any problem.
func stillFingerprinted(abs string, fp fingerprint) bool {
	var st syscall.Stat_t
	if syscall.Lstat(abs, &st) != nil || st.Mode&syscall.S_IFMT != syscall.S_IFREG || st.Nlink > 1 {
		return false
	}
	// The permission and special bits as os.Lstat makes them a FileMode;
	// a regular file has no type bits.
	mode := fs.FileMode(st.Mode & 0o777)
	if st.Mode&syscall.S_ISUID != 0 {
		mode |= fs.ModeSetuid
	}
	if st.Mode&syscall.S_ISGID != 0 {
		mode |= fs.ModeSetgid
	}
	if st.Mode&syscall.S_ISVTX != 0 {
		mode |= fs.ModeSticky
	}
	return fp.id == (fileID{dev: uint64(st.Dev), ino: uint64(st.Ino)}) && fp.size == st.Size && fp.mode == mode &&
		fp.mtime.Equal(time.Unix(st.Mtim.Unix())) && fp.ctime.Equal(time.Unix(st.Ctim.Unix()))
}
