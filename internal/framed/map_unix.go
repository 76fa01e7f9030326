//go:build unix

package framed

import (
	"os"

	"golang.org/x/sys/unix"
)

// mapFile maps the regular file path read-only, advised for random access:
// the files mapped are searched in place, a few pages at a time, and
// reading ahead around those pages would only fill memory. The file stays
// open, for File.ReadAt, until unmap.
func mapFile(path string) ([]byte, *os.File, func(), error) {
	f, size, err := openRegular(path)
	if err != nil {
		return nil, nil, nil, err
	}
	if size == 0 {
		f.Close()
		return nil, nil, func() {}, nil
	}
	data, err := unix.Mmap(int(f.Fd()), 0, size, unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		f.Close()
		return nil, nil, nil, err
	}
	unix.Madvise(data, unix.MADV_RANDOM)
	return data, f, func() { unix.Munmap(data); f.Close() }, nil
}
