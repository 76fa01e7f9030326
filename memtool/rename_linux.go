//go:build linux

package memtool

import (
	"errors"
	"os"
	"path"
	"runtime"

	"golang.org/x/sys/unix"
)

// renameNoReplace renames oldRel to newRel inside r and fails with an error
// matching fs.ErrExist if newRel exists. On Linux this is one atomic
// renameat2(RENAME_NOREPLACE) call on descriptors of the two parent
// directories, both opened through r so they are inside the root; the final
// names are single components and renameat2 does not follow them.
func renameNoReplace(r *os.Root, oldRel, newRel string) error {
	od, err := r.Open(native(path.Dir(oldRel)))
	if err != nil {
		return err
	}
	defer od.Close()
	nd, err := r.Open(native(path.Dir(newRel)))
	if err != nil {
		return err
	}
	defer nd.Close()
	err = unix.Renameat2(int(od.Fd()), path.Base(oldRel), int(nd.Fd()), path.Base(newRel), unix.RENAME_NOREPLACE)
	runtime.KeepAlive(od)
	runtime.KeepAlive(nd)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, unix.ENOSYS), errors.Is(err, unix.EINVAL), errors.Is(err, unix.ENOTSUP):
		// Old kernel or a filesystem without RENAME_NOREPLACE. (EINVAL also
		// means moving a directory into itself, which callers rule out first.)
		return renameNoReplaceFallback(r, oldRel, newRel)
	}
	return &os.LinkError{Op: "rename", Old: oldRel, New: newRel, Err: err}
}
