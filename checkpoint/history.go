package checkpoint

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/memdir/memdir/internal/atomicfile"
	"github.com/memdir/memdir/internal/errs"
	"github.com/memdir/memdir/internal/flock"
)

// maxSnapshots is Claude Code's MAX_SNAPSHOTS: older snapshots are evicted.
const maxSnapshots = 100

// DefaultMaxFileSize is the largest file a checkpoint backs up or diffs by
// default.
const DefaultMaxFileSize = 64 << 20

// backupWorkers bounds the files backed up at once by Snapshot: copying is
// mostly waiting for fsync, which overlaps well.
const backupWorkers = 8

// Options configures a History. The zero value and nil mean defaults.
type Options struct {
	// Cwd is the directory relative paths given to Track are resolved
	// against, and, when the session has no log yet, the session's original
	// working directory, which tracking paths are relative to. Later
	// processes use the directory recorded in the log, so a rewind started
	// from a subdirectory still restores the right files. Default: the
	// process's working directory.
	Cwd string
	// Now is the clock for snapshot and backup times; it is called from
	// several goroutines at once. Default: time.Now.
	Now func() time.Time
	// Logger receives debug messages. Default: discard.
	Logger *slog.Logger
	// MaxFileSize is the largest file backed up, in bytes; larger ones are
	// refused with an error naming them. Default: DefaultMaxFileSize.
	MaxFileSize int64
}

// History is one session's file history. Its methods are safe for concurrent
// use, and other processes may work on the same session at the same time.
type History struct {
	configHome string
	session    string
	dir        string
	cwd        string
	now        func() time.Time
	logger     *slog.Logger
	// wall reads the real clock, which the change check compares with
	// filesystem timestamps; tests replace it.
	wall func() time.Time

	maxFileSize int64
	stats       counters

	mu    sync.Mutex // guards cache; held with the directory lock
	cache *logFile
}

type counters struct{ read, written, logRead, logWritten atomic.Int64 }

// Stats counts the bytes a History has moved since it was created.
type Stats struct {
	// BytesRead is content read from tracked files and backups. A snapshot
	// of unchanged files adds nothing to it.
	BytesRead int64 `json:"bytes_read"`
	// BytesWritten is content written to backups and restored files.
	BytesWritten int64 `json:"bytes_written"`
	// LogBytesRead and LogBytesWritten count the state log and the state
	// file beside it.
	LogBytesRead    int64 `json:"log_bytes_read"`
	LogBytesWritten int64 `json:"log_bytes_written"`
}

// Stats returns the byte counters.
func (h *History) Stats() Stats {
	return Stats{
		BytesRead:       h.stats.read.Load(),
		BytesWritten:    h.stats.written.Load(),
		LogBytesRead:    h.stats.logRead.Load(),
		LogBytesWritten: h.stats.logWritten.Load(),
	}
}

// New returns the history of session sessionID, kept under
// <configHome>/file-history/<sessionID>. Nothing is read or created until
// the first operation.
func New(configHome, sessionID string, opts *Options) (*History, error) {
	if err := checkSessionID(sessionID); err != nil {
		return nil, err
	}
	if configHome == "" {
		return nil, fmt.Errorf("checkpoint: empty config directory: %w", errs.ErrInvalid)
	}
	configHome, err := filepath.Abs(configHome)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: config directory %s: %w", configHome, err)
	}
	if opts == nil {
		opts = &Options{}
	}
	h := &History{
		configHome:  configHome,
		session:     sessionID,
		dir:         filepath.Join(configHome, "file-history", sessionID),
		cwd:         opts.Cwd,
		now:         opts.Now,
		logger:      opts.Logger,
		wall:        time.Now,
		maxFileSize: opts.MaxFileSize,
	}
	if h.cwd == "" {
		if h.cwd, err = os.Getwd(); err != nil {
			return nil, fmt.Errorf("checkpoint: working directory: %w", err)
		}
	}
	if h.cwd, err = filepath.Abs(h.cwd); err != nil {
		return nil, fmt.Errorf("checkpoint: working directory %s: %w", opts.Cwd, err)
	}
	if h.now == nil {
		h.now = time.Now
	}
	if h.logger == nil {
		h.logger = slog.New(slog.DiscardHandler)
	}
	if h.maxFileSize <= 0 {
		h.maxFileSize = DefaultMaxFileSize
	}
	return h, nil
}

