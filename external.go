package memdir

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/memdir/memdir/internal/atomicfile"
	"github.com/memdir/memdir/internal/flock"
	"github.com/memdir/memdir/internal/memfile"
)

// maxSettingsBytes bounds a settings file memdir will rewrite.
const maxSettingsBytes = 4 << 20

// EditExternalFile changes one file that lives outside any memory directory
// (a CLAUDE.md, CLAUDE.local.md or settings file) and journals it in j, the
// journal of the memory directory the change was made for, so that
// 'memdir log' lists it with the directory's other runs and Dir.Undo
// reverts it. edit receives the current content (nil and false when the
// file is missing) and returns the new content; an error from edit aborts
// with nothing written. A symlinked file is followed and its target
// replaced, so a CLAUDE.md linked to a shared file stays linked.
//
// The read-edit-replace happens under an flock on the file's directory and
// the file is replaced atomically, keeping its permissions (new files are
// 0600, new directories 0700). The run's root is that directory; it returns
// the finished run, or nil when the content did not change.
func EditExternalFile(ctx context.Context, j *Journal, kind, summary, path string, edit func(old []byte, exists bool) ([]byte, error)) (*JournalRun, error) {
	return editExternal(ctx, j, nil, kind, summary, path, edit)
}

// EditExternalFile is [EditExternalFile] as part of the open run r: the
// file is recorded in r (see [Recorder.BeforeIn]) and the change is undone
// with the run's other changes.
func (r *Recorder) EditExternalFile(ctx context.Context, path string, edit func(old []byte, exists bool) ([]byte, error)) error {
	_, err := editExternal(ctx, nil, r, "", "", path, edit)
	return err
}

// editExternal is EditExternalFile; with given set, the change joins that
// open run (recorded with Recorder.BeforeIn) and no run is returned.
func editExternal(ctx context.Context, j *Journal, given *Recorder, kind, summary, path string, edit func(old []byte, exists bool) ([]byte, error)) (*JournalRun, error) {
	if j == nil && given == nil {
		return nil, fmt.Errorf("edit %s: no journal to record the change in: %w", path, ErrInvalid)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("edit %s: %w", path, err)
	}
	if fi, err := os.Lstat(abs); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		target, err := filepath.EvalSymlinks(abs)
		if err != nil {
			return nil, fmt.Errorf("edit %s: it is a symlink whose target cannot be resolved: %w", abs, err)
		}
		abs = target
	}
	dir, base := filepath.Split(abs)
	dir = filepath.Clean(dir)
	if err := atomicfile.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("edit %s: %w", abs, err)
	}
	lock, err := flock.Acquire(ctx, dir)
	if err != nil {
		return nil, fmt.Errorf("edit %s: lock %s: %w", abs, dir, err)
	}
	defer lock.Unlock()

	var old []byte
	exists := false
	mode := fs.FileMode(0o600)
	switch fi, err := os.Lstat(abs); {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, fmt.Errorf("edit %s: %w", abs, err)
	case !fi.Mode().IsRegular():
		return nil, fmt.Errorf("edit %s: not a regular file; memdir will not replace it: %w", abs, ErrInvalid)
	case fi.Size() > maxSettingsBytes:
		return nil, fmt.Errorf("edit %s: %s is too large for memdir to rewrite (limit %s): %w", abs, FormatFileSize(int(fi.Size())), FormatFileSize(maxSettingsBytes), ErrInvalid)
	default:
		if old, err = os.ReadFile(abs); err != nil {
			return nil, fmt.Errorf("edit %s: %w", abs, err)
		}
		exists, mode = true, fi.Mode().Perm()
	}
	content, err := edit(old, exists)
	if err != nil {
		return nil, err
	}
	if exists && bytes.Equal(content, old) {
		return nil, nil
	}
	if given != nil {
		if err := given.BeforeIn(dir, base); err != nil {
			return nil, err
		}
		if err := atomicfile.WriteFile(abs, content, mode); err != nil {
			return nil, err
		}
		return nil, nil
	}
	rec, err := j.Begin(kind, dir)
	if err != nil {
		return nil, fmt.Errorf("edit %s: journal: %w", abs, err)
	}
	rec.SetSummary(summary)
	err = rec.Before(base)
	if err == nil {
		err = atomicfile.WriteFile(abs, content, mode)
	}
	return finishRun(rec, err)
}

