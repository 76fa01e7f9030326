// Package atomicfile writes files so that readers see either the old content or
// the new content, never a mix, even if the process dies mid-write.
package atomicfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// createTemp is overridden by tests that simulate failures.
var createTemp = os.CreateTemp

// WriteFile atomically replaces name with data: it writes a temporary file in
// the same directory, fsyncs it, sets perm, renames it over name and fsyncs the
// directory. On any error the temporary file is removed and name is untouched.
//
// The parent directory must exist.
func WriteFile(name string, data []byte, perm fs.FileMode) error {
	return writeFile(name, data, perm, 0)
}

// mappedChunk is the size of the writes WriteMapped makes.
const mappedChunk = 64 << 10

// WriteMapped is WriteFile for a file that readers map and touch sparsely
// (memdir's recall index). It writes data 64 KiB at a
// time: a file system that caches a file in folios as large as the writes
// that made it (ext4 and XFS on current Linux do) would otherwise keep one
// large write in folios of up to 2 MiB, and a reader's page fault maps the
// whole folio around the page it touched. Measured on a 162 MB recall index
// of 100,000 memories: a warm recall's peak RSS was 182 MB after one write
// and 116 MB after 64 KiB writes.
func WriteMapped(name string, data []byte, perm fs.FileMode) error {
	return writeFile(name, data, perm, mappedChunk)
}

func writeFile(name string, data []byte, perm fs.FileMode, chunk int) error {
	dir, base := filepath.Split(name)
	if dir == "" {
		dir = "."
	}
	f, err := createTemp(dir, tempName(base)+"*")
	if err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	return commit(name, f, data, chunk, perm,
		func() error { return os.Rename(f.Name(), name) },
		func() error { return os.Remove(f.Name()) },
		func() error { return SyncDir(dir) })
}

// commit finishes an atomic write: data into the temporary file f, which is
// made durable with perm, closed (Windows cannot rename an open file) and
// renamed over the target, and then the directory is synced. On any error
// the temporary file is closed and removed.
func commit(name string, f *os.File, data []byte, chunk int, perm fs.FileMode, rename, remove, syncDir func() error) (err error) {
	defer func() {
		if err != nil {
			f.Close()
			remove()
			err = fmt.Errorf("write %s: %w", name, err)
		}
	}()
	if chunk <= 0 {
		chunk = len(data)
	}
	for rest := data; len(rest) > 0; {
		n := min(chunk, len(rest))
		if _, err = f.Write(rest[:n]); err != nil {
			return err
		}
		rest = rest[n:]
	}
	if err = f.Chmod(perm); err != nil {
		return err
	}
	if err = syncFile(f); err != nil {
		return fmt.Errorf("fsync: %w", err)
	}
	if err = f.Close(); err != nil {
		return err
	}
	if err = rename(); err != nil {
		return err
	}
	if err = syncDir(); err != nil {
		return err
	}
	return nil
}

// tempName is the prefix of a temporary file for base: hidden, marked as a
// temporary, and short enough that the random suffix never pushes it past the
// 255-byte name limit however long base is.
func tempName(base string) string {
	const keep = 64
	if len(base) > keep {
		base = strings.ToValidUTF8(base[:keep], "")
	}
	return "." + base + ".tmp-"
}

// syncFile fsyncs f, tolerating filesystems that do not support it.
func syncFile(f *os.File) error {
	err := f.Sync()
	if errors.Is(err, syscall.ENOTSUP) || errors.Is(err, syscall.EINVAL) {
		return nil
	}
	return err
}

// ignorableSyncErr reports errors from fsyncing a directory on platforms and
// filesystems that do not support it.
func ignorableSyncErr(err error) bool {
	return errors.Is(err, syscall.ENOTSUP) || errors.Is(err, syscall.EINVAL) || errors.Is(err, syscall.EBADF) || errors.Is(err, fs.ErrPermission)
}

// SyncDir fsyncs a directory so that a rename or create inside it is durable.
// Filesystems and platforms that cannot fsync a directory are tolerated.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("fsync directory %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !ignorableSyncErr(err) {
		return fmt.Errorf("fsync directory %s: %w", dir, err)
	}
	return nil
}

// MkdirAll creates dir and any missing parents with perm and fsyncs the parent
// of each directory it creates.
func MkdirAll(dir string, perm fs.FileMode) error {
	if fi, err := os.Stat(dir); err == nil {
		if !fi.IsDir() {
			return fmt.Errorf("mkdir %s: not a directory", dir)
		}
		return nil
	}
	parent := filepath.Dir(dir)
	if parent != dir {
		if err := MkdirAll(parent, perm); err != nil {
			return err
		}
	}
	if err := os.Mkdir(dir, perm); err != nil {
		if errors.Is(err, fs.ErrExist) {
			if fi, serr := os.Stat(dir); serr == nil && fi.IsDir() {
				return nil
			}
		}
		return err
	}
	return SyncDir(parent)
}
