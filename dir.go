package memdir

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/memdir/memdir/anchors"
	"github.com/memdir/memdir/internal/atomicfile"
	"github.com/memdir/memdir/internal/flock"
	"github.com/memdir/memdir/internal/memfile"
	"github.com/memdir/memdir/usage"
)

// MaxMemoryFileBytes is the largest memory file Get reads. Memories are meant
// to be short; a bigger file is reported rather than loaded.
const MaxMemoryFileBytes = 4 << 20

// TeamDirName is the team memory subdirectory of an auto-memory directory.
const TeamDirName = "team"

// Options configure a Dir. The zero value is usable.
type Options struct {
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Logger receives debug logs; nil discards them.
	Logger *slog.Logger
	// Journal records prior contents so every change can be undone. Nil
	// means the default journal for the directory (see DefaultJournalDir).
	Journal *Journal
	// LookupEnv finds the default journal and use log; nil means os.LookupEnv.
	LookupEnv LookupEnvFunc
	// Names finds the memory a Save updates by its name without scanning
	// the directory; package recall's index implements it. Nil scans.
	Names NameIndex
	// Uses counts how often memories are surfaced (see UseLog). Nil means
	// the default: DefaultUseLogPath when Journal is nil, else a file
	// beside the journal's directory (<journal dir>.uses.log), so a caller
	// that keeps its journal apart keeps its counts there too.
	Uses *usage.Log
	// NoUses turns usage counting off.
	NoUses bool
	// Guard screens what automatic writers (extraction, consolidation,
	// sync, an agent's tool call) save; nil screens nothing. Package
	// review's Queue is one: it holds a suspicious write for a person
	// instead of writing it.
	Guard Guard
	// ProjectRoot is the project the memories describe (its git root, or
	// the project directory outside git). When set, Save records the code
	// anchors a memory names and Recall reports those that changed; empty
	// turns anchors off.
	ProjectRoot string
}

// Dir is a memory directory: memory files plus MEMORY.md, and team/ with its
// own MEMORY.md when team memory is in use. A memory under team/ is indexed in
// team/MEMORY.md; every other memory in the top-level MEMORY.md.
//
// Concurrency: every change (a memory file and its index line together) is
// made under an exclusive flock on the directory, and every file is replaced
// atomically, so any number of processes and goroutines on one machine may
// use one directory at once without losing index lines; readers never see a
// partial file. Locks on network filesystems are not relied on.
//
// Files are created 0600 and directories 0700. Paths from callers are checked
// with CleanMemoryFilePath and opened through os.Root, so no name or symlink can
// reach outside the directory. Every change is journaled first and can be
// undone with Undo.
type Dir struct {
	path    string
	now     func() time.Time
	log     *slog.Logger
	journal *Journal
	names   NameIndex
	uses    *usage.Log
	guard   Guard
	project string
}

// Open returns the memory directory at dir. The directory need not exist yet;
// the first write creates it.
func Open(dir string, opts *Options) (*Dir, error) {
	if opts == nil {
		opts = &Options{}
	}
	if dir == "" {
		return nil, fmt.Errorf("open memory directory: empty path: %w", ErrInvalid)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("open memory directory %s: %w", dir, err)
	}
	d := &Dir{path: filepath.Clean(abs), names: opts.Names}
	if opts.ProjectRoot != "" {
		d.project = filepath.Clean(opts.ProjectRoot)
	}
	if d.now, d.log, d.journal, err = withDefaults(d.path, opts); err != nil {
		return nil, fmt.Errorf("open memory directory %s: journal: %w", d.path, err)
	}
	if d.uses, err = defaultUses(d.path, opts, d.journal, d.now); err != nil {
		return nil, fmt.Errorf("open memory directory %s: use log: %w", d.path, err)
	}
	d.guard = opts.Guard
	return d, nil
}

