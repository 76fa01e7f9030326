//go:build unix

package framed

import (
	"os"

	"golang.org/x/sys/unix"
)

// mapFile maps the regular file path read-only, with the kernel's default
// read-ahead: advised for random access, a file out of the page cache was
// read a 4 KiB page per fault (a hybrid prompt's scan of 15 MB of sketches,
// 3,750 reads), and read-ahead fills the page cache, not the process (a
// fault maps the pages around it whatever the advice). The file stays open,
// for File.ReadAt, until unmap.
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
	return data, f, func() { unix.Munmap(data); f.Close() }, nil
}
