package memdir

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/memdir/memdir/internal/atomicfile"
	"github.com/memdir/memdir/internal/flock"
	"github.com/memdir/memdir/internal/memfile"
	"github.com/memdir/memdir/screen"
)

// The review queue holds writes that screening flagged, made by an automatic
// writer (extraction, dream, sync pull, an agent's tool call). It lives
// outside the memory directory, under the state directory
// (<StateDir>/review/<SanitizePath(dir)>/<id>.json), so nothing in it is
// ever loaded into a model's context. A person lists the items, then accepts
// one (the write is performed, journaled, and can be undone like any other)
// or rejects it (the item is kept, marked rejected, so there is a record).

// Review item states.
const (
	ReviewPending  = "pending"
	ReviewAccepted = "accepted"
	ReviewRejected = "rejected"
)

// ErrHeld is matched (errors.Is) by a *HeldError.
var ErrHeld = errors.New("held for review")

// HeldError is returned when a write was put in the review queue instead of
// into memory.
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
	return fmt.Sprintf("write to %s held for review as %s: the content looks like a prompt injection (%s); a person can run 'memdir review show %s', then accept or reject it",
		e.Path, e.ID, strings.Join(rules, ", "), e.ID)
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
	Provenance *Provenance      `json:"provenance"`
	Findings   []screen.Finding `json:"findings"`
	State      string           `json:"state"`
	Queued     time.Time        `json:"queued"`
	Decided    *time.Time       `json:"decided,omitempty"`
	// RunID is the journal run of an accepted write.
	RunID string `json:"run_id,omitempty"`
}

// DefaultReviewDir returns where the review queue of a memory directory
// lives: <StateDir>/review/<SanitizePath(dir)>.
func DefaultReviewDir(memoryDir string, lookup LookupEnvFunc) (string, error) {
	return statePath(lookup, "review", memoryDir, "")
}

func reviewDirFor(dir string, opts *Options) (string, error) {
	if opts.ReviewDir != "" {
		return filepath.Abs(opts.ReviewDir)
	}
	lookup := opts.LookupEnv
	if lookup == nil {
		lookup = os.LookupEnv
	}
	return DefaultReviewDir(dir, lookup)
}

// ReviewDir returns the directory of the review queue.
func (d *Dir) ReviewDir() string { return d.review }

func checkBase(rel string, old []byte, base *string) error {
	if base == nil {
		return nil
	}
	cur := ""
	if old != nil {
		cur = memfile.ContentSum(old)
	}
	if cur != *base {
		return fmt.Errorf("%s changed after the write was held for review; look at both and save by hand, or reject the held write: %w", rel, ErrExists)
	}
	return nil
}

// cloneFront gives the memory its own copy of the frontmatter's top-level
// list, so setting a key does not change the Memory it was copied from.
func (m *Memory) cloneFront() {
	if m.front == nil {
		return
	}
	n := *m.front
	n.Content = slices.Clone(m.front.Content)
	m.front = &n
}

// ScreenWrite screens content that an automatic writer is about to put at
// rel (a memory-tool or sync write of a whole file) and, when it is
// suspicious, holds it: the returned *HeldError says so and nothing must be
// written. existed and old describe the file as it is now. A nil error means
// the write may go ahead. Writes by ByUser are never held.
func (d *Dir) ScreenWrite(rel string, old []byte, existed bool, content []byte, origin *Provenance) error {
	if !origin.Automatic() {
		return nil
	}
	if !existed {
		old = nil
	}
	held, err := d.holdIfSuspicious(rel, "write", old, !existed, content, origin)
	if err != nil {
		return err
	}
	if held != nil {
		return held
	}
	return nil
}