// withDefaults returns opts' clock, logger and journal, filling in time.Now,
// a discarding logger and the default journal for dir.
func withDefaults(dir string, opts *Options) (func() time.Time, *slog.Logger, *Journal, error) {
	now, log, j := opts.Now, opts.Logger, opts.Journal
	if now == nil {
		now = time.Now
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if j == nil {
		lookup := opts.LookupEnv
		if lookup == nil {
			lookup = os.LookupEnv
		}
		jdir, err := DefaultJournalDir(dir, lookup)
		if err != nil {
			return nil, nil, nil, err
		}
		j = NewJournal(jdir, now)
	}
	return now, log, j, nil
}

// Now returns the directory's clock's time (Options.Now).
func (d *Dir) Now() time.Time { return d.now() }

// Path returns the directory's absolute path, without a trailing separator.
func (d *Dir) Path() string { return d.path }

// Journal returns the journal recording the directory's changes.
func (d *Dir) Journal() *Journal { return d.journal }

// Abs returns the absolute path of a slash path relative to the directory.
func (d *Dir) Abs(rel string) string { return filepath.Join(d.path, filepath.FromSlash(rel)) }

// IndexFor returns which MEMORY.md indexes the memory at rel, relative to the
// directory, and the link target that index uses for it.
func IndexFor(rel string) (indexRel, link string) {
	if rest, ok := strings.CutPrefix(rel, TeamDirName+"/"); ok {
		return TeamDirName + "/" + EntrypointName, rest
	}
	return EntrypointName, rel
}

// Exists reports whether the directory exists.
func (d *Dir) Exists() bool {
	fi, err := os.Stat(d.path)
	return err == nil && fi.IsDir()
}

// Ensure creates the directory (mode 0700) if it is missing.
func (d *Dir) Ensure() error {
	if err := atomicfile.MkdirAll(d.path, 0o700); err != nil {
		return fmt.Errorf("create memory directory %s: %w", d.path, err)
	}
	return nil
}

// lock takes the directory's cross-process lock. Changes made through Dir take
// it themselves; callers take it with Change or WithLock to make several
// changes as one.
//
// A change to a memory and its index line that a killed process left
// half-made (see PendingName) is finished before lock returns, so every
// lock holder starts from a consistent pair.
func (d *Dir) lock(ctx context.Context) (*flock.Lock, error) {
	if err := d.Ensure(); err != nil {
		return nil, err
	}
	lock, err := flock.Acquire(ctx, d.path)
	if err != nil {
		return nil, err
	}
	root, err := d.openRoot()
	if err == nil {
		err = d.finishPending(root)
		root.Close()
	}
	if err != nil {
		lock.Unlock()
		return nil, err
	}
	return lock, nil
}

// WithLock runs fn while holding the directory's cross-process lock (the
// directory is created if missing), and releases the lock when fn returns
// or panics. A change to a memory and its index line that a killed process
// left half-made (see PendingName) is finished before fn runs.
//
// Use it for a step of a longer change that is journaled by a Change with
// Unlocked set; a change that can hold the lock throughout is simpler as a
// Change. Methods of Dir that take a context take the lock themselves and
// must not be called from fn (the lock is not re-entrant); those documented
// as needing the caller to hold the lock (IndexMissing, UpdateIndex) may.
//
// The lock is an OS file lock (flock on Unix, LockFileEx on Windows): it
// serialises every process on one machine. It is not relied on across
// network filesystems.
func (d *Dir) WithLock(ctx context.Context, fn func() error) error {
	lock, err := d.lock(ctx)
	if err != nil {
		return err
	}
	defer lock.Unlock()
	return fn()
}

// ChangeOptions adjusts Change. The zero value, or nil, runs the change
// under the directory lock with paths relative to the memory directory.
type ChangeOptions struct {
	// Root is the directory the run's file paths are relative to, when
	// the change writes somewhere other than the memory directory (sync's
	// conflict directory). "" means the memory directory.
	Root string
	// Unlocked runs fn without the directory lock, for a change that waits
	// on a person between its steps (an editor session) and must not block
	// every other writer meanwhile. fn then takes the lock with WithLock
	// around each write.
	Unlocked bool
}

// Change runs fn as one journaled run of the given kind (the name
// 'memdir log' shows: "edit", "mcp", "sync-pull", ...), holding the
// directory lock throughout, so that what fn changes is made as one step
// for other memdir processes and can be undone as one by 'memdir undo'.
//
// fn records each file in rec before changing it (Recorder.Before and its
// siblings), or changes memories with Save, Remove and RenameInRun given
// rec (SaveOptions.Recorder, RemoveOptions.Recorder): those use the lock
// Change holds. Other methods of Dir that take a context take the lock
// themselves and must not be called from fn. fn may set the run's summary
// and usage. When fn returns, the
// run is finished: marked failed, with fn's error, if fn failed (what it
// changed stays undoable), and deleted when nothing changed. If fn panics,
// the run is finished as failed and the lock released before the panic
// goes on.
//
// Change returns the finished run, whose ID names it for undo when
// HasChanges reports true; run is nil only when the run could not be
// started or recorded. err is fn's error, or else the error of locking,
// starting or recording the run.
func (d *Dir) Change(ctx context.Context, kind string, opts *ChangeOptions, fn func(rec *Recorder) error) (run *JournalRun, err error) {
	if opts == nil {
		opts = &ChangeOptions{}
	}
	if !opts.Unlocked {
		lock, err := d.lock(ctx)
		if err != nil {
			return nil, err
		}
		defer lock.Unlock()
	}
	rec, err := d.journal.Begin(kind, cmp.Or(opts.Root, d.path))
	if err != nil {
		return nil, fmt.Errorf("start the journal run that makes the change undoable: %w", err)
	}
	if !opts.Unlocked {
		rec.lockedFor = d
		// A recorder kept past fn must take the lock again.
		defer func() { rec.lockedFor = nil }()
	}
	finished := false
	defer func() {
		if !finished {
			// fn panicked: keep what it changed undoable.
			rec.Finish(fmt.Errorf("%s run panicked", kind))
		}
	}()
	fnErr := fn(rec)
	finished = true
	run, err = rec.Finish(fnErr)
	if fnErr != nil {
		return run, fnErr
	}
	if err != nil {
		return nil, fmt.Errorf("recording the change in the journal failed, so 'memdir undo' cannot revert it: %w", err)
	}
	return run, nil
}

// lockedRoot takes the directory's lock (creating the directory if needed)
// and opens it as an os.Root; release undoes both. When rec is the run of a
// Change on d, which holds the lock already, it only opens the root.
func (d *Dir) lockedRoot(ctx context.Context, rec *Recorder) (root *os.Root, release func(), err error) {
	if rec != nil && rec.lockedFor == d {
		if root, err = d.openRoot(); err != nil {
			return nil, nil, err
		}
		return root, func() { root.Close() }, nil
	}
	lock, err := d.lock(ctx)
	if err != nil {
		return nil, nil, err
	}
	root, err = d.openRoot()
	if err != nil {
		lock.Unlock()
		return nil, nil, err
	}
	return root, func() { root.Close(); lock.Unlock() }, nil
}

func (d *Dir) openRoot() (*os.Root, error) {
	r, err := os.OpenRoot(d.path)
	if err != nil {
		return nil, fmt.Errorf("memory directory %s: %w", d.path, err)
	}
	return r, nil
}

// SaveOptions adjust Save.
type SaveOptions struct {
	// Team puts a memory whose Path is empty under team/.
	Team bool
	// Create refuses to replace an existing file (ErrExists).
	Create bool
	// Recorder, when set, journals the change as part of a larger run that
	// the caller finishes; otherwise Save journals a run of its own.
	Recorder *Recorder
	// Origin records how the memory is being written (see Provenance); it
	// is stored in the frontmatter. An automatic origin (anything but
	// ByUser) also has the content screened by the directory's Guard,
	// whose error Save returns instead of writing.
	Origin *Provenance
	// Screened skips the Guard: a person has seen and accepted this write
	// (package review, accepting a held write).
	Screened bool
}

// SaveResult reports what Save did.
type SaveResult struct {
	// Path is the memory's path relative to the directory.
	Path string
	// Created is true when the file did not exist before.
	Created bool
	// Changed is false when the file already held exactly this content.
	Changed bool
	// Index is the state of the MEMORY.md that indexes the memory, after
	// the save. Index.Warning() is non-empty when agents will no longer see
	// all of it.
	Index IndexStatus
	// RunID is the journal run that can undo the save ("" when nothing changed).
	RunID string
}

// Save writes a memory and its MEMORY.md pointer line. With an empty Path,
// a memory of the same name in the same area (team or not) is updated, or a
// new file named by FileNameFor is created. Frontmatter keys memdir does not
// manage are kept from the existing file.
func (d *Dir) Save(ctx context.Context, m *Memory, opts *SaveOptions) (*SaveResult, error) {
	if opts == nil {
		opts = &SaveOptions{}
	}
	if err := checkSave(m); err != nil {
		return nil, err
	}
	rel, match, err := d.savePath(ctx, m, opts)
	if err != nil {
		return nil, err
	}
	// Anchors are found before the lock: git grep may take a moment.
	found, withAnchors := d.findAnchors(ctx, m)
	root, release, err := d.lockedRoot(ctx, opts.Recorder)
	if err != nil {
		return nil, err
	}
	defer release()
	match.saving()

	w := &saveWrite{rel: rel, res: &SaveResult{Path: rel}}
	if err := d.prepareSave(root, m, opts, w, found, withAnchors); err != nil {
		return nil, err
	}
	if err := d.writeSave(root, opts, w); err != nil {
		return nil, err
	}
	// Still under the lock: the next save finds this one without listing.
	match.saved(rel, w.saved.Name)
	d.log.Debug("saved memory", "path", rel, "created", w.res.Created, "changed", w.res.Changed)
	return w.res, nil
}

// checkSave refuses a memory Save cannot write: no name, no description,
// or a body that is not text.
func checkSave(m *Memory) error {
	if strings.TrimSpace(m.Name) == "" {
		return fmt.Errorf("save memory: a name is required: %w", ErrInvalid)
	}
	if strings.TrimSpace(m.Description) == "" {
		return fmt.Errorf("save memory %q: a description is required (recall decides relevance from it): %w", m.Name, ErrInvalid)
	}
	if m.RawType != "" && m.Type == "" {
		m.Type = ParseType(m.RawType)
	}
	if bytes.IndexByte([]byte(m.Body), 0) >= 0 {
		return fmt.Errorf("save memory %q: the body contains NUL bytes; memories are text: %w", m.Name, ErrInvalid)
	}
	for _, f := range []struct{ field, text string }{{"name", m.Name}, {"description", m.Description}, {"type", m.RawType}, {"body", m.Body}} {
		if err := checkUTF8("save memory: the "+f.field, f.text); err != nil {
			return err
		}
	}
	return nil
}

// checkUTF8 refuses text that is not valid UTF-8, saying where the first
// bad byte is; what names the text.
func checkUTF8(what, text string) error {
	if utf8.ValidString(text) {
		return nil
	}
	i := 0
	for i < len(text) {
		r, n := utf8.DecodeRuneInString(text[i:])
		if r == utf8.RuneError && n == 1 {
			break
		}
		i += n
	}
	return fmt.Errorf("%s is not valid UTF-8 text (byte %d is 0x%02x); memories are text: %w", what, i+1, text[i], ErrInvalid)
}

// savePath is the file a Save writes: the memory's own Path, or the file of
// a memory of the same name in its area, or a new one.
func (d *Dir) savePath(ctx context.Context, m *Memory, opts *SaveOptions) (string, *NameMatch, error) {
	if m.Path != "" {
		rel, err := CleanMemoryFilePath(m.Path)
		return rel, nil, err
	}
	return d.pathForName(ctx, m.Name, m.Type, opts.Team)
}

// saveWrite is one Save being made, under the directory lock.
type saveWrite struct {
	rel   string
	res   *SaveResult
	saved Memory
	// old is the file's content before, content what Save writes.
	old, content []byte
}

// prepareSave reads the file as it is and makes the content to write: the
// memory, keeping the keys memdir does not manage from the file, with its
// anchors and provenance; the directory's guard and the team secret
// check have their say.
func (d *Dir) prepareSave(root *os.Root, m *Memory, opts *SaveOptions, w *saveWrite, found []anchors.Anchor, withAnchors bool) error {
	old, _, err := memfile.ReadRooted(root, w.rel, MaxMemoryFileBytes)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		w.res.Created = true
	case err != nil:
		return fmt.Errorf("save memory %s: %w", w.rel, err)
	case opts.Create:
		return fmt.Errorf("save memory %s: %w", w.rel, ErrExists)
	default:
		if prev, _ := ParseMemory(old); m.front == nil {
			m.front = prev.front
		}
	}
	if key, bad := invalidUTF8Key(m.front); bad {
		return fmt.Errorf("save memory %s: the frontmatter key %q is not valid UTF-8 text; fix the file by hand: %w", w.rel, key, ErrInvalid)
	}
	w.old = old
	w.saved = *m
	if withAnchors {
		w.saved.SetAnchors(found)
	}
	w.saved.Path = w.rel
	if opts.Origin != nil {
		if err := opts.Origin.Validate(); err != nil {
			return err
		}
		w.saved.cloneFront()
		w.saved.SetProvenance(opts.Origin.Stamped(d.now()))
	}
	w.content = w.saved.Format()
	if d.guard != nil && opts.Origin.Automatic() && !opts.Screened {
		if err := d.guard.Screen(&GuardedWrite{Path: w.rel, Op: "save", Old: old, Created: w.res.Created, Content: w.content, Origin: opts.Origin}); err != nil {
			return err
		}
	}
	w.res.Changed = w.res.Created || !bytes.Equal(old, w.content)
	// The index line is made of the name and description, which content
	// holds too, so checking content covers both files.
	return checkTeamWrite(w.rel, w.content)
}

