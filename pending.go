package memdir

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/memdir/memdir/internal/memfile"
)

// PendingName is the file in a memory directory that records a change to a
// memory and its MEMORY.md line while it is being made. Save, Remove and
// Rename write it under the directory lock before touching either file and
// remove it once both are written; if the process dies in between (SIGKILL,
// a crash), the next process to take the lock finishes the change from it
// (see Dir.WithLock), and doctor reports it until then. It is a dotfile, so
// Claude Code, scans and the memory tool never see it.
const PendingName = ".memdir-pending.json"

// pendingChange is the content of PendingName: what the pair of writes is
// to leave behind, so that it can be finished without the dead process.
type pendingChange struct {
	// Op is save, remove or rename.
	Op string `json:"op"`
	// Run is the journal run the change belongs to; finishing the change
	// closes that run, so 'memdir undo' reverts the whole change.
	Run string `json:"run,omitempty"`
	// Path is the memory (rename: its old path).
	Path string `json:"path"`
	// Sum is, for save, the sha256 of the content being written: the index
	// line is added only if the file holds it (the write happened).
	Sum string `json:"sum,omitempty"`
	// Index and Link are the MEMORY.md indexing Path and its link there.
	Index string `json:"index"`
	Link  string `json:"link"`
	// To, ToIndex and ToLink are rename's destination and its index.
	To      string `json:"to,omitempty"`
	ToIndex string `json:"to_index,omitempty"`
	ToLink  string `json:"to_link,omitempty"`
	// Line is the index line save or rename writes.
	Line string `json:"line,omitempty"`
	// Prior are Path's index lines before the change, for the journal
	// run's record (an undo restores them); the run's record on disk does
	// not have them yet when the change starts.
	Prior []string `json:"prior,omitempty"`
}

// crashHook, when set by a test, is called at each step of a change to a
// memory and its index line ("save:file", "remove:file", "rename:file": the
// memory file has been written, removed or moved, and the index not yet).
// A test panics in it to simulate the process dying there.
var crashHook func(step string)

func crashPoint(step string) {
	if crashHook != nil {
		crashHook(step)
	}
}

// beginPending records c before a change (the directory lock must be held).
//
// The record is written to a temporary file and renamed into place, so no
// process ever reads half of it, but it is not fsynced: it has to outlive
// the process that writes it (SIGKILL, a crash), not the machine, and two
// more fsyncs would double the cost of a save. After a power failure the
// record may be missing or empty; an empty one is ignored, and a missing one
// leaves what doctor repairs, as the memory file's own fsync does not order
// it with the index either.
func beginPending(root *os.Root, c *pendingChange) error {
	data, err := json.Marshal(c)
	if err != nil {
		return err
	}
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		return err
	}
	tmp := "." + PendingName[1:] + ".tmp-" + hex.EncodeToString(b[:])
	err = func() error {
		f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return err
		}
		_, err = f.Write(append(data, '\n'))
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = root.Rename(tmp, PendingName)
		}
		if err != nil {
			root.Remove(tmp)
		}
		return err
	}()
	if err != nil {
		return fmt.Errorf("record the change about to be made in %s: %w", PendingName, err)
	}
	return nil
}

// endPending removes the record once the change is made.
func endPending(root *os.Root) error {
	if err := root.Remove(PendingName); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove %s after the change: %w", PendingName, err)
	}
	return nil
}

// readPending returns the change recorded in the directory, or nil.
func readPending(root *os.Root) (*pendingChange, error) {
	data, _, err := memfile.ReadRooted(root, PendingName, 1<<20)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, nil // written but never flushed before a power failure
	}
	var c pendingChange
	if err := json.Unmarshal(data, &c); err != nil {
		return nil, fmt.Errorf("not valid JSON: %v", err)
	}
	for _, p := range []string{c.Path, c.Index, c.To, c.ToIndex} {
		if p != "" && !filepath.IsLocal(filepath.FromSlash(p)) {
			return nil, fmt.Errorf("path %q is outside the directory", p)
		}
	}
	switch {
	case c.Op == "save" || c.Op == "remove":
	case c.Op == "rename" && c.To != "" && c.ToIndex != "":
	default:
		return nil, fmt.Errorf("unknown change %q", c.Op)
	}
	if c.Path == "" || c.Index == "" || c.Link == "" {
		return nil, errors.New("no memory or index named")
	}
	return &c, nil
}

// PendingChange describes a change a killed process left half-made, as
// doctor reports it; "" when there is none.
func (d *Dir) PendingChange() (string, error) {
	if !d.Exists() {
		return "", nil
	}
	root, err := d.openRoot()
	if err != nil {
		return "", err
	}
	defer root.Close()
	c, err := readPending(root)
	if err != nil {
		return "", fmt.Errorf("%s: %w", d.Abs(PendingName), err)
	}
	if c == nil {
		return "", nil
	}
	what := c.Op + " " + c.Path
	if c.Op == "rename" {
		what += " → " + c.To
	}
	return what, nil
}

