package atomicfile

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path"
)

// WriteFileIn is WriteFile inside an os.Root: name is relative to the root
// (slash-separated) and no path component, symlinks included, can lead
// outside it. The parent directory must exist.
func WriteFileIn(root *os.Root, name string, data []byte, perm fs.FileMode) error {
	dir, base := path.Split(name)
	var rnd [6]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		return err
	}
	tmp := dir + tempName(base) + hex.EncodeToString(rnd[:])
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	return commit(name, f, data, 0, perm,
		func() error { return root.Rename(tmp, name) },
		func() error { return root.Remove(tmp) },
		func() error { return SyncDirIn(root, dir) })
}

// SyncDirIn fsyncs a directory inside root ("" or "." is the root itself).
func SyncDirIn(root *os.Root, dir string) error {
	if dir == "" {
		dir = "."
	}
	d, err := root.Open(dir)
	if err != nil {
		return fmt.Errorf("fsync directory %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !ignorableSyncErr(err) {
		return fmt.Errorf("fsync directory %s: %w", dir, err)
	}
	return nil
}
