//go:build linux

package recall

import (
	"bytes"
	"encoding/binary"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// dirEnt is an entry of a directory listing. ino is the entry's inode as
// getdents gives it, 0 when unknown; reg says the listing typed it a
// regular file (not a link).
type dirEnt struct {
	name       string
	isDir, reg bool
	ino        uint64
}

// listDir lists the directory at path with getdents, calling each for
// every entry, unsorted, keeping the inode of each: a file whose inode is
// the one the index read was not replaced by a rename, so a refresh of a
// listed directory need not stat it (see staleFiles). Entries of unknown
// type are typed by lstat, as os.ReadDir does.
//
// Names are copied into 64 KiB chunks that are never written again, a
// string pointing into one, rather than one allocation per name: a
// directory of 100,000 memories is listed whole after any change.
func listDir(path string, each func(dirEnt)) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	fd := int(f.Fd())
	buf := make([]byte, 64<<10)
	var chunk []byte
	intern := func(name []byte) string {
		if len(name) > cap(chunk)-len(chunk) {
			chunk = make([]byte, 0, max(64<<10, len(name)))
		}
		off := len(chunk)
		chunk = append(chunk, name...)
		return unsafe.String(&chunk[off], len(name))
	}
	for {
		n, err := unix.Getdents(fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return &os.PathError{Op: "getdents", Path: path, Err: err}
		}
		if n <= 0 {
			return nil
		}
		for b := buf[:n]; len(b) >= 19; {
			reclen := int(binary.NativeEndian.Uint16(b[16:18]))
			if reclen < 19 || reclen > len(b) {
				break
			}
			ino, typ, name := binary.NativeEndian.Uint64(b[0:8]), b[18], b[19:reclen]
			b = b[reclen:]
			if i := bytes.IndexByte(name, 0); i >= 0 {
				name = name[:i]
			}
			if len(name) == 0 || string(name) == "." || string(name) == ".." {
				continue
			}
			e := dirEnt{isDir: typ == unix.DT_DIR, reg: typ == unix.DT_REG, ino: ino}
			if typ == unix.DT_UNKNOWN {
				var st unix.Stat_t
				if unix.Fstatat(fd, string(name), &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
					continue
				}
				e.isDir = st.Mode&unix.S_IFMT == unix.S_IFDIR
				e.reg = st.Mode&unix.S_IFMT == unix.S_IFREG
			}
			if typ == unix.DT_LNK {
				e.ino = 0 // the link's, not its target's: stat it
			}
			e.name = intern(name)
			each(e)
		}
	}
}