// writeSave writes the memory and its index line (where compaction moved
// it, if it did), recorded in the caller's run or one of its own.
func (d *Dir) writeSave(root *os.Root, opts *SaveOptions, w *saveWrite) error {
	indexRel, link := IndexFor(w.rel)
	rec, own, err := d.recorder(opts.Recorder, "save")
	if err != nil {
		return err
	}
	ix, err := d.readIndex(root, indexRel)
	if err != nil {
		return err
	}
	// A line compaction moved to the overflow file is updated there (and
	// the journal notes where, for undo).
	oRel, oix, inOverflow, err := d.overflowHolding(root, indexRel, link, ix)
	if err != nil {
		return err
	}
	main := ix
	if inOverflow {
		indexRel, ix = oRel, oix
	}
	err = func() error {
		if err := rec.Before(w.rel); err != nil {
			return err
		}
		prior := entryLines(ix.Find(link))
		rec.NoteIndexLines(w.rel, prior)
		if inOverflow {
			rec.NoteIndexFile(w.rel, oRel)
		}
		return d.writeSavePair(root, rec, w, indexRel, link, ix, prior)
	}()
	if own {
		rec.SetSummary("save " + w.rel)
		run, ferr := rec.Finish(err)
		if err == nil && ferr != nil {
			err = ferr
		}
		if run != nil && len(run.ChangedFiles()) > 0 {
			w.res.RunID = run.ID
		}
	}
	if err != nil {
		return err
	}
	// The state of MEMORY.md itself, which agents load, not of the
	// overflow file that took the line.
	w.res.Index = main.Status()
	return nil
}

