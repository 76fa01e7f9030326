//go:build unix

package recall

import (
	"os"

	"github.com/memdir/memdir/internal/safeopen"
	"golang.org/x/sys/unix"
)

// statDir is an open directory that files are stat-ed relative to.
type statDir struct{ f *os.File }

func openStatDir(dir string) (*statDir, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	return &statDir{f}, nil
}

func (d *statDir) Close() error { return d.f.Close() }

// stat returns the stamp of rel (symbolic links followed), whether it is a
// directory, and whether it is a regular file.
func (d *statDir) stat(rel string) (s fileStamp, isDir, isReg bool, err error) {
	var st unix.Stat_t
	if rel == "." {
		err = unix.Fstat(int(d.f.Fd()), &st)
	} else {
		err = unix.Fstatat(int(d.f.Fd()), rel, &st, 0)
	}
	if err != nil {
		return s, false, false, &os.PathError{Op: "stat", Path: rel, Err: err}
	}
	s = fileStamp{Size: st.Size, MTime: st.Mtim.Nano(), CTime: st.Ctim.Nano(), Ino: uint64(st.Ino)}
	mode := st.Mode & unix.S_IFMT
	return s, mode == unix.S_IFDIR, mode == unix.S_IFREG, nil
}

// mapFile maps a file read-only. The mapping is never undone: strings the
// index hands out point into it.
func mapFile(path string) ([]byte, error) {
	f, fi, err := safeopen.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi.Size() == 0 || fi.Size() > 1<<40 {
		return nil, os.ErrInvalid
	}
	// Not advised for random access: that stops the kernel reading ahead,
	// and where the index has left the page cache (the machine did other
	// work between two prompts) each 4 KiB page touched was then a read
	// of its own: 5,500 major faults and 0.2 s of system CPU for a hook at
	// 100,000 memories, against 16 faults and 0.07 s with read-ahead.
	// Read-ahead fills the page cache, not the process: a fault maps the
	// pages around it whatever the advice (see framed.File.ReadAt).
	return unix.Mmap(int(f.Fd()), 0, int(fi.Size()), unix.PROT_READ, unix.MAP_SHARED)
}

// unmapFile undoes mapFile, for a caller that keeps nothing pointing into
// the mapping.
func unmapFile(data []byte) { unix.Munmap(data) }

// mapOpen maps the first size bytes of the open file f read-only, as
// mapFile does.
func mapOpen(f *os.File, size int) ([]byte, error) {
	if size <= 0 {
		return nil, os.ErrInvalid
	}
	return unix.Mmap(int(f.Fd()), 0, size, unix.PROT_READ, unix.MAP_SHARED)
}
