package framed

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"unsafe"

	"github.com/memdir/memdir/internal/safeopen"
)

// Open maps the file at path read-only (reads it into 8-byte aligned memory
// where mapping is not available) and parses it as [Format.Parse] does.
// The files mapped are searched in place; the kernel reads ahead as it
// would for any mapping (see mapFile). It lasts until [File.Close]; a caller that hands out
// views of it for as long as the process runs never closes it. Writers
// replace framed files by rename, so a mapped file never changes under its
// reader. Errors name the file.
func (ft Format) Open(path string) (*File, error) {
	data, file, unmap, err := mapFile(path)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	f, err := ft.Parse(data)
	if err != nil {
		unmap()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	f.unmap, f.file = unmap, file
	return f, nil
}

// ReadFile reads the file at path into 8-byte aligned memory and parses it
// as [Format.Parse] does: for a reader that uses most of a file, or that
// reloads it often and cannot tell when the views it handed out are no
// longer used (a mapping kept for each would keep each replaced file's
// disk space until the process ends). Errors name the file.
func (ft Format) ReadFile(path string) (*File, error) {
	f, size, err := openRegular(path)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	defer f.Close()
	data, err := readAligned(f, size)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	fr, err := ft.Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return fr, nil
}

// openRegular opens path for reading, refusing anything but a regular file
// of a size that fits in memory.
func openRegular(path string) (*os.File, int, error) {
	f, fi, err := safeopen.Open(path)
	if err != nil {
		return nil, 0, err
	}
	if fi.Size() > math.MaxInt-7 {
		err = errors.New("too large")
	}
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	return f, int(fi.Size()), nil
}

// readAligned reads size bytes of f into 8-byte aligned memory.
func readAligned(f *os.File, size int) ([]byte, error) {
	if size == 0 {
		return nil, nil
	}
	words := make([]uint64, (size+7)/8)
	data := unsafe.Slice((*byte)(unsafe.Pointer(&words[0])), len(words)*8)[:size]
	if _, err := io.ReadFull(f, data); err != nil {
		return nil, err
	}
	return data, nil
}