// writeSavePair writes the memory file, when it changes, and its index line
// in ix (the index at indexRel), with the pending record that lets a later
// process finish the pair if this one dies in between.
func (d *Dir) writeSavePair(root *os.Root, rec *Recorder, w *saveWrite, indexRel, link string, ix *Index, prior []string) error {
	line := IndexEntry{Title: w.saved.Name, File: link, Hook: w.saved.Description}.String()
	if w.res.Changed {
		if err := beginPending(root, &pendingChange{Op: "save", Run: rec.ID(), Path: w.rel, Sum: memfile.ContentSum(w.content), Index: indexRel, Link: link, Line: line, Prior: prior}); err != nil {
			return err
		}
		crashPoint("save:begin")
		if dir := path.Dir(w.rel); dir != "." {
			if err := root.MkdirAll(dir, 0o700); err != nil {
				return fmt.Errorf("save memory %s: %w", w.rel, err)
			}
		}
		if err := atomicfile.WriteFileIn(root, w.rel, w.content, 0o600); err != nil {
			// The file is as it was (the write replaces it atomically).
			return abandonPending(root, err)
		}
		crashPoint("save:file")
	}
	if ix.Upsert(link, line) {
		if err := d.writeIndex(root, indexRel, ix); err != nil {
			return err
		}
	}
	if w.res.Changed {
		return endPending(root)
	}
	return nil
}

func entryLines(es []IndexEntry) []string {
	out := make([]string, 0, len(es))
	for _, e := range es {
		out = append(out, e.String())
	}
	return out
}

// recorder returns the caller's recorder, or a new run of the given kind that
// the caller must finish (own is true).
func (d *Dir) recorder(given *Recorder, kind string) (rec *Recorder, own bool, err error) {
	if given != nil {
		return given, false, nil
	}
	rec, err = d.journal.Begin(kind, d.path)
	if err != nil {
		return nil, false, fmt.Errorf("journal: %w", err)
	}
	return rec, true, nil
}

// pathForName finds the file of an existing memory called name in the team
// or private area, or names a new one. The match, when not nil, is what the
// directory's NameIndex found, for Save to report back to it.
func (d *Dir) pathForName(ctx context.Context, name string, t Type, team bool) (string, *NameMatch, error) {
	prefix := ""
	if team {
		prefix = TeamDirName + "/"
	}
	candidate := prefix + FileNameFor(name, t)
	var match *NameMatch
	if d.Exists() {
		same, m, err := d.namedLike(ctx, name, team, candidate)
		if err != nil {
			return "", nil, err
		}
		match = m
		switch len(same) {
		case 1:
			return same[0], match, nil
		case 0:
		default:
			return "", nil, fmt.Errorf("save memory %q: %d files already use this name (%s); pass the file to update: %w", name, len(same), strings.Join(same, ", "), ErrInvalid)
		}
		// A different memory already owns the natural file name: pick the
		// next free variant rather than overwrite it.
		for i := 2; ; i++ {
			if _, err := os.Lstat(d.Abs(candidate)); errors.Is(err, fs.ErrNotExist) {
				break
			}
			candidate = prefix + strings.TrimSuffix(FileNameFor(name, t), ".md") + fmt.Sprintf("_%d.md", i)
		}
	}
	rel, err := CleanMemoryFilePath(candidate)
	return rel, match, err
}

