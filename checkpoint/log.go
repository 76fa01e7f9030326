package checkpoint

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/memdir/memdir/internal/atomicfile"
	"github.com/memdir/memdir/internal/errs"
)

// LogName is the name of the session's state log inside its file-history
// directory. It cannot collide with a backup name, which always holds "@v".
const LogName = "memdir-checkpoints.jsonl"

// logVersion is the format version in the header line. A log with a newer
// version is refused rather than compacted, which would drop what this
// version does not understand.
const logVersion = 1

// Entry types. The snapshot type and its fields are Claude Code's
// "file-history-snapshot" transcript entry; the header and track types are
// memdir's own.
const (
	typeHeader   = "memdir-file-history"
	typeSnapshot = "file-history-snapshot"
	typeTrack    = "file-history-track"
)

// Backup is one saved version of a tracked file.
type Backup struct {
	// Name is the backup file's name in the session directory,
	// "<16 hex>@v<N>". Empty means the file did not exist at this version
	// (Claude Code's backupFileName: null).
	Name string
	// Version counts the versions of this file, from 1.
	Version int
	// Time is when the backup was taken.
	Time time.Time
}

// Exists reports whether the file existed at this version.
func (b Backup) Exists() bool { return b.Name != "" }

type wireBackup struct {
	BackupFileName *string   `json:"backupFileName"`
	Version        int       `json:"version"`
	BackupTime     time.Time `json:"backupTime"`
}

// MarshalJSON writes Claude Code's FileHistoryBackup shape, with a null
// backupFileName for a file that did not exist.
func (b Backup) MarshalJSON() ([]byte, error) {
	w := wireBackup{Version: b.Version, BackupTime: b.Time.UTC()}
	if b.Name != "" {
		w.BackupFileName = &b.Name
	}
	return json.Marshal(w)
}

// UnmarshalJSON reads Claude Code's FileHistoryBackup shape and checks that
// the backup name is a plain file name, so a log cannot point a restore
// outside the session directory.
func (b *Backup) UnmarshalJSON(data []byte) error {
	var w wireBackup
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	if w.Version < 1 {
		return fmt.Errorf("backup version %d is not positive", w.Version)
	}
	*b = Backup{Version: w.Version, Time: w.BackupTime}
	if w.BackupFileName != nil {
		if err := checkSegment(*w.BackupFileName, "backup file name"); err != nil {
			return err
		}
		b.Name = *w.BackupFileName
	}
	return nil
}

// Snapshot is the state of every tracked file at the start of one user turn.
type Snapshot struct {
	// MessageID is the caller's id of the turn (Claude Code: the user
	// message's UUID). Several snapshots may share one; Rewind uses the last.
	MessageID string `json:"messageId"`
	// Sequence numbers snapshots from 1 and keeps growing when old ones are
	// evicted.
	Sequence int       `json:"sequence"`
	Time     time.Time `json:"timestamp"`
	// Files maps each tracking path (relative to the session's original
	// working directory when inside it, else absolute) to its backup.
	Files map[string]Backup `json:"trackedFileBackups"`
}

func (s *Snapshot) clone() Snapshot {
	c := *s
	c.Files = maps.Clone(s.Files)
	if c.Files == nil {
		c.Files = map[string]Backup{}
	}
	return c
}

// wireSnapshot is the "snapshot" object of a file-history-snapshot entry.
type wireSnapshot struct {
	MessageID          string            `json:"messageId"`
	TrackedFileBackups map[string]Backup `json:"trackedFileBackups"`
	Timestamp          time.Time         `json:"timestamp"`
}

type headerEntry struct {
	Type      string `json:"type"`
	Version   int    `json:"version"`
	SessionID string `json:"sessionId"`
	Cwd       string `json:"cwd"`
	LogID     string `json:"logId"`
}

