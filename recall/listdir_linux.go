//go:build linux

package recall

import (
	"bytes"
	"encoding/binary"
	"os"

	"golang.org/x/sys/unix"
)

// dirEnt is an entry of a directory listing. ino is the entry's inode as
// getdents gives it, 0 when unknown.
type dirEnt struct {
	name  string
	isDir bool
	ino   uint64
}

// listDir lists the directory at path with getdents, keeping the inode of
// each entry: a file whose inode is the one the index read was not
// replaced by a rename, so a refresh of a listed directory need not stat
// it (see staleFiles). Entries of unknown type are typed by lstat, as
// os.ReadDir does.
func listDir(path string) ([]dirEnt, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fd := int(f.Fd())
	var out []dirEnt
	buf := make([]byte, 64<<10)
	for {
		n, err := unix.Getdents(fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, &os.PathError{Op: "getdents", Path: path, Err: err}
		}
		if n <= 0 {
			return out, nil
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
			e := dirEnt{name: string(name), isDir: typ == unix.DT_DIR, ino: ino}
			if typ == unix.DT_UNKNOWN {
				var st unix.Stat_t
				if unix.Fstatat(fd, e.name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
					continue
				}
				e.isDir = st.Mode&unix.S_IFMT == unix.S_IFDIR
			}
			if typ == unix.DT_LNK {
				e.ino = 0 // the link's, not its target's: stat it
			}
			out = append(out, e)
		}
	}
}
