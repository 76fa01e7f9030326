package memdir

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/memdir/memdir/internal/mdtext"
	"github.com/memdir/memdir/internal/safeopen"
)

// MaxScanFiles is how many memories Claude Code's scan returns: the newest 200.
const MaxScanFiles = 200

// Header is what a scan reads of a memory: its frontmatter and file facts.
type Header struct {
	// Path is relative to the scanned directory, slash-separated.
	Path        string    `json:"path"`
	AbsPath     string    `json:"abs_path"`
	ModTime     time.Time `json:"mtime"`
	Size        int64     `json:"size"`
	Name        string    `json:"name,omitempty"`
	Description string    `json:"description,omitempty"`
	Type        Type      `json:"type,omitempty"`
	// RawType is the type as written when it is not one of the four.
	RawType string `json:"raw_type,omitempty"`
	// HasFrontmatter is false when the file has no readable frontmatter
	// within its first 30 lines.
	HasFrontmatter bool `json:"has_frontmatter"`
}

// ProblemKind classifies what a scan found wrong with a file.
type ProblemKind string

// Problem kinds.
const (
	ProblemRead        ProblemKind = "unreadable"       // could not be opened or read
	ProblemBinary      ProblemKind = "binary"           // not text
	ProblemYAML        ProblemKind = "frontmatter-yaml" // broken YAML (maybe recovered)
	ProblemUnclosed    ProblemKind = "frontmatter-unclosed"
	ProblemNoFront     ProblemKind = "no-frontmatter"
	ProblemUntyped     ProblemKind = "untyped"
	ProblemDescription ProblemKind = "no-description"
)

// Problem is something wrong with one file. A scan never stops for one.
type Problem struct {
	Path    string      `json:"path"`
	Kind    ProblemKind `json:"kind"`
	Message string      `json:"message"`
	// Skipped is true when the file is left out of the scan's memories.
	Skipped bool `json:"skipped"`
}

func (p Problem) String() string { return p.Path + ": " + p.Message }

// ScanOptions adjust Scan.
type ScanOptions struct {
	// Limit caps how many memories are returned, newest first: 0 means
	// MaxScanFiles (Claude Code's cap), a negative value means no cap.
	Limit int
	// Workers is how many files are read at once; 0 picks for the machine.
	Workers int
}

// ScanResult is the outcome of a scan.
type ScanResult struct {
	// Memories are sorted newest first (ties by path) and capped.
	Memories []Header
	// Total counts every memory found, before the cap.
	Total int
	// Problems lists files that could not be read or parsed as written,
	// in path order.
	Problems []Problem
}

// scanReadMax bounds how much of a file a scan reads while looking for 30
// lines, so a file with no line breaks cannot make it read megabytes.
const scanReadMax = 64 << 10

// Scan reads the frontmatter of every memory file below the directory, as
// Claude Code's scanMemoryFiles does: every *.md file at any depth except files
// named MEMORY.md, only the first 30 lines of each, sorted newest first. Files
// that cannot be read or parsed are reported in Problems, never fatal. A
// missing directory scans as empty.
func (d *Dir) Scan(ctx context.Context, opts *ScanOptions) (*ScanResult, error) {
	return ScanDir(ctx, d.path, opts)
}

// ScanDir scans the memory files below dir; see Dir.Scan.
func ScanDir(ctx context.Context, dir string, opts *ScanOptions) (*ScanResult, error) {
	if opts == nil {
		opts = &ScanOptions{}
	}
	root, err := os.OpenRoot(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return &ScanResult{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("scan %s: %w", dir, err)
	}
	defer root.Close()
	tree, err := listMemoryFiles(root, dir)
	if err != nil {
		return nil, fmt.Errorf("scan %s: %w", dir, err)
	}
	defer tree.close()
	rels := tree.rels

	workers := opts.Workers
	if workers <= 0 {
		workers = max(4, 2*runtime.GOMAXPROCS(0))
	}
	type result struct {
		h    Header
		prob []Problem
		ok   bool
	}
	results := make([]result, len(rels))
	var next int
	var mu sync.Mutex
	var wg sync.WaitGroup
	for w := 0; w < min(workers, len(rels)); w++ {
		wg.Go(func() {
			buf := make([]byte, 0, 4096)
			for {
				if ctx.Err() != nil {
					return
				}
				mu.Lock()
				i := next
				next++
				mu.Unlock()
				if i >= len(rels) {
					return
				}
				r := &results[i]
				r.h, r.prob, r.ok, buf = tree.scan(root, i, buf)
				r.h.AbsPath = filepath.Join(dir, filepath.FromSlash(rels[i]))
			}
		})
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	res := &ScanResult{}
	for _, r := range results {
		res.Problems = append(res.Problems, r.prob...)
		if r.ok {
			res.Memories = append(res.Memories, r.h)
		}
	}
	SortHeaders(res.Memories)
	res.Total = len(res.Memories)
	limit := opts.Limit
	if limit == 0 {
		limit = MaxScanFiles
	}
	if limit > 0 && len(res.Memories) > limit {
		res.Memories = res.Memories[:limit]
	}
	return res, nil
}

// SortHeaders orders headers as a scan returns them: newest first, ties by
// path.
func SortHeaders(hs []Header) {
	sort.Slice(hs, func(i, j int) bool {
		a, b := hs[i], hs[j]
		if !a.ModTime.Equal(b.ModTime) {
			return a.ModTime.After(b.ModTime)
		}
		return a.Path < b.Path
	})
}

// A HeaderReader reads the headers of memory files one at a time, as a scan
// does (the first 30 lines of a regular file, through an os.Root), reusing
// one buffer. The zero value is ready; a HeaderReader is for one goroutine.
type HeaderReader struct{ buf []byte }

// Read reads the header of the file rel below root. ok is false when the
// file is left out of a scan (unreadable, not a regular file, binary);
// probs says why, and what else is wrong with it.
func (r *HeaderReader) Read(root *os.Root, rel string) (h Header, probs []Problem, ok bool) {
	h, probs, ok, r.buf = scanFile(root, rel, r.buf)
	return h, probs, ok
}

// scanFile reads one file's header. buf is reused between calls.
func scanFile(root *os.Root, rel string, buf []byte) (Header, []Problem, bool, []byte) {
	h := Header{Path: rel}
	fail := func(kind ProblemKind, msg string) (Header, []Problem, bool, []byte) {
		return h, []Problem{{Path: rel, Kind: kind, Message: msg, Skipped: true}}, false, buf
	}
	f, _, err := safeopen.OpenIn(root, rel)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			// Removed since the walk, or a dangling symlink.
			return fail(ProblemRead, "vanished during the scan or is a dangling link")
		}
		return fail(ProblemRead, err.Error())
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return fail(ProblemRead, err.Error())
	}
	if !fi.Mode().IsRegular() {
		return fail(ProblemRead, "not a regular file")
	}
	head, buf, err := readLines(f, FrontmatterMaxLines, fi.Size(), buf)
	if err != nil {
		return fail(ProblemRead, err.Error())
	}
	h, probs, ok := scanHead(rel, fi.ModTime(), fi.Size(), head)
	return h, probs, ok, buf
}

