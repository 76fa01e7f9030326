package memdir

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/memdir/memdir/internal/atomicfile"
	"github.com/memdir/memdir/internal/errs"
	"github.com/memdir/memdir/internal/memfile"
	"github.com/memdir/memdir/llm"
)

// Journal records what files held before memdir changed them, so that any run
// (a save, a removal, an extraction, a consolidation, a sync pull) can be
// undone byte for byte.
//
// Layout, outside the memory directory so Claude Code never scans it:
//
//	<journal>/runs/<run id>.json    one record per run
//	<journal>/blobs/ab/abcdef…      prior contents, named by their sha256
//
// Blobs are written once and never changed; run records are replaced
// atomically. Several processes may write one journal at once.
type Journal struct {
	dir string
	now func() time.Time
}

// NewJournal returns a journal stored in dir, created on first use.
func NewJournal(dir string, now func() time.Time) *Journal {
	if now == nil {
		now = time.Now
	}
	return &Journal{dir: dir, now: now}
}

// DefaultJournalDir returns where the journal of a memory directory lives:
// <StateDir>/journal/<SanitizePath(dir)>.
func DefaultJournalDir(memoryDir string, lookup LookupEnvFunc) (string, error) {
	return statePath(lookup, "journal", memoryDir, "")
}

// Dir returns the journal's directory.
func (j *Journal) Dir() string { return j.dir }

// RunState is where a run is in its life.
type RunState string

// Run states.
const (
	RunOpen   RunState = "open"   // in progress, or its process died
	RunDone   RunState = "done"   // finished
	RunFailed RunState = "failed" // finished with an error; what it changed is recorded
)

// JournalRun is the record of one run.
type JournalRun struct {
	ID    string    `json:"id"`
	Kind  string    `json:"kind"`
	Start time.Time `json:"start"`
	End   time.Time `json:"end,omitzero"`
	State RunState  `json:"state"`
	Error string    `json:"error,omitempty"`
	// Root is the directory the file paths are relative to.
	Root    string        `json:"root"`
	Summary string        `json:"summary,omitempty"`
	Files   []JournalFile `json:"files"`
	// Modes are the permission changes the run made (doctor's chmod), on
	// files or directories relative to Root.
	Modes []JournalMode `json:"modes,omitempty"`
	Usage *llm.Usage    `json:"usage,omitempty"`
	// Undoes names the run this run undid; UndoneBy the run that undid this one.
	Undoes   string `json:"undoes,omitempty"`
	UndoneBy string `json:"undone_by,omitempty"`
}

// JournalMode is one permission change of a run.
type JournalMode struct {
	Path   string      `json:"path"`
	Before fs.FileMode `json:"before"`
	After  fs.FileMode `json:"after"`
}

// JournalFile is one file a run touched.
type JournalFile struct {
	// Path is slash-separated and relative to the run's root, or to Root.
	Path string `json:"path"`
	// Root, when set, is the absolute directory holding the file because
	// it lies outside the run's root (the project's CLAUDE.md a promotion
	// edits in the same run as the memories it removes).
	Root string `json:"root,omitempty"`
	// Before and After are "sha256:<hex>" of the content, or "" when the
	// file did not exist.
	Before     string      `json:"before"`
	BeforeMode fs.FileMode `json:"before_mode,omitempty"`
	After      string      `json:"after"`
	// IndexLines are the MEMORY.md pointer lines the file had before the
	// run, so that an undo restores them exactly as written. IndexNoted says
	// they were recorded at all: an undo leaves the index lines of a file it
	// knows nothing about alone.
	IndexLines []string `json:"index_lines,omitempty"`
	IndexNoted bool     `json:"index_noted,omitempty"`
	// IndexFile is the index file that held those lines when it is not the
	// file's MEMORY.md: the overflow file compaction moved them to
	// (OverflowIndexName).
	IndexFile string `json:"index_file,omitempty"`
}

// indexFile returns the index file whose lines undo restores for f.
func (f JournalFile) indexFile() string {
	indexRel, _ := IndexFor(f.Path)
	if f.IndexFile == overflowFor(indexRel) {
		return f.IndexFile
	}
	return indexRel
}

// Changed reports whether the run left the file different.
func (f JournalFile) Changed() bool { return f.Before != f.After }

