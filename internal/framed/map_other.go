//go:build !unix

package framed

import (
	"errors"
	"io"
	"math"
	"os"
	"unsafe"
)

// mapFile reads the regular file path into 8-byte aligned memory, where
// mapping is not available.
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
	case fi.Size() > math.MaxInt-7:
		return nil, nil, errors.New("too large to read")
	}
	words := make([]uint64, (fi.Size()+7)/8)
	data := unsafe.Slice((*byte)(unsafe.Pointer(&words[0])), len(words)*8)[:fi.Size()]
	if _, err := io.ReadFull(f, data); err != nil {
		return nil, nil, err
	}
	return data, func() {}, nil
}
