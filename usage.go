package memdir

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/memdir/memdir/internal/atomicfile"
	"github.com/memdir/memdir/internal/flock"
)

// How a memory was surfaced, as recorded in the use log.
const (
	UseRecall = "recall" // Dir.Recall: memdir recall, MCP recall, the UI's search
	UseHook   = "hook"   // the Claude Code UserPromptSubmit hook
	UseMCP    = "mcp"    // the MCP server's recall tool
	UseUI     = "ui"     // the web UI
	UseView   = "view"   // a memory-tool view of the file
)

// useRecordMax caps one write to the use log, below PIPE_BUF (4096 bytes on
// Linux), so that each O_APPEND write of whole records lands in one piece
// even where the lock is not honoured (some network filesystems).
const useRecordMax = 4000

// useCompactBytes is the log size past which a writer folds the log into the
// summary.
const useCompactBytes = 256 << 10

// UseLog counts how often each memory of one directory is surfaced, and when
// it last was. It lives outside the memory directory (see [DefaultUseLogPath]),
// so counting never writes a memory file and never changes its mtime (which
// freshness is judged by).
//
// Layout, for a log at P: P is an append-only file of JSON lines, one per
// surfaced memory ({"t": unix milliseconds, "p": path, "via": how}); P.json is
// the compacted summary; P.lock is the lock file; P.fold exists only while a
// compaction runs (or after one crashed, and is finished by the next).
//
// Concurrency: every append and every compaction holds an exclusive flock on
// P.lock, and each append is one O_APPEND write of whole records, so any
// number of processes (Claude Code runs one hook process per prompt) may
// count at once without losing a use. A compaction renames P to P.fold,
// folds it into P.json (written atomically, with the SHA-256 of what it
// folded) and removes P.fold; a crash at any point neither loses nor
// double-counts a use.
type UseLog struct {
	path      string
	now       func() time.Time
	compactAt int64 // log size that triggers a compaction
}

// MemoryUse is what the use log knows of one memory.
type MemoryUse struct {
	Uses     int       `json:"uses"`
	LastUsed time.Time `json:"last_used,omitzero"`
}

// UseStats are the counts of one directory.
type UseStats struct {
	// Since is when counting began (the first use ever recorded); zero when
	// nothing has been counted yet.
	Since time.Time `json:"since,omitzero"`
	// Memories maps a memory's slash path, relative to the directory, to
	// its uses. A memory never surfaced is absent.
	Memories map[string]MemoryUse `json:"memories"`
	// Skipped counts log lines that could not be read (a torn write after a
	// crash or a full disk); they are ignored.
	Skipped int `json:"skipped,omitempty"`
}

// Get returns the uses of the memory at rel (zero when never surfaced).
func (s *UseStats) Get(rel string) MemoryUse {
	if s == nil {
		return MemoryUse{}
	}
	return s.Memories[rel]
}

// DefaultUseLogPath returns where the use log of a memory directory lives:
// <StateDir>/uses/<SanitizePath(dir)>.log.
func DefaultUseLogPath(memoryDir string, lookup LookupEnvFunc) (string, error) {
	return statePath(lookup, "uses", memoryDir, ".log")
}

// NewUseLog returns the use log stored at path (created on first use). now
// stamps the uses; nil means time.Now.
func NewUseLog(path string, now func() time.Time) *UseLog {
	if now == nil {
		now = time.Now
	}
	return &UseLog{path: path, now: now, compactAt: useCompactBytes}
}

// Path returns the log file's path.
func (u *UseLog) Path() string { return u.path }

func (u *UseLog) summaryPath() string { return u.path + ".json" }
func (u *UseLog) foldPath() string    { return u.path + ".fold" }
func (u *UseLog) lockPath() string    { return u.path + ".lock" }

type useRecord struct {
	T   int64  `json:"t"`
	P   string `json:"p"`
	Via string `json:"via,omitempty"`
}

type useSummary struct {
	Version  int                  `json:"version"`
	Since    time.Time            `json:"since,omitzero"`
	Memories map[string]MemoryUse `json:"memories"`
	// Folded is the SHA-256 of the last log folded in, so that a fold
	// interrupted after the summary was written is not counted twice.
	Folded string `json:"folded,omitempty"`
}

func (u *UseLog) lock(ctx context.Context) (*flock.Lock, error) {
	if err := atomicfile.MkdirAll(filepath.Dir(u.path), 0o700); err != nil {
		return nil, fmt.Errorf("use log %s: %w", u.path, err)
	}
	return flock.Acquire(ctx, u.lockPath())
}