// finishPending completes the change a process that died holding the lock
// left recorded, if any, and closes its journal run (or, if that run is gone
// or already closed, journals the repair as a run of kind "recover"). The
// directory lock must be held. Finishing is idempotent: it only adds or
// removes the index lines the change was to leave, and only once the memory
// file shows the change happened; otherwise the change never started and
// only the record is removed.
func (d *Dir) finishPending(root *os.Root) error {
	c, err := readPending(root)
	if err != nil {
		return &PendingUnreadableError{Path: d.Abs(PendingName), Err: err}
	}
	if c == nil {
		return nil
	}
	exists := func(rel string) (bool, error) {
		_, err := root.Lstat(rel)
		if errors.Is(err, fs.ErrNotExist) {
			return false, nil
		}
		return err == nil, err
	}
	type edit struct {
		indexRel string
		apply    func(*Index) bool
	}
	var edits []edit
	switch c.Op {
	case "save":
		data, _, err := memfile.ReadRooted(root, c.Path, MaxMemoryFileBytes)
		if err == nil && memfile.ContentSum(data) == c.Sum {
			edits = append(edits, edit{c.Index, func(ix *Index) bool { return ix.Upsert(c.Link, c.Line) }})
		} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("finish the unfinished save of %s: %w", c.Path, err)
		}
	case "remove":
		ok, err := exists(c.Path)
		if err != nil {
			return fmt.Errorf("finish the unfinished removal of %s: %w", c.Path, err)
		}
		if !ok {
			edits = append(edits, edit{c.Index, func(ix *Index) bool { return len(ix.Remove(c.Link)) > 0 }})
		}
	case "rename":
		fromOK, err := exists(c.Path)
		if err != nil {
			return fmt.Errorf("finish the unfinished rename of %s: %w", c.Path, err)
		}
		toOK, err := exists(c.To)
		if err != nil {
			return fmt.Errorf("finish the unfinished rename of %s: %w", c.Path, err)
		}
		if !fromOK && toOK {
			edits = append(edits,
				edit{c.Index, func(ix *Index) bool { return len(ix.Remove(c.Link)) > 0 }},
				edit{c.ToIndex, func(ix *Index) bool { return ix.Upsert(c.ToLink, c.Line) }})
		}
	}

	rec, resumed := d.journal.resume(c.Run, d.path)
	if rec == nil {
		if rec, err = d.journal.Begin("recover", d.path); err != nil {
			return fmt.Errorf("finish the unfinished %s of %s: journal: %w", c.Op, c.Path, err)
		}
		rec.SetSummary("recover: finish the " + c.Op + " of " + c.Path + " a killed process left unfinished")
	}
	err = func() error {
		if !resumed {
			// A save of a new file records its run only when it finishes
			// (there is nothing to keep of a file that did not exist), so
			// a killed one left no run: the file it wrote is journaled
			// here as created by this change, and one undo removes both
			// the file and its index line.
			if c.Op == "save" && len(edits) > 0 {
				if err := rec.BeforeAbsent(c.Path); err != nil {
					return err
				}
				rec.NoteIndexLines(c.Path, c.Prior)
			}
			var rels []string
			for _, e := range edits {
				rels = append(rels, e.indexRel)
			}
			if err := rec.Before(rels...); err != nil {
				return err
			}
		}
		ixs := map[string]*Index{}
		var order []string
		for _, e := range edits {
			ix := ixs[e.indexRel]
			if ix == nil {
				if ix, err = d.readIndex(root, e.indexRel); err != nil {
					return err
				}
				ixs[e.indexRel] = ix
			}
			if e.apply(ix) && !containsString(order, e.indexRel) {
				order = append(order, e.indexRel)
			}
		}
		for _, indexRel := range order {
			if err := d.writeIndex(root, indexRel, ixs[indexRel]); err != nil {
				return err
			}
		}
		return nil
	}()
	if resumed {
		rec.NoteIndexLines(c.Path, c.Prior)
		if rec.run.Summary == "" {
			rec.SetSummary(c.Op + " " + c.Path)
		}
		rec.appendSummary(" (finished by a later memdir process after this one was killed)")
	}
	if _, ferr := rec.Finish(err); err == nil && ferr != nil {
		err = ferr
	}
	if err != nil {
		return fmt.Errorf("finish the unfinished %s of %s: %w", c.Op, c.Path, err)
	}
	d.log.Debug("finished a change a killed process left unfinished", "op", c.Op, "path", c.Path, "run", rec.ID())
	return endPending(root)
}

func containsString(list []string, s string) bool {
	return slices.Contains(list, s)
}

// resume reopens the open run id of a process that died, so that what is
// done now is recorded in it. It returns nil when there is no such open run
// over root.
func (j *Journal) resume(id, root string) (rec *Recorder, ok bool) {
	if id == "" || strings.ContainsAny(id, `/\`) {
		return nil, false
	}
	run, err := j.readRun(j.runPath(id))
	if err != nil || run.State != RunOpen || run.Root != root {
		return nil, false
	}
	rec = &Recorder{j: j, run: *run, idx: map[string]int{}, noted: map[string]bool{}}
	for i, f := range run.Files {
		rec.idx[f.Path] = i
		if f.IndexNoted {
			rec.noted[f.Path] = true
		}
	}
	return rec, true
}

// appendSummary adds to the run's one-line description.
func (r *Recorder) appendSummary(s string) {
	r.mu.Lock()
	r.run.Summary += s
	r.mu.Unlock()
}
