package promote

// Applying a saved report: the items the user picks, as one journal run.

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/internal/mdtext"
	"github.com/memdir/memdir/internal/memfile"
)

// NoItemError reports an item id the review does not have. It wraps
// memdir.ErrNotFound.
type NoItemError struct{ ID string }

func (e *NoItemError) Error() string {
	return fmt.Sprintf("apply: the review has no item %q: %v", e.ID, memdir.ErrNotFound)
}

func (e *NoItemError) Unwrap() error { return memdir.ErrNotFound }

// ApplyOptions adjust Apply.
type ApplyOptions struct {
	// KeepMemory keeps a memory promoted to CLAUDE.md or CLAUDE.local.md
	// instead of removing it once its rule is written.
	KeepMemory bool
}

// AppliedItem says what applying one item did.
type AppliedItem struct {
	ID   string `json:"id"`
	Kind Kind   `json:"kind"`
	// Done describes the change for a person.
	Done string `json:"done"`
	// RunIDs holds the one journal run of the whole apply, which undoes
	// every item of it (empty when nothing changed).
	RunIDs []string `json:"run_ids"`
}

// Apply carries out the report's items named by ids, in the order
// given, on d, the review's memory directory:
//
//   - to-claude-md / to-claude-local-md: the rule is appended to the file as
//     a list item (the file is created if missing), then the memory is
//     removed (unless KeepMemory);
//   - to-team: the memory moves to team/ with its index line (Dir.Rename);
//   - cleanup items: the memory named by Remove is removed (Dir.Remove).
//
// Before anything changes, every id must name an applicable item and every
// memory involved must still hold what the review read; otherwise nothing
// is applied. All the items are one run of d's journal (instruction files
// recorded where they are, outside the directory), so one Dir.Undo reverts
// the whole apply. A failure part-way returns what was applied so far with
// the error; the run records it too.
func Apply(ctx context.Context, d *memdir.Dir, rep *Report, ids []string, opts *ApplyOptions) ([]AppliedItem, error) {
	if opts == nil {
		opts = &ApplyOptions{}
	}
	if len(ids) == 0 {
		return nil, fmt.Errorf("apply: no item ids given: %w", memdir.ErrInvalid)
	}
	if filepath.Clean(rep.Sources.MemoryDir) != d.Path() {
		return nil, fmt.Errorf("apply: the review is of %s, not %s: %w", rep.Sources.MemoryDir, d.Path(), memdir.ErrInvalid)
	}
	var todo []*Item
	seen := map[string]bool{}
	for _, id := range ids {
		it, ok := rep.Item(id)
		if !ok {
			return nil, &NoItemError{ID: id}
		}
		if !it.Applicable {
			return nil, fmt.Errorf("apply %s: a %s item is for you to decide; memdir cannot carry it out: %w", it.ID, it.Kind, memdir.ErrInvalid)
		}
		if seen[it.ID] {
			continue
		}
		seen[it.ID] = true
		if err := checkApplicable(rep.Sources, it); err != nil {
			return nil, fmt.Errorf("apply %s: %w", it.ID, err)
		}
		for _, s := range it.Subjects {
			if s.Path == "" || s.Sum == "" {
				continue
			}
			cur, err := memfile.HashFile(d.Abs(s.Path))
			if err != nil {
				return nil, fmt.Errorf("apply %s: %w", it.ID, err)
			}
			if cur != s.Sum {
				return nil, fmt.Errorf("apply %s: %s changed (or went) since the review; run the review again: %w", it.ID, s.Path, memdir.ErrExists)
			}
		}
		todo = append(todo, it)
	}
	// All the items are one journal run, which records the instruction
	// files outside the directory beside the memories, so one undo
	// reverts the whole apply.
	rec, err := d.Journal().Begin("promote", d.Path())
	if err != nil {
		return nil, fmt.Errorf("apply: journal: %w", err)
	}
	// The indexes are journaled whole, so the undo puts every line back
	// where it was rather than appending the removed ones.
	for _, ix := range []string{memdir.EntrypointName, memdir.TeamDirName + "/" + memdir.EntrypointName} {
		if err := rec.Before(ix, overflowFor(ix)); err != nil {
			rec.Finish(err)
			return nil, fmt.Errorf("apply: %w", err)
		}
	}
	var done []AppliedItem
	var summary []string
	for _, it := range todo {
		a, aerr := applyItem(ctx, d, rec, it, opts)
		if aerr != nil {
			err = fmt.Errorf("apply %s: %w", it.ID, aerr)
			break
		}
		done = append(done, a)
		summary = append(summary, it.ID+": "+a.Done)
	}
	rec.SetSummary("promote " + strings.Join(summary, "; "))
	run, ferr := rec.Finish(err)
	if err == nil {
		err = ferr
	}
	if run != nil && run.HasChanges() {
		for i := range done {
			done[i].RunIDs = []string{run.ID}
		}
	}
	return done, err
}

