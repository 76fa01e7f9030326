package atomicfile

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// WriteStream is WriteFile for content too large to build in memory first:
// fill writes it into the temporary file (sequentially or at offsets, in
// writes it chooses; see WriteMapped for why a mapped file wants them
// small), which is then made durable with perm and renamed over name. fill
// may map f before it returns: the mapping stays the file's after the
// rename. On any error, fill's included, the temporary file is removed and
// name is untouched.
func WriteStream(name string, perm fs.FileMode, fill func(f *os.File) error) error {
	dir, base := filepath.Split(name)
	if dir == "" {
		dir = "."
	}
	f, err := createTemp(dir, tempName(base)+"*")
	if err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	if err := fill(f); err != nil {
		f.Close()
		os.Remove(f.Name())
		return fmt.Errorf("write %s: %w", name, err)
	}
	return commit(name, f, nil, 0, perm,
		func() error { return os.Rename(f.Name(), name) },
		func() error { return os.Remove(f.Name()) },
		func() error { return SyncDir(dir) })
}