type snapshotEntry struct {
	Type             string       `json:"type"`
	MessageID        string       `json:"messageId"`
	Snapshot         wireSnapshot `json:"snapshot"`
	IsSnapshotUpdate bool         `json:"isSnapshotUpdate"`
	Sequence         int          `json:"sequence"`

	// keys, when not nil, are the keys of Snapshot.TrackedFileBackups,
	// sorted: whoever sets them built the map from them.
	keys []string
}

type trackEntry struct {
	Type         string `json:"type"`
	MessageID    string `json:"messageId"`
	TrackingPath string `json:"trackingPath"`
	Backup       Backup `json:"backup"`
}

// anyEntry holds the fields of every entry type, for decoding before the
// type is known.
type anyEntry struct {
	Type             string        `json:"type"`
	Version          int           `json:"version"`
	SessionID        string        `json:"sessionId"`
	Cwd              string        `json:"cwd"`
	LogID            string        `json:"logId"`
	MessageID        string        `json:"messageId"`
	Snapshot         *wireSnapshot `json:"snapshot"`
	IsSnapshotUpdate bool          `json:"isSnapshotUpdate"`
	Sequence         int           `json:"sequence"`
	TrackingPath     string        `json:"trackingPath"`
	Backup           *Backup       `json:"backup"`
}

func newSnapshotEntry(s *Snapshot) snapshotEntry {
	return snapshotEntry{
		Type:      typeSnapshot,
		MessageID: s.MessageID,
		Snapshot: wireSnapshot{
			MessageID:          s.MessageID,
			TrackedFileBackups: s.Files,
			Timestamp:          s.Time.UTC(),
		},
		Sequence: s.Sequence,
	}
}

// state is a session's log folded into memory.
type state struct {
	cwd       string
	logID     string
	snapshots []*Snapshot // oldest first, at most maxSnapshots
	sequence  int         // the highest sequence number seen
	// older counts the retained snapshots before snapshots[0] that are not
	// in memory: a state loaded from the state file holds only the latest
	// snapshot, which is all Snapshot needs (see txn.all).
	older int
	// starts says where in the log each retained snapshot, oldest first,
	// was added: compaction cuts the log there without parsing it (see
	// txn.cut).
	starts []entryStart
	// crossed is set when some retained snapshot may hold a file the
	// latest lacks. Unset, each snapshot holds every file of the one before
	// (memdir's own snapshots always do), so a file the latest lacks is in
	// none and Track can give it v1 without reading the older snapshots.
	crossed bool

	// entries counts the entries after the header in the file; liveTracks
	// the track entries since the last snapshot entry. Their difference from
	// retained() is what compaction would drop.
	entries    int
	liveTracks int
}

// entryStart is where the entry that added a retained snapshot is in the log.
type entryStart struct {
	offset int64 // of its line
	index  int   // the entries before it, after the header
	seq    int   // the sequence it was given
	// exact is set when the entry's own "sequence" field is seq, so that a
	// log that starts with it reads the same.
	exact bool
}

func (st *state) latest() *Snapshot {
	if len(st.snapshots) == 0 {
		return nil
	}
	return st.snapshots[len(st.snapshots)-1]
}

