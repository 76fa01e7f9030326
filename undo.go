package memdir

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/memdir/memdir/internal/memfile"
)

// UndoOptions adjust Undo.
type UndoOptions struct {
	// Force restores even files changed since the run, replacing those
	// later changes (which the undo run itself journals).
	Force bool
}

// ConflictError reports files changed since the run being undone.
type ConflictError struct {
	RunID string
	Paths []string
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("run %s: %s changed since; undoing it would replace those changes (use --force to do it anyway; the undo itself can be undone)", e.RunID, strings.Join(e.Paths, ", "))
}

func (e *ConflictError) Unwrap() error { return ErrExists }

// Undo restores every file a journaled run changed to its content before the
// run, byte for byte, and restores their MEMORY.md lines. Runs of the
// directory's journal that changed files outside it (CLAUDE.md, settings
// files) are restored where those files are. The undo is itself a
// journaled run, so it can be undone too.
//
// It goes in stages: find the run (finishing it first if its process
// died), plan what to restore and check it against what changed since,
// then restore it all in one run of its own.
func (d *Dir) Undo(ctx context.Context, id string, opts *UndoOptions) (*JournalRun, error) {
	if opts == nil {
		opts = &UndoOptions{}
	}
	run, err := d.journal.Run(id)
	if err != nil {
		return nil, err
	}
	if run.UndoneBy != "" {
		return nil, fmt.Errorf("run %s was already undone by run %s (undo that one to redo): %w", run.ID, run.UndoneBy, ErrInvalid)
	}
	if run.Root != d.path {
		// A run of this journal that edited files elsewhere (CLAUDE.md,
		// settings.json): restore them where they are.
		return d.journal.undoExternal(ctx, run, opts)
	}
	if run, err = d.closedRun(ctx, run); err != nil {
		return nil, err
	}
	if !run.HasChanges() {
		return nil, fmt.Errorf("run %s changed nothing: %w", run.ID, ErrInvalid)
	}
	root, release, err := d.lockedRoot(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer release()
	plan, err := d.planUndo(root, run)
	if err != nil {
		return nil, err
	}
	if len(plan.conflicts) > 0 && !opts.Force {
		return nil, &ConflictError{RunID: run.ID, Paths: plan.conflicts}
	}
	if err := d.checkUndoTeam(plan); err != nil {
		return nil, err
	}
	if err := plan.readIndexes(d, root); err != nil {
		return nil, err
	}
	undo, err := d.applyUndo(ctx, root, plan)
	if err != nil {
		return nil, err
	}
	if err := d.journal.markUndone(run, undo.ID); err != nil {
		return undo, err
	}
	return undo, nil
}

// closedRun returns run as it is once closed: a run still open may be
// one whose process died in the middle of a change, and taking the lock
// finishes that change and closes the run (see lock).
func (d *Dir) closedRun(ctx context.Context, run *JournalRun) (*JournalRun, error) {
	if run.State != RunOpen {
		return run, nil
	}
	lock, err := d.lock(ctx)
	if err != nil {
		return nil, err
	}
	lock.Unlock()
	return d.journal.Run(run.ID)
}

// undoPlan is what an undo restores.
type undoPlan struct {
	run *JournalRun
	// local are the files the run changed in the directory, external
	// those it changed elsewhere (a promotion's CLAUDE.md), in run order.
	local, external []JournalFile
	// modePaths are the files and directories whose modes it changed.
	modePaths []string
	// conflicts name what changed since the run.
	conflicts []string
	// indexes are the MEMORY.md files whose lines are restored line by
	// line, with their content before the undo; touched is every file the
	// undo writes, to journal.
	indexes  map[string]*Index
	original map[string][]byte
	touched  []string
}

// planUndo splits the run's files into those in the directory and those
// outside it, and finds what changed since. The directory lock is held.
func (d *Dir) planUndo(root *os.Root, run *JournalRun) (*undoPlan, error) {
	p := &undoPlan{run: run, indexes: map[string]*Index{}, original: map[string][]byte{}}
	for _, f := range run.ChangedFiles() {
		if f.Root == "" {
			p.local = append(p.local, f)
			continue
		}
		if !filepath.IsAbs(f.Root) || !filepath.IsLocal(filepath.FromSlash(f.Path)) {
			return nil, fmt.Errorf("undo %s: the journal names %q in %q, which is not a file in an absolute directory: %w", run.ID, f.Path, f.Root, ErrInvalid)
		}
		p.external = append(p.external, f)
	}
	if err := p.findConflicts(d, root); err != nil {
		return nil, err
	}
	return p, nil
}

// findConflicts names the files (and modes) changed since the run.
func (p *undoPlan) findConflicts(d *Dir, root *os.Root) error {
	for _, f := range p.local {
		cur, err := memfile.HashFile(d.Abs(f.Path))
		if err != nil {
			return fmt.Errorf("undo %s: %w", f.Path, err)
		}
		if cur != f.After {
			p.conflicts = append(p.conflicts, f.Path)
		}
	}
	for _, f := range p.external {
		cur, err := memfile.HashFile(f.abs(""))
		if err != nil {
			return fmt.Errorf("undo %s: %w", f.abs(""), err)
		}
		if cur != f.After {
			p.conflicts = append(p.conflicts, f.abs(""))
		}
	}
	for _, m := range p.run.Modes {
		if !filepath.IsLocal(filepath.FromSlash(m.Path)) && m.Path != "." {
			return fmt.Errorf("undo %s: the journal names %q, which is not inside %s: %w", p.run.ID, m.Path, d.path, ErrInvalid)
		}
		p.modePaths = append(p.modePaths, m.Path)
		if fi, err := root.Lstat(m.Path); err == nil && fi.Mode().Perm() != m.After {
			p.conflicts = append(p.conflicts, m.Path+" (mode)")
		}
	}
	return nil
}

// readIndexes reads the indexes whose lines are restored line by line:
// those of the run's memories, unless the run replaced the index file
// itself, in which case restoring that file restores them.
func (p *undoPlan) readIndexes(d *Dir, root *os.Root) error {
	runFiles := map[string]bool{}
	for _, f := range p.local {
		runFiles[f.Path] = true
	}
	for _, f := range p.local {
		p.touched = append(p.touched, f.Path)
		indexRel := f.indexFile()
		if path.Base(f.Path) == EntrypointName || runFiles[indexRel] || p.indexes[indexRel] != nil {
			continue
		}
		data, _, err := memfile.ReadRooted(root, indexRel, 64<<20)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("read %s: %w", d.Abs(indexRel), err)
		}
		p.original[indexRel] = data
		p.indexes[indexRel] = ParseIndex(data)
		p.touched = append(p.touched, indexRel)
	}
	return nil
}