// abs returns the file's path, given the run's root.
func (f JournalFile) abs(runRoot string) string {
	if f.Root != "" {
		return filepath.Join(f.Root, filepath.FromSlash(f.Path))
	}
	return filepath.Join(runRoot, filepath.FromSlash(f.Path))
}

// HasChanges reports whether the run changed any content or mode.
func (r *JournalRun) HasChanges() bool { return len(r.ChangedFiles()) > 0 || len(r.Modes) > 0 }

// ChangedFiles returns the files the run actually changed.
func (r *JournalRun) ChangedFiles() []JournalFile {
	var out []JournalFile
	for _, f := range r.Files {
		if f.Changed() {
			out = append(out, f)
		}
	}
	return out
}

// Recorder is an open run: call Before for every file before changing it, then
// Finish. It is safe for concurrent use.
type Recorder struct {
	j   *Journal
	mu  sync.Mutex
	run JournalRun
	idx map[string]int
	// midx indexes run.Modes by path.
	midx map[string]int
	// noted holds the paths whose index lines are recorded: only the first
	// observation, from before the run changed anything, counts.
	noted map[string]bool
	// lockedFor is the directory whose lock the run's Dir.Change holds:
	// Dir methods given this recorder do not take the lock again.
	lockedFor *Dir
}

// Begin opens a run of the given kind over files below root.
func (j *Journal) Begin(kind, root string) (*Recorder, error) {
	id, err := j.newID()
	if err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	return &Recorder{
		j:     j,
		run:   JournalRun{ID: id, Kind: kind, Start: j.now().UTC(), State: RunOpen, Root: abs},
		idx:   map[string]int{},
		midx:  map[string]int{},
		noted: map[string]bool{},
	}, nil
}

func (j *Journal) newID() (string, error) {
	var b [4]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	// The real time first, to the microsecond, so ids sort in the order
	// runs began even when the journal's clock is a fixed test clock.
	return time.Now().UTC().Format("20060102T150405.000000") + "-" + hex.EncodeToString(b[:]), nil
}

// ID returns the run's id.
func (r *Recorder) ID() string { return r.run.ID }

// Root returns the directory the run's paths are relative to.
func (r *Recorder) Root() string { return r.run.Root }

// SetSummary sets the one-line description shown by the log.
func (r *Recorder) SetSummary(s string) {
	r.mu.Lock()
	r.run.Summary = s
	r.mu.Unlock()
}

// AddUsage adds model token usage to the run.
func (r *Recorder) AddUsage(u llm.Usage) {
	r.mu.Lock()
	if r.run.Usage == nil {
		r.run.Usage = &llm.Usage{}
	}
	r.run.Usage.Add(u)
	r.mu.Unlock()
}

// Before records the current content of each path (relative to the root,
// slash-separated) the first time the run sees it, and saves the run record,
// so that even if the process dies during the change it can be undone. When
// every new path is a file that does not exist yet, there is no content to
// lose, and the record is written only by Finish: a save of a new memory
// writes its run once.
func (r *Recorder) Before(paths ...string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	added := false
	for _, p := range paths {
		p = filepath.ToSlash(filepath.Clean(filepath.FromSlash(p)))
		if _, ok := r.idx[p]; ok {
			continue
		}
		sum, mode, err := r.j.store(filepath.Join(r.run.Root, filepath.FromSlash(p)))
		if err != nil {
			return fmt.Errorf("journal %s before changing it: %w", p, err)
		}
		r.idx[p] = len(r.run.Files)
		r.run.Files = append(r.run.Files, JournalFile{Path: p, Before: sum, BeforeMode: mode})
		added = added || sum != ""
	}
	if !added {
		return nil
	}
	return r.j.writeRun(&r.run)
}

// BeforeAbsent records that path did not exist before the run, whatever it
// holds now: for a recovery that journals the file a killed process created
// before it could record its run. A path the run already has is left as it
// is.
func (r *Recorder) BeforeAbsent(path string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	path = filepath.ToSlash(filepath.Clean(filepath.FromSlash(path)))
	if _, ok := r.idx[path]; ok {
		return nil
	}
	r.idx[path] = len(r.run.Files)
	r.run.Files = append(r.run.Files, JournalFile{Path: path})
	return nil
}