// Session returns the session id.
func (h *History) Session() string { return h.session }

// Dir returns the session's directory of backups.
func (h *History) Dir() string { return h.dir }

func (h *History) logPath() string { return filepath.Join(h.dir, LogName) }

// errNoSession reports a session that has no history yet.
func (h *History) errNoSession() error {
	return fmt.Errorf("no checkpoints for session %s (looked in %s): %w", h.session, h.dir, errs.ErrNotFound)
}

// txn is what an operation sees while it holds the session's locks.
type txn struct {
	h  *History
	lf *logFile
}

// st returns the current state; it is replaced by commit and replace. It may
// hold only the latest snapshot (older > 0); what needs the others calls all.
func (t *txn) st() *state { return t.lf.st }

// all returns the current state with every retained snapshot in memory,
// reading the whole log when the state came from the state file.
func (t *txn) all() (*state, error) {
	if t.lf.st.older == 0 {
		return t.lf.st, nil
	}
	full, err := t.h.readLog(nil, false)
	if err != nil {
		t.h.cache = nil
		return nil, err
	}
	if full.st == nil {
		t.h.cache = nil
		return nil, t.h.errNoSession()
	}
	full.fps = t.lf.fps
	// The state file stays as good as it was if it described this log.
	full.saved = t.lf.saved && full.offset == t.lf.offset && full.st.logID == t.lf.st.logID
	*t.lf = *full
	return t.lf.st, nil
}

// commit appends entries to the log durably and folds them into the state.
// It folds first, into a copy, so an entry that does not fold is never
// written and the log cannot hold a line that breaks every reader.
func (t *txn) commit(entries ...any) error {
	data, offsets, err := marshalLines(entries...)
	if err != nil {
		return fmt.Errorf("encode checkpoint log entry: %w", err)
	}
	for i := range offsets {
		offsets[i] += t.lf.offset
	}
	// Only a track entry changes the latest snapshot in place; new
	// snapshots are appended, so without one the copy can share it.
	onlySnapshots := true
	for _, e := range entries {
		if _, ok := e.(snapshotEntry); !ok {
			onlySnapshots = false
			break
		}
	}
	var next *state
	if onlySnapshots {
		next = t.lf.st.copyShallow()
	} else {
		next = t.lf.st.copy()
	}
	if err := t.h.fold(next, entries, offsets); err != nil {
		return err
	}
	if err := t.h.appendLog(t.lf, data); err != nil {
		t.h.cache = nil
		return err
	}
	t.lf.st = next
	t.lf.saved = false
	// A snapshot entry that comes last is the latest snapshot as it is:
	// its files are the entry's map, whose sorted keys it may carry.
	if e, ok := entries[len(entries)-1].(snapshotEntry); ok && e.keys != nil && !e.IsSnapshotUpdate {
		t.lf.keys, t.lf.keysOf = e.keys, next.latest()
	}
	return nil
}

// replace atomically rewrites the whole log to hold st.
func (t *txn) replace(st *state) error {
	data, next, err := compactData(t.h.session, st)
	if err != nil {
		return err
	}
	lf, err := t.h.replaceLog(data, next)
	if err != nil {
		t.h.cache = nil
		return err
	}
	// The fingerprints describe files against backups, not the log.
	lf.fps = t.lf.fps
	*t.lf = *lf
	return nil
}

