package doctor

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/internal/atomicfile"
)

// TempFileMinAge is how old a temporary file left by an atomic write must be
// before 'doctor --fix' removes it: younger ones may belong to a write still
// in progress in another process.
const TempFileMinAge = atomicfile.StaleAge

// Finding kinds for leftovers.
const (
	FindTooLarge FindingKind = "too-large" // a file over MaxMemoryFileBytes
	FindTempFile FindingKind = "temp-file" // a temporary file a killed write left
)

// isTempFile reports whether name is a temporary file of an atomic write
// (".<name>.tmp-<random>", see internal/atomicfile).
func isTempFile(name string) bool {
	return strings.HasPrefix(name, ".") && strings.Contains(name, ".tmp-")
}

// checkLeftovers reports files too large for memdir to read as memories and
// the temporary files of writes that were killed before they renamed them
// into place. Temporary files older than TempFileMinAge get a fix (removal,
// journaled, so an undo restores them); younger ones may still be in use.
func checkLeftovers(d *memdir.Dir, add func(Finding)) error {
	now := d.Now()
	return filepath.WalkDir(d.Path(), func(p string, e fs.DirEntry, err error) error {
		if err != nil || !e.Type().IsRegular() {
			return nil
		}
		fi, err := e.Info()
		if err != nil {
			return nil
		}
		rel, _ := filepath.Rel(d.Path(), p)
		rel = filepath.ToSlash(rel)
		switch {
		case isTempFile(e.Name()):
			age := now.Sub(fi.ModTime())
			f := Finding{Kind: FindTempFile, Path: rel,
				Message: fmt.Sprintf("a temporary file (%s) left by a write that was killed before it finished; the file it was for is intact", memdir.FormatFileSize(int(fi.Size())))}
			if age >= TempFileMinAge {
				f.Fix = "remove it"
			} else {
				f.Message += fmt.Sprintf("; it is only %s old, so a write may still be using it (--fix removes it after %s)", age.Round(time.Second), TempFileMinAge)
			}
			add(f)
		case fi.Size() > memdir.MaxMemoryFileBytes:
			add(Finding{Kind: FindTooLarge, Path: rel,
				Message: fmt.Sprintf("is %s, over the %s memdir reads as a memory, so it is neither indexed nor recalled; split it into short memories or move it out of the memory directory", memdir.FormatFileSize(int(fi.Size())), memdir.FormatFileSize(memdir.MaxMemoryFileBytes))})
		}
		return nil
	})
}

// tooLarge reports whether the memory at rel is over MaxMemoryFileBytes.
func tooLarge(h memdir.Header) bool { return h.Size > memdir.MaxMemoryFileBytes }

// removeTempFile journals and removes a temporary file, unless it is gone.
func removeTempFile(root *os.Root, rec *memdir.Recorder, rel string) (bool, error) {
	if _, err := root.Lstat(rel); err != nil {
		return false, nil // gone already: the write finished or failed
	}
	if err := rec.Before(rel); err != nil {
		return false, err
	}
	if err := root.Remove(rel); err != nil {
		return false, fmt.Errorf("remove %s: %w", rel, err)
	}
	return true, nil
}
