//go:build unix

package recall

import (
	"crypto/sha256"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/memdir/memdir"
	"golang.org/x/sys/unix"
)

// fileReader reads memories for the index through descriptors of their
// directories, opened one below the other with O_NOFOLLOW, as a scan does
// (see scan_unix.go in package memdir): each file costs an open, an fstat,
// a read and a close, where reading it through the os.Root for its header
// and again for its hash and body cost two of each and more. Whatever it
// cannot read that way (a symbolic link, a file over the size a scan reads
// at once, an error of any kind) is read through the root, so records and
// problems are the same (TestFastReadSameAsThroughRoot).
type fileReader struct {
	root *os.Root
	fds  map[string]int // directory (relative, "." the top) → descriptor, -1 if not opened
}

// readerMaxDirFDs bounds the directories a reader keeps open.
const readerMaxDirFDs = 256

// newFileReader opens the directories of the files at rels.
func newFileReader(root *os.Root, rels []string) *fileReader {
	r := &fileReader{root: root, fds: map[string]int{}}
	rf, err := root.Open(".")
	if err != nil {
		return r
	}
	top, err := unix.Openat(int(rf.Fd()), ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	rf.Close()
	if err != nil {
		return r
	}
	r.fds["."] = top
	for _, rel := range rels {
		r.dirFD(path.Dir(rel))
	}
	return r
}

// dirFD opens the directory dir below the top, each component with
// O_NOFOLLOW; -1 when it cannot.
func (r *fileReader) dirFD(dir string) int {
	if fd, ok := r.fds[dir]; ok {
		return fd
	}
	fd := -1
	if len(r.fds) < readerMaxDirFDs {
		if parent := r.dirFD(path.Dir(dir)); parent >= 0 {
			if sub, err := unix.Openat(parent, path.Base(dir), unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0); err == nil {
				fd = sub
			}
		}
	}
	r.fds[dir] = fd
	return fd
}

func (r *fileReader) close() {
	for _, fd := range r.fds {
		if fd >= 0 {
			unix.Close(fd)
		}
	}
}

// read reads the memory at rel as readRecallFile does. buf is reused
// between calls of one goroutine. The map of descriptors is only read
// here, so reads may run in parallel.
func (r *fileReader) read(rel string, hr *memdir.HeaderReader, buf *[]byte) (recallFile, string, []memdir.Problem) {
	if f, body, probs, ok := r.readFast(rel, buf, nil); ok {
		return f, body, probs
	}
	return readRecallFile(r.root, rel, hr)
}

// readFast reads rel through its directory's descriptor: an open, an
// fstat, a read and a close. ok is false, with nothing read, where the
// root must read it instead. When stamp is not nil it is set from the
// fstat, taken before the contents are read.
func (r *fileReader) readFast(rel string, buf *[]byte, stamp *fileStamp) (f recallFile, _ string, probs []memdir.Problem, ok bool) {
	dir, base := ".", rel
	if i := strings.LastIndexByte(rel, '/'); i >= 0 {
		dir, base = rel[:i], rel[i+1:]
	}
	dfd, known := r.fds[dir]
	if !known || dfd < 0 {
		return f, "", nil, false
	}
	fd, err := openRetry(dfd, base)
	if err != nil {
		return f, "", nil, false
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := fstatRetry(fd, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG || st.Size >= recallHashMax {
		return f, "", nil, false
	}
	data, ok := readAll(fd, int(st.Size), buf)
	if !ok {
		return f, "", nil, false
	}
	f, body, probs, ok := readDone(rel, stampOf(&st), data, false)
	if ok && stamp != nil {
		*stamp = stampOf(&st)
	}
	return f, body, probs, ok
}

// readDone makes the record of the file at rel, read whole as data after
// a stat that gave st: what readFast returns once the file is read. ok is
// false where the root must read it instead (a head too long to judge
// from data alone).
// When borrow is set, the body shares data's bytes (see
// memdir.HeaderAndBodyBorrowing).
func readDone(rel string, st fileStamp, data []byte, borrow bool) (f recallFile, _ string, probs []memdir.Problem, ok bool) {
	sec := st.MTime / 1e9
	if st.MTime%1e9 < 0 {
		sec-- // the second it falls in, as a stat's Unix() gives it
	}
	headerAndBody := memdir.HeaderAndBody
	if borrow {
		headerAndBody = memdir.HeaderAndBodyBorrowing
	}
	h, body, probs, hok, exact := headerAndBody(rel, time.Unix(sec, 0), data, recallBodyMax)
	if !exact {
		return f, "", nil, false
	}
	f = recallFile{path: rel, checked: true}
	if !hok {
		f.bad = true
		return f, "", probs, true
	}
	f.name, f.desc, f.typ = h.Name, h.Description, h.Type
	f.hash = sha256.Sum256(data)
	return f, body, probs, true
}

// readNew reads a new file whose stamp was not taken (staleFile.fromRead):
// the fast path's fstat gives it, before the contents are read; a file
// the fast path does not read is stat-ed through the root (links
// followed, as the index's stat follows them) and then read. gone reports
// a file that is no longer a regular file.
func (r *fileReader) readNew(rel string, hr *memdir.HeaderReader, buf *[]byte) (f recallFile, body string, probs []memdir.Problem, gone bool) {
	var s fileStamp
	if f, body, probs, ok := r.readFast(rel, buf, &s); ok {
		f.stamp = s
		return f, body, probs, false
	}
	var st unix.Stat_t
	var err error
	if top, ok := r.fds["."]; ok && top >= 0 {
		err = unix.Fstatat(top, rel, &st, 0)
	} else {
		err = unix.Stat(filepath.Join(r.root.Name(), filepath.FromSlash(rel)), &st)
	}
	if err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		return recallFile{}, "", nil, true
	}
	s = stampOf(&st)
	f, body, probs = readRecallFile(r.root, rel, hr)
	f.stamp = s
	return f, body, probs, false
}

// stampOf is the stamp of a file by its stat, as statDir.stat makes it.
func stampOf(st *unix.Stat_t) fileStamp {
	return fileStamp{Size: st.Size, MTime: st.Mtim.Nano(), CTime: st.Ctim.Nano(), Ino: uint64(st.Ino)}
}

// readAll reads the file open as fd, of size bytes by its fstat, into
// *buf (reused between calls), at most recallHashMax bytes as
// readRecallFile reads: one read for a file as large as it was. ok is
// false on an error.
func readAll(fd, size int, buf *[]byte) ([]byte, bool) {
	if cap(*buf) < size+1 {
		*buf = make([]byte, 0, size+1+size/4)
	}
	b := (*buf)[:0]
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		room := b[len(b):cap(b)]
		if limit := recallHashMax - len(b); len(room) > limit {
			room = room[:limit]
		}
		if len(room) == 0 {
			break
		}
		k, err := unix.Read(fd, room)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, false
		}
		if k == 0 {
			break
		}
		b = b[:len(b)+k]
		if len(b) >= size && k < len(room) {
			// A short read at the size fstat gave: the end of the
			// file. (Bytes appended since change its stamp, so the
			// next refresh reads it again.)
			break
		}
	}
	*buf = b
	return b, true
}

func openRetry(dirfd int, name string) (int, error) {
	for {
		// O_NONBLOCK: a FIFO must not block the open; fstat then says
		// it is not a regular file.
		fd, err := unix.Openat(dirfd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
		if err != unix.EINTR {
			return fd, err
		}
	}
}

func fstatRetry(fd int, st *unix.Stat_t) error {
	for {
		if err := unix.Fstat(fd, st); err != unix.EINTR {
			return err
		}
	}
}