// apply folds one entry into the state; offset is where its line starts.
func (st *state) apply(e *anyEntry, offset int64) error {
	switch e.Type {
	case typeSnapshot:
		if e.Snapshot == nil {
			return errors.New(`file-history-snapshot entry has no "snapshot" object`)
		}
		if err := checkMessageID(e.Snapshot.MessageID); err != nil {
			return err
		}
		files := e.Snapshot.TrackedFileBackups
		if files == nil {
			files = map[string]Backup{}
		}
		last := st.latest()
		hasLast := last != nil && hasAll(files, last.Files)
		// A snapshot with exactly the latest one's files, as most are, has
		// only paths that were checked when they came into the state.
		if !hasLast || len(files) != len(last.Files) {
			for p := range files {
				if err := checkTrackingPath(p); err != nil {
					return err
				}
			}
		}
		s := &Snapshot{MessageID: e.Snapshot.MessageID, Time: e.Snapshot.Timestamp, Files: files}
		index := st.entries
		st.entries++
		if last != nil && !hasLast {
			st.crossed = true
		}
		if e.IsSnapshotUpdate && len(st.snapshots) > 0 {
			// Claude Code's update form: a complete replacement of the
			// latest snapshot.
			s.Sequence = st.latest().Sequence
			st.snapshots[len(st.snapshots)-1] = s
			return nil
		}
		s.Sequence = e.Sequence
		if s.Sequence <= st.sequence {
			s.Sequence = st.sequence + 1
		}
		st.sequence = s.Sequence
		st.snapshots = append(st.snapshots, s)
		st.starts = append(st.starts, entryStart{offset: offset, index: index, seq: s.Sequence, exact: e.Sequence == s.Sequence})
		if over := st.retained() - maxSnapshots; over > 0 {
			st.starts = st.starts[min(over, len(st.starts)):]
			gone := min(over, st.older)
			st.older -= gone
			over -= gone
			clear(st.snapshots[:over])
			st.snapshots = st.snapshots[over:]
		}
		st.liveTracks = 0
	case typeTrack:
		if e.Backup == nil {
			return errors.New(`file-history-track entry has no "backup" object`)
		}
		if err := checkTrackingPath(e.TrackingPath); err != nil {
			return err
		}
		last := st.latest()
		if last == nil {
			return errors.New("file-history-track entry before any snapshot")
		}
		st.entries++
		st.liveTracks++
		if _, ok := last.Files[e.TrackingPath]; !ok {
			last.Files[e.TrackingPath] = *e.Backup
		}
	case typeHeader:
		return errors.New("a second header line")
	default:
		return fmt.Errorf("unknown entry type %q (written by a newer memdir?)", e.Type)
	}
	return nil
}

// dead counts the entries in the file that compaction would drop: evicted
// snapshots and track entries already folded into a later snapshot.
func (st *state) dead() int { return st.entries - st.retained() - st.liveTracks }

// hasAll reports whether a holds every key of b.
func hasAll(a, b map[string]Backup) bool {
	if len(a) < len(b) {
		return false
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			return false
		}
	}
	return true
}

// recheckCrossed recomputes crossed from the snapshots, when all retained
// ones are in memory: an evicted snapshot no longer counts.
func (st *state) recheckCrossed() {
	if st.older > 0 {
		return
	}
	st.crossed = false
	for i := 1; i < len(st.snapshots); i++ {
		if !hasAll(st.snapshots[i].Files, st.snapshots[i-1].Files) {
			st.crossed = true
			return
		}
	}
}

// prefixDead counts the entries before the oldest retained snapshot's:
// what cutting the log there drops.
func (st *state) prefixDead() int {
	if len(st.starts) == 0 {
		return 0
	}
	return st.starts[0].index
}

// retained counts the snapshots kept, in memory or not.
func (st *state) retained() int { return st.older + len(st.snapshots) }

// logFile is what a History remembers about the log between operations, so
// that the next one reads only what other processes appended since.
type logFile struct {
	st     *state
	id     fileID
	offset int64 // the end of the last complete line read
	// fps fingerprints files of the latest snapshot found unchanged (see
	// fingerprint), by tracking path; they go into the state file.
	fps map[string]fingerprint
	// saved is set while the state file on disk describes exactly this.
	saved bool
	// keys are the tracking paths of keysOf, sorted, when known: a new
	// process gets them sorted from the state file, and a snapshot it takes
	// has the same ones. See latestKeys.
	keys   []string
	keysOf *Snapshot
}

// latestKeys returns the tracking paths of the latest snapshot, sorted.
// The remembered ones are only used for the very snapshot they were taken
// of, and only while it has as many files: a snapshot in the state is never
// changed but by adding files (a track entry), and only after a copy (see
// state.copy), which gives a new *Snapshot.
func (lf *logFile) latestKeys() []string {
	last := lf.st.latest()
	if last == nil {
		return nil
	}
	if lf.keysOf == last && len(lf.keys) == len(last.Files) {
		return lf.keys
	}
	return slices.Sorted(maps.Keys(last.Files))
}

