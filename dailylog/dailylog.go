package dailylog

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
	"time"

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/internal/atomicfile"
	"github.com/memdir/memdir/internal/flock"
	"github.com/memdir/memdir/internal/mdtext"
	"github.com/memdir/memdir/internal/memfile"
)

// MaxBytes bounds a daily log that Append will extend. A day of short
// bullets is a few kilobytes; a file past this is not a log any more, and
// rewriting it on every append would be slow.
const MaxBytes = memdir.MaxMemoryFileBytes

// Path returns the daily log of t's date in t's location:
// dir/logs/YYYY/MM/YYYY-MM-DD.md.
func Path(dir string, t time.Time) string {
	return filepath.Join(dir, "logs", t.Format("2006"), t.Format("01"), t.Format("2006-01-02")+".md")
}

// Append appends one timestamped bullet, "- HH:MM text", to the
// assistant-mode daily log of now's date in now's time zone,
// dir/logs/YYYY/MM/YYYY-MM-DD.md (see [Path]), and returns
// the file's path. The file and its folders are created when missing (0600
// and 0700). Line breaks and runs of whitespace in text become single
// spaces, so one call is always one line; text that is empty after that,
// or holds NUL bytes, is an [memdir.ErrInvalid] error.
//
// The log is append-only by design (agents are told never to reorganise
// it); Append does not journal the append, AppendJournaled does.
// Concurrency: the read-extend-replace happens under the memory directory's
// flock, the same lock [memdir.Dir] takes, and the file is replaced
// atomically, so any number of processes appending at once lose no line and
// readers never see half of one. The log is opened through os.Root, so a
// symlinked logs/ folder cannot redirect the write outside dir.
func Append(dir string, text string, now time.Time) (string, error) {
	file, _, err := appendLog(nil, dir, text, now)
	return file, err
}

// AppendJournaled appends like Append and journals the append in j (the
// journal of dir) as one run of kind "log-append", so 'memdir undo' takes
// the line back out. It returns the log's path and the run.
func AppendJournaled(j *memdir.Journal, dir string, text string, now time.Time) (string, *memdir.JournalRun, error) {
	if j == nil {
		return "", nil, fmt.Errorf("daily log: no journal to record the append in: %w", memdir.ErrInvalid)
	}
	return appendLog(j, dir, text, now)
}

func appendLog(j *memdir.Journal, dir string, text string, now time.Time) (string, *memdir.JournalRun, error) {
	line := mdtext.OneLine(strings.ToValidUTF8(text, "\uFFFD"))
	if line == "" {
		return "", nil, fmt.Errorf("daily log: nothing to append (the text is empty): %w", memdir.ErrInvalid)
	}
	if strings.ContainsRune(line, 0) {
		return "", nil, fmt.Errorf("daily log: the text contains a NUL byte: %w", memdir.ErrInvalid)
	}
	if dir == "" {
		return "", nil, fmt.Errorf("daily log: no memory directory given: %w", memdir.ErrInvalid)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", nil, fmt.Errorf("daily log in %s: %w", dir, err)
	}
	file := Path(abs, now)
	rel, err := filepath.Rel(abs, file)
	if err != nil {
		return "", nil, err
	}
	rel = filepath.ToSlash(rel)
	if err := atomicfile.MkdirAll(abs, 0o700); err != nil {
		return "", nil, fmt.Errorf("daily log: create %s: %w", abs, err)
	}
	lock, err := flock.Acquire(context.Background(), abs)
	if err != nil {
		return "", nil, fmt.Errorf("daily log: lock %s: %w", abs, err)
	}
	defer lock.Unlock()
	root, err := os.OpenRoot(abs)
	if err != nil {
		return "", nil, fmt.Errorf("daily log: %w", err)
	}
	defer root.Close()
	if err := root.MkdirAll(path.Dir(rel), 0o700); err != nil {
		return "", nil, fmt.Errorf("daily log: create the folders of %s: %w", file, err)
	}
	old, _, err := memfile.ReadRooted(root, rel, MaxBytes)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		old = nil
	case err != nil:
		return "", nil, fmt.Errorf("daily log %s: %w", file, err)
	case bytes.IndexByte(old, 0) >= 0:
		return "", nil, fmt.Errorf("daily log %s holds binary data, so memdir will not extend it; move it aside: %w", file, memdir.ErrInvalid)
	}
	var b bytes.Buffer
	b.Grow(len(old) + len(line) + 10)
	b.Write(old)
	if len(old) > 0 && old[len(old)-1] != '\n' {
		b.WriteByte('\n')
	}
	fmt.Fprintf(&b, "- %s %s\n", now.Format("15:04"), line)
	if j == nil {
		if err := atomicfile.WriteFileIn(root, rel, b.Bytes(), 0o600); err != nil {
			return "", nil, fmt.Errorf("daily log: %w", err)
		}
		return file, nil, nil
	}
	rec, err := j.Begin("log-append", abs)
	if err != nil {
		return "", nil, fmt.Errorf("daily log: journal: %w", err)
	}
	rec.SetSummary("log append " + rel)
	err = rec.Before(rel)
	if err == nil {
		if err = atomicfile.WriteFileIn(root, rel, b.Bytes(), 0o600); err != nil {
			err = fmt.Errorf("daily log: %w", err)
		}
	}
	run, ferr := rec.Finish(err)
	if err == nil {
		err = ferr
	}
	if err != nil {
		return "", nil, err
	}
	return file, run, nil
}
