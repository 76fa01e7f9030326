package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/internal/atomicfile"
	"github.com/memdir/memdir/internal/flock"
)

// maxAgentFileBytes bounds an agent configuration file memdir rewrites.
const maxAgentFileBytes = 4 << 20

// agentFile is one configuration file of an agent program, as an edit
// sees it: what it holds, its backup, and what the edit makes of it.
type agentFile struct {
	// Path is the file as named; Real is where it is, symlinks followed
	// (a configuration kept in a dotfiles repository stays linked).
	Path, Real string
	Old        []byte
	Exists     bool
	// Backup is Real + ".bak": the file before memdir last changed it.
	Backup    []byte
	HasBackup bool
	// New is the content to write; Remove deletes the file instead.
	New    []byte
	Remove bool
}

// changed reports whether the edit changes the file.
func (f *agentFile) changed() bool {
	switch {
	case f.Remove:
		return f.Exists
	case !f.Exists:
		// No file stays no file rather than an empty one.
		return len(f.New) > 0
	}
	return !bytes.Equal(f.New, f.Old)
}

// agentFileEdit is the result of editAgentFiles.
type agentFileEdit struct {
	Files []*agentFile
	// Runs are the journal runs, one per directory holding changed files;
	// none when nothing changed.
	Runs []*memdir.JournalRun
	// Backups are the .bak files written.
	Backups []string
	// Created are the directories made for the files (not there before:
	// is the program installed?).
	Created []string
}

// editAgentFiles reads the files at paths, lets compute set each one's
// New or Remove, and makes the changes: under an flock on each directory
// (0700 when created), every file that existed is first copied to
// FILE.bak, then replaced atomically with its permissions (0600 for a new
// file) or removed, and the change is journaled in j, one run per
// directory, so that 'memdir undo' reverts it. A file install creates has
// no backup: a FILE.bak left from earlier goes, so that uninstall knows
// there was nothing before. With dryRun nothing is locked or written.
func editAgentFiles(ctx context.Context, j *memdir.Journal, summary string, paths []string, dryRun bool, compute func(files []*agentFile) error) (*agentFileEdit, error) {
	files := make([]*agentFile, len(paths))
	var dirs []string
	for i, p := range paths {
		real, err := realPath(p)
		if err != nil {
			return nil, err
		}
		files[i] = &agentFile{Path: p, Real: real}
		if d := filepath.Dir(real); !slices.Contains(dirs, d) {
			dirs = append(dirs, d)
		}
	}
	slices.Sort(dirs)
	ed := &agentFileEdit{Files: files}
	if !dryRun {
		// A directory that does not exist yet is created only if a file
		// is written into it (uninstall on a machine without the program
		// creates nothing).
		for _, d := range dirs {
			if _, err := os.Stat(d); errors.Is(err, fs.ErrNotExist) {
				ed.Created = append(ed.Created, d)
				continue
			}
			lock, err := flock.Acquire(ctx, d)
			if err != nil {
				return nil, fmt.Errorf("lock %s: %w", d, err)
			}
			defer lock.Unlock()
		}
	}
	for _, f := range files {
		if err := f.read(); err != nil {
			return nil, err
		}
	}
	if err := compute(files); err != nil {
		return nil, err
	}
	if dryRun {
		return ed, nil
	}
	created := ed.Created
	ed.Created = nil
	for _, d := range dirs {
		var group []*agentFile
		for _, f := range files {
			if filepath.Dir(f.Real) == d && f.changed() {
				group = append(group, f)
			}
		}
		if len(group) == 0 {
			continue
		}
		if slices.Contains(created, d) {
			if err := atomicfile.MkdirAll(d, 0o700); err != nil {
				return ed, fmt.Errorf("edit %s: %w", d, err)
			}
			lock, err := flock.Acquire(ctx, d)
			if err != nil {
				return ed, fmt.Errorf("lock %s: %w", d, err)
			}
			defer lock.Unlock()
			ed.Created = append(ed.Created, d)
			// What the directory holds now is what was read: nothing,
			// unless another process created it meanwhile.
			for _, f := range group {
				if _, err := os.Lstat(f.Real); err == nil {
					return ed, fmt.Errorf("%s appeared while memdir was editing it: run the command again", f.Real)
				}
			}
		}
		run, err := writeAgentFiles(j, summary, d, group, ed)
		if err != nil {
			return ed, err
		}
		ed.Runs = append(ed.Runs, run)
	}
	return ed, nil
}

// realPath is p made absolute with its symlinks followed; a file that does
// not exist yet is resolved through its directory.
func realPath(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		return real, nil
	}
	if dir, err := filepath.EvalSymlinks(filepath.Dir(abs)); err == nil {
		return filepath.Join(dir, filepath.Base(abs)), nil
	}
	return abs, nil
}

// read fills in the file's content and its backup.
func (f *agentFile) read() error {
	var err error
	if f.Old, f.Exists, err = readAgentFile(f.Real); err != nil {
		return err
	}
	f.Backup, f.HasBackup, err = readAgentFile(f.Real + ".bak")
	if err != nil {
		// A backup memdir cannot read is no backup: uninstall then
		// removes its handlers one by one.
		f.Backup, f.HasBackup = nil, false
	}
	return nil
}

func readAgentFile(p string) ([]byte, bool, error) {
	fi, err := os.Lstat(p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, false, nil
	case err != nil:
		return nil, false, err
	case !fi.Mode().IsRegular():
		return nil, false, fmt.Errorf("%s is not a regular file; memdir will not replace it: %w", p, memdir.ErrInvalid)
	case fi.Size() > maxAgentFileBytes:
		return nil, false, fmt.Errorf("%s is %s, too large for memdir to rewrite: %w", p, memdir.FormatFileSize(int(fi.Size())), memdir.ErrInvalid)
	}
	data, err := os.ReadFile(p)
	return data, err == nil, err
}

// writeAgentFiles writes the changed files of one directory as one
// journal run.
func writeAgentFiles(j *memdir.Journal, summary, dir string, group []*agentFile, ed *agentFileEdit) (*memdir.JournalRun, error) {
	rec, err := j.Begin("hooks", dir)
	if err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	rec.SetSummary(summary)
	names := make([]string, len(group))
	for i, f := range group {
		names[i] = filepath.Base(f.Real)
	}
	err = rec.Before(names...)
	for _, f := range group {
		if err != nil {
			break
		}
		err = writeAgentFile(f, ed)
	}
	run, ferr := rec.Finish(err)
	if err == nil {
		err = ferr
	}
	return run, err
}

func writeAgentFile(f *agentFile, ed *agentFileEdit) error {
	mode := fs.FileMode(0o600)
	if f.Exists {
		if fi, err := os.Stat(f.Real); err == nil {
			mode = fi.Mode().Perm()
		}
		if err := atomicfile.WriteFile(f.Real+".bak", f.Old, mode); err != nil {
			return fmt.Errorf("back up %s before changing it: %w", f.Real, err)
		}
		ed.Backups = append(ed.Backups, f.Real+".bak")
	} else if f.HasBackup {
		if err := os.Remove(f.Real + ".bak"); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	if f.Remove {
		return os.Remove(f.Real)
	}
	return atomicfile.WriteFile(f.Real, f.New, mode)
}