// parseHeader decodes the first line of a log.
func parseHeader(line []byte) (*headerEntry, error) {
	var h headerEntry
	if err := json.Unmarshal(line, &h); err != nil {
		return nil, fmt.Errorf("header: %w", err)
	}
	switch {
	case h.Type != typeHeader:
		return nil, fmt.Errorf("the first line is not a %q header", typeHeader)
	case h.Version > logVersion:
		return nil, fmt.Errorf("format version %d is newer than this memdir understands (%d)", h.Version, logVersion)
	case h.Version < 1:
		return nil, fmt.Errorf("header has no format version")
	case !filepath.IsAbs(h.Cwd):
		return nil, fmt.Errorf("header cwd %q is not an absolute path", h.Cwd)
	case h.LogID == "":
		return nil, fmt.Errorf("header has no logId")
	}
	return &h, nil
}

// parseEntries folds the complete lines of data into st. It returns how many
// bytes it consumed: up to the end of the last line that was folded. A last
// line that is torn (no newline) or does not decode is left unconsumed, as
// the remains of an append cut short by a crash; a bad line before the last
// is an error naming its line number, counted from firstLine. base is
// data's offset in the log.
func parseEntries(st *state, data []byte, firstLine int, base int64) (int64, error) {
	var used int64
	line := firstLine
	for len(data) > 0 {
		nl := bytes.IndexByte(data, '\n')
		if nl < 0 {
			return used, nil // torn tail
		}
		raw := data[:nl]
		rest := data[nl+1:]
		last := len(rest) == 0
		if len(bytes.TrimSpace(raw)) > 0 {
			var e anyEntry
			if err := json.Unmarshal(raw, &e); err != nil {
				if last {
					return used, nil
				}
				return used, fmt.Errorf("line %d: %w", line, err)
			}
			if err := st.apply(&e, base+used); err != nil {
				return used, fmt.Errorf("line %d: %w", line, err)
			}
		}
		used += int64(nl + 1)
		data = rest
		line++
	}
	return used, nil
}

