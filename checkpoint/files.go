package checkpoint

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/memdir/memdir/internal/atomicfile"
	"github.com/memdir/memdir/internal/errs"
)

// refreshAfter is how far the wall clock must be past a file's last change
// before a content comparison that found it unchanged may move the backup's
// mtime just past it. Any later write then stamps the file with a time after
// the backup's, however coarse the filesystem clock, so the stat-only fast
// path stays sound.
const refreshAfter = 2 * time.Second

// openRegular opens path for reading without following a symbolic link in its
// last element and checks, on the open descriptor, that it is the same plain
// file lstat saw (want; nil to skip). allowLinks permits more than one hard
// link, which backups carried over by Resume legitimately have.
func openRegular(path string, want fs.FileInfo, allowLinks bool) (*os.File, fs.FileInfo, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|oNoFollow|oNonBlock, 0)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err == nil {
		err = checkOpened(fi, path, want, allowLinks)
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, fi, nil
}

func checkOpened(fi fs.FileInfo, path string, want fs.FileInfo, allowLinks bool) error {
	if allowLinks && fi.Mode().IsRegular() {
		// Only the link count may differ from checkRegular's rules.
	} else if err := checkRegular(fi, path); err != nil {
		return err
	}
	if want != nil && statID(fi) != statID(want) {
		return fmt.Errorf("refusing %s: it was replaced while being opened; try again", path)
	}
	return nil
}

// readRegular reads a whole plain file, refusing one over limit bytes.
func (h *History) readRegular(path string, want fs.FileInfo, allowLinks bool) ([]byte, fs.FileInfo, error) {
	f, fi, err := openRegular(path, want, allowLinks)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	if fi.Size() > h.maxFileSize {
		return nil, nil, fmt.Errorf("refusing %s: it is %d bytes, over the %d byte limit for checkpoints: %w", path, fi.Size(), h.maxFileSize, errs.ErrInvalid)
	}
	data, err := io.ReadAll(io.LimitReader(f, h.maxFileSize+1))
	h.stats.read.Add(int64(len(data)))
	if err != nil {
		return nil, nil, fmt.Errorf("read %s: %w", path, err)
	}
	if int64(len(data)) > h.maxFileSize {
		return nil, nil, fmt.Errorf("refusing %s: it grew past the %d byte limit while being read: %w", path, h.maxFileSize, errs.ErrInvalid)
	}
	return data, fi, nil
}

// backupFile saves the file at abs as version v and returns its entry. A file
// that does not exist gives a null entry.
func (h *History) backupFile(cwd, abs string, v int) (Backup, error) {
	if err := checkParentStaysInside(cwd, abs); err != nil {
		return Backup{}, err
	}
	fi, err := os.Lstat(abs)
	if errors.Is(err, fs.ErrNotExist) {
		return Backup{Version: v, Time: h.now()}, nil
	}
	if err != nil {
		return Backup{}, fmt.Errorf("back up %s: %w", abs, err)
	}
	if err := checkRegular(fi, abs); err != nil {
		return Backup{}, err
	}
	data, ofi, err := h.readRegular(abs, fi, false)
	if errors.Is(err, fs.ErrNotExist) {
		return Backup{Version: v, Time: h.now()}, nil
	}
	if err != nil {
		return Backup{}, fmt.Errorf("back up %s: %w", abs, err)
	}
	name := BackupName(abs, v)
	if err := atomicfile.WriteFile(filepath.Join(h.dir, name), data, modeBits(ofi.Mode())); err != nil {
		return Backup{}, fmt.Errorf("back up %s: %w", abs, err)
	}
	h.stats.written.Add(int64(len(data)))
	return Backup{Name: name, Version: v, Time: h.now()}, nil
}

// changed reports whether the file at abs (lstat result fi, nil when it does
// not exist) differs from backup b, in Claude Code's order: presence, then
// mode and size, then the mtime fast path, then content. The fast path also
// requires the inode change time to be older than the backup, which catches
// edits that put back an old mtime. With refresh, a content comparison that
// finds the file unchanged may move the backup's mtime so that the next check
// is stat-only. An error means the answer is unknown.
func (h *History) changed(abs string, fi fs.FileInfo, b Backup, refresh bool) (bool, error) {
	if !b.Exists() || fi == nil {
		return b.Exists() != (fi != nil), nil
	}
	bpath := filepath.Join(h.dir, b.Name)
	bfi, err := os.Lstat(bpath)
	if errors.Is(err, fs.ErrNotExist) {
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("stat backup %s: %w", bpath, err)
	}
	if !sameShape(fi, bfi) {
		return true, nil
	}
	last := lastChange(fi)
	if last.Before(bfi.ModTime()) {
		return false, nil
	}
	// The wall clock, not the injected one: it is compared with the
	// filesystem's timestamps.
	settled := h.wall().Sub(last) > refreshAfter
	same, err := h.sameContent(abs, fi, bpath, bfi)
	if err != nil {
		return false, err
	}
	if same && settled && refresh {
		// Later comparisons of this unchanged file can stay stat-only.
		stamp := last.Add(time.Nanosecond)
		if err := os.Chtimes(bpath, time.Time{}, stamp); err != nil {
			h.logger.Debug("could not move backup mtime forward", "backup", bpath, "err", err)
		}
	}
	return !same, nil
}