// holdIfSuspicious screens content and, when it is flagged, writes a
// pending review item and returns its HeldError.
func (d *Dir) holdIfSuspicious(rel, op string, old []byte, created bool, content []byte, origin *Provenance) (*HeldError, error) {
	findings := screen.Check(string(content))
	if len(findings) == 0 {
		return nil, nil
	}
	// The same write held again (a sync pull retries every time, a model
	// repeats a refused call) is not queued twice. Saves stamp provenance
	// with the time, so the record is left out of the comparison.
	pending, _ := d.HeldWrites(false)
	key := withoutProvenance(content)
	for _, it := range pending {
		if it.Path == rel && withoutProvenance([]byte(it.Content)) == key {
			return &HeldError{ID: it.ID, Path: rel, Findings: it.Findings}, nil
		}
	}
	id, err := newReviewID(d.now())
	if err != nil {
		return nil, err
	}
	it := &HeldWrite{ID: id, Path: rel, Op: op, Content: string(content), Existed: !created, Provenance: origin.stamped(d.now),
		Findings: findings, State: ReviewPending, Queued: d.now().UTC()}
	if !created {
		it.BaseSum = memfile.ContentSum(old)
	}
	if err := d.writeReview(it); err != nil {
		return nil, fmt.Errorf("hold write to %s for review: %w", rel, err)
	}
	d.log.Debug("held write for review", "path", rel, "id", id, "findings", len(findings))
	return &HeldError{ID: id, Path: rel, Findings: findings}, nil
}

// withoutProvenance returns content with its provenance record taken out
// of the frontmatter, as memdir formats it (both sides of a comparison go
// through it); content without a readable frontmatter is returned as it is.
func withoutProvenance(content []byte) string {
	m, prob := ParseMemory(content)
	if prob != nil || !m.HasFrontmatter() {
		return string(content)
	}
	m.SetProvenance(nil)
	return string(m.Format())
}

func newReviewID(now time.Time) (string, error) {
	var b [3]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return "r" + now.UTC().Format("20060102-150405") + "-" + hex.EncodeToString(b[:]), nil
}

