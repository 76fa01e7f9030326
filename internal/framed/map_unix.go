//go:build unix

package framed

import (
	"errors"
	"math"
	"os"

	"golang.org/x/sys/unix"
)

// mapFile maps the regular file path read-only, advised for random access:
// the files mapped are searched in place, a few pages at a time, and
// reading ahead around those pages would only fill memory.
func mapFile(path string) ([]byte, func(), error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	switch {
	case err != nil:
		return nil, nil, err
	case !fi.Mode().IsRegular():
		return nil, nil, errors.New("not a regular file")
	case fi.Size() == 0:
		return nil, func() {}, nil
	case fi.Size() > math.MaxInt:
		return nil, nil, errors.New("too large to map")
	}
	data, err := unix.Mmap(int(f.Fd()), 0, int(fi.Size()), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, nil, err
	}
	unix.Madvise(data, unix.MADV_RANDOM)
	return data, func() { unix.Munmap(data) }, nil
}
