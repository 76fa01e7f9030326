// Package usage counts how often each memory of a directory is surfaced
// (recalled into a prompt, shown by the memory tool) and when it last was,
// in a log kept outside the memory directory. Recall and the hooks record
// uses; doctor and the consolidation agent read them.
package usage

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
	"github.com/memdir/memdir/internal/errs"
	"github.com/memdir/memdir/internal/flock"
	"github.com/memdir/memdir/internal/memfile"
	"github.com/memdir/memdir/internal/statedir"
)

// How a memory was surfaced, as recorded in the use log.
const (
	Recall = "recall" // recall: memdir recall, MCP recall, the UI's search
	Hook   = "hook"   // the Claude Code UserPromptSubmit hook
	MCP    = "mcp"    // the MCP server's recall tool
	UI     = "ui"     // the web UI
	View   = "view"   // a memory-tool view of the file
)

// useRecordMax caps one write to the use log, below PIPE_BUF (4096 bytes on
// Linux), so that each O_APPEND write of whole records lands in one piece
// even where the lock is not honoured (some network filesystems).
const useRecordMax = 4000

// useCompactBytes is the log size past which a writer folds the log into the
// summary.
const useCompactBytes = 256 << 10

// Log counts how often each memory of one directory is surfaced, and when
// it last was. It lives outside the memory directory (see [DefaultPath]),
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
//
// A nil *Log counts nothing: Record does nothing and Stats is empty.
type Log struct {
	path      string
	now       func() time.Time
	compactAt int64 // log size that triggers a compaction
}

// MemoryUse is what the use log knows of one memory.
type MemoryUse struct {
	Uses     int       `json:"uses"`
	LastUsed time.Time `json:"last_used,omitzero"`
}

// Stats are the counts of one directory.
type Stats struct {
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
func (s *Stats) Get(rel string) MemoryUse {
	if s == nil {
		return MemoryUse{}
	}
	return s.Memories[rel]
}

// DefaultPath returns where the use log of a memory directory lives:
// <StateDir>/uses/<SanitizePath(dir)>.log.
func DefaultPath(memoryDir string, lookup func(string) (string, bool)) (string, error) {
	return statedir.For(lookup, "uses", memoryDir, ".log")
}

// Options adjust New; nil means the defaults.
type Options struct {
	// Now stamps the uses; nil means time.Now.
	Now func() time.Time
	// CompactBytes is the log size past which a writer folds the log into
	// the summary; 0 means 256 KiB.
	CompactBytes int64
}

// New returns the use log stored at path (created on first use).
func New(path string, opts *Options) *Log {
	u := &Log{path: path, now: time.Now, compactAt: useCompactBytes}
	if opts != nil {
		if opts.Now != nil {
			u.now = opts.Now
		}
		if opts.CompactBytes > 0 {
			u.compactAt = opts.CompactBytes
		}
	}
	return u
}

// Path returns the log file's path.
func (u *Log) Path() string { return u.path }

// SummaryPath returns the file the log is compacted into (P.json).
func (u *Log) SummaryPath() string { return u.path + ".json" }
func (u *Log) foldPath() string    { return u.path + ".fold" }
func (u *Log) lockPath() string    { return u.path + ".lock" }

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

func (u *Log) lock(ctx context.Context) (*flock.Lock, error) {
	if err := atomicfile.MkdirAll(filepath.Dir(u.path), 0o700); err != nil {
		return nil, fmt.Errorf("use log %s: %w", u.path, err)
	}
	return flock.Acquire(ctx, u.lockPath())
}

// Record counts one use of each memory in rels (slash paths relative to the
// directory), stamped now, as surfaced by via (Recall, Hook, ...).
// Paths that are not memory paths are an error naming them; nothing is
// recorded then.
func (u *Log) Record(ctx context.Context, via string, rels ...string) error {
	if u == nil || len(rels) == 0 {
		return nil
	}
	t := u.now().UnixMilli()
	var writes [][]byte
	var cur []byte
	for _, rel := range rels {
		clean, err := memfile.CleanPath(rel)
		if err != nil || clean != rel {
			return fmt.Errorf("use log: %q is not a memory path: %w", rel, errs.ErrInvalid)
		}
		line, err := json.Marshal(useRecord{T: t, P: rel, Via: via})
		if err != nil {
			return err
		}
		line = append(line, '\n')
		if len(line) > useRecordMax {
			return fmt.Errorf("use log: the path %q is too long to record: %w", rel, errs.ErrInvalid)
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
func (u *Log) Stats(ctx context.Context) (*Stats, error) {
	if u == nil {
		return &Stats{Memories: map[string]MemoryUse{}}, nil
	}
	if _, err := os.Stat(filepath.Dir(u.path)); errors.Is(err, fs.ErrNotExist) {
		return &Stats{Memories: map[string]MemoryUse{}}, nil
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
	st := &Stats{Since: sum.Since, Memories: sum.Memories}
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
func (u *Log) Compact(ctx context.Context) error {
	lk, err := u.lock(ctx)
	if err != nil {
		return err
	}
	defer lk.Unlock()
	return u.compactLocked()
}

func (u *Log) compactLocked() error {
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
func (u *Log) fold() error {
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
		if err := atomicfile.WriteFile(u.SummaryPath(), append(out, '\n'), 0o600); err != nil {
			return fmt.Errorf("use log summary: %w", err)
		}
	}
	if err := os.Remove(u.foldPath()); err != nil {
		return fmt.Errorf("use log: %w", err)
	}
	return nil
}

func (u *Log) readSummary() (*useSummary, error) {
	sum := &useSummary{Version: 1, Memories: map[string]MemoryUse{}}
	data, err := os.ReadFile(u.SummaryPath())
	if errors.Is(err, fs.ErrNotExist) {
		return sum, nil
	}
	if err != nil {
		return nil, fmt.Errorf("use log summary: %w", err)
	}
	if err := json.Unmarshal(data, sum); err != nil {
		return nil, fmt.Errorf("use log summary %s is not valid JSON (move it aside to start counting afresh): %v: %w", u.SummaryPath(), err, errs.ErrInvalid)
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