// sameContent compares two files byte for byte, streaming.
func (h *History) sameContent(a string, afi fs.FileInfo, b string, bfi fs.FileInfo) (bool, error) {
	fa, _, err := openRegular(a, afi, false)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("compare %s: %w", a, err)
	}
	defer fa.Close()
	fb, _, err := openRegular(b, bfi, true)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("compare with backup %s: %w", b, err)
	}
	defer fb.Close()
	// The sizes already match, so a buffer one byte longer than the file
	// reads a small one, and its end, in one go.
	chunk := min(64<<10, afi.Size()+1)
	ba, bb := make([]byte, chunk), make([]byte, chunk)
	for {
		na, erra := io.ReadFull(fa, ba)
		nb, errb := io.ReadFull(fb, bb)
		h.stats.read.Add(int64(na + nb))
		if na != nb || !bytes.Equal(ba[:na], bb[:nb]) {
			return false, nil
		}
		aEnd := errors.Is(erra, io.EOF) || errors.Is(erra, io.ErrUnexpectedEOF)
		bEnd := errors.Is(errb, io.EOF) || errors.Is(errb, io.ErrUnexpectedEOF)
		switch {
		case erra != nil && !aEnd:
			return false, fmt.Errorf("compare %s: %w", a, erra)
		case errb != nil && !bEnd:
			return false, fmt.Errorf("compare with backup %s: %w", b, errb)
		case aEnd || bEnd:
			return aEnd == bEnd, nil
		}
	}
}

// readBackup reads backup b's content and mode.
func (h *History) readBackup(b Backup) ([]byte, fs.FileMode, error) {
	bpath := filepath.Join(h.dir, b.Name)
	fi, err := os.Lstat(bpath)
	if err != nil {
		return nil, 0, fmt.Errorf("backup %s: %w", bpath, err)
	}
	if fi.Mode()&fs.ModeSymlink != 0 || !fi.Mode().IsRegular() {
		return nil, 0, fmt.Errorf("refusing backup %s: not a regular file: %w", bpath, errs.ErrInvalid)
	}
	data, ofi, err := h.readRegular(bpath, fi, true)
	if err != nil {
		return nil, 0, fmt.Errorf("backup %s: %w", bpath, err)
	}
	return data, modeBits(ofi.Mode()), nil
}

// readCurrent reads the tracked file at abs for a line diff; nil when it does
// not exist.
func (h *History) readCurrent(abs string, fi fs.FileInfo) ([]byte, error) {
	if fi == nil {
		return nil, nil
	}
	data, _, err := h.readRegular(abs, fi, false)
	return data, err
}

// sameFile reports whether lstat results a and b describe the same file, or
// both its absence.
func sameFile(a, b fs.FileInfo) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return statID(a) == statID(b) && a.Size() == b.Size() && a.ModTime().Equal(b.ModTime())
}

// lstatMaybe is os.Lstat with a missing file reported as nil, nil.
func lstatMaybe(path string) (fs.FileInfo, error) {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return fi, err
}

// restoreFile writes backup content over the file at abs, atomically, after
// checking that the file is still the one the rewind was planned against.
func (h *History) restoreFile(cwd, abs string, planned fs.FileInfo, data []byte, mode fs.FileMode) error {
	if err := checkParentStaysInside(cwd, abs); err != nil {
		return err
	}
	parent := filepath.Dir(abs)
	if _, err := os.Lstat(parent); errors.Is(err, fs.ErrNotExist) {
		if err := atomicfile.MkdirAll(parent, 0o755); err != nil {
			return fmt.Errorf("restore %s: create its directory: %w", abs, err)
		}
		if err := checkParentStaysInside(cwd, abs); err != nil {
			return err
		}
	}
	if err := checkDirNoLink(parent); err != nil {
		return fmt.Errorf("restore %s: %w", abs, err)
	}
	if err := h.checkUnchangedSincePlan(abs, planned); err != nil {
		return err
	}
	if err := atomicfile.WriteFile(abs, data, mode); err != nil {
		return fmt.Errorf("restore %s: %w", abs, err)
	}
	h.stats.written.Add(int64(len(data)))
	return nil
}

// deleteFile removes the file at abs, after the same checks as restoreFile.
func (h *History) deleteFile(cwd, abs string, planned fs.FileInfo) error {
	if err := checkParentStaysInside(cwd, abs); err != nil {
		return err
	}
	parent := filepath.Dir(abs)
	if err := checkDirNoLink(parent); err != nil {
		return fmt.Errorf("delete %s: %w", abs, err)
	}
	if err := h.checkUnchangedSincePlan(abs, planned); err != nil {
		return err
	}
	if err := os.Remove(abs); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("delete %s: %w", abs, err)
	}
	return atomicfile.SyncDir(parent)
}

func (h *History) checkUnchangedSincePlan(abs string, planned fs.FileInfo) error {
	now, err := lstatMaybe(abs)
	if err != nil {
		return fmt.Errorf("stat %s: %w", abs, err)
	}
	if now != nil {
		if err := checkRegular(now, abs); err != nil {
			return err
		}
	}
	if !sameFile(planned, now) {
		return fmt.Errorf("refusing to change %s: it was modified during the rewind; run the rewind again", abs)
	}
	return nil
}