// cut compacts the log by dropping every line before the one that added the
// oldest retained snapshot, copying the rest as it is: after 100 snapshots
// of 1,000 files that is some 10 MB that compaction need not parse. A new
// header (with a new logId) replaces the old. It reports false, having
// changed nothing, when the rest might not read the same on its own (the
// entry's sequence was not its own) or the cut would not fall where the
// state says that entry is.
func (t *txn) cut() (bool, error) {
	st := t.lf.st
	if len(st.starts) == 0 || !st.starts[0].exact || st.prefixDead() == 0 {
		return false, nil
	}
	first := st.starts[0]
	path := t.h.logPath()
	f, fi, err := openRegular(path, nil, false)
	if err != nil {
		return false, fmt.Errorf("compact checkpoint log %s: %w", path, err)
	}
	defer f.Close()
	if statID(fi) != t.lf.id || fi.Size() < t.lf.offset || first.offset < 1 || first.offset >= t.lf.offset {
		return false, nil
	}
	data := make([]byte, t.lf.offset-first.offset+1)
	n, err := f.ReadAt(data, first.offset-1)
	t.h.stats.logRead.Add(int64(n))
	if n != len(data) {
		return false, fmt.Errorf("compact checkpoint log %s: %w", path, err)
	}
	tail := data[1:]
	nl := bytes.IndexByte(tail, '\n')
	var e anyEntry
	if data[0] != '\n' || nl < 0 || json.Unmarshal(tail[:nl], &e) != nil ||
		e.Type != typeSnapshot || e.Snapshot == nil || e.IsSnapshotUpdate || e.Sequence != first.seq {
		t.h.logger.Debug("checkpoint log does not start a snapshot where the state says; rewriting it instead", "path", path, "offset", first.offset)
		return false, nil
	}
	hdr := headerEntry{Type: typeHeader, Version: logVersion, SessionID: t.h.session, Cwd: st.cwd, LogID: newLogID()}
	head, _, err := marshalLines(hdr)
	if err != nil {
		return false, err
	}
	next := st.copy()
	next.logID = hdr.LogID
	next.entries -= first.index
	shift := int64(len(head)) - first.offset
	for i := range next.starts {
		next.starts[i].offset += shift
		next.starts[i].index -= first.index
	}
	lf, err := t.h.replaceLog(append(head, tail...), next)
	if err != nil {
		t.h.cache = nil
		return false, err
	}
	lf.fps = t.lf.fps
	*t.lf = *lf
	return true, nil
}

// locked runs fn holding the in-process mutex and the session directory's
// lock, with the log read up to date. With create, a missing session
// directory and log are created; without, a missing session is ErrNotFound.
func (h *History) locked(ctx context.Context, create bool, fn func(t *txn) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if create {
		if err := h.makeDir(); err != nil {
			return err
		}
	} else if err := checkDirNoLink(h.dir); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return h.errNoSession()
		}
		return fmt.Errorf("session directory %s: %w", h.dir, err)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	lock, err := flock.Acquire(ctx, h.dir)
	if err != nil {
		return fmt.Errorf("checkpoint session %s: %w", h.session, err)
	}
	defer lock.Unlock()

	lf, err := h.readLog(h.cache, true)
	if err != nil {
		h.cache = nil
		return err
	}
	if lf.st == nil {
		if !create {
			return h.errNoSession()
		}
		if lf, err = h.createLog(h.cwd); err != nil {
			return err
		}
	}
	h.cache = lf
	t := &txn{h: h, lf: lf}
	err = fn(t)
	if h.cache != nil && lf.st.dead() > lf.st.retained()+32 {
		cerr := func() error {
			// Mostly evicted snapshots: cut them off, which needs no
			// parsing. Otherwise (track entries folded into later
			// snapshots) rewrite the log from the state.
			if lf.st.prefixDead() > (lf.st.retained()+32)/2 {
				if ok, err := t.cut(); ok || err != nil {
					return err
				}
			}
			st, err := t.all()
			if err != nil {
				return err
			}
			return t.replace(st)
		}()
		if cerr != nil {
			// The appended entries are durable; only the tidying failed.
			err = errors.Join(err, cerr)
		} else {
			h.logger.Debug("compacted checkpoint log", "path", h.logPath(), "snapshots", len(lf.st.snapshots))
		}
	}
	if h.cache != nil && !h.cache.saved {
		// After the log, so the state file never covers more than the log
		// holds; a crash in between only leaves it behind, and the next
		// reader folds in what it did not cover.
		h.saveState(h.cache)
	}
	return err
}

