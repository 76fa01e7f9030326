package checkpoint

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strconv"

	"github.com/memdir/memdir/internal/linediff"
)

// Action is what a rewind does to one file.
type Action string

const (
	// ActionRestore puts back the backup's content over a file that differs.
	ActionRestore Action = "restore"
	// ActionCreate recreates a file that existed at the snapshot and is gone.
	ActionCreate Action = "create"
	// ActionDelete removes a file that did not exist at the snapshot.
	ActionDelete Action = "delete"
)

// FileChange is one file a rewind changes (or, on a dry run, would change).
type FileChange struct {
	Path   string `json:"path"` // the tracking path
	Action Action `json:"action"`
	// Added and Removed count the lines the rewind adds to and removes from
	// the file as it is now.
	Added   int `json:"added"`
	Removed int `json:"removed"`
	// Binary is set when either side holds a NUL byte; lines are not counted.
	Binary bool `json:"binary,omitempty"`
	// Approximate is set when the line diff gave up looking for the shortest
	// edit and the counts may be too high.
	Approximate bool `json:"approximate,omitempty"`
	// Version is the version restored; Backup its file name ("" on delete).
	Version int    `json:"version"`
	Backup  string `json:"backup,omitempty"`
}

// RewindReport says what Rewind did or, on a dry run, would do.
type RewindReport struct {
	MessageID string `json:"message_id"`
	// Sequence is the snapshot rewound to: the last one for MessageID.
	Sequence  int          `json:"sequence"`
	DryRun    bool         `json:"dry_run"`
	Changes   []FileChange `json:"changes"`
	Unchanged int          `json:"unchanged"`
	// Skipped lists tracked files left alone: refused (a link, not a plain
	// file), unreadable, or without any backup to go back to.
	Skipped []*FileError `json:"skipped,omitempty"`
	// Failed lists changes that were planned but could not be applied.
	Failed []*FileError `json:"failed,omitempty"`
	// UndoMessageID names the snapshot of the files taken just before they
	// were changed: rewinding to it undoes this rewind. Empty on a dry run
	// and when nothing needed changing.
	UndoMessageID string `json:"undo_message_id,omitempty"`
}

// Err joins the skipped and failed files into one error, or returns nil.
func (r *RewindReport) Err() error {
	var errs []error
	for _, e := range r.Skipped {
		errs = append(errs, e)
	}
	for _, e := range r.Failed {
		errs = append(errs, e)
	}
	return errors.Join(errs...)
}

// RewindOptions configures Rewind. nil means defaults.
type RewindOptions struct {
	// DryRun reports what would change without touching any file.
	DryRun bool
}

// UndoPrefix starts the message id of the snapshot Rewind takes before it
// changes anything; the snapshot's sequence number follows.
const UndoPrefix = "before-rewind-"

// planItem is one file a rewind would change.
type planItem struct {
	change FileChange
	abs    string
	target Backup
	cur    fs.FileInfo // lstat when planned; nil if the file did not exist
}

