//go:build unix

package memdir

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// On Unix a scan lists the directories and reads the files through
// descriptors of directories it opened itself, each one below the last with
// O_NOFOLLOW, so that no symbolic link leads it out of the tree: a
// directory opened in an os.Root stats every entry it lists, and each
// os.File costs allocations and system calls beyond the open, fstat, read
// and close a header needs, which at 20,000 memories cost more than the
// reads. Whatever cannot be read that way (a symbolic link, an error of any
// kind) is read through the root, so headers and problems are the same.

// scanMaxDirFDs bounds the directories a scan keeps open; files in others
// are read through the root.
const scanMaxDirFDs = 256

type fastTree struct {
	fds  []int    // open directories
	dir  []int32  // per file: its directory in fds, or -1
	base []string // per file: its name in its directory
}

func listMemoryFiles(root *os.Root, _ string) (*memoryFiles, error) {
	rf, err := root.Open(".")
	if err != nil {
		return walkMemoryFiles(root)
	}
	fd, err := openatRetry(int(rf.Fd()), ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC)
	rf.Close()
	if err != nil {
		return walkMemoryFiles(root)
	}
	ft := &fastTree{}
	t := &memoryFiles{fast: ft}
	if !ft.walk(root, t, fd, "") {
		t.close()
		return walkMemoryFiles(root) // the same error, or the same list
	}
	return t, nil
}

// walk lists the directory open as fd (rel is its path with a trailing
// slash, "" for the top), in fs.WalkDir's order, taking over fd. It
// reports false when the directory could not be listed.
func (ft *fastTree) walk(root *os.Root, t *memoryFiles, fd int, rel string) bool {
	dup, err := unix.Dup(fd)
	if err != nil {
		unix.Close(fd)
		return false
	}
	f := os.NewFile(uintptr(dup), rel)
	ents, err := f.ReadDir(-1)
	f.Close()
	if err != nil && rel == "" {
		unix.Close(fd)
		return false
	}
	slices.SortFunc(ents, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	slot := int32(-1)
	if len(ft.fds) < scanMaxDirFDs {
		slot = int32(len(ft.fds))
		ft.fds = append(ft.fds, fd)
	}
	for _, e := range ents {
		name := e.Name()
		switch {
		case e.IsDir():
			sub, err := openatRetry(fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC)
			if err != nil || !ft.walk(root, t, sub, rel+name+"/") {
				ft.walkRoot(root, t, rel+name)
			}
		case strings.HasSuffix(name, ".md") && name != EntrypointName:
			t.rels = append(t.rels, rel+name)
			ft.dir = append(ft.dir, slot)
			ft.base = append(ft.base, name)
		}
	}
	if slot < 0 {
		unix.Close(fd)
	}
	return true
}

// walkRoot lists the subdirectory rel through the root, as a scan without
// descriptors does.
func (ft *fastTree) walkRoot(root *os.Root, t *memoryFiles, rel string) {
	fs.WalkDir(root.FS(), rel, func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() || !strings.HasSuffix(p, ".md") || e.Name() == EntrypointName {
			return nil
		}
		t.rels = append(t.rels, p)
		ft.dir = append(ft.dir, -1)
		ft.base = append(ft.base, e.Name())
		return nil
	})
}

func (ft *fastTree) close() {
	for _, fd := range ft.fds {
		unix.Close(fd)
	}
	ft.fds = nil
}

// scan reads the header of the i-th file through its directory's
// descriptor; done is false when the caller must read it through the root.
func (ft *fastTree) scan(rel string, i int, buf []byte) (h Header, probs []Problem, ok bool, _ []byte, done bool) {
	d := ft.dir[i]
	if d < 0 {
		return h, nil, false, buf, false
	}
	// O_NONBLOCK: a FIFO must not block the open; it is not a regular
	// file and is left to the root's reader.
	fd, err := openatRetry(ft.fds[d], ft.base[i], unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC)
	if err != nil {
		return h, nil, false, buf, false
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	for {
		err = unix.Fstat(fd, &st)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		return h, nil, false, buf, false
	}
	head, buf, err := readLines(fdReader(fd), FrontmatterMaxLines, st.Size, buf)
	if err != nil {
		return h, nil, false, buf, false
	}
	h, probs, ok = scanHead(rel, time.Unix(st.Mtim.Unix()), st.Size, head)
	return h, probs, ok, buf, true
}

func openatRetry(dirfd int, name string, flags int) (int, error) {
	for {
		fd, err := unix.Openat(dirfd, name, flags, 0)
		if err != unix.EINTR {
			return fd, err
		}
	}
}

// fdReader reads a file descriptor.
type fdReader int

func (r fdReader) Read(p []byte) (int, error) {
	for {
		n, err := unix.Read(int(r), p)
		switch {
		case errors.Is(err, unix.EINTR):
			continue
		case err != nil:
			return 0, err
		case n == 0 && len(p) > 0:
			return 0, io.EOF
		}
		return n, nil
	}
}
