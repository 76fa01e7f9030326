package memtool

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/memdir/memdir"
)

// File and directory modes. Memories are private to the user.
const (
	fileMode = 0o600
	dirMode  = 0o700
)

// tempPrefix starts the names of the tool's temporary files and tombstones.
// Resolve refuses hidden names, so the model can never address them.
const tempPrefix = ".memtool-"

// native turns a root-relative slash path into the form os.Root expects.
func native(rel string) string { return filepath.FromSlash(rel) }

// inspect describes rel as it is now: its Lstat info, or nil when it does not
// exist (which includes a path through a file, as for the reference). Every
// ancestor must be a real directory. A symbolic link anywhere on the way is
// refused, and so is one at rel itself unless linkOK: os.Root already stops
// links from leaving the root, and refusing them outright also keeps the
// model from reaching hidden files or editing one file under two names. A
// link that leads out of the root is refused in the reference's words for an
// escape.
func (t *Tool) inspect(rel string, linkOK bool) (fs.FileInfo, error) {
	if rel == "." {
		fi, err := t.root.Lstat(".")
		if err != nil {
			return nil, ioError("read", Prefix, err)
		}
		return fi, nil
	}
	segs := strings.Split(rel, "/")
	for i := range segs {
		sub := strings.Join(segs[:i+1], "/")
		fi, err := t.root.Lstat(native(sub))
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		if err != nil {
			return nil, ioError("read", MemoryPath(sub), err)
		}
		last := i == len(segs)-1
		if fi.Mode()&fs.ModeSymlink != 0 && !(last && linkOK) {
			if t.linkEscapes(sub) {
				return nil, errEscape(MemoryPath(rel), "")
			}
			if last {
				return nil, errorf(memdir.ErrInvalid, "The path %s is a symbolic link; the memory tool does not follow links.", MemoryPath(rel))
			}
			return nil, errorf(memdir.ErrInvalid, "The path %s goes through the symbolic link %s; the memory tool does not follow links.", MemoryPath(rel), MemoryPath(sub))
		}
		if last {
			return fi, nil
		}
		if !fi.IsDir() {
			return nil, nil
		}
	}
	panic("unreachable")
}

// linkEscapes reports whether the symbolic link rel leads out of the root
// (or is absolute, which os.Root treats the same way). The link is not
// followed for anything else: os.Root only answers whether its target can be
// reached inside the root.
func (t *Tool) linkEscapes(rel string) bool {
	_, err := t.root.Stat(native(rel))
	return err != nil && strings.Contains(err.Error(), "escapes")
}