// namedLike returns the memories of the area (team or not) whose
// frontmatter name is name. With a NameIndex it reads only the files the
// index and the natural file name (candidate) point to, checking each one's
// name as it is now; an edit that gave a memory this name without renaming
// it, and that the index has not seen yet, is missed, and the save then
// creates a file beside it. Without an index, or when it fails, it scans
// the directory.
func (d *Dir) namedLike(ctx context.Context, name string, team bool, candidate string) ([]string, *NameMatch, error) {
	inArea := func(p string) bool { return strings.HasPrefix(p, TeamDirName+"/") == team }
	if d.names != nil {
		if match, err := d.names.LookupName(ctx, name); err == nil && match != nil {
			root, err := d.openRoot()
			if err != nil {
				return nil, nil, err
			}
			defer root.Close()
			paths := append(slices.Clone(match.Paths), candidate)
			slices.Sort(paths)
			paths = slices.Compact(paths)
			var same []string
			var hr HeaderReader
			for _, p := range paths {
				if h, _, ok := hr.Read(root, p); ok && h.Name == name && inArea(p) {
					same = append(same, p)
				}
			}
			return same, match, nil
		}
	}
	res, err := d.Scan(ctx, &ScanOptions{Limit: -1})
	if err != nil {
		return nil, nil, err
	}
	var same []string
	for _, h := range res.Memories {
		if h.Name == name && inArea(h.Path) {
			same = append(same, h.Path)
		}
	}
	return same, nil, nil
}

func (d *Dir) readIndex(root *os.Root, indexRel string) (*Index, error) {
	data, err := d.readIndexData(root, indexRel)
	if err != nil {
		return nil, err
	}
	return ParseIndex(data), nil
}

// readIndexData reads the index file at indexRel: nil when there is none.
func (d *Dir) readIndexData(root *os.Root, indexRel string) ([]byte, error) {
	data, _, err := memfile.ReadRooted(root, indexRel, 64<<20)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", d.Abs(indexRel), err)
	}
	return data, nil
}

func (d *Dir) writeIndex(root *os.Root, indexRel string, ix *Index) error {
	if dir := path.Dir(indexRel); dir != "." {
		if err := root.MkdirAll(dir, 0o700); err != nil {
			return fmt.Errorf("write %s: %w", d.Abs(indexRel), err)
		}
	}
	return atomicfile.WriteFileIn(root, indexRel, ix.Bytes(), 0o600)
}

// UpdateIndex is a read-modify-write of MEMORY.md (of team/ with team set):
// it reads the index, lets change edit it, and, when change reports a
// difference, replaces the file atomically. changed reports whether it
// wrote. The caller holds the directory lock (Change or WithLock), so no
// other memdir writer's line is lost between the read and the write, and
// journals the lines it changes (Recorder.NoteIndexLines) if the change is
// to be undoable.
func (d *Dir) UpdateIndex(team bool, change func(ix *Index) bool) (changed bool, err error) {
	indexRel := indexRelFor(team)
	root, err := d.openRoot()
	if err != nil {
		return false, err
	}
	defer root.Close()
	ix, err := d.readIndex(root, indexRel)
	if err != nil {
		return false, err
	}
	if !change(ix) {
		return false, nil
	}
	if err := d.writeIndex(root, indexRel, ix); err != nil {
		return false, err
	}
	return true, nil
}