// BeforeIn records, like Before, the content of the file name in dir, an
// absolute directory outside the run's root, so that one run can change
// files in several places and one undo restores them all.
func (r *Recorder) BeforeIn(dir, name string) error {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	if dir == r.run.Root {
		return r.Before(name)
	}
	name = filepath.ToSlash(filepath.Clean(filepath.FromSlash(name)))
	if !filepath.IsLocal(filepath.FromSlash(name)) {
		return fmt.Errorf("journal %s: not a file inside %s: %w", name, dir, ErrInvalid)
	}
	key := "\x00" + dir + "\x00" + name
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.idx[key]; ok {
		return nil
	}
	sum, mode, err := r.j.store(filepath.Join(dir, filepath.FromSlash(name)))
	if err != nil {
		return fmt.Errorf("journal %s before changing it: %w", filepath.Join(dir, name), err)
	}
	r.idx[key] = len(r.run.Files)
	r.run.Files = append(r.run.Files, JournalFile{Path: name, Root: dir, Before: sum, BeforeMode: mode})
	return r.j.writeRun(&r.run)
}

// BeforeMode records the permission bits of each path (a file or a
// directory, relative to the root; "." is the root itself) the first time
// the run sees it, before the run changes them.
func (r *Recorder) BeforeMode(paths ...string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	added := false
	for _, p := range paths {
		p = filepath.ToSlash(filepath.Clean(filepath.FromSlash(p)))
		if _, ok := r.midx[p]; ok {
			continue
		}
		fi, err := os.Lstat(filepath.Join(r.run.Root, filepath.FromSlash(p)))
		if err != nil {
			return fmt.Errorf("journal the mode of %s: %w", p, err)
		}
		r.midx[p] = len(r.run.Modes)
		r.run.Modes = append(r.run.Modes, JournalMode{Path: p, Before: fi.Mode().Perm(), After: fi.Mode().Perm()})
		added = true
	}
	if !added {
		return nil
	}
	return r.j.writeRun(&r.run)
}

// NoteIndexLines records the MEMORY.md pointer lines path had before the run
// (path must have been passed to Before). Only the first call for a path
// counts, so a run that changes a memory twice still restores the original.
func (r *Recorder) NoteIndexLines(path string, lines []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if i, ok := r.idx[path]; ok && !r.noted[path] {
		r.noted[path] = true
		r.run.Files[i].IndexLines = lines
		r.run.Files[i].IndexNoted = true
	}
}

// NoteIndexFile records that path's index lines, noted by NoteIndexLines,
// are in indexRel (an overflow index file) rather than its MEMORY.md.
func (r *Recorder) NoteIndexFile(path, indexRel string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if i, ok := r.idx[path]; ok && r.run.Files[i].IndexFile == "" {
		r.run.Files[i].IndexFile = indexRel
	}
}

// Finish closes the run: it records each file's content after the change and
// saves the record, or deletes it when nothing changed. runErr, if not nil,
// marks the run failed; what it changed stays undoable.
func (r *Recorder) Finish(runErr error) (*JournalRun, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	changed := false
	for i := range r.run.Files {
		f := &r.run.Files[i]
		sum, err := memfile.HashFile(f.abs(r.run.Root))
		if err != nil {
			return nil, fmt.Errorf("journal %s after the change: %w", f.Path, err)
		}
		f.After = sum
		if f.Changed() {
			changed = true
		}
	}
	// Only modes that changed, on paths still there, are kept.
	modes := r.run.Modes[:0:0]
	for _, m := range r.run.Modes {
		fi, err := os.Lstat(filepath.Join(r.run.Root, filepath.FromSlash(m.Path)))
		if err != nil || fi.Mode().Perm() == m.Before {
			continue
		}
		m.After = fi.Mode().Perm()
		modes = append(modes, m)
	}
	r.run.Modes = modes
	if len(modes) > 0 {
		changed = true
	}
	r.run.End = r.j.now().UTC()
	r.run.State = RunDone
	if runErr != nil {
		r.run.State, r.run.Error = RunFailed, runErr.Error()
	}
	run := r.run
	if !changed {
		err := os.Remove(r.j.runPath(run.ID))
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		return &run, nil
	}
	return &run, r.j.writeRun(&r.run)
}

func (j *Journal) runPath(id string) string { return filepath.Join(j.dir, "runs", id+".json") }