// scanHead makes a file's header from its first lines.
func scanHead(rel string, mtime time.Time, size int64, head []byte) (Header, []Problem, bool) {
	return scanHeadText(rel, mtime, size, head, "", false)
}

// scanHeadText is scanHead given, when normal, the head's text as
// mdtext.Normalize makes it, by a reader that normalised the whole file.
func scanHeadText(rel string, mtime time.Time, size int64, head []byte, text string, normal bool) (Header, []Problem, bool) {
	h := Header{Path: rel, ModTime: mtime, Size: size}
	if bytes.IndexByte(head, 0) >= 0 {
		return h, []Problem{{Path: rel, Kind: ProblemBinary, Message: "a binary file, not Markdown text", Skipped: true}}, false
	}
	if !normal {
		text = mdtext.Normalize(head)
	}
	m, prob := parseHeaderFields(text)
	// Clones, so that the header does not keep the whole head alive.
	h.Name, h.Description, h.Type = strings.Clone(m.name), strings.Clone(m.desc), ParseType(m.rawType)
	if h.Type == "" {
		h.RawType = strings.Clone(m.rawType)
	}
	h.HasFrontmatter = m.hasFront
	var probs []Problem
	switch {
	case prob != nil:
		probs = append(probs, Problem{Path: rel, Kind: ProblemYAML, Message: prob.Error()})
	case !h.HasFrontmatter && bytes.HasPrefix(bytes.TrimPrefix(head, []byte("\xef\xbb\xbf")), []byte("---")):
		probs = append(probs, Problem{Path: rel, Kind: ProblemUnclosed, Message: fmt.Sprintf("frontmatter is not closed within the first %d lines, so it is ignored", FrontmatterMaxLines)})
	case !h.HasFrontmatter:
		probs = append(probs, Problem{Path: rel, Kind: ProblemNoFront, Message: "no frontmatter (name, description, type)"})
	}
	if h.HasFrontmatter {
		if h.Type == "" {
			msg := "no type: it works, but recall and agents see it untyped"
			if m.rawType != "" {
				msg = fmt.Sprintf("type %q is not one of user, feedback, project, reference: it is treated as untyped", m.rawType)
			}
			probs = append(probs, Problem{Path: rel, Kind: ProblemUntyped, Message: msg})
		}
		if h.Description == "" {
			probs = append(probs, Problem{Path: rel, Kind: ProblemDescription, Message: "no description: recall cannot judge its relevance"})
		}
	}
	return h, probs, true
}

// readLines reads from r until it holds n lines (or size bytes, the file's
// length, so a short file costs one read; or EOF; or scanReadMax bytes) and
// returns them, BOM and CRs included; ParseMemory strips both.
func readLines(r io.Reader, n int, size int64, buf []byte) ([]byte, []byte, error) {
	buf = buf[:0]
	lines := 0
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		k, err := r.Read(buf[len(buf):cap(buf)])
		for _, c := range buf[len(buf) : len(buf)+k] {
			if c == '\n' {
				lines++
			}
		}
		buf = buf[:len(buf)+k]
		if lines >= n {
			// Keep exactly n lines.
			idx, seen := 0, 0
			for i, c := range buf {
				if c == '\n' {
					seen++
					if seen == n {
						idx = i + 1
						break
					}
				}
			}
			return buf[:idx], buf, nil
		}
		if err == io.EOF || len(buf) >= scanReadMax || size > 0 && int64(len(buf)) >= size {
			return buf, buf, nil
		}
		if err != nil {
			return nil, buf, err
		}
	}
}