// finishRun closes a run that ended with err (nil on success) and returns
// the run, or the first error of the change and of closing it.
func finishRun(rec *Recorder, err error) (*JournalRun, error) {
	run, ferr := rec.Finish(err)
	if err == nil {
		err = ferr
	}
	if err != nil {
		return nil, err
	}
	return run, nil
}

// restoreExternal puts back the content a run recorded for f, a file
// outside the run's root, under an flock on its directory.
func (j *Journal) restoreExternal(ctx context.Context, f JournalFile) error {
	lock, err := flock.Acquire(ctx, f.Root)
	if err != nil {
		return fmt.Errorf("undo %s: lock %s: %w", f.abs(""), f.Root, err)
	}
	defer lock.Unlock()
	root, err := os.OpenRoot(f.Root)
	if err != nil {
		return fmt.Errorf("undo %s: %w", f.abs(""), err)
	}
	defer root.Close()
	if f.Before == "" {
		if err := root.Remove(f.Path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("undo: remove %s: %w", f.abs(""), err)
		}
		return nil
	}
	data, err := j.Blob(f.Before)
	if err != nil {
		return fmt.Errorf("undo %s: %w", f.abs(""), err)
	}
	mode := f.BeforeMode
	if mode == 0 {
		mode = 0o600
	}
	return atomicfile.WriteFileIn(root, f.Path, data, mode)
}

func (j *Journal) undoExternal(ctx context.Context, run *JournalRun, opts *UndoOptions) (*JournalRun, error) {
	if opts == nil {
		opts = &UndoOptions{}
	}
	if run.UndoneBy != "" {
		return nil, fmt.Errorf("run %s was already undone by run %s (undo that one to redo): %w", run.ID, run.UndoneBy, ErrInvalid)
	}
	changed := run.ChangedFiles()
	if len(changed) == 0 {
		return nil, fmt.Errorf("run %s changed nothing: %w", run.ID, ErrInvalid)
	}
	if err := atomicfile.MkdirAll(run.Root, 0o700); err != nil {
		return nil, fmt.Errorf("undo %s: %w", run.ID, err)
	}
	lock, err := flock.Acquire(ctx, run.Root)
	if err != nil {
		return nil, err
	}
	defer lock.Unlock()
	root, err := os.OpenRoot(run.Root)
	if err != nil {
		return nil, fmt.Errorf("undo %s: %w", run.ID, err)
	}
	defer root.Close()
	var conflicts, paths []string
	for _, f := range changed {
		if !filepath.IsLocal(filepath.FromSlash(f.Path)) {
			return nil, fmt.Errorf("undo %s: the journal names %q, which is not inside %s: %w", run.ID, f.Path, run.Root, ErrInvalid)
		}
		cur, err := memfile.HashFile(filepath.Join(run.Root, filepath.FromSlash(f.Path)))
		if err != nil {
			return nil, fmt.Errorf("undo %s: %w", f.Path, err)
		}
		if cur != f.After {
			conflicts = append(conflicts, filepath.Join(run.Root, f.Path))
		}
		paths = append(paths, f.Path)
	}
	if len(conflicts) > 0 && !opts.Force {
		return nil, &ConflictError{RunID: run.ID, Paths: conflicts}
	}
	rec, err := j.Begin("undo", run.Root)
	if err != nil {
		return nil, err
	}
	rec.run.Undoes = run.ID
	rec.SetSummary("undo " + run.ID + " (" + run.Kind + ")")
	err = rec.Before(paths...)
	for i := len(changed) - 1; i >= 0 && err == nil; i-- {
		f := changed[i]
		if f.Before == "" {
			if rerr := root.Remove(f.Path); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
				err = fmt.Errorf("undo: remove %s: %w", f.Path, rerr)
			}
			continue
		}
		var data []byte
		if data, err = j.Blob(f.Before); err != nil {
			break
		}
		mode := f.BeforeMode
		if mode == 0 {
			mode = 0o600
		}
		err = atomicfile.WriteFileIn(root, f.Path, data, mode)
	}
	undo, err := finishRun(rec, err)
	if err != nil {
		return nil, err
	}
	if err := j.markUndone(run, undo.ID); err != nil {
		return undo, err
	}
	return undo, nil
}
