//go:build !windows && (!unix || aix)

package flock

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// Where flock(2) and LockFileEx are not available (AIX, Plan 9, js/wasm,
// wasip1), the lock is the existence of a companion file created with
// O_EXCL: beside a locked regular file (path + ".excl") or inside a locked
// directory (.memdir.lock). Unlike flock, the kernel does not remove it when
// the holder dies, so a lock file older than staleAfter is taken to belong to
// a crashed holder and is removed. A holder that keeps a lock longer than that
// may lose it; memdir's locks guard short read-modify-write sections. Two
// processes that find the same stale file at the same moment can both take
// the lock: the fallback is weaker than flock, and only for platforms that
// have nothing better.
const staleAfter = 10 * time.Minute

func openLockTarget(path string) (*os.File, error) {
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return os.Open(path)
	}
	return os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
}

// exclPath is the companion lock file of the locked file or directory f.
func exclPath(f *os.File) string {
	if fi, err := f.Stat(); err == nil && fi.IsDir() {
		return filepath.Join(f.Name(), ".memdir.lock")
	}
	return f.Name() + ".excl"
}

func tryLock(f *os.File) (bool, error) {
	p := exclPath(f)
	for range 2 {
		lf, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err == nil {
			fmt.Fprintf(lf, "%d\n", os.Getpid())
			return true, lf.Close()
		}
		if !errors.Is(err, fs.ErrExist) {
			return false, err
		}
		fi, err := os.Stat(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			continue // released meanwhile: try again
		case err != nil:
			return false, err
		case time.Since(fi.ModTime()) < staleAfter:
			return false, nil
		}
		// Stale: a holder crashed. Remove it and try once more; if another
		// process removed and re-created it first, the second create fails.
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return false, err
		}
	}
	return false, nil
}

func unlock(f *os.File) error { return os.Remove(exclPath(f)) }