// readLog brings the cached view of the log at path up to date and returns
// it. A missing log gives a nil state. When the file is the same one read
// before (same inode and the same logId in its header) only the bytes
// appended since are read. Without such a cache, and with useState, the
// state file stands in for it when it describes this log; otherwise the
// whole log is parsed again.
func (h *History) readLog(cache *logFile, useState bool) (*logFile, error) {
	path := h.logPath()
	f, err := os.OpenFile(path, os.O_RDONLY|oNoFollow|oNonBlock, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return &logFile{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("open checkpoint log %s: %w", path, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("stat checkpoint log %s: %w", path, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("checkpoint log %s is not a regular file: %w", path, errs.ErrInvalid)
	}
	headerLine, err := readFirstLine(f)
	h.stats.logRead.Add(int64(len(headerLine)))
	if err != nil {
		return nil, fmt.Errorf("read checkpoint log %s: %w", path, err)
	}
	hdr, err := parseHeader(bytes.TrimSuffix(headerLine, []byte("\n")))
	if err != nil || !bytes.HasSuffix(headerLine, []byte("\n")) {
		if err == nil {
			err = errors.New("the header line is incomplete")
		}
		return nil, fmt.Errorf("checkpoint log %s: %w; move it aside to start the session's history afresh: %w", path, err, errs.ErrInvalid)
	}
	id := statID(fi)
	usable := func(c *logFile) bool {
		return c != nil && c.st != nil && c.id == id && c.st.logID == hdr.LogID && c.st.cwd == hdr.Cwd &&
			c.offset >= int64(len(headerLine)) && c.offset <= fi.Size()
	}
	if !usable(cache) && useState {
		cache = h.loadState()
	}
	if usable(cache) {
		if cache.offset == fi.Size() {
			return cache, nil
		}
		next, err := h.readFrom(f, path, cache, cache.offset, fi.Size())
		if err == nil || !cache.saved {
			return next, err
		}
		// What the state file left unread did not fold onto it: read the
		// whole log, which names the bad line if the log is to blame.
		h.logger.Debug("checkpoint state file does not fit the log; reading the log", "path", path, "err", err)
	}
	next, err := h.readFrom(f, path, &logFile{st: &state{cwd: hdr.Cwd, logID: hdr.LogID}, id: id}, int64(len(headerLine)), fi.Size())
	if err == nil {
		next.st.recheckCrossed()
	}
	return next, err
}

// readFrom folds the log's bytes from offset to size into lf.
func (h *History) readFrom(f *os.File, path string, lf *logFile, offset, size int64) (*logFile, error) {
	data := make([]byte, size-offset)
	n, err := f.ReadAt(data, offset)
	h.stats.logRead.Add(int64(n))
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("read checkpoint log %s: %w", path, err)
	}
	// Line numbers are only exact on a full read; they are for people.
	firstLine := 2
	if lf.st.entries > 0 {
		firstLine = lf.st.entries + 2
	}
	// Fold into a copy so that an error leaves the cache as it was.
	st := lf.st.copy()
	used, err := parseEntries(st, data[:n], firstLine, offset)
	if err != nil {
		return nil, fmt.Errorf("checkpoint log %s: %s: %w", path, err, errs.ErrInvalid)
	}
	next := &logFile{st: st, id: lf.id, offset: offset + used, fps: lf.fps}
	next.saved = lf.saved && next.offset == lf.offset
	return next, nil
}

// copy returns a copy of st that can be folded into without changing st:
// only the latest snapshot is ever changed in place, so only it is cloned.
func (st *state) copy() *state {
	c := st.copyShallow()
	if n := len(c.snapshots); n > 0 {
		last := c.snapshots[n-1].clone()
		c.snapshots[n-1] = &last
	}
	return c
}

// copyShallow is copy sharing every snapshot: what can be folded into it
// without changing st is only snapshot entries, which never change the
// latest snapshot in place.
func (st *state) copyShallow() *state {
	c := *st
	c.snapshots = append([]*Snapshot(nil), st.snapshots...)
	c.starts = append([]entryStart(nil), st.starts...)
	return &c
}

func readFirstLine(f *os.File) ([]byte, error) {
	var out []byte
	buf := make([]byte, 512)
	var off int64
	for {
		n, err := f.ReadAt(buf, off)
		if i := bytes.IndexByte(buf[:n], '\n'); i >= 0 {
			return append(out, buf[:i+1]...), nil
		}
		out = append(out, buf[:n]...)
		off += int64(n)
		if len(out) > 64<<10 {
			return out, errors.New("the header line is longer than 64 KiB")
		}
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
	}
}

func newLogID() string {
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// marshalLines encodes entries one a line, and returns where each line
// starts.
func marshalLines(entries ...any) ([]byte, []int64, error) {
	var buf []byte
	starts := make([]int64, 0, len(entries))
	for _, e := range entries {
		starts = append(starts, int64(len(buf)))
		if se, ok := e.(snapshotEntry); ok {
			// Room for a typical entry, so that it is encoded in place
			// rather than grown and then copied in; made, not appended
			// and cleared (bytes.Buffer.Grow), so the pages it does not
			// use are never touched.
			if need := 256 + 192*len(se.Snapshot.TrackedFileBackups); cap(buf)-len(buf) < need {
				buf = append(make([]byte, 0, len(buf)+need), buf...)
			}
			if b, ok := appendSnapshotEntry(buf, &se); ok {
				buf = append(b, '\n')
				continue
			}
		}
		b, err := json.Marshal(e)
		if err != nil {
			return nil, nil, err
		}
		buf = append(append(buf, b...), '\n')
	}
	return buf, starts, nil
}

// createLog writes a new log holding only its header, atomically.
func (h *History) createLog(cwd string) (*logFile, error) {
	hdr := headerEntry{Type: typeHeader, Version: logVersion, SessionID: h.session, Cwd: cwd, LogID: newLogID()}
	data, _, err := marshalLines(hdr)
	if err != nil {
		return nil, err
	}
	return h.replaceLog(data, &state{cwd: cwd, logID: hdr.LogID})
}

// replaceLog atomically replaces the log with data, which st describes.
func (h *History) replaceLog(data []byte, st *state) (*logFile, error) {
	path := h.logPath()
	if err := atomicfile.WriteFile(path, data, 0o600); err != nil {
		return nil, fmt.Errorf("write checkpoint log: %w", err)
	}
	h.stats.logWritten.Add(int64(len(data)))
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, fmt.Errorf("stat checkpoint log %s: %w", path, err)
	}
	return &logFile{st: st, id: statID(fi), offset: int64(len(data))}, nil
}

// appendLog appends lines to the log in one write and fsyncs it. Bytes
// after the last complete line (a torn append) are cut off first so the new
// lines start on a line of their own, at lf.offset.
func (h *History) appendLog(lf *logFile, data []byte) error {
	path := h.logPath()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|oNoFollow, 0)
	if err != nil {
		return fmt.Errorf("append to checkpoint log %s: %w", path, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("append to checkpoint log %s: %w", path, err)
	}
	if statID(fi) != lf.id {
		return fmt.Errorf("append to checkpoint log %s: the file was replaced while locked", path)
	}
	if fi.Size() > lf.offset {
		h.logger.Debug("cutting a torn line off the checkpoint log", "path", path, "bytes", fi.Size()-lf.offset)
		if err := f.Truncate(lf.offset); err != nil {
			return fmt.Errorf("append to checkpoint log %s: cut off torn line: %w", path, err)
		}
	}
	if _, err := f.Write(data); err != nil {
		return fmt.Errorf("append to checkpoint log %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("append to checkpoint log %s: fsync: %w", path, err)
	}
	h.stats.logWritten.Add(int64(len(data)))
	lf.offset += int64(len(data))
	return nil
}

// compactData renders st as a fresh log: the header and one complete
// snapshot entry per retained snapshot.
func compactData(session string, st *state) ([]byte, *state, error) {
	if st.older > 0 {
		return nil, nil, errors.New("internal error: compacting a state without its older snapshots")
	}
	next := &state{cwd: st.cwd, logID: newLogID(), sequence: st.sequence}
	entries := []any{headerEntry{Type: typeHeader, Version: logVersion, SessionID: session, Cwd: st.cwd, LogID: next.logID}}
	for _, s := range st.snapshots {
		entries = append(entries, newSnapshotEntry(s))
		next.snapshots = append(next.snapshots, s)
	}
	next.entries = len(next.snapshots)
	next.recheckCrossed()
	data, offsets, err := marshalLines(entries...)
	if err == nil {
		for i, s := range next.snapshots {
			next.starts = append(next.starts, entryStart{offset: offsets[i+1], index: i, seq: s.Sequence, exact: true})
		}
	}
	return data, next, err
}

// checkSegment refuses names that are not a single plain path element.
func checkSegment(s, what string) error {
	switch {
	case s == "", s == ".", s == "..":
		return fmt.Errorf("%s %q is not a file name", what, s)
	case len(s) > 255:
		return fmt.Errorf("%s is longer than 255 bytes", what)
	case !utf8.ValidString(s):
		return fmt.Errorf("%s %q is not valid UTF-8", what, s)
	}
	for _, r := range s {
		if r == '/' || r == '\\' || r == 0 || r == ':' {
			return fmt.Errorf("%s %q contains %q", what, s, r)
		}
	}
	return nil
}
