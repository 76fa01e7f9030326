package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/memdir/memdir/internal/atomicfile"
	"github.com/memdir/memdir/internal/errs"
)

// linkFile is os.Link; tests replace it to exercise the copy fallback.
var linkFile = os.Link

// ResumeResult says what ResumeFrom carried over.
type ResumeResult struct {
	From string `json:"from"`
	// Snapshots were recorded in this session; Dropped were not, because
	// one of their backups could be neither linked nor copied.
	Snapshots int `json:"snapshots"`
	Dropped   int `json:"dropped"`
	// Linked backups share the old session's file; Copied ones could not be
	// linked (another filesystem, say) and were copied; Present ones were
	// already the same file.
	Linked   int          `json:"linked"`
	Copied   int          `json:"copied"`
	Present  int          `json:"present"`
	Problems []*FileError `json:"problems,omitempty"`
}

// ResumeFrom starts this session's history as a continuation of session
// from, as Claude Code does when a conversation is resumed under a new
// session id: every backup the old snapshots name is hard-linked into this
// session's directory (copied, with its mtime, when linking fails), and the
// snapshots whose backups all arrived are recorded here, together with the old
// session's original working directory. The old session is not changed.
// This session must not have snapshots of its own yet (memdir.ErrExists).
func (h *History) ResumeFrom(ctx context.Context, from string) (*ResumeResult, error) {
	if err := checkSessionID(from); err != nil {
		return nil, err
	}
	if from == h.session {
		return nil, fmt.Errorf("resume session %s from itself: %w", from, errs.ErrInvalid)
	}
	old, err := New(h.configHome, from, &Options{Cwd: h.cwd, Now: h.now, Logger: h.logger, MaxFileSize: h.maxFileSize})
	if err != nil {
		return nil, err
	}
	old.wall = h.wall
	// Read the old state under its own lock, then let go of it: backups are
	// never rewritten in place, so linking them needs no lock on the old
	// session, and holding one lock at a time cannot deadlock.
	var oldState *state
	err = old.locked(ctx, false, func(t *txn) error {
		st, err := t.all()
		if err != nil {
			return err
		}
		oldState = st.copy()
		return nil
	})
	if err != nil {
		return nil, err
	}
	res := &ResumeResult{From: from}
	err = h.locked(ctx, true, func(t *txn) error {
		if n := t.st().retained(); n > 0 {
			return fmt.Errorf("session %s already has snapshots (%d); resume into a new session id: %w", h.session, n, errs.ErrExists)
		}
		carried := map[string]bool{} // backup name → arrived
		next := &state{cwd: oldState.cwd, sequence: oldState.sequence}
		for _, s := range oldState.snapshots {
			ok := true
			for key, b := range s.Files {
				if !b.Exists() {
					continue
				}
				arrived, seen := carried[b.Name]
				if !seen {
					if err := ctx.Err(); err != nil {
						return err
					}
					how, err := h.carry(filepath.Join(old.dir, b.Name), filepath.Join(h.dir, b.Name))
					switch {
					case err != nil:
						res.Problems = append(res.Problems, &FileError{Path: key, Err: err})
					case how == carriedLink:
						res.Linked++
					case how == carriedCopy:
						res.Copied++
					default:
						res.Present++
					}
					arrived = err == nil
					carried[b.Name] = arrived
				}
				ok = ok && arrived
			}
			if !ok {
				res.Dropped++
				continue
			}
			c := s.clone()
			next.snapshots = append(next.snapshots, &c)
		}
		res.Snapshots = len(next.snapshots)
		if err := atomicfile.SyncDir(h.dir); err != nil {
			return err
		}
		if err := t.replace(next); err != nil {
			return err
		}
		// Fingerprints are of this session's backups; the carried ones
		// are checked afresh on the next snapshot.
		t.lf.fps = nil
		return nil
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

type carriedHow int

const (
	carriedPresent carriedHow = iota
	carriedLink
	carriedCopy
)

// carry puts the backup src at dst: a hard link made under a temporary name
// and renamed over dst, or, when linking fails, a copy that keeps src's mode
// and mtime (the mtime is what the stat-only change check compares with).
func (h *History) carry(src, dst string) (carriedHow, error) {
	sfi, err := os.Lstat(src)
	if err != nil {
		return 0, fmt.Errorf("backup %s: %w", src, err)
	}
	if sfi.Mode()&fs.ModeSymlink != 0 || !sfi.Mode().IsRegular() {
		return 0, fmt.Errorf("refusing backup %s: not a regular file: %w", src, errs.ErrInvalid)
	}
	if dfi, err := os.Lstat(dst); err == nil && os.SameFile(sfi, dfi) {
		return carriedPresent, nil
	}
	tmp := filepath.Join(filepath.Dir(dst), "."+filepath.Base(dst)+".link-"+newLogID())
	lerr := linkFile(src, tmp)
	if lerr == nil {
		if err := os.Rename(tmp, dst); err != nil {
			os.Remove(tmp)
			return 0, fmt.Errorf("link backup %s: %w", dst, err)
		}
		return carriedLink, nil
	}
	h.logger.Debug("hard link failed; copying backup", "src", src, "err", lerr)
	data, fi, err := h.readRegular(src, sfi, true)
	if err != nil {
		return 0, fmt.Errorf("copy backup %s: %w", src, err)
	}
	if err := atomicfile.WriteFile(dst, data, modeBits(fi.Mode())); err != nil {
		return 0, fmt.Errorf("copy backup: %w", err)
	}
	h.stats.written.Add(int64(len(data)))
	if err := os.Chtimes(dst, time.Time{}, fi.ModTime()); err != nil {
		// A fresh mtime could let the fast path miss an edit made after the
		// original backup; a copy that cannot carry it is not used.
		return 0, errors.Join(fmt.Errorf("copy backup %s: keep its mtime: %w", dst, err), os.Remove(dst))
	}
	return carriedCopy, nil
}