// CreateExclusive creates the file rel (slash-separated, inside the
// directory) holding content, unless it already exists: the create is
// exclusive (O_EXCL, as Claude Code's "wx" flag), so of two processes
// creating one name only one succeeds, and it happens through the
// directory's os.Root, so no symlink can redirect it. Missing parent
// directories are made (0700); the file is 0600 and synced before
// CreateExclusive returns. created is false, with no error, when the file
// appeared first. Unlike Save it writes no index line and needs no lock.
func (d *Dir) CreateExclusive(rel string, content []byte) (created bool, err error) {
	if !filepath.IsLocal(filepath.FromSlash(rel)) {
		return false, fmt.Errorf("create %q: not a file inside the memory directory: %w", rel, ErrInvalid)
	}
	if err := d.Ensure(); err != nil {
		return false, err
	}
	root, err := d.openRoot()
	if err != nil {
		return false, err
	}
	defer root.Close()
	if dir := path.Dir(rel); dir != "." {
		if err := root.MkdirAll(dir, 0o700); err != nil {
			return false, fmt.Errorf("create %s: %w", d.Abs(rel), err)
		}
	}
	f, err := root.OpenFile(rel, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("create %s: %w", d.Abs(rel), err)
	}
	if _, err := f.Write(content); err != nil {
		f.Close()
		return false, fmt.Errorf("create %s: %w", d.Abs(rel), err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return false, fmt.Errorf("create %s: %w", d.Abs(rel), err)
	}
	if err := f.Close(); err != nil {
		return false, fmt.Errorf("create %s: %w", d.Abs(rel), err)
	}
	return true, nil
}

// ReadIndex returns the parsed MEMORY.md of the private area, or of team/
// with team set. A missing file is an empty index.
func (d *Dir) ReadIndex(team bool) (*Index, error) {
	indexRel := indexRelFor(team)
	if !d.Exists() {
		return ParseIndex(nil), nil
	}
	root, err := d.openRoot()
	if err != nil {
		return nil, err
	}
	defer root.Close()
	return d.readIndex(root, indexRel)
}

// indexRelFor is the path of MEMORY.md, or of team/MEMORY.md when team is
// set, in the memory directory.
func indexRelFor(team bool) string {
	if team {
		return TeamDirName + "/" + EntrypointName
	}
	return EntrypointName
}

// ReadOverflowIndex reads the overflow file beside MEMORY.md (or
// team/MEMORY.md when team is set), MEMORY-more.md, which holds the lines
// compaction moved out (see [OverflowIndexName]). It returns nil, and no
// error, when there is none.
func (d *Dir) ReadOverflowIndex(team bool) (*Index, error) {
	indexRel := indexRelFor(team)
	if !d.Exists() {
		return nil, nil
	}
	root, err := d.openRoot()
	if err != nil {
		return nil, err
	}
	defer root.Close()
	data, err := d.readIndexData(root, overflowFor(indexRel))
	if err != nil || data == nil {
		return nil, err
	}
	return ParseIndex(data), nil
}

// LoadedIndex is MEMORY.md as an agent loads it (see LoadIndex).
type LoadedIndex struct {
	// Text is the index an agent sees: frontmatter and HTML comments
	// removed, truncated to Claude Code's limits with its warning line.
	Text string
	// Status says how long the index is and which limit truncated it.
	Status IndexStatus
	// Exists is false when there is no MEMORY.md (Text is then "").
	Exists bool
}

// LoadIndex returns MEMORY.md (of team/ with team set) as an agent loads it:
// frontmatter and HTML comments removed, truncated to Claude Code's limits
// with its warning line. A missing MEMORY.md is not an error: Exists is
// false.
func (d *Dir) LoadIndex(team bool) (*LoadedIndex, error) {
	indexRel := indexRelFor(team)
	if !d.Exists() {
		return &LoadedIndex{}, nil
	}
	root, err := d.openRoot()
	if err != nil {
		return nil, err
	}
	defer root.Close()
	data, _, err := memfile.ReadRooted(root, indexRel, 64<<20)
	if errors.Is(err, fs.ErrNotExist) {
		return &LoadedIndex{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", d.Abs(indexRel), err)
	}
	text, status := LoadIndexText(data)
	return &LoadedIndex{Text: text, Status: status, Exists: true}, nil
}

// Resolve turns a reference to a memory into its path: a path relative to the
// directory ("feedback_testing.md", "team/x.md"), the same without ".md", or
// the memory's frontmatter name.
func (d *Dir) Resolve(ctx context.Context, ref string) (string, error) {
	if ref == "" {
		return "", fmt.Errorf("no memory named: %w", ErrInvalid)
	}
	tries := []string{ref}
	if !strings.HasSuffix(ref, ".md") {
		tries = append(tries, ref+".md")
	}
	for _, t := range tries {
		rel, err := CleanMemoryFilePath(t)
		if err != nil {
			continue
		}
		if fi, err := os.Lstat(d.Abs(rel)); err == nil && !fi.IsDir() {
			return rel, nil
		}
	}
	if !d.Exists() {
		return "", fmt.Errorf("memory %q: %w: the directory %s does not exist yet", ref, ErrNotFound, d.path)
	}
	res, err := d.Scan(ctx, &ScanOptions{Limit: -1})
	if err != nil {
		return "", err
	}
	var byName, folded []string
	for _, h := range res.Memories {
		switch {
		case h.Name == ref:
			byName = append(byName, h.Path)
		case strings.EqualFold(h.Name, ref) || strings.EqualFold(strings.TrimSuffix(path.Base(h.Path), ".md"), ref):
			folded = append(folded, h.Path)
		}
	}
	for _, set := range [][]string{byName, folded} {
		switch len(set) {
		case 0:
			continue
		case 1:
			return set[0], nil
		default:
			return "", fmt.Errorf("memory %q is ambiguous: it matches %s; give the file path: %w", ref, strings.Join(set, ", "), ErrInvalid)
		}
	}
	if _, err := CleanMemoryFilePath(ref); err != nil && strings.HasSuffix(ref, ".md") {
		return "", err
	}
	return "", &MemoryNotFoundError{Ref: ref, Dir: d.path}
}

// Get reads a memory by reference (see Resolve).
func (d *Dir) Get(ctx context.Context, ref string) (*Memory, error) {
	m, _, err := d.Read(ctx, ref)
	return m, err
}

// Read is Get that also returns the file's bytes as they are on disk.
func (d *Dir) Read(ctx context.Context, ref string) (*Memory, []byte, error) {
	rel, err := d.Resolve(ctx, ref)
	if err != nil {
		return nil, nil, err
	}
	root, err := d.openRoot()
	if err != nil {
		return nil, nil, err
	}
	defer root.Close()
	data, fi, err := memfile.ReadRooted(root, rel, MaxMemoryFileBytes)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil, fmt.Errorf("memory %s: %w", rel, ErrNotFound)
		}
		return nil, nil, fmt.Errorf("read memory %s: %w", d.Abs(rel), err)
	}
	if bytes.IndexByte(data, 0) >= 0 {
		return nil, nil, fmt.Errorf("read memory %s: a binary file, not a Markdown memory: %w", d.Abs(rel), ErrInvalid)
	}
	m, _ := ParseMemory(data)
	m.Path = rel
	m.ModTime = fi.ModTime()
	return m, data, nil
}