// checkUndoTeam refuses to restore into team/ a version that holds a
// secret: restoring content there shares it again.
func (d *Dir) checkUndoTeam(p *undoPlan) error {
	for _, f := range p.local {
		if f.Before == "" || !IsTeamPath(f.Path) {
			continue
		}
		data, err := d.journal.Blob(f.Before)
		if err != nil {
			return fmt.Errorf("undo %s: %w", f.Path, err)
		}
		if err := CheckTeamContent(f.Path, data); err != nil {
			return fmt.Errorf("undo %s: %w", p.run.ID, err)
		}
	}
	return nil
}

// applyUndo restores what p plans, in a journaled run of kind "undo".
func (d *Dir) applyUndo(ctx context.Context, root *os.Root, p *undoPlan) (*JournalRun, error) {
	rec, err := d.journal.Begin("undo", d.path)
	if err != nil {
		return nil, err
	}
	rec.run.Undoes = p.run.ID
	rec.SetSummary("undo " + p.run.ID + " (" + p.run.Kind + ")")
	err = d.restore(ctx, root, rec, p)
	undo, ferr := rec.Finish(err)
	if err == nil {
		err = ferr
	}
	if err != nil {
		return nil, err
	}
	return undo, nil
}

// restore journals what the undo changes in rec, then restores the files
// outside the directory, the files and index lines inside it, and last the
// modes.
func (d *Dir) restore(ctx context.Context, root *os.Root, rec *Recorder, p *undoPlan) error {
	if err := rec.Before(p.touched...); err != nil {
		return err
	}
	for _, f := range p.external {
		if err := rec.BeforeIn(f.Root, f.Path); err != nil {
			return err
		}
	}
	if err := rec.BeforeMode(p.modePaths...); err != nil {
		return err
	}
	for i := len(p.external) - 1; i >= 0; i-- {
		if err := d.journal.restoreExternal(ctx, p.external[i]); err != nil {
			return err
		}
	}
	for i := len(p.local) - 1; i >= 0; i-- {
		f := p.local[i]
		if err := d.restoreFile(root, f); err != nil {
			return err
		}
		restoreIndexLine(p.indexes[f.indexFile()], f)
	}
	if err := d.writeUndoIndexes(root, p); err != nil {
		return err
	}
	// Modes last: a restored file is written with the mode it had when
	// the run first recorded it, which may be after a chmod of the run.
	for i := len(p.run.Modes) - 1; i >= 0; i-- {
		m := p.run.Modes[i]
		if err := root.Chmod(m.Path, m.Before); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("undo: chmod %s: %w", d.Abs(m.Path), err)
		}
	}
	return nil
}

// restoreIndexLine puts back f's index line in ix, the index whose lines
// are restored line by line (nil when the run replaced the index itself).
func restoreIndexLine(ix *Index, f JournalFile) {
	if ix == nil || path.Base(f.Path) == EntrypointName {
		return
	}
	_, link := IndexFor(f.Path)
	switch {
	case f.IndexNoted && f.Before != "" && len(f.IndexLines) > 0:
		// Replaces the current line in place, or brings it back.
		ix.Upsert(link, f.IndexLines[0])
	case f.IndexNoted, f.Before == "":
		// It had no line before the run, or did not exist.
		ix.Remove(link)
	}
}

// writeUndoIndexes writes the indexes whose lines changed, leaving alone an
// index the undo left as it was (or would create empty).
func (d *Dir) writeUndoIndexes(root *os.Root, p *undoPlan) error {
	for indexRel, ix := range p.indexes {
		data := ix.Bytes()
		if bytes.Equal(data, p.original[indexRel]) || p.original[indexRel] == nil && len(data) == 0 {
			continue
		}
		if err := d.writeIndex(root, indexRel, ix); err != nil {
			return err
		}
	}
	return nil
}