// Rewind puts every tracked file back as it was in the last snapshot for
// messageID: a file whose entry is null is deleted, a file with no entry
// (tracked only later) goes back to its first version, and only files that
// differ are written. Before changing anything it takes a snapshot of the
// files as they are, named in the report's UndoMessageID, so nothing it
// overwrites or deletes is lost.
//
// A message with no snapshot is memdir.ErrNotFound. When some files could
// not be rewound the report is returned together with an error listing them.
func (h *History) Rewind(ctx context.Context, messageID string, opts *RewindOptions) (*RewindReport, error) {
	if err := checkMessageID(messageID); err != nil {
		return nil, err
	}
	if opts == nil {
		opts = &RewindOptions{}
	}
	var rep *RewindReport
	err := h.locked(ctx, false, func(t *txn) error {
		st, err := t.all()
		if err != nil {
			return err
		}
		target, items, skipped, unchanged, err := h.plan(ctx, st, messageID, !opts.DryRun)
		if err != nil {
			return err
		}
		rep = &RewindReport{MessageID: messageID, Sequence: target.Sequence, DryRun: opts.DryRun, Changes: []FileChange{}, Unchanged: unchanged, Skipped: skipped}
		// A file whose backup or current content cannot be read is left
		// alone, and said so, rather than stopping the whole rewind.
		ready := items[:0]
		for _, it := range items {
			if err := h.countLines(&it.change, it.abs, it.cur, it.target); err != nil {
				rep.Skipped = append(rep.Skipped, &FileError{Path: it.change.Path, Err: err})
				continue
			}
			rep.Changes = append(rep.Changes, it.change)
			ready = append(ready, it)
		}
		items = ready
		if opts.DryRun || len(items) == 0 {
			return nil
		}
		// The files about to be restored get new change times, so their
		// fingerprints will not match again; the others stay good.
		undo, entry, fps, err := h.snapshotLocked(ctx, st, t.lf.latestKeys(), t.lf.fps, UndoPrefix+strconv.Itoa(st.sequence+1))
		if err != nil {
			return err
		}
		for _, p := range undo.Problems {
			for _, it := range items {
				if it.change.Path == p.Path {
					return fmt.Errorf("rewind to %q: could not save the current content of %s first, so nothing was changed: %w", messageID, it.abs, p.Err)
				}
			}
		}
		if err := t.commit(entry); err != nil {
			return fmt.Errorf("rewind to %q: record the undo snapshot, so nothing was changed: %w", messageID, err)
		}
		t.lf.fps = fps
		rep.UndoMessageID = undo.Snapshot.MessageID
		for _, it := range items {
			if err := ctx.Err(); err != nil {
				rep.Failed = append(rep.Failed, &FileError{Path: it.change.Path, Err: err})
				continue
			}
			if err := h.apply(st.cwd, it); err != nil {
				rep.Failed = append(rep.Failed, &FileError{Path: it.change.Path, Err: err})
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return rep, rep.Err()
}

// apply makes one planned change.
func (h *History) apply(cwd string, it planItem) error {
	if it.change.Action == ActionDelete {
		return h.deleteFile(cwd, it.abs, it.cur)
	}
	data, mode, err := h.readBackup(it.target)
	if err != nil {
		return err
	}
	return h.restoreFile(cwd, it.abs, it.cur, data, mode)
}

// plan finds the last snapshot for messageID, compares every tracked file
// with its entry there (or, for a file tracked only later, its first
// version) and returns the files that differ. refresh lets the change check
// move backup mtimes (see changed); read-only callers pass false.
func (h *History) plan(ctx context.Context, st *state, messageID string, refresh bool) (target *Snapshot, items []planItem, skipped []*FileError, unchanged int, err error) {
	if target, err = h.findLast(st, messageID); err != nil {
		return nil, nil, nil, 0, err
	}
	for _, key := range trackedKeys(st) {
		if err := ctx.Err(); err != nil {
			return nil, nil, nil, 0, err
		}
		b, ok := target.Files[key]
		if !ok {
			b, ok = firstVersion(st, key)
		}
		if !ok {
			skipped = append(skipped, &FileError{Path: key, Err: errors.New("no backup at or before this snapshot (its first version was evicted)")})
			continue
		}
		abs := expand(st.cwd, key)
		cur, err := lstatMaybe(abs)
		if err == nil && cur != nil {
			err = checkRegular(cur, abs)
		}
		if err != nil {
			skipped = append(skipped, &FileError{Path: key, Err: err})
			continue
		}
		it := planItem{abs: abs, target: b, cur: cur, change: FileChange{Path: key, Version: b.Version, Backup: b.Name}}
		switch {
		case !b.Exists() && cur == nil:
			unchanged++
			continue
		case !b.Exists():
			it.change.Action = ActionDelete
		case cur == nil:
			it.change.Action = ActionCreate
		default:
			ch, err := h.changed(abs, cur, b, refresh)
			if err != nil {
				skipped = append(skipped, &FileError{Path: key, Err: err})
				continue
			}
			if !ch {
				unchanged++
				continue
			}
			it.change.Action = ActionRestore
		}
		items = append(items, it)
	}
	return target, items, skipped, unchanged, nil
}

// firstVersion finds a file's version 1 entry in any retained snapshot.
func firstVersion(st *state, key string) (Backup, bool) {
	for _, s := range st.snapshots {
		if b, ok := s.Files[key]; ok && b.Version == 1 {
			return b, true
		}
	}
	return Backup{}, false
}

// contents reads the two sides of a planned change: the backup and the file
// as it is now (nil for a side that does not exist).
func (h *History) contents(abs string, cur fs.FileInfo, b Backup) (backup, now []byte, err error) {
	if b.Exists() {
		if backup, _, err = h.readBackup(b); err != nil {
			return nil, nil, err
		}
	}
	if now, err = h.readCurrent(abs, cur); err != nil {
		return nil, nil, err
	}
	return backup, now, nil
}

// countLines fills in the lines a change adds and removes.
func (h *History) countLines(c *FileChange, abs string, cur fs.FileInfo, b Backup) error {
	backup, now, err := h.contents(abs, cur, b)
	if err != nil {
		return fmt.Errorf("compare %s with its backup: %w", abs, err)
	}
	if isBinary(backup) || isBinary(now) {
		c.Binary = true
		return nil
	}
	ops, approx := linediff.Diff(linediff.Split(string(now)), linediff.Split(string(backup)), 0)
	c.Added, c.Removed = linediff.Stats(ops)
	c.Approximate = approx
	return nil
}

// isBinary reports a NUL byte in the first 8000 bytes, as git does.
func isBinary(data []byte) bool {
	return bytes.IndexByte(data[:min(len(data), 8000)], 0) >= 0
}

// FileDiff is how one tracked file changed since a snapshot.
type FileDiff struct {
	Path string `json:"path"`
	// Status is "modified", "added" (did not exist at the snapshot) or
	// "deleted" (gone since).
	Status string `json:"status"`
	// Added and Removed count lines added and removed since the snapshot.
	Added       int  `json:"added"`
	Removed     int  `json:"removed"`
	Binary      bool `json:"binary,omitempty"`
	Approximate bool `json:"approximate,omitempty"`
	// Patch is a unified diff from the snapshot to now, with three lines of
	// context; empty for binary files.
	Patch string `json:"patch,omitempty"`
}

// DiffReport is what changed in the tracked files since a snapshot.
type DiffReport struct {
	MessageID string       `json:"message_id"`
	Sequence  int          `json:"sequence"`
	Files     []FileDiff   `json:"files"`
	Unchanged int          `json:"unchanged"`
	Skipped   []*FileError `json:"skipped,omitempty"`
}

// Diff reports how the tracked files changed since the last snapshot for
// messageID, with a unified diff per file. It is the reverse of what Rewind
// to that message would do, and touches nothing.
func (h *History) Diff(ctx context.Context, messageID string) (*DiffReport, error) {
	if err := checkMessageID(messageID); err != nil {
		return nil, err
	}
	var rep *DiffReport
	err := h.locked(ctx, false, func(t *txn) error {
		st, err := t.all()
		if err != nil {
			return err
		}
		target, items, skipped, unchanged, err := h.plan(ctx, st, messageID, false)
		if err != nil {
			return err
		}
		rep = &DiffReport{MessageID: messageID, Sequence: target.Sequence, Files: []FileDiff{}, Unchanged: unchanged, Skipped: skipped}
		for _, it := range items {
			d, err := h.fileDiff(it)
			if err != nil {
				rep.Skipped = append(rep.Skipped, &FileError{Path: it.change.Path, Err: err})
				continue
			}
			rep.Files = append(rep.Files, d)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return rep, nil
}

func (h *History) fileDiff(it planItem) (FileDiff, error) {
	d := FileDiff{Path: it.change.Path, Status: "modified"}
	oldName, newName := "a/"+d.Path, "b/"+d.Path
	switch it.change.Action {
	case ActionDelete:
		d.Status, oldName = "added", "/dev/null"
	case ActionCreate:
		d.Status, newName = "deleted", "/dev/null"
	}
	old, now, err := h.contents(it.abs, it.cur, it.target)
	if err != nil {
		return d, fmt.Errorf("compare %s with its backup: %w", it.abs, err)
	}
	if isBinary(old) || isBinary(now) {
		d.Binary = true
		return d, nil
	}
	a, b := linediff.Split(string(old)), linediff.Split(string(now))
	ops, approx := linediff.Diff(a, b, 0)
	d.Added, d.Removed = linediff.Stats(ops)
	d.Approximate = approx
	d.Patch = linediff.Unified(oldName, newName, a, b, ops, linediff.Format{Context: 3})
	return d, nil
}
