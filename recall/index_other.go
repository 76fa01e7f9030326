//go:build !unix

package recall

import (
	"os"
	"path/filepath"
	"unsafe"

	"github.com/memdir/memdir/internal/safeopen"
)

type statDir struct{ dir string }

func openStatDir(dir string) (*statDir, error) {
	if _, err := os.Stat(dir); err != nil {
		return nil, err
	}
	return &statDir{dir}, nil
}

func (d *statDir) Close() error { return nil }

func (d *statDir) stat(rel string) (s fileStamp, isDir, isReg bool, err error) {
	fi, err := os.Stat(filepath.Join(d.dir, filepath.FromSlash(rel)))
	if err != nil {
		return s, false, false, err
	}
	s = fileStamp{Size: fi.Size(), MTime: fi.ModTime().UnixNano()}
	return s, fi.IsDir(), fi.Mode().IsRegular(), nil
}

// mapFile reads a file into 8-byte aligned memory.
func mapFile(path string) ([]byte, error) {
	data, err := safeopen.ReadFile(path, 1<<40)
	if err != nil || len(data) == 0 {
		return nil, os.ErrInvalid
	}
	words := make([]uint64, (len(data)+7)/8)
	out := unsafe.Slice((*byte)(unsafe.Pointer(&words[0])), len(words)*8)[:len(data)]
	copy(out, data)
	return out, nil
}

// unmapFile leaves the copy to the garbage collector.
func unmapFile([]byte) {}

// mapOpen reads the first size bytes of the open file f into 8-byte
// aligned memory.
func mapOpen(f *os.File, size int) ([]byte, error) {
	if size <= 0 {
		return nil, os.ErrInvalid
	}
	words := make([]uint64, (size+7)/8)
	out := unsafe.Slice((*byte)(unsafe.Pointer(&words[0])), len(words)*8)[:size]
	if _, err := f.ReadAt(out, 0); err != nil {
		return nil, err
	}
	return out, nil
}
