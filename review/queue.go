package review

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
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

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/internal/atomicfile"
	"github.com/memdir/memdir/internal/flock"
	"github.com/memdir/memdir/internal/memfile"
	"github.com/memdir/memdir/internal/statedir"
	"github.com/memdir/memdir/screen"
)

// Item states.
const (
	Pending  = "pending"
	Accepted = "accepted"
	Rejected = "rejected"
)

// ErrHeld is matched (errors.Is) by a *HeldError.
var ErrHeld = errors.New("held for review")

// HeldError is returned when a write was put in the review queue instead of
// into memory, where a person may accept or reject it (Queue.Accept,
// Queue.Reject).
type HeldError struct {
	ID       string
	Path     string
	Findings []screen.Finding
}

func (e *HeldError) Error() string {
	rules := make([]string, 0, len(e.Findings))
	for _, f := range e.Findings {
		if !slices.Contains(rules, f.Rule) {
			rules = append(rules, f.Rule)
		}
	}
	return fmt.Sprintf("write to %s held for review as %s: the content looks like a prompt injection (%s)",
		e.Path, e.ID, strings.Join(rules, ", "))
}

func (e *HeldError) Is(target error) bool { return target == ErrHeld }

// HeldWrite is one held write.
type HeldWrite struct {
	ID string `json:"id"`
	// Path is the file the write was for, relative to the memory directory.
	Path string `json:"path"`
	// Op is "save" (a memory through Dir.Save) or "write" (a whole file
	// from the memory tool or a sync pull).
	Op string `json:"op"`
	// Content is the complete new content of the file.
	Content string `json:"content"`
	// Existed says whether the file existed when the write was held, and
	// BaseSum is its content hash then: accepting refuses to overwrite a
	// file that changed since (or appeared).
	Existed bool   `json:"existed"`
	BaseSum string `json:"base_sum,omitempty"`
	// Provenance says who made the write.
	Provenance *memdir.Provenance `json:"provenance"`
	Findings   []screen.Finding   `json:"findings"`
	State      string             `json:"state"`
	Queued     time.Time          `json:"queued"`
	// Decided is when the item was accepted or rejected; nil while it is
	// pending.
	Decided *time.Time `json:"decided,omitempty"`
	// RunID is the journal run of an accepted write.
	RunID string `json:"run_id,omitempty"`
	// UndoneBy is set when the accept's run (RunID) was undone since, by
	// this journal run: the write is out of memory again, so the item is
	// pending again, to accept or reject anew. It is read from the journal,
	// never stored.
	UndoneBy string `json:"undone_by,omitempty"`
}

// DefaultDir returns where the review queue of a memory directory lives:
// <state dir>/review/<sanitised dir>.
func DefaultDir(memoryDir string, lookup memdir.LookupEnvFunc) (string, error) {
	return statedir.For(lookup, "review", memoryDir, "")
}

// Options adjust New. The zero value, or nil, keeps the queue in its
// default place, with the real clock.
type Options struct {
	// Dir is the queue's directory; "" means DefaultDir.
	Dir string
	// LookupEnv finds the default directory; nil means os.LookupEnv.
	LookupEnv memdir.LookupEnvFunc
	// Journal is the memory directory's journal, where the queue finds
	// whether an accept was undone since; nil means the directory's
	// default journal (memdir.DefaultJournalDir, with LookupEnv), if the
	// environment names a state directory. [Open] gives the directory's.
	Journal *memdir.Journal
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Logger receives debug logs; nil discards them.
	Logger *slog.Logger
}

// Queue is the review queue of one memory directory: the writes that
// screening flagged, made by an automatic writer (extraction, dream, sync
// pull, an agent's tool call). It lives outside the memory directory, under
// the state directory (<state dir>/review/<sanitised dir>/<id>.json), so
// nothing in it is ever loaded into a model's context. A person lists the
// items, then accepts one (the write is performed, journaled, and can be
// undone like any other) or rejects it (the item is kept, marked rejected,
// so there is a record). An accepted item whose run is undone (by 'memdir
// undo', the UI, anything that undoes runs) is pending again: the queue reads
// that from the directory's journal, so every reader of the queue agrees.
//
// A Queue is the memory directory's [memdir.Guard]: give it as
// [memdir.Options].Guard (or open both with [Open]) and every automatic
// Save, and every whole-file write through [memdir.Dir.WriteGuard], is
// screened. A sync pull, which must write the server's bytes as they are,
// asks ScreenWrite and keeps its provenance with RecordProvenance. Several processes may share a queue:
// items are written atomically and decisions are taken under a lock.
type Queue struct {
	dir       string
	memoryDir string
	journal   *memdir.Journal
	now       func() time.Time
	log       *slog.Logger
}