// fold applies entries this process just appended, through the same code
// that reads them back.
func (h *History) fold(st *state, entries []any, offsets []int64) error {
	for i, e := range entries {
		var ae anyEntry
		switch e := e.(type) {
		case snapshotEntry:
			ae = anyEntry{Type: e.Type, MessageID: e.MessageID, Snapshot: &e.Snapshot, Sequence: e.Sequence}
		case trackEntry:
			ae = anyEntry{Type: e.Type, MessageID: e.MessageID, TrackingPath: e.TrackingPath, Backup: &e.Backup}
		default:
			return fmt.Errorf("internal error: unknown entry %T", e)
		}
		if err := st.apply(&ae, offsets[i]); err != nil {
			return err
		}
	}
	return nil
}

// makeDir creates <configHome>/file-history/<session>, 0700, and refuses one
// reached through a symbolic link below configHome.
func (h *History) makeDir() error {
	if err := atomicfile.MkdirAll(h.dir, 0o700); err != nil {
		return fmt.Errorf("create checkpoint directory %s: %w", h.dir, err)
	}
	for _, d := range []string{filepath.Dir(h.dir), h.dir} {
		if err := checkDirNoLink(d); err != nil {
			return err
		}
	}
	return nil
}

// TrackResult says what Track did.
type TrackResult struct {
	// Path is the tracking path: relative to the session's original working
	// directory when inside it, else absolute.
	Path string `json:"path"`
	// Backup is the file's entry in the latest snapshot.
	Backup Backup `json:"backup"`
	// AlreadyTracked is true when the latest snapshot already had the file,
	// in which case nothing was written.
	AlreadyTracked bool `json:"already_tracked"`
	// Sequence is the snapshot the file was added to.
	Sequence int `json:"sequence"`
}

// Track is called before a file is edited or created: unless the latest
// snapshot already has the file, it backs up the file's current content (or
// records that it does not exist yet) and adds it to the latest snapshot. If
// the session has no snapshot yet, one is started for messageID.
func (h *History) Track(ctx context.Context, path, messageID string) (*TrackResult, error) {
	if err := checkMessageID(messageID); err != nil {
		return nil, err
	}
	abs, err := resolveArg(h.cwd, path)
	if err != nil {
		return nil, err
	}
	if within(h.dir, abs) {
		return nil, fmt.Errorf("refusing to track %s: it is inside the checkpoint directory %s: %w", abs, h.dir, errs.ErrInvalid)
	}
	var res *TrackResult
	err = h.locked(ctx, true, func(t *txn) error {
		st := t.st()
		key := trackingPath(st.cwd, abs)
		if last := st.latest(); last != nil {
			if b, ok := last.Files[key]; ok {
				res = &TrackResult{Path: key, Backup: b, AlreadyTracked: true, Sequence: last.Sequence}
				return nil
			}
		}
		// A file tracked before but missing from the latest snapshot gets a
		// new version rather than overwriting its v1. Only when some
		// snapshot may hold a file the latest lacks must they all be read.
		if st.crossed {
			var err error
			if st, err = t.all(); err != nil {
				return err
			}
		}
		v := 1
		for _, s := range st.snapshots {
			if b, ok := s.Files[key]; ok && b.Version >= v {
				v = b.Version + 1
			}
		}
		b, err := h.backupFile(st.cwd, abs, v)
		if err != nil {
			return err
		}
		if last := st.latest(); last != nil {
			res = &TrackResult{Path: key, Backup: b, Sequence: last.Sequence}
			return t.commit(trackEntry{Type: typeTrack, MessageID: messageID, TrackingPath: key, Backup: b})
		}
		s := &Snapshot{MessageID: messageID, Sequence: st.sequence + 1, Time: h.now(), Files: map[string]Backup{key: b}}
		res = &TrackResult{Path: key, Backup: b, Sequence: s.Sequence}
		return t.commit(newSnapshotEntry(s))
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// FileError is a problem with one tracked file.
type FileError struct {
	Path string // the tracking path
	Err  error
}

func (e *FileError) Error() string { return e.Path + ": " + e.Err.Error() }
func (e *FileError) Unwrap() error { return e.Err }

// MarshalJSON writes {"path": ..., "error": ...}.
func (e *FileError) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Path  string `json:"path"`
		Error string `json:"error"`
	}{e.Path, e.Err.Error()})
}