// RemoveResult reports what Remove did.
type RemoveResult struct {
	Path string
	// IndexLines are the MEMORY.md lines removed with the file.
	IndexLines []string
	// RunID is the journal run that can restore the memory.
	RunID string
}

// RemoveOptions adjusts Remove; nil means the defaults.
type RemoveOptions struct {
	// Recorder, when set, journals the removal as part of a larger run that
	// the caller finishes; otherwise Remove journals a run of its own.
	Recorder *Recorder
}

// Remove deletes a memory and its index lines. The content is journaled first,
// so 'memdir undo' can restore both.
func (d *Dir) Remove(ctx context.Context, ref string, opts *RemoveOptions) (*RemoveResult, error) {
	if opts == nil {
		opts = &RemoveOptions{}
	}
	rec := opts.Recorder
	rel, err := d.Resolve(ctx, ref)
	if err != nil {
		return nil, err
	}
	root, release, err := d.lockedRoot(ctx, rec)
	if err != nil {
		return nil, err
	}
	defer release()
	if fi, err := root.Lstat(rel); err != nil {
		return nil, fmt.Errorf("remove memory %s: %w", rel, ErrNotFound)
	} else if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("remove memory %s: not a regular file; remove it by hand if you mean to: %w", rel, ErrInvalid)
	}
	indexRel, link := IndexFor(rel)
	ix, err := d.readIndex(root, indexRel)
	if err != nil {
		return nil, err
	}
	oRel, oix, inOverflow, err := d.overflowHolding(root, indexRel, link, ix)
	if err != nil {
		return nil, err
	}
	if inOverflow {
		indexRel, ix = oRel, oix
	}
	rec, own, err := d.recorder(rec, "remove")
	if err != nil {
		return nil, err
	}
	res := &RemoveResult{Path: rel}
	err = func() error {
		if err := rec.Before(rel); err != nil {
			return err
		}
		prior := entryLines(ix.Find(link))
		rec.NoteIndexLines(rel, prior)
		if inOverflow {
			rec.NoteIndexFile(rel, oRel)
		}
		if err := beginPending(root, &pendingChange{Op: "remove", Run: rec.ID(), Path: rel, Index: indexRel, Link: link, Prior: prior}); err != nil {
			return err
		}
		if err := root.Remove(rel); err != nil {
			return abandonPending(root, fmt.Errorf("remove memory %s: %w", rel, err))
		}
		if err := atomicfile.SyncDirIn(root, path.Dir(rel)); err != nil {
			return err
		}
		crashPoint("remove:file")
		if res.IndexLines = ix.Remove(link); len(res.IndexLines) > 0 {
			if err := d.writeIndex(root, indexRel, ix); err != nil {
				return err
			}
		}
		return endPending(root)
	}()
	if own {
		rec.SetSummary("remove " + rel)
		run, ferr := rec.Finish(err)
		if err == nil {
			err = ferr
		}
		if run != nil {
			res.RunID = run.ID
		}
	}
	if err != nil {
		return nil, err
	}
	return res, nil
}

// RenameResult reports what Rename did.
type RenameResult struct {
	From, To string
	RunID    string
}

// RenameOptions adjusts Rename; nil means the defaults.
type RenameOptions struct {
	// Recorder, when set, journals the rename as part of a larger run that
	// the caller finishes (package promote moves memories to team/ this
	// way), so that one undo reverts it with the run's other changes;
	// otherwise Rename journals a run of its own.
	Recorder *Recorder
}

// Rename moves a memory to a new path and repoints its index line, keeping the
// line's title and hook. Moving between the private area and team/ moves the
// line between the two indexes. It never replaces an existing file.
func (d *Dir) Rename(ctx context.Context, ref, to string, opts *RenameOptions) (*RenameResult, error) {
	var rec *Recorder
	if opts != nil {
		rec = opts.Recorder
	}
	return d.rename(ctx, ref, to, rec)
}

// rename is Rename; with given set, the change joins that open run.
func (d *Dir) rename(ctx context.Context, ref, to string, given *Recorder) (*RenameResult, error) {
	from, err := d.Resolve(ctx, ref)
	if err != nil {
		return nil, err
	}
	if !strings.HasSuffix(to, ".md") {
		to += ".md"
	}
	if to, err = CleanMemoryFilePath(to); err != nil {
		return nil, err
	}
	if from == to {
		return nil, fmt.Errorf("rename %s: source and destination are the same: %w", from, ErrInvalid)
	}
	root, release, err := d.lockedRoot(ctx, given)
	if err != nil {
		return nil, err
	}
	defer release()
	mv, err := d.planRename(root, from, to)
	if err != nil {
		return nil, err
	}
	rec, own, err := d.recorder(given, "rename")
	if err != nil {
		return nil, err
	}
	if own {
		rec.SetSummary("rename " + from + " → " + to)
	}
	err = d.moveMemory(root, rec, mv)
	if !own {
		if err != nil {
			return nil, err
		}
		return &RenameResult{From: from, To: to, RunID: rec.ID()}, nil
	}
	run, ferr := rec.Finish(err)
	if err == nil {
		err = ferr
	}
	if err != nil {
		return nil, err
	}
	return &RenameResult{From: from, To: to, RunID: run.ID}, nil
}

// renameMove is one rename: the memory's file and index line, from and to.
type renameMove struct {
	from, to            string
	fromIndex, fromLink string
	toIndex, toLink     string
	fromIx, toIx        *Index
	overflow            string // the overflow file holding the line, if any
	inOverflow          bool
}