var _ memdir.Guard = (*Queue)(nil)

// New returns the review queue of the memory directory at memoryDir.
// Nothing is created until a write is held.
func New(memoryDir string, opts *Options) (*Queue, error) {
	if opts == nil {
		opts = &Options{}
	}
	abs, err := filepath.Abs(memoryDir)
	if err != nil {
		return nil, fmt.Errorf("review queue of %s: %w", memoryDir, err)
	}
	q := &Queue{memoryDir: filepath.Clean(abs), journal: opts.Journal, now: opts.Now, log: opts.Logger}
	if q.now == nil {
		q.now = time.Now
	}
	if q.log == nil {
		q.log = slog.New(slog.DiscardHandler)
	}
	lookup := opts.LookupEnv
	if lookup == nil {
		lookup = os.LookupEnv
	}
	if q.journal == nil {
		// A queue in a directory of its own asks nothing of the
		// environment: without a state directory it has no journal to
		// read, and takes accepts as they are.
		jdir, err := memdir.DefaultJournalDir(q.memoryDir, lookup)
		if err != nil && opts.Dir == "" {
			return nil, fmt.Errorf("review queue of %s: %w", q.memoryDir, err)
		}
		if err == nil {
			q.journal = memdir.NewJournal(jdir, q.now)
		}
	}
	if opts.Dir != "" {
		if q.dir, err = filepath.Abs(opts.Dir); err != nil {
			return nil, fmt.Errorf("review queue %s: %w", opts.Dir, err)
		}
		return q, nil
	}
	if q.dir, err = DefaultDir(q.memoryDir, lookup); err != nil {
		return nil, fmt.Errorf("review queue of %s: %w", q.memoryDir, err)
	}
	return q, nil
}

// Open opens the memory directory at dir with its review queue as its
// guard: the usual way to open a directory that automatic writers use.
// opts.Guard is replaced; the queue takes opts' clock, environment, logger
// and the directory's journal.
func Open(dir string, opts *memdir.Options, qopts *Options) (*memdir.Dir, *Queue, error) {
	var o memdir.Options
	if opts != nil {
		o = *opts
	}
	var qo Options
	if qopts != nil {
		qo = *qopts
	}
	if qo.Now == nil {
		qo.Now = o.Now
	}
	if qo.LookupEnv == nil {
		qo.LookupEnv = o.LookupEnv
	}
	if qo.Logger == nil {
		qo.Logger = o.Logger
	}
	q, err := New(dir, &qo)
	if err != nil {
		return nil, nil, err
	}
	o.Guard = q
	d, err := memdir.Open(dir, &o)
	if err != nil {
		return nil, nil, err
	}
	if qopts == nil || qopts.Journal == nil {
		q.journal = d.Journal()
	}
	return d, q, nil
}

// Dir returns the directory of the queue.
func (q *Queue) Dir() string { return q.dir }

// Screen implements memdir.Guard: a suspicious write is held and its
// *HeldError returned.
func (q *Queue) Screen(w *memdir.GuardedWrite) error {
	held, err := q.holdIfSuspicious(w.Path, w.Op, w.Old, w.Created, w.Content, w.Origin)
	if err != nil {
		return err
	}
	if held != nil {
		return held
	}
	return nil
}