// Record counts one use of each memory in rels (slash paths relative to the
// directory), stamped now, as surfaced by via (UseRecall, UseHook, ...).
// Paths that are not memory paths are an error naming them; nothing is
// recorded then.
func (u *UseLog) Record(ctx context.Context, via string, rels ...string) error {
	if len(rels) == 0 {
		return nil
	}
	t := u.now().UnixMilli()
	var writes [][]byte
	var cur []byte
	for _, rel := range rels {
		clean, err := CleanMemoryFilePath(rel)
		if err != nil || clean != rel {
			return fmt.Errorf("use log: %q is not a memory path: %w", rel, ErrInvalid)
		}
		line, err := json.Marshal(useRecord{T: t, P: rel, Via: via})
		if err != nil {
			return err
		}
		line = append(line, '\n')
		if len(line) > useRecordMax {
			return fmt.Errorf("use log: the path %q is too long to record: %w", rel, ErrInvalid)
		}
		if len(cur)+len(line) > useRecordMax {
			writes = append(writes, cur)
			cur = nil
		}
		cur = append(cur, line...)
	}
	writes = append(writes, cur)

	lk, err := u.lock(ctx)
	if err != nil {
		return err
	}
	defer lk.Unlock()
	f, err := os.OpenFile(u.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("use log: %w", err)
	}
	for _, w := range writes {
		if _, err := f.Write(w); err != nil {
			f.Close()
			return fmt.Errorf("use log %s: %w", u.path, err)
		}
	}
	fi, err := f.Stat()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("use log %s: %w", u.path, err)
	}
	if fi.Size() >= u.compactAt {
		return u.compactLocked()
	}
	return nil
}

// Stats returns the counts: the summary plus the uses logged since it was
// last compacted. A log that does not exist yet gives empty stats.
func (u *UseLog) Stats(ctx context.Context) (*UseStats, error) {
	if _, err := os.Stat(filepath.Dir(u.path)); errors.Is(err, fs.ErrNotExist) {
		return &UseStats{Memories: map[string]MemoryUse{}}, nil
	}
	lk, err := u.lock(ctx)
	if err != nil {
		return nil, err
	}
	defer lk.Unlock()
	sum, err := u.readSummary()
	if err != nil {
		return nil, err
	}
	st := &UseStats{Since: sum.Since, Memories: sum.Memories}
	for _, p := range []string{u.foldPath(), u.path} {
		data, err := os.ReadFile(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("use log: %w", err)
		}
		if p == u.foldPath() && sum.Folded == hashHex(data) {
			continue
		}
		st.Skipped += foldUses(data, &st.Since, st.Memories)
	}
	return st, nil
}

// Compact folds the log into the summary. Writers compact on their own when
// the log grows past 256 KiB; Compact is for callers that want it now.
func (u *UseLog) Compact(ctx context.Context) error {
	lk, err := u.lock(ctx)
	if err != nil {
		return err
	}
	defer lk.Unlock()
	return u.compactLocked()
}

func (u *UseLog) compactLocked() error {
	// A fold left by a crashed compaction is finished first.
	if _, err := os.Stat(u.foldPath()); err == nil {
		if err := u.fold(); err != nil {
			return err
		}
	}
	if err := os.Rename(u.path, u.foldPath()); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return fmt.Errorf("use log: %w", err)
	}
	return u.fold()
}

// fold adds P.fold to the summary, unless the summary already holds it,
// and removes it.
func (u *UseLog) fold() error {
	data, err := os.ReadFile(u.foldPath())
	if err != nil {
		return fmt.Errorf("use log: %w", err)
	}
	sum, err := u.readSummary()
	if err != nil {
		return err
	}
	if h := hashHex(data); sum.Folded != h {
		foldUses(data, &sum.Since, sum.Memories)
		sum.Folded = h
		out, err := json.MarshalIndent(sum, "", "  ")
		if err != nil {
			return err
		}
		if err := atomicfile.WriteFile(u.summaryPath(), append(out, '\n'), 0o600); err != nil {
			return fmt.Errorf("use log summary: %w", err)
		}
	}
	if err := os.Remove(u.foldPath()); err != nil {
		return fmt.Errorf("use log: %w", err)
	}
	return nil
}

func (u *UseLog) readSummary() (*useSummary, error) {
	sum := &useSummary{Version: 1, Memories: map[string]MemoryUse{}}
	data, err := os.ReadFile(u.summaryPath())
	if errors.Is(err, fs.ErrNotExist) {
		return sum, nil
	}
	if err != nil {
		return nil, fmt.Errorf("use log summary: %w", err)
	}
	if err := json.Unmarshal(data, sum); err != nil {
		return nil, fmt.Errorf("use log summary %s is not valid JSON (move it aside to start counting afresh): %v: %w", u.summaryPath(), err, ErrInvalid)
	}
	if sum.Memories == nil {
		sum.Memories = map[string]MemoryUse{}
	}
	return sum, nil
}

