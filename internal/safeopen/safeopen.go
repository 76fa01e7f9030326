// Package safeopen opens the files memdir reads and appends to without
// trusting what is at the path: a FIFO or a device where a regular file
// belongs would block an open or a read for ever (no signal but SIGKILL
// ends a process stuck in one), and a symbolic link in the place of a
// state file must not redirect a write. Every open here is non-blocking
// and refuses anything but a regular file, naming the path.
package safeopen

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// ErrNotRegular is matched (errors.Is) by the error of an open that found
// something other than a regular file at the path.
var ErrNotRegular = errors.New("not a regular file")

// Open opens the regular file at path for reading. A missing file gives an
// error matching fs.ErrNotExist; anything but a regular file (a FIFO, a
// device, a directory) an error matching ErrNotRegular.
func Open(path string) (*os.File, fs.FileInfo, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|nonBlock, 0)
	if err != nil {
		return nil, nil, err
	}
	return checkRegular(f, path)
}

// OpenIn is Open for the file rel inside root.
func OpenIn(root *os.Root, rel string) (*os.File, fs.FileInfo, error) {
	f, err := root.OpenFile(rel, os.O_RDONLY|nonBlock, 0)
	if err != nil {
		return nil, nil, err
	}
	return checkRegular(f, rel)
}

// OpenAppend opens the regular file at path for appending, creating it
// (with perm) when missing; it never follows a symbolic link at path.
func OpenAppend(path string, perm fs.FileMode) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE|nonBlock|noFollow, perm)
	if err != nil {
		return nil, err
	}
	f, _, err = checkRegular(f, path)
	return f, err
}

// OpenReadWrite opens the existing regular file at path for reading and
// writing in place, without truncating it; it never follows a symbolic
// link at path.
func OpenReadWrite(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|nonBlock|noFollow, 0)
	if err != nil {
		return nil, err
	}
	f, _, err = checkRegular(f, path)
	return f, err
}

func checkRegular(f *os.File, name string) (*os.File, fs.FileInfo, error) {
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = &fs.PathError{Op: "open", Path: name, Err: ErrNotRegular}
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, fi, nil
}

// ReadFile reads the regular file at path, refusing one over max bytes.
func ReadFile(path string, max int64) ([]byte, error) {
	f, fi, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi.Size() > max {
		return nil, fmt.Errorf("%s is %d bytes, over the %d it may hold", path, fi.Size(), max)
	}
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("%s grew past the %d bytes it may hold", path, max)
	}
	return data, nil
}