func (j *Journal) blobPath(sum string) string {
	hexsum := strings.TrimPrefix(sum, "sha256:")
	return filepath.Join(j.dir, "blobs", hexsum[:2], hexsum)
}

func (j *Journal) writeRun(run *JournalRun) error {
	data, err := json.MarshalIndent(run, "", "  ")
	if err != nil {
		return err
	}
	dir := filepath.Join(j.dir, "runs")
	if err := atomicfile.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	return atomicfile.WriteFile(j.runPath(run.ID), append(data, '\n'), 0o600)
}

// store saves a file's content as a blob and returns its sum and mode; a
// missing file gives "".
func (j *Journal) store(path string) (string, fs.FileMode, error) {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", 0, nil
	}
	if err != nil {
		return "", 0, err
	}
	if !fi.Mode().IsRegular() {
		return "", 0, fmt.Errorf("%s is not a regular file", path)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return "", 0, err
	}
	sum := memfile.ContentSum(data)
	bp := j.blobPath(sum)
	if _, err := os.Stat(bp); err == nil {
		return sum, fi.Mode().Perm(), nil
	}
	if err := atomicfile.MkdirAll(filepath.Dir(bp), 0o700); err != nil {
		return "", 0, err
	}
	if err := atomicfile.WriteFile(bp, data, 0o600); err != nil {
		return "", 0, err
	}
	return sum, fi.Mode().Perm(), nil
}

// Blob returns the content stored under sum.
func (j *Journal) Blob(sum string) ([]byte, error) {
	if sum == "" {
		return nil, nil
	}
	if !strings.HasPrefix(sum, "sha256:") || len(sum) != len("sha256:")+64 {
		return nil, fmt.Errorf("journal: malformed content id %q: %w", sum, ErrInvalid)
	}
	data, err := os.ReadFile(j.blobPath(sum))
	if err != nil {
		return nil, fmt.Errorf("journal: content %s: %w", sum, err)
	}
	if memfile.ContentSum(data) != sum {
		return nil, fmt.Errorf("journal: content %s is corrupt (its hash does not match)", sum)
	}
	return data, nil
}

// Runs returns every recorded run, newest first. Unreadable records are
// returned as errors alongside the readable ones.
func (j *Journal) Runs() ([]*JournalRun, []error) {
	entries, err := os.ReadDir(filepath.Join(j.dir, "runs"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, []error{fmt.Errorf("journal: %w", err)}
	}
	var runs []*JournalRun
	var errs []error
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".json") || strings.HasPrefix(name, ".") {
			continue
		}
		run, err := j.readRun(filepath.Join(j.dir, "runs", name))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		runs = append(runs, run)
	}
	sort.Slice(runs, func(a, b int) bool { return runs[a].ID > runs[b].ID })
	return runs, errs
}

func (j *Journal) readRun(path string) (*JournalRun, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	var run JournalRun
	if err := json.Unmarshal(data, &run); err != nil {
		return nil, fmt.Errorf("journal: run record %s is not valid JSON: %v", path, err)
	}
	return &run, nil
}

// Run returns the run whose id is id or starts with id.
func (j *Journal) Run(id string) (*JournalRun, error) {
	if id == "" || strings.ContainsAny(id, `/\`) {
		return nil, fmt.Errorf("run id %q: %w", id, ErrInvalid)
	}
	if run, err := j.readRun(j.runPath(id)); err == nil {
		return run, nil
	}
	runs, _ := j.Runs()
	var match []*JournalRun
	for _, r := range runs {
		if strings.HasPrefix(r.ID, id) {
			match = append(match, r)
		}
	}
	switch len(match) {
	case 0:
		return nil, &RunNotFoundError{ID: id}
	case 1:
		return match[0], nil
	}
	ids := make([]string, 0, 4)
	for _, r := range match[:min(len(match), 3)] {
		ids = append(ids, r.ID)
	}
	if len(match) > 3 {
		ids = append(ids, "…")
	}
	return nil, errs.Unlabelled(ErrInvalid, "run id %q is ambiguous: it starts %d runs (%s); give more of it", id, len(match), strings.Join(ids, ", "))
}

// markUndone records on run that undo undid it.
func (j *Journal) markUndone(run *JournalRun, undo string) error {
	run.UndoneBy = undo
	return j.writeRun(run)
}