// ScreenWrite screens content that an automatic writer is about to put at
// rel (a memory-tool or sync write of a whole file) and, when it is
// suspicious, holds it: the returned *HeldError says so and nothing must be
// written. existed and old describe the file as it is now. A nil error means
// the write may go ahead. Writes by ByUser are never held.
func (q *Queue) ScreenWrite(rel string, old []byte, existed bool, content []byte, origin *memdir.Provenance) error {
	if !origin.Automatic() {
		return nil
	}
	if !existed {
		old = nil
	}
	return q.Screen(&memdir.GuardedWrite{Path: rel, Op: "write", Old: old, Created: !existed, Content: content, Origin: origin})
}

// holdIfSuspicious screens content and, when it is flagged, writes a
// pending review item and returns its HeldError.
func (q *Queue) holdIfSuspicious(rel, op string, old []byte, created bool, content []byte, origin *memdir.Provenance) (*HeldError, error) {
	findings := screen.Check(string(content))
	if len(findings) == 0 {
		return nil, nil
	}
	// The same write held again (a sync pull retries every time, a model
	// repeats a refused call) is not queued twice. Saves stamp provenance
	// with the time, so the record is left out of the comparison.
	pending, _ := q.List(false)
	key := withoutProvenance(content)
	for _, it := range pending {
		if it.Path == rel && withoutProvenance([]byte(it.Content)) == key {
			return &HeldError{ID: it.ID, Path: rel, Findings: it.Findings}, nil
		}
	}
	id, err := newID(q.now())
	if err != nil {
		return nil, err
	}
	it := &HeldWrite{ID: id, Path: rel, Op: op, Content: string(content), Existed: !created, Provenance: origin.Stamped(q.now()),
		Findings: findings, State: Pending, Queued: q.now().UTC()}
	if !created {
		it.BaseSum = memfile.ContentSum(old)
	}
	if err := q.write(it); err != nil {
		return nil, fmt.Errorf("hold write to %s for review: %w", rel, err)
	}
	q.log.Debug("held write for review", "path", rel, "id", id, "findings", len(findings))
	return &HeldError{ID: id, Path: rel, Findings: findings}, nil
}

// withoutProvenance returns content with its provenance record taken out
// of the frontmatter, as memdir formats it (both sides of a comparison go
// through it); content without a readable frontmatter is returned as it is.
func withoutProvenance(content []byte) string {
	m, prob := memdir.ParseMemory(content)
	if prob != nil || !m.HasFrontmatter() {
		return string(content)
	}
	m.SetProvenance(nil)
	return string(m.Format())
}

func newID(now time.Time) (string, error) {
	var b [3]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return "r" + now.UTC().Format("20060102-150405") + "-" + hex.EncodeToString(b[:]), nil
}

