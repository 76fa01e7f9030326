//go:build unix

package framed

import "golang.org/x/sys/unix"

// mapFile maps the regular file path read-only, advised for random access:
// the files mapped are searched in place, a few pages at a time, and
// reading ahead around those pages would only fill memory.
func mapFile(path string) ([]byte, func(), error) {
	f, size, err := openRegular(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	if size == 0 {
		return nil, func() {}, nil
	}
	data, err := unix.Mmap(int(f.Fd()), 0, size, unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, nil, err
	}
	unix.Madvise(data, unix.MADV_RANDOM)
	return data, func() { unix.Munmap(data) }, nil
}
