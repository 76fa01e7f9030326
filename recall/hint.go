package recall

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/memdir/memdir/internal/atomicfile"
	"github.com/memdir/memdir/internal/safeopen"
)

// Edit hints. A file rewritten in place leaves its directory's
// modification time alone, so a Refresh sees it only when its rotating
// share of stats comes round to it (see Refresh). Claude Code's Edit and
// Write tools write files in place, and memdir's PreToolUse hook sees each
// such call before it runs: it records the file in <cache>.hint, and
// every Refresh within hintTTL stats the files recorded there, whatever
// share it checks otherwise. The file is advisory: a lost or torn hint
// only leaves the file to the rotation.
const (
	// hintTTL is how long a hint is honoured: long enough for an edit
	// that waits on the user's permission, short enough that the hints
	// stay few.
	hintTTL = time.Hour
	// hintMaxBytes bounds the hint file; past it, a writer rewrites it
	// with the live hints only.
	hintMaxBytes = 64 << 10
)

// NoteEdit records that the file at path is about to be changed in place
// by another program, so that the next refreshes of x stat it (see
// Refresh). It reports false, recording nothing, when path is not a
// memory file of x's directory (a .md file below it) or x keeps no cache
// file.
func (x *Index) NoteEdit(path string) (bool, error) {
	if x.cachePath == "" {
		return false, nil
	}
	rel, ok := x.hintRel(path)
	if !ok {
		return false, nil
	}
	hintPath := x.cachePath + ".hint"
	if err := os.MkdirAll(filepath.Dir(hintPath), 0o700); err != nil {
		return false, fmt.Errorf("recall index hint %s: %w", hintPath, err)
	}
	line := strconv.FormatInt(x.now().UnixNano(), 10) + "\t" + rel + "\n"
	f, err := safeopen.OpenAppend(hintPath, 0o600)
	if err != nil {
		return false, fmt.Errorf("recall index hint %s: %w", hintPath, err)
	}
	fi, err := f.Stat()
	if err == nil && fi.Size()+int64(len(line)) > hintMaxBytes {
		f.Close()
		return true, x.rewriteHints(hintPath, line)
	}
	// One small append: concurrent writers' lines do not interleave.
	_, err = f.WriteString(line)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return false, fmt.Errorf("recall index hint %s: %w", hintPath, err)
	}
	return true, nil
}

// hintRel returns path relative to x's directory, slash-separated, when
// it names a memory file below it.
func (x *Index) hintRel(path string) (string, bool) {
	if !filepath.IsAbs(path) || !strings.EqualFold(filepath.Ext(path), ".md") {
		return "", false
	}
	rel, err := filepath.Rel(x.dir, filepath.Clean(path))
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", false
	}
	rel = filepath.ToSlash(rel)
	if strings.ContainsAny(rel, "\t\n\r") {
		return "", false
	}
	return rel, true
}

// rewriteHints replaces the hint file with its live hints and line.
func (x *Index) rewriteHints(hintPath, line string) error {
	data, _ := safeopen.ReadFile(hintPath, 2*hintMaxBytes)
	live := liveHints(data, x.now())
	// Keep the newest hints that fit half the budget, written oldest
	// first as appends would have left them.
	n, size := 0, len(line)
	for ; n < len(live) && size+len(live[n].line) <= hintMaxBytes/2; n++ {
		size += len(live[n].line)
	}
	var b strings.Builder
	for i := n - 1; i >= 0; i-- {
		b.WriteString(live[i].line)
	}
	b.WriteString(line)
	if err := atomicfile.WriteFile(hintPath, []byte(b.String()), 0o600); err != nil {
		return fmt.Errorf("recall index hint %s: %w", hintPath, err)
	}
	return nil
}

type editHint struct {
	rel  string
	line string // as written, with its newline
}

// liveHints parses a hint file, newest first, keeping the hints younger
// than hintTTL; malformed lines are skipped.
func liveHints(data []byte, now time.Time) []editHint {
	var out []editHint
	for len(data) > 0 {
		line, rest, ok := bytes.Cut(data, []byte("\n"))
		data = rest
		if !ok {
			break // torn last line
		}
		ts, rel, ok := bytes.Cut(line, []byte("\t"))
		at, err := strconv.ParseInt(string(ts), 10, 64)
		if !ok || err != nil || len(rel) == 0 {
			continue
		}
		if age := now.UnixNano() - at; age > int64(hintTTL) || age < -int64(time.Minute) {
			continue
		}
		out = append(out, editHint{rel: string(rel), line: string(line) + "\n"})
	}
	slices.Reverse(out)
	return out
}

// editHints returns the files the hint file asks this refresh to stat,
// and removes the file once none of its hints is live.
func (x *Index) editHints() map[string]bool {
	if x.cachePath == "" {
		return nil
	}
	hintPath := x.cachePath + ".hint"
	f, _, err := safeopen.Open(hintPath)
	if err != nil {
		return nil
	}
	data := make([]byte, hintMaxBytes+1)
	n, _ := io.ReadFull(f, data)
	f.Close()
	live := liveHints(data[:n], x.now())
	if len(live) == 0 {
		// A hint appended since the read is lost with it; the rotation
		// still reaches its file.
		os.Remove(hintPath)
		return nil
	}
	set := make(map[string]bool, len(live))
	for _, h := range live {
		set[h.rel] = true
	}
	return set
}