func validID(id string) bool {
	if id == "" || len(id) > 64 {
		return false
	}
	for _, c := range id {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

func (q *Queue) itemPath(id string) string { return filepath.Join(q.dir, id+".json") }

func (q *Queue) write(it *HeldWrite) error {
	if err := atomicfile.MkdirAll(q.dir, 0o700); err != nil {
		return err
	}
	data, err := json.MarshalIndent(it, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(q.itemPath(it.ID), append(data, '\n'), 0o600)
}

func (q *Queue) lock(ctx context.Context) (*flock.Lock, error) {
	if err := atomicfile.MkdirAll(q.dir, 0o700); err != nil {
		return nil, err
	}
	return flock.Acquire(ctx, filepath.Join(q.dir, ".lock"))
}

// List lists the queue, oldest first. With all false only pending items
// are listed. Unreadable item files are reported in errs, naming the file,
// and skipped.
func (q *Queue) List(all bool) (items []*HeldWrite, errs []error) {
	ents, err := os.ReadDir(q.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, []error{err}
	}
	for _, e := range ents {
		name := e.Name()
		if !strings.HasSuffix(name, ".json") || !validID(strings.TrimSuffix(name, ".json")) {
			continue
		}
		it, err := q.read(strings.TrimSuffix(name, ".json"))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if all || it.State == Pending {
			items = append(items, it)
		}
	}
	slices.SortFunc(items, func(a, b *HeldWrite) int {
		if c := a.Queued.Compare(b.Queued); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return items, errs
}

// Get returns one item (memdir.ErrNotFound when there is none).
func (q *Queue) Get(id string) (*HeldWrite, error) {
	if !validID(id) {
		return nil, fmt.Errorf("review item %q: not a review id: %w", id, memdir.ErrNotFound)
	}
	return q.read(id)
}

func (q *Queue) read(id string) (*HeldWrite, error) {
	p := q.itemPath(id)
	data, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("review item %s: no such item in %s: %w", id, q.dir, memdir.ErrNotFound)
	}
	if err != nil {
		return nil, err
	}
	var it HeldWrite
	if err := json.Unmarshal(data, &it); err != nil {
		return nil, fmt.Errorf("review item %s: %w", p, err)
	}
	if it.ID != id {
		return nil, fmt.Errorf("review item %s: id field %q does not match the file name", p, it.ID)
	}
	q.checkUndone(&it)
	return &it, nil
}

// maxUndoChain bounds how far checkUndone follows undos of undos.
const maxUndoChain = 64

// checkUndone makes an accepted item pending again when the journal says
// its run was undone: the run's UndoneBy names the undo, whose own UndoneBy
// names a redo, and so on, so an odd chain of undos leaves the write out
// of memory. A run the journal no longer has leaves the item as it is.
func (q *Queue) checkUndone(it *HeldWrite) {
	if it.State != Accepted || it.RunID == "" || q.journal == nil {
		return
	}
	undone, by, id := false, "", it.RunID
	for range maxUndoChain {
		run, err := q.journal.Run(id)
		if err != nil || run.ID != id || run.UndoneBy == "" {
			break
		}
		undone, id = !undone, run.UndoneBy
		if undone {
			by = id
		}
	}
	if undone {
		it.State, it.UndoneBy, it.Decided = Pending, by, nil
	}
}

// decide loads a pending item (an accepted one whose run was undone
// included) under the queue lock and hands it to fn, then saves the state
// fn left.
func (q *Queue) decide(ctx context.Context, id string, fn func(it *HeldWrite) error) (*HeldWrite, error) {
	if !validID(id) {
		return nil, fmt.Errorf("review item %q: not a review id: %w", id, memdir.ErrNotFound)
	}
	l, err := q.lock(ctx)
	if err != nil {
		return nil, err
	}
	defer l.Unlock()
	it, err := q.read(id)
	if err != nil {
		return nil, err
	}
	if it.State != Pending {
		return it, fmt.Errorf("review item %s was already %s: %w", id, it.State, memdir.ErrExists)
	}
	if err := fn(it); err != nil {
		return it, err
	}
	t := q.now().UTC()
	it.Decided = &t
	return it, q.write(it)
}

// Reject marks a held write rejected. Nothing is written to memory; the
// item is kept as a record.
func (q *Queue) Reject(ctx context.Context, id string) (*HeldWrite, error) {
	return q.decide(ctx, id, func(it *HeldWrite) error {
		// The record of an undone accept, if any, goes: the journal keeps it.
		it.State, it.RunID, it.UndoneBy = Rejected, "", ""
		return nil
	})
}

// Accept performs a held write in d, the queue's memory directory,
// journaled as a run of kind "review-accept" that Undo reverses. It fails
// with ErrExists (exit 5) when the file changed since the write was held;
// the item stays pending.
func (q *Queue) Accept(ctx context.Context, d *memdir.Dir, id string) (*HeldWrite, error) {
	if filepath.Clean(d.Path()) != q.memoryDir {
		return nil, fmt.Errorf("accept review item %s: the queue belongs to %s, not %s: %w", id, q.memoryDir, d.Path(), memdir.ErrInvalid)
	}
	return q.decide(ctx, id, func(it *HeldWrite) error {
		base := ""
		if it.Existed {
			base = it.BaseSum
		}
		run, err := d.Change(ctx, "review-accept", nil, func(rec *memdir.Recorder) error {
			rec.SetSummary("accept held write " + it.ID + " to " + it.Path)
			return q.acceptWrite(ctx, d, it, base, rec)
		})
		if err != nil {
			return err
		}
		it.State, it.RunID, it.UndoneBy = Accepted, "", ""
		if run != nil {
			it.RunID = run.ID
		}
		return nil
	})
}

// acceptWrite performs the write of it, under the directory lock that rec's
// Change holds: the file must still have the content base had.
func (q *Queue) acceptWrite(ctx context.Context, d *memdir.Dir, it *HeldWrite, base string, rec *memdir.Recorder) error {
	rel, err := cleanHeldPath(it.Path)
	if err != nil {
		return err
	}
	root, err := os.OpenRoot(d.Path())
	if err != nil {
		return fmt.Errorf("memory directory %s: %w", d.Path(), err)
	}
	defer root.Close()
	old, _, err := memfile.ReadRooted(root, rel, memdir.MaxMemoryFileBytes)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("accept held write to %s: %w", rel, err)
	}
	if err := checkBase(rel, old, base); err != nil {
		return err
	}
	m, prob := memdir.ParseMemory([]byte(it.Content))
	isIndex := path.Base(rel) == memdir.EntrypointName
	// A pulled entry is written exactly as the server has it, so the next
	// pull finds the two equal; other memories are saved as such, so their
	// MEMORY.md line is written too.
	synced := it.Provenance != nil && it.Provenance.By == memdir.BySync
	if !synced && !isIndex && prob == nil && m.HasFrontmatter() && strings.TrimSpace(m.Name) != "" && strings.TrimSpace(m.Description) != "" {
		m.Path = rel
		_, err := d.Save(ctx, m, &memdir.SaveOptions{Recorder: rec, Origin: it.Provenance, Screened: true})
		return err
	}
	if err := rec.Before(rel); err != nil {
		return err
	}
	if dir := path.Dir(rel); dir != "." {
		if err := root.MkdirAll(dir, 0o700); err != nil {
			return fmt.Errorf("accept held write to %s: %w", rel, err)
		}
	}
	content := []byte(it.Content)
	if it.Provenance != nil && !isIndex && !synced {
		content, _ = memdir.StampProvenance(content, it.Provenance)
	}
	if err := atomicfile.WriteFileIn(root, rel, content, 0o600); err != nil {
		return err
	}
	if synced && !isIndex {
		// Kept outside, as the pull itself would have: the file stays the
		// server's byte for byte.
		return q.RecordProvenance(rel, content, it.Provenance)
	}
	return nil
}

func checkBase(rel string, old []byte, base string) error {
	cur := ""
	if old != nil {
		cur = memfile.ContentSum(old)
	}
	if cur != base {
		return fmt.Errorf("%s changed after the write was held for review; look at both and save by hand, or reject the held write: %w", rel, memdir.ErrExists)
	}
	return nil
}

// cleanHeldPath checks the path of a held write: a memory's, or a
// directory's MEMORY.md (a sync pull holds an index like any entry), held
// to the same rules as a memory in that directory.
func cleanHeldPath(p string) (string, error) {
	if path.Base(p) != memdir.EntrypointName {
		return memdir.CleanMemoryFilePath(p)
	}
	dir, err := memdir.CleanMemoryFilePath(path.Join(path.Dir(p), "x.md"))
	if err != nil {
		return "", fmt.Errorf("held index %q: %w", p, err)
	}
	return path.Join(path.Dir(dir), memdir.EntrypointName), nil
}

// ShowHidden replaces the characters a terminal or a page would not show, or
// that reorder a line (zero-width, bidirectional, tag and control
// characters, NUL included), with <U+XXXX>, so a person reviewing a held
// write sees what a model would read. Tabs and newlines are kept.
func ShowHidden(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r == '\t' || r == '\n' || r >= ' ' && r != 0x7F && !hiddenRune(r) {
			b.WriteRune(r)
			continue
		}
		fmt.Fprintf(&b, "<U+%04X>", r)
	}
	return b.String()
}

func hiddenRune(r rune) bool {
	return r == 0x200B || r == 0x200C || r == 0x200D || r == 0xFEFF || r == 0x180E || r == 0xAD ||
		r >= 0x2060 && r <= 0x2064 || r >= 0x202A && r <= 0x202E || r >= 0x2066 && r <= 0x2069 ||
		r >= 0xE0000 && r <= 0xE007F || r >= 0xE0100 && r <= 0xE01EF || r >= 0x80 && r < 0xA0
}