// readFile reads the regular file rel, refusing anything over limit bytes.
func (t *Tool) readFile(rel string, limit int64) ([]byte, error) {
	p := MemoryPath(rel)
	f, err := t.root.Open(native(rel))
	if err != nil {
		return nil, ioError("read", p, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, ioError("read", p, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, errUnsupported(p)
	}
	if fi.Size() > limit {
		return nil, errorf(memdir.ErrInvalid, "%s is %s, too large for the memory tool (limit %s).", p, humanSize(fi.Size()), humanSize(limit))
	}
	// Size the buffer from Stat so a large file is read without regrowing.
	buf := bytes.NewBuffer(make([]byte, 0, fi.Size()+bytes.MinRead))
	if _, err := buf.ReadFrom(io.LimitReader(f, limit+1)); err != nil {
		return nil, ioError("read", p, err)
	}
	data := buf.Bytes()
	if int64(len(data)) > limit {
		return nil, errorf(memdir.ErrInvalid, "%s grew past %s while being read; try again.", p, humanSize(limit))
	}
	return data, nil
}

// writeFile atomically writes data to rel: a temporary file in the same
// directory is written, fsynced, set to 0600 and renamed into place, then the
// directory is fsynced. With exclusive, an existing rel (of any kind,
// dangling links included) is never replaced. On failure the temporary file
// is removed and rel is untouched.
func (t *Tool) writeFile(rel string, data []byte, exclusive bool) (err error) {
	if t.opts.Rewrite != nil && strings.HasSuffix(rel, ".md") {
		data = t.opts.Rewrite(rel, data)
	}
	p := MemoryPath(rel)
	dir := path.Dir(rel)
	f, tmp, err := t.createTemp(dir)
	if err != nil {
		return ioError("write", p, err)
	}
	placed := false
	defer func() {
		if !placed {
			f.Close()
			t.root.Remove(native(tmp))
		}
	}()
	if _, err := f.Write(data); err != nil {
		return ioError("write", p, err)
	}
	// Chmod on the descriptor: exact mode whatever the umask, and no race
	// with a name being swapped for a link.
	if err := f.Chmod(fileMode); err != nil {
		return ioError("write", p, err)
	}
	if err := syncFile(f); err != nil {
		return ioError("write", p, err)
	}
	if err := f.Close(); err != nil {
		return ioError("write", p, err)
	}
	if placeHook != nil {
		if err := placeHook(rel); err != nil {
			return ioError("write", p, err)
		}
	}
	if exclusive {
		err = renameNoReplace(t.root, tmp, rel)
		if errors.Is(err, fs.ErrExist) {
			return errorf(memdir.ErrExists, "File %s already exists", p)
		}
	} else {
		err = t.root.Rename(native(tmp), native(rel))
	}
	if err != nil {
		return ioError("write", p, err)
	}
	placed = true
	return t.syncDir(dir)
}

// placeHook, when set by tests, runs after the temporary file is complete
// and before it is renamed into place, to simulate failures and races there.
var placeHook func(rel string) error

// createTemp creates a new hidden temporary file in dir with O_EXCL.
func (t *Tool) createTemp(dir string) (*os.File, string, error) {
	for range 100 {
		name := path.Join(dir, fmt.Sprintf("%s%016x.tmp", tempPrefix, rand.Uint64()))
		f, err := t.root.OpenFile(native(name), os.O_WRONLY|os.O_CREATE|os.O_EXCL, fileMode)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		return f, name, err
	}
	return nil, "", errors.New("could not pick an unused temporary name")
}

// mkdirParents creates the missing ancestors of rel with mode 0700, fsyncing
// each parent so the new directory survives a crash.
func (t *Tool) mkdirParents(rel string) error {
	dir := path.Dir(rel)
	if dir == "." {
		return nil
	}
	segs := strings.Split(dir, "/")
	for i := range segs {
		sub := strings.Join(segs[:i+1], "/")
		fi, err := t.root.Lstat(native(sub))
		if err == nil {
			if !fi.IsDir() {
				return errorf(memdir.ErrInvalid, "Cannot create %s: %s is a file, not a directory.", MemoryPath(rel), MemoryPath(sub))
			}
			continue
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return ioError("create directory", MemoryPath(sub), err)
		}
		if err := t.root.Mkdir(native(sub), dirMode); err != nil {
			return ioError("create directory", MemoryPath(sub), err)
		}
		if err := t.chmodDir(sub); err != nil {
			return err
		}
		if err := t.syncDir(path.Dir(sub)); err != nil {
			return err
		}
	}
	return nil
}

// chmodDir sets 0700 through a descriptor, so the umask cannot widen or
// narrow it and a swapped-in link cannot redirect it.
func (t *Tool) chmodDir(rel string) error {
	return t.onDir(rel, "create directory", func(d *os.File) error { return d.Chmod(dirMode) })
}

// syncDir fsyncs a directory inside the root so that renames and creations
// in it are durable. Filesystems that cannot fsync a directory are tolerated.
func (t *Tool) syncDir(rel string) error {
	return t.onDir(rel, "sync directory", func(d *os.File) error {
		if err := d.Sync(); err != nil && !ignorableSyncError(err) {
			return err
		}
		return nil
	})
}

// onDir opens the directory rel through the root and applies fn to it,
// reporting a failure as "Could not <what> <path>".
func (t *Tool) onDir(rel, what string, fn func(*os.File) error) error {
	d, err := t.root.Open(native(rel))
	if err != nil {
		return ioError(what, MemoryPath(rel), err)
	}
	defer d.Close()
	if err := fn(d); err != nil {
		return ioError(what, MemoryPath(rel), err)
	}
	return nil
}

func syncFile(f *os.File) error {
	if err := f.Sync(); err != nil && !ignorableSyncError(err) {
		return err
	}
	return nil
}

func ignorableSyncError(err error) bool {
	return errors.Is(err, syscall.ENOTSUP) || errors.Is(err, syscall.EINVAL) ||
		errors.Is(err, syscall.EBADF) || errors.Is(err, fs.ErrPermission)
}

// renameNoReplaceFallback renames without replacing an existing destination
// where the kernel offers no atomic way to ask for that. A regular file is
// moved with a hard link, which fails atomically if the name is taken;
// anything else is checked and then renamed, which leaves a small window in
// which another process could create the destination.
func renameNoReplaceFallback(r *os.Root, oldRel, newRel string) error {
	if _, err := r.Lstat(native(newRel)); err == nil {
		return &os.LinkError{Op: "rename", Old: oldRel, New: newRel, Err: fs.ErrExist}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if fi, err := r.Lstat(native(oldRel)); err == nil && fi.Mode().IsRegular() {
		err := r.Link(native(oldRel), native(newRel))
		if err == nil {
			return r.Remove(native(oldRel))
		}
		if errors.Is(err, fs.ErrExist) {
			return err
		}
		// Hard links unsupported here: fall through to a plain rename.
	}
	return r.Rename(native(oldRel), native(newRel))
}