// checkApplicable makes sure a saved item can only do what a review
// proposes: append to the project's CLAUDE.md, .claude/CLAUDE.md or
// CLAUDE.local.md, move a private memory into team/, or remove a private
// memory. A report file edited by hand cannot point it anywhere else.
func checkApplicable(src Sources, it *Item) error {
	bad := func(what string) error {
		return fmt.Errorf("the saved review names %s; run the review again: %w", what, memdir.ErrInvalid)
	}
	if len(it.Subjects) == 0 {
		return bad("no memory")
	}
	switch it.Kind {
	case KindToClaudeMD, KindToLocal:
		root := filepath.Clean(src.ProjectRoot)
		allowed := map[string]bool{filepath.Join(root, "CLAUDE.md"): true, filepath.Join(root, ".claude", "CLAUDE.md"): true}
		if it.Kind == KindToLocal {
			allowed = map[string]bool{filepath.Join(root, "CLAUDE.local.md"): true}
		}
		if !allowed[filepath.Clean(it.Target)] {
			return bad(fmt.Sprintf("%q as the file to add a rule to", it.Target))
		}
		if p, err := memdir.CleanMemoryFilePath(it.Subjects[0].Path); err != nil || strings.HasPrefix(p, memdir.TeamDirName+"/") {
			return bad(fmt.Sprintf("%q as the memory to promote", it.Subjects[0].Path))
		}
	case KindToTeam:
		if p, err := memdir.CleanMemoryFilePath(it.Target); err != nil || !strings.HasPrefix(p, memdir.TeamDirName+"/") {
			return bad(fmt.Sprintf("%q as the team path", it.Target))
		}
	default:
		if p, err := memdir.CleanMemoryFilePath(it.Remove); err != nil || strings.HasPrefix(p, memdir.TeamDirName+"/") {
			return bad(fmt.Sprintf("%q as the memory to remove", it.Remove))
		}
	}
	return nil
}

func applyItem(ctx context.Context, d *memdir.Dir, rec *memdir.Recorder, it *Item, opts *ApplyOptions) (AppliedItem, error) {
	a := AppliedItem{ID: it.ID, Kind: it.Kind, RunIDs: []string{}}
	subject := it.Subjects[0]
	switch it.Kind {
	case KindToClaudeMD, KindToLocal:
		rule := mdtext.OneLine(it.Rule)
		if err := rec.EditExternalFile(ctx, it.Target, func(old []byte, exists bool) ([]byte, error) {
			return appendRule(old, rule), nil
		}); err != nil {
			return a, err
		}
		a.Done = "added the rule to " + it.Target
		if opts.KeepMemory {
			return a, nil
		}
		if _, err := d.Remove(ctx, subject.Path, &memdir.RemoveOptions{Recorder: rec}); err != nil {
			return a, err
		}
		a.Done += " and removed " + subject.Path
	case KindToTeam:
		res, err := d.Rename(ctx, subject.Path, it.Target, &memdir.RenameOptions{Recorder: rec})
		if err != nil {
			return a, err
		}
		a.Done = "moved " + res.From + " to " + res.To
	default:
		if it.Remove == "" {
			return a, fmt.Errorf("nothing to remove: %w", memdir.ErrInvalid)
		}
		if _, err := d.Remove(ctx, it.Remove, &memdir.RemoveOptions{Recorder: rec}); err != nil {
			return a, err
		}
		a.Done = "removed " + it.Remove
	}
	return a, nil
}

// appendRule adds "- rule" as the last line of an instruction file, leaving
// one blank line after prose and none inside a list.
func appendRule(old []byte, rule string) []byte {
	text := string(old)
	var b strings.Builder
	b.WriteString(text)
	if text != "" && !strings.HasSuffix(text, "\n") {
		b.WriteByte('\n')
	}
	trimmed := strings.TrimRight(text, "\n")
	last := trimmed[strings.LastIndexByte(trimmed, '\n')+1:]
	if trimmed != "" && !listItemRe().MatchString(last) && !strings.HasSuffix(text, "\n\n") {
		b.WriteByte('\n')
	}
	b.WriteString("- " + rule + "\n")
	return []byte(b.String())
}