// planRename checks a rename under the directory lock (the destination is
// free, a move into team/ carries no secret) and reads the indexes it
// edits: a line compaction moved to the overflow file is renamed there
// when the memory stays in its area, and removed from there otherwise.
func (d *Dir) planRename(root *os.Root, from, to string) (*renameMove, error) {
	if fi, err := root.Lstat(from); err != nil || !fi.Mode().IsRegular() {
		// Behind a link out of the directory, gone, or not a file: refused
		// before anything is recorded or moved.
		why := "it is not a regular file"
		if err != nil {
			why = err.Error()
		}
		return nil, fmt.Errorf("rename %s to %s: %s cannot be moved inside the memory directory (%s): %w", from, to, from, why, ErrInvalid)
	}
	if _, err := root.Lstat(to); err == nil {
		return nil, fmt.Errorf("rename %s to %s: the destination %w", from, to, ErrExists)
	}
	mv := &renameMove{from: from, to: to}
	mv.fromIndex, mv.fromLink = IndexFor(from)
	mv.toIndex, mv.toLink = IndexFor(to)
	var err error
	if mv.fromIx, err = d.readIndex(root, mv.fromIndex); err != nil {
		return nil, err
	}
	oRel, oix, inOverflow, err := d.overflowHolding(root, mv.fromIndex, mv.fromLink, mv.fromIx)
	if err != nil {
		return nil, err
	}
	if inOverflow {
		if mv.toIndex == mv.fromIndex {
			mv.toIndex = oRel
		}
		mv.fromIndex, mv.fromIx = oRel, oix
		mv.overflow, mv.inOverflow = oRel, true
	}
	mv.toIx = mv.fromIx
	if mv.toIndex != mv.fromIndex {
		if mv.toIx, err = d.readIndex(root, mv.toIndex); err != nil {
			return nil, err
		}
	}
	if IsTeamPath(to) {
		// Moving into team/ shares the file and its index line: check both
		// before anything moves.
		data, _, err := memfile.ReadRooted(root, from, MaxMemoryFileBytes)
		if err != nil {
			return nil, fmt.Errorf("rename %s to %s: %w", from, to, err)
		}
		for _, l := range entryLines(mv.fromIx.Find(mv.fromLink)) {
			data = append(append(data, '\n'), l...)
		}
		if err := CheckTeamContent(to, data); err != nil {
			return nil, err
		}
	}
	return mv, nil
}

// moveMemory moves the file and its index line, recorded in rec, with the
// pending record that lets a later process finish the pair if this one
// dies in between.
func (d *Dir) moveMemory(root *os.Root, rec *Recorder, mv *renameMove) error {
	if err := rec.Before(mv.from, mv.to); err != nil {
		return err
	}
	prior := entryLines(mv.fromIx.Find(mv.fromLink))
	rec.NoteIndexLines(mv.from, prior)
	if mv.inOverflow {
		rec.NoteIndexFile(mv.from, mv.overflow)
	}
	if dir := path.Dir(mv.to); dir != "." {
		if err := root.MkdirAll(dir, 0o700); err != nil {
			return err
		}
	}
	line := movedLine(root, mv)
	if err := beginPending(root, &pendingChange{Op: "rename", Run: rec.ID(), Path: mv.from, Index: mv.fromIndex, Link: mv.fromLink,
		To: mv.to, ToIndex: mv.toIndex, ToLink: mv.toLink, Line: line, Prior: prior}); err != nil {
		return err
	}
	if err := root.Rename(mv.from, mv.to); err != nil {
		// Nothing moved: the record would only stand in the way.
		return abandonPending(root, fmt.Errorf("rename %s to %s: %w", mv.from, mv.to, err))
	}
	if err := atomicfile.SyncDirIn(root, path.Dir(mv.to)); err != nil {
		return err
	}
	crashPoint("rename:file")
	mv.fromIx.Remove(mv.fromLink)
	mv.toIx.Upsert(mv.toLink, line)
	if err := d.writeIndex(root, mv.fromIndex, mv.fromIx); err != nil {
		return err
	}
	if mv.toIndex != mv.fromIndex {
		if err := d.writeIndex(root, mv.toIndex, mv.toIx); err != nil {
			return err
		}
	}
	return endPending(root)
}

// movedLine is the memory's index line at its new path, keeping the old
// line's title and hook (or, without one, the memory's name and
// description).
func movedLine(root *os.Root, mv *renameMove) string {
	old := mv.fromIx.Find(mv.fromLink)
	e := IndexEntry{File: mv.toLink}
	if len(old) > 0 {
		e.Title, e.Hook = old[0].Title, old[0].Hook
	} else if data, _, err := memfile.ReadRooted(root, mv.from, MaxMemoryFileBytes); err == nil {
		m, _ := ParseMemory(data)
		e.Title, e.Hook = m.Name, m.Description
	}
	if e.Title == "" {
		e.Title = strings.TrimSuffix(path.Base(mv.toLink), ".md")
	}
	return e.String()
}

func (d *Dir) restoreFile(root *os.Root, f JournalFile) error {
	if f.Before == "" {
		if err := root.Remove(f.Path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("undo: remove %s: %w", f.Path, err)
		}
		return nil
	}
	data, err := d.journal.Blob(f.Before)
	if err != nil {
		return fmt.Errorf("undo %s: %w", f.Path, err)
	}
	if dir := path.Dir(f.Path); dir != "." {
		if err := root.MkdirAll(dir, 0o700); err != nil {
			return fmt.Errorf("undo %s: %w", f.Path, err)
		}
	}
	mode := f.BeforeMode
	if mode == 0 {
		mode = 0o600
	}
	return atomicfile.WriteFileIn(root, f.Path, data, mode)
}