// SnapshotResult says what Snapshot recorded.
type SnapshotResult struct {
	Snapshot Snapshot `json:"snapshot"`
	// Changed lists files given a new version, Deleted files that no longer
	// exist (null entries), both sorted; Unchanged counts the files whose
	// backup was reused.
	Changed   []string `json:"changed"`
	Deleted   []string `json:"deleted"`
	Unchanged int      `json:"unchanged"`
	// Evicted counts the oldest snapshots dropped to stay at 100.
	Evicted int `json:"evicted"`
	// Problems lists files that could not be checked or backed up; each
	// keeps its previous entry in the new snapshot.
	Problems []*FileError `json:"problems,omitempty"`
}

// Err returns the problems joined into one error, or nil.
func (r *SnapshotResult) Err() error {
	errs := make([]error, len(r.Problems))
	for i, p := range r.Problems {
		errs[i] = p
	}
	return errors.Join(errs...)
}

// Snapshot is called when a user turn starts. It records a new snapshot for
// messageID in which every tracked file has its latest backup when
// unchanged (found by stat alone unless size, mode or times say otherwise),
// a new version when changed, or a null entry when gone, and evicts the
// oldest snapshot beyond 100. A file that cannot be read keeps its previous
// entry and is listed in the result's Problems; the snapshot is recorded all
// the same.
func (h *History) Snapshot(ctx context.Context, messageID string) (*SnapshotResult, error) {
	if err := checkMessageID(messageID); err != nil {
		return nil, err
	}
	var res *SnapshotResult
	err := h.locked(ctx, true, func(t *txn) error {
		var e any
		var fps map[string]fingerprint
		var err error
		res, e, fps, err = h.snapshotLocked(ctx, t.st(), t.lf.latestKeys(), t.lf.fps, messageID)
		if err != nil {
			return err
		}
		if err := t.commit(e); err != nil {
			return err
		}
		t.lf.fps = fps
		return nil
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// snapshotLocked builds the next snapshot and its log entry; the caller holds
// the lock and appends the entry. keys are the tracking paths of
// st.latest(), sorted (see logFile.latestKeys); the new snapshot has the
// same. fps are the fingerprints known so far; it returns those for the new
// snapshot.
func (h *History) snapshotLocked(ctx context.Context, st *state, keys []string, fps map[string]fingerprint, messageID string) (*SnapshotResult, any, map[string]fingerprint, error) {
	prev := st.latest()
	if prev == nil {
		keys = nil
	}
	ex, err := h.examine(ctx, st.cwd, prev, keys, fps)
	if err != nil {
		return nil, nil, nil, err
	}
	s := &Snapshot{MessageID: messageID, Sequence: st.sequence + 1, Time: h.now()}
	res := &SnapshotResult{Changed: []string{}, Deleted: []string{}}
	var next map[string]fingerprint
	if ex.nkept == len(keys) && len(fps) == len(keys) && prev != nil {
		// Every file as its fingerprint had it: the new snapshot's files
		// and fingerprints are the latest's, and so are their maps, which
		// nothing changes once committed (a track entry folds into a copy
		// of the state, see state.copy).
		s.Files, next = prev.Files, fps
		res.Unchanged = len(keys)
	} else {
		s.Files, next = ex.collect(prev, keys, fps, res)
	}
	res.Snapshot = s.clone()
	res.Evicted = max(0, st.retained()+1-maxSnapshots)
	e := newSnapshotEntry(s)
	e.keys = keys
	return res, e, next, nil
}

// fileOutcome is what a snapshot found of one file.
type fileOutcome struct {
	b     Backup
	kind  int // 0 unchanged, 1 changed, 2 deleted
	err   error
	fp    fingerprint
	hasFP bool
}

// examined is what a snapshot found of its files. Those unchanged by the
// fingerprint they had are only marked in kept: at most prompts that is
// all of them, and out (made at the first other file) would be a page of
// heap for every 25 files.
type examined struct {
	kept  []bool
	nkept int
	out   []fileOutcome
}

// examine looks at each of keys, files of the snapshot prev at paths
// below cwd, with the fingerprints fps: an lstat, then for a file that
// does not match its fingerprint the backup's lstat, then its content in
// a pool of workers, which backs up a changed file.
func (h *History) examine(ctx context.Context, cwd string, prev *Snapshot, keys []string, fps map[string]fingerprint) (*examined, error) {
	paths := expandAll(cwd, keys)
	// Read before any file is examined, so that a fingerprint is only taken
	// of a file whose last change was well before it was looked at.
	wall := h.wall()
	ex := &examined{kept: make([]bool, len(keys))}
	var wg sync.WaitGroup
	sem := make(chan struct{}, backupWorkers)
	for i, key := range keys {
		if err := ctx.Err(); err != nil {
			wg.Wait()
			return nil, err
		}
		latest := prev.Files[key]
		abs := paths[i]
		if fp, ok := fps[key]; ok && latest.Exists() && fp.backup == latest.Name && stillFingerprinted(abs, fp) {
			ex.kept[i] = true
			ex.nkept++
			continue
		}
		if ex.out == nil {
			ex.out = make([]fileOutcome, len(keys))
		}
		fi, err := lstatMaybe(abs)
		switch {
		case err != nil:
			ex.out[i] = fileOutcome{b: latest, err: fmt.Errorf("stat %s: %w", abs, err)}
			continue
		case fi == nil && !latest.Exists():
			ex.out[i] = fileOutcome{b: latest}
			continue
		case fi == nil:
			ex.out[i] = fileOutcome{b: Backup{Version: latest.Version + 1, Time: h.now()}, kind: 2}
			continue
		}
		if err := checkRegular(fi, abs); err != nil {
			ex.out[i] = fileOutcome{b: latest, err: err}
			continue
		}
		if latest.Exists() {
			// The stat-only fast paths run inline; only content work is
			// handed to the pool. With a fingerprint that still matches,
			// the file's lstat is all an unchanged file costs.
			if fp, ok := fps[key]; ok && fp.matches(fi, latest.Name) {
				ex.kept[i] = true
				ex.nkept++
				continue
			}
			if bfi, err := os.Lstat(filepath.Join(h.dir, latest.Name)); err == nil && fastUnchanged(fi, bfi) {
				fp, ok := fingerprintOf(fi, latest.Name, wall)
				ex.out[i] = fileOutcome{b: latest, fp: fp, hasFP: ok}
				continue
			}
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			ex.out[i] = h.examineContent(cwd, abs, fi, latest, wall)
		}()
	}
	wg.Wait()
	return ex, nil
}

// examineContent compares the file at abs (lstat fi) with its latest
// backup by content and backs it up when it changed; wall is when the
// snapshot began.
func (h *History) examineContent(cwd, abs string, fi fs.FileInfo, latest Backup, wall time.Time) fileOutcome {
	ch, err := h.changed(abs, fi, latest, true)
	if err != nil {
		return fileOutcome{b: latest, err: err}
	}
	if !ch {
		fp, ok := fingerprintOf(fi, latest.Name, wall)
		return fileOutcome{b: latest, fp: fp, hasFP: ok}
	}
	b, err := h.backupFile(cwd, abs, latest.Version+1)
	switch {
	case err != nil:
		return fileOutcome{b: latest, err: err}
	case b.Exists():
		// Any write after fi was taken moves the change time past the
		// fingerprint's, whatever the backup caught.
		fp, ok := fingerprintOf(fi, b.Name, wall)
		return fileOutcome{b: b, kind: 1, fp: fp, hasFP: ok}
	default:
		return fileOutcome{b: b, kind: 2}
	}
}

// collect makes the new snapshot's files and fingerprints from what was
// found of keys (files of prev, with fingerprints fps) and counts the
// outcomes into res.
func (ex *examined) collect(prev *Snapshot, keys []string, fps map[string]fingerprint, res *SnapshotResult) (map[string]Backup, map[string]fingerprint) {
	files := make(map[string]Backup, len(keys))
	next := make(map[string]fingerprint, len(keys))
	for i, key := range keys {
		if ex.kept[i] {
			files[key], next[key] = prev.Files[key], fps[key]
			res.Unchanged++
			continue
		}
		o := ex.out[i]
		files[key] = o.b
		if o.hasFP && o.err == nil {
			next[key] = o.fp
		}
		switch {
		case o.err != nil:
			res.Problems = append(res.Problems, &FileError{Path: key, Err: o.err})
		case o.kind == 1:
			res.Changed = append(res.Changed, key)
		case o.kind == 2:
			res.Deleted = append(res.Deleted, key)
		default:
			res.Unchanged++
		}
	}
	return files, next
}

// fastUnchanged is the part of the change check that needs no reading: same
// mode and size, and the file last changed before its backup was written.
func fastUnchanged(fi, bfi fs.FileInfo) bool {
	return sameShape(fi, bfi) && lastChange(fi).Before(bfi.ModTime())
}

// sameShape reports whether a file and its backup agree on what stat shows
// besides times: the backup is a plain file with the same mode and size.
func sameShape(fi, bfi fs.FileInfo) bool {
	return bfi.Mode().IsRegular() && modeBits(fi.Mode()) == modeBits(bfi.Mode()) && fi.Size() == bfi.Size()
}

// lastChange is the later of a file's modification and inode change times.
func lastChange(fi fs.FileInfo) time.Time {
	last := fi.ModTime()
	if ct := changeTime(fi); ct.After(last) {
		last = ct
	}
	return last
}

// Snapshots returns the session's snapshots, oldest first.
func (h *History) Snapshots(ctx context.Context) ([]Snapshot, error) {
	var out []Snapshot
	err := h.locked(ctx, false, func(t *txn) error {
		st, err := t.all()
		if err != nil {
			return err
		}
		out = make([]Snapshot, len(st.snapshots))
		for i, s := range st.snapshots {
			out[i] = s.clone()
		}
		return nil
	})
	return out, err
}

// OriginalCwd returns the working directory recorded when the session's log
// was created, which relative tracking paths are based on.
func (h *History) OriginalCwd(ctx context.Context) (string, error) {
	var cwd string
	err := h.locked(ctx, false, func(t *txn) error {
		cwd = t.st().cwd
		return nil
	})
	return cwd, err
}

// findLast returns the last snapshot for messageID.
func (h *History) findLast(st *state, messageID string) (*Snapshot, error) {
	for i := len(st.snapshots) - 1; i >= 0; i-- {
		if st.snapshots[i].MessageID == messageID {
			return st.snapshots[i], nil
		}
	}
	return nil, &NoSnapshotError{MessageID: messageID, Session: h.session}
}

// NoSnapshotError reports a message id no retained snapshot of the
// session has: it never had one, or its snapshots were evicted. It wraps
// memdir's ErrNotFound.
type NoSnapshotError struct {
	MessageID string
	Session   string
}

func (e *NoSnapshotError) Error() string {
	return fmt.Sprintf("no snapshot for message %q in session %s (it may have been evicted): %v", e.MessageID, e.Session, errs.ErrNotFound)
}

func (e *NoSnapshotError) Unwrap() error { return errs.ErrNotFound }

// trackedKeys returns every tracking path in the retained snapshots, sorted.
func trackedKeys(st *state) []string {
	seen := map[string]bool{}
	for _, s := range st.snapshots {
		for k := range s.Files {
			seen[k] = true
		}
	}
	keys := make([]string, 0, len(seen))
	for k := range seen {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, cmp.Compare)
	return keys
}