func validReviewID(id string) bool {
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

func (d *Dir) reviewPath(id string) string { return filepath.Join(d.review, id+".json") }

func (d *Dir) writeReview(it *HeldWrite) error {
	if err := atomicfile.MkdirAll(d.review, 0o700); err != nil {
		return err
	}
	data, err := json.MarshalIndent(it, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(d.reviewPath(it.ID), append(data, '\n'), 0o600)
}

func (d *Dir) lockReview(ctx context.Context) (*flock.Lock, error) {
	if err := atomicfile.MkdirAll(d.review, 0o700); err != nil {
		return nil, err
	}
	return flock.Acquire(ctx, filepath.Join(d.review, ".lock"))
}

// HeldWrites lists the queue, oldest first. With all false only pending
// items are listed. Unreadable item files are reported in errs, naming the
// file, and skipped.
func (d *Dir) HeldWrites(all bool) (items []*HeldWrite, errs []error) {
	ents, err := os.ReadDir(d.review)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, []error{err}
	}
	for _, e := range ents {
		name := e.Name()
		if !strings.HasSuffix(name, ".json") || !validReviewID(strings.TrimSuffix(name, ".json")) {
			continue
		}
		it, err := d.readReview(strings.TrimSuffix(name, ".json"))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if all || it.State == ReviewPending {
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

// HeldWrite returns one item (ErrNotFound when there is none).
func (d *Dir) HeldWrite(id string) (*HeldWrite, error) {
	if !validReviewID(id) {
		return nil, fmt.Errorf("review item %q: not a review id: %w", id, ErrNotFound)
	}
	return d.readReview(id)
}

func (d *Dir) readReview(id string) (*HeldWrite, error) {
	p := d.reviewPath(id)
	data, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("review item %s: no such item in %s: %w", id, d.review, ErrNotFound)
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
	return &it, nil
}

// decide loads a pending item under the queue lock and hands it to fn,
// then saves the state fn left.
func (d *Dir) decide(ctx context.Context, id string, fn func(it *HeldWrite) error) (*HeldWrite, error) {
	if !validReviewID(id) {
		return nil, fmt.Errorf("review item %q: not a review id: %w", id, ErrNotFound)
	}
	l, err := d.lockReview(ctx)
	if err != nil {
		return nil, err
	}
	defer l.Unlock()
	it, err := d.readReview(id)
	if err != nil {
		return nil, err
	}
	if it.State != ReviewPending {
		return it, fmt.Errorf("review item %s was already %s: %w", id, it.State, ErrExists)
	}
	if err := fn(it); err != nil {
		return it, err
	}
	t := d.now().UTC()
	it.Decided = &t
	return it, d.writeReview(it)
}

// RejectHeld marks a held write rejected. Nothing is written to memory;
// the item is kept as a record.
func (d *Dir) RejectHeld(ctx context.Context, id string) (*HeldWrite, error) {
	return d.decide(ctx, id, func(it *HeldWrite) error {
		it.State = ReviewRejected
		return nil
	})
}

// AcceptHeld performs a held write, journaled as a run of kind
// "review-accept" that Undo reverses. It fails with ErrExists (exit 5)
// when the file changed since the write was held; the item stays pending.
func (d *Dir) AcceptHeld(ctx context.Context, id string) (*HeldWrite, error) {
	return d.decide(ctx, id, func(it *HeldWrite) error {
		base := ""
		if it.Existed {
			base = it.BaseSum
		}
		rec, err := d.journal.Begin("review-accept", d.path)
		if err != nil {
			return err
		}
		rec.SetSummary("accept held write " + it.ID + " to " + it.Path)
		err = d.acceptWrite(ctx, it, base, rec)
		run, ferr := rec.Finish(err)
		if err == nil && ferr != nil {
			err = ferr
		}
		if err != nil {
			return err
		}
		it.State = ReviewAccepted
		if run != nil {
			it.RunID = run.ID
		}
		return nil
	})
}

func (d *Dir) acceptWrite(ctx context.Context, it *HeldWrite, base string, rec *Recorder) error {
	rel, err := cleanHeldPath(it.Path)
	if err != nil {
		return err
	}
	m, prob := ParseMemory([]byte(it.Content))
	isIndex := path.Base(rel) == "MEMORY.md"
	// A pulled entry is written exactly as the server has it, so the next
	// pull finds the two equal; other memories are saved as such, so their
	// MEMORY.md line is written too.
	synced := it.Provenance != nil && it.Provenance.By == BySync
	if !synced && !isIndex && prob == nil && m.HasFrontmatter() && strings.TrimSpace(m.Name) != "" && strings.TrimSpace(m.Description) != "" {
		m.Path = rel
		_, err := d.Save(ctx, m, &SaveOptions{Recorder: rec, Origin: it.Provenance, reviewed: true, baseSum: &base})
		return err
	}
	root, release, err := d.lockedRoot(ctx, nil)
	if err != nil {
		return err
	}
	defer release()
	old, _, err := memfile.ReadRooted(root, rel, MaxMemoryFileBytes)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("accept held write to %s: %w", rel, err)
	}
	if err := checkBase(rel, old, &base); err != nil {
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
		content, _ = StampProvenance(content, it.Provenance)
	}
	if err := atomicfile.WriteFileIn(root, rel, content, 0o600); err != nil {
		return err
	}
	if synced && !isIndex {
		// Kept outside, as the pull itself would have: the file stays the
		// server's byte for byte.
		return d.RecordProvenance(rel, content, it.Provenance)
	}
	return nil
}

// cleanHeldPath checks the path of a held write: a memory's, or a
// directory's MEMORY.md (a sync pull holds an index like any entry), held
// to the same rules as a memory in that directory.
func cleanHeldPath(p string) (string, error) {
	if path.Base(p) != EntrypointName {
		return CleanMemoryFilePath(p)
	}
	dir, err := CleanMemoryFilePath(path.Join(path.Dir(p), "x.md"))
	if err != nil {
		return "", fmt.Errorf("held index %q: %w", p, err)
	}
	return path.Join(path.Dir(dir), EntrypointName), nil
}

// WriteGuard returns a hook for writers of whole files (memtool.Options.Write,
// agent.Options.Write): it screens the new content of rel and, for an
// automatic origin, holds a suspicious write (the hook returns the
// *HeldError and nothing is written); otherwise it returns the content with
// origin recorded in its frontmatter (files without frontmatter, such as
// MEMORY.md, are returned unchanged). old is the file's current content,
// nil when it does not exist.
func (d *Dir) WriteGuard(origin *Provenance) func(rel string, old, content []byte) ([]byte, error) {
	return func(rel string, old, content []byte) ([]byte, error) {
		if err := d.ScreenWrite(rel, old, old != nil, content, origin); err != nil {
			return nil, err
		}
		if origin != nil && path.Base(rel) != "MEMORY.md" {
			if out, ok := StampProvenance(content, origin.stamped(d.now)); ok {
				return out, nil
			}
		}
		return content, nil
	}
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