// foldUses adds the records in data to m, moving since back to the oldest
// record, and returns how many lines it could not read.
func foldUses(data []byte, since *time.Time, m map[string]MemoryUse) (skipped int) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		line := sc.Bytes()
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var r useRecord
		if err := json.Unmarshal(line, &r); err != nil || r.P == "" || r.T <= 0 || strings.Contains(r.P, "\x00") {
			skipped++
			continue
		}
		t := time.UnixMilli(r.T).UTC()
		mu := m[r.P]
		mu.Uses++
		if t.After(mu.LastUsed) {
			mu.LastUsed = t
		}
		m[r.P] = mu
		if since.IsZero() || t.Before(*since) {
			*since = t
		}
	}
	return skipped
}

func hashHex(data []byte) string {
	s := sha256.Sum256(data)
	return hex.EncodeToString(s[:])
}

// Uses returns the directory's use log, nil when counting is off
// (Options.NoUses).
func (d *Dir) Uses() *UseLog { return d.uses }

// RecordUse counts one use of each memory in rels, surfaced by via. It does
// nothing when counting is off.
func (d *Dir) RecordUse(ctx context.Context, via string, rels ...string) error {
	if d.uses == nil {
		return nil
	}
	return d.uses.Record(ctx, via, rels...)
}

// UseStats returns the directory's usage counts (empty when counting is off
// or nothing was counted yet).
func (d *Dir) UseStats(ctx context.Context) (*UseStats, error) {
	if d.uses == nil {
		return &UseStats{Memories: map[string]MemoryUse{}}, nil
	}
	return d.uses.Stats(ctx)
}

// defaultUses returns the use log Options ask for (see Options.Uses).
func defaultUses(dir string, opts *Options, j *Journal, now func() time.Time) (*UseLog, error) {
	switch {
	case opts.NoUses:
		return nil, nil
	case opts.Uses != nil:
		return opts.Uses, nil
	case opts.Journal != nil:
		return NewUseLog(filepath.Clean(j.Dir())+".uses.log", now), nil
	}
	lookup := opts.LookupEnv
	if lookup == nil {
		lookup = os.LookupEnv
	}
	p, err := DefaultUseLogPath(dir, lookup)
	if err != nil {
		return nil, err
	}
	return NewUseLog(p, now), nil
}

// ViewCounter returns a function that counts a memory-tool view of the file
// at rel (a slash path relative to the directory) as a use, for
// memtool.Options.AfterView. Files that are not memories (MEMORY.md, files
// not ending in .md) are not counted. A failure to count goes to onErr
// (nil drops it): a view never fails for it. A nil log gives nil.
func (u *UseLog) ViewCounter(ctx context.Context, onErr func(error)) func(rel string) {
	if u == nil {
		return nil
	}
	return func(rel string) {
		if clean, err := CleanMemoryFilePath(rel); err != nil || clean != rel {
			return
		}
		if err := u.Record(ctx, UseView, rel); err != nil && onErr != nil {
			onErr(err)
		}
	}
}

// FindUnused is the doctor suggestion for a memory that has not been
// surfaced for a long time. It is informational: nothing fixes or deletes it.
const FindUnused FindingKind = "unused"

// DefaultUnusedDays is how long a memory goes unsurfaced before doctor
// suggests a look at it.
const DefaultUnusedDays = 90

// UnusedMemories suggests the memories not surfaced for days days or more
// (see UseLog): each one was last changed at least days ago (a younger
// memory is never flagged), and was last surfaced days ago or more, or
// never in all the time counting has run, which must itself be days or
// more. Daily logs (logs/) are not memories recall surfaces and are left
// out. The findings name the memory, its uses and when it was last
// surfaced; nothing is changed.
func (d *Dir) UnusedMemories(ctx context.Context, days int, now time.Time) ([]Finding, error) {
	if days <= 0 {
		return nil, fmt.Errorf("unused memories: days must be at least 1, not %d: %w", days, ErrInvalid)
	}
	out := []Finding{}
	if !d.Exists() {
		return out, nil
	}
	st, err := d.UseStats(ctx)
	if err != nil {
		return nil, err
	}
	if st.Since.IsZero() || AgeDays(st.Since, now) < days {
		return out, nil
	}
	scan, err := d.Scan(ctx, &ScanOptions{Limit: -1})
	if err != nil {
		return nil, err
	}
	for _, h := range scan.Memories {
		if isDailyLog(h.Path) || AgeDays(h.ModTime, now) < days {
			continue
		}
		u := st.Get(h.Path)
		var msg string
		switch {
		case u.Uses == 0:
			msg = fmt.Sprintf("never surfaced in the %d days memdir has counted uses; last changed %s", AgeDays(st.Since, now), MemoryAge(h.ModTime, now))
		case AgeDays(u.LastUsed, now) >= days:
			msg = fmt.Sprintf("last surfaced %s (%d uses in all); last changed %s", MemoryAge(u.LastUsed, now), u.Uses, MemoryAge(h.ModTime, now))
		default:
			continue
		}
		out = append(out, Finding{Kind: FindUnused, Path: h.Path, Message: msg + ". Check that it is still true and worth keeping; 'memdir rm' removes it (undoable with 'memdir undo')"})
	}
	return out, nil
}
