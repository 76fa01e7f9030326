package memdir

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/memdir/memdir/internal/atomicfile"
	"github.com/memdir/memdir/internal/memfile"
)

// FindingKind classifies what Check found.
type FindingKind string

// Finding kinds.
const (
	FindUnindexed       FindingKind = "unindexed"            // a memory with no MEMORY.md line
	FindDanglingLine    FindingKind = "dangling-index-line"  // a MEMORY.md line pointing at no file
	FindDuplicateLine   FindingKind = "duplicate-index-line" // several lines for one memory
	FindIndexOverLimit  FindingKind = "index-over-limit"     // agents do not see all of MEMORY.md
	FindLongIndexLine   FindingKind = "long-index-line"      // a line over ~200 characters
	FindFrontmatter     FindingKind = "frontmatter"          // missing, unclosed or broken frontmatter
	FindUntyped         FindingKind = "untyped"              // no type, or not one of the four
	FindNoDescription   FindingKind = "no-description"
	FindUnreadable      FindingKind = "unreadable" // unreadable or binary
	FindDuplicateMemory FindingKind = "duplicate-content"
	FindPermissions     FindingKind = "permissions"       // readable by group or others
	FindUnfinished      FindingKind = "unfinished-change" // a killed process left a memory and its index line out of step
)

// Finding is one thing Check found.
type Finding struct {
	Kind FindingKind `json:"kind"`
	// Path is the file concerned, relative to the directory.
	Path    string `json:"path"`
	Message string `json:"message"`
	// Fix says what Fix would do, "" when it leaves this to a person.
	// CompactOnly fixes happen only with FixOptions.Compact.
	Fix         string   `json:"fix,omitempty"`
	CompactOnly bool     `json:"compact_only,omitempty"`
	Related     []string `json:"related,omitempty"`
}

// CheckReport is what Check found.
type CheckReport struct {
	Dir      string    `json:"dir"`
	Memories int       `json:"memories"`
	Findings []Finding `json:"findings"`
}

// Check examines the directory for the problems that make Claude Code see
// less than is there: memories missing from MEMORY.md and lines pointing at
// nothing, an index over its load limits, broken or missing frontmatter,
// untyped memories, identical files, and files other users can read. It
// changes nothing.
func (d *Dir) Check(ctx context.Context) (*CheckReport, error) {
	rep := &CheckReport{Dir: d.path, Findings: []Finding{}}
	if !d.Exists() {
		return rep, nil
	}
	scan, err := d.Scan(ctx, &ScanOptions{Limit: -1})
	if err != nil {
		return nil, err
	}
	rep.Memories = scan.Total
	add := func(f Finding) { rep.Findings = append(rep.Findings, f) }

	what, err := d.PendingChange()
	if err != nil {
		add(Finding{Kind: FindUnfinished, Path: PendingName, Message: err.Error() + "; move it aside, then 'memdir doctor --fix' repairs the index from the files"})
	} else if what != "" {
		add(Finding{Kind: FindUnfinished, Path: PendingName, Message: "a memdir process was killed in the middle of " + what + ", so the memory and its index line may be out of step; the next change to the directory finishes it", Fix: "finish the " + what})
	}

	for _, p := range scan.Problems {
		switch p.Kind {
		case ProblemRead, ProblemBinary:
			add(Finding{Kind: FindUnreadable, Path: p.Path, Message: p.Message})
		case ProblemYAML:
			f := Finding{Kind: FindFrontmatter, Path: p.Path, Message: p.Message}
			if strings.Contains(p.Message, "after quoting") {
				f.Fix = "rewrite the frontmatter with its values quoted"
			}
			add(f)
		case ProblemUnclosed, ProblemNoFront:
			if !isDailyLog(p.Path) {
				add(Finding{Kind: FindFrontmatter, Path: p.Path, Message: p.Message})
			}
		case ProblemUntyped:
			add(Finding{Kind: FindUntyped, Path: p.Path, Message: p.Message})
		case ProblemDescription:
			add(Finding{Kind: FindNoDescription, Path: p.Path, Message: p.Message})
		}
	}

	for _, team := range []bool{false, true} {
		if err := d.checkIndex(team, scan.Memories, add); err != nil {
			return nil, err
		}
	}
	if err := d.checkDuplicates(scan.Memories, add); err != nil {
		return nil, err
	}
	checkNames(scan.Memories, rep.Findings, add)
	if err := d.checkPermissions(add); err != nil {
		return nil, err
	}
	if err := d.checkLeftovers(add); err != nil {
		return nil, err
	}
	d.checkAnchors(ctx, scan.Memories, add)
	sort.SliceStable(rep.Findings, func(i, j int) bool { return rep.Findings[i].Path < rep.Findings[j].Path })
	return rep, nil
}

// isDailyLog reports whether rel is an assistant-mode daily log, which is
// distilled by consolidation rather than indexed.
func isDailyLog(rel string) bool { return strings.HasPrefix(rel, "logs/") }

func (d *Dir) checkIndex(team bool, mems []Header, add func(Finding)) error {
	ix, err := d.ReadIndex(team)
	if err != nil {
		return err
	}
	indexRel := EntrypointName
	if team {
		indexRel = TeamDirName + "/" + EntrypointName
	}
	inArea := map[string]Header{}
	for _, h := range mems {
		ir, link := IndexFor(h.Path)
		if ir == indexRel && !isDailyLog(h.Path) {
			inArea[link] = h
		}
	}
	seen := map[string]int{}
	for _, e := range ix.Entries() {
		target := e.Path()
		if target == "" || strings.Contains(e.File, "://") {
			continue
		}
		seen[target]++
		if seen[target] == 2 {
			add(Finding{Kind: FindDuplicateLine, Path: indexRel, Message: fmt.Sprintf("line %d points at %s again", e.Line, target), Fix: "remove the repeated line"})
		}
		if _, ok := inArea[target]; !ok && seen[target] == 1 {
			rel := target
			if team {
				rel = TeamDirName + "/" + target
			}
			if _, err := os.Lstat(d.Abs(rel)); errors.Is(err, fs.ErrNotExist) {
				add(Finding{Kind: FindDanglingLine, Path: indexRel, Message: fmt.Sprintf("line %d points at %s, which does not exist", e.Line, target), Fix: "remove the line"})
			}
		}
	}
	// Lines compaction moved to the overflow file index their memories too.
	if oix, err := d.readIndexIfExists(overflowFor(indexRel)); err != nil {
		return err
	} else if oix != nil {
		oRel := overflowFor(indexRel)
		oseen := map[string]int{}
		for _, e := range oix.Entries() {
			target := e.Path()
			if target == "" || strings.Contains(e.File, "://") {
				continue
			}
			oseen[target]++
			seen[target]++
			if oseen[target] == 2 {
				add(Finding{Kind: FindDuplicateLine, Path: oRel, Message: fmt.Sprintf("line %d points at %s again", e.Line, target), Fix: "remove the repeated line"})
			}
			if _, ok := inArea[target]; !ok && oseen[target] == 1 {
				if _, err := os.Lstat(d.Abs(path.Join(path.Dir(oRel), target))); errors.Is(err, fs.ErrNotExist) {
					add(Finding{Kind: FindDanglingLine, Path: oRel, Message: fmt.Sprintf("line %d points at %s, which does not exist", e.Line, target), Fix: "remove the line"})
				}
			}
		}
	}
	links := make([]string, 0, len(inArea))
	for link := range inArea {
		links = append(links, link)
	}
	sort.Strings(links)
	for _, link := range links {
		if seen[link] == 0 {
			f := Finding{Kind: FindUnindexed, Path: inArea[link].Path, Message: "has no line in " + indexRel + ", so agents only find it by searching", Fix: "add a line to " + indexRel}
			if tooLarge(inArea[link]) {
				f.Fix = "" // reported as too-large; memdir does not read it
			}
			add(f)
		}
	}
	st := ix.Status()
	if st.Truncated() {
		add(Finding{Kind: FindIndexOverLimit, Path: indexRel, Message: st.Warning(), Fix: "compact: shorten long lines, drop repeated lines and blank runs, then move the lines of the least recently changed memories to " + overflowFor(indexRel), CompactOnly: true})
	}
	for _, e := range ix.Entries() {
		if n := len([]rune(ix.lines[e.Line-1])); n > 200 {
			add(Finding{Kind: FindLongIndexLine, Path: indexRel, Message: fmt.Sprintf("line %d is %d characters; index lines should stay under ~150", e.Line, n), Fix: "shorten its hook", CompactOnly: true})
		}
	}
	return nil
}

func (d *Dir) checkDuplicates(mems []Header, add func(Finding)) error {
	bySum := map[[32]byte][]string{}
	for _, h := range mems {
		if h.Size > MaxMemoryFileBytes {
			continue
		}
		data, err := os.ReadFile(h.AbsPath)
		if err != nil {
			continue // reported by the scan
		}
		s := sha256.Sum256(data)
		bySum[s] = append(bySum[s], h.Path)
	}
	for _, paths := range bySum {
		if len(paths) < 2 {
			continue
		}
		sort.Strings(paths)
		for _, p := range paths {
			var others []string
			for _, o := range paths {
				if o != p {
					others = append(others, o)
				}
			}
			add(Finding{Kind: FindDuplicateMemory, Path: p, Message: "identical to " + strings.Join(others, ", "), Related: others})
		}
	}
	return nil
}

func (d *Dir) checkPermissions(add func(Finding)) error {
	return filepath.WalkDir(d.path, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if e.Type()&fs.ModeSymlink != 0 {
			return nil
		}
		fi, err := e.Info()
		if err != nil {
			return nil
		}
		if fi.Mode().Perm()&0o077 == 0 {
			return nil
		}
		rel, _ := filepath.Rel(d.path, p)
		want := "0600"
		if fi.IsDir() {
			want = "0700"
		}
		add(Finding{Kind: FindPermissions, Path: filepath.ToSlash(rel), Message: fmt.Sprintf("mode %04o lets other users read it", fi.Mode().Perm()), Fix: "chmod " + want})
		return nil
	})
}

// FixOptions adjust Fix.
type FixOptions struct {
	// Compact also shortens index lines over the target length, removes
	// repeated pointer lines and collapses runs of blank lines, to bring
	// MEMORY.md back under its load limits.
	Compact bool
}

// FixResult reports what Fix did.
type FixResult struct {
	// Actions describe each repair, for people.
	Actions []string `json:"actions"`
	// RunID is the journal run that undoes the changes, modes included.
	RunID string `json:"run,omitempty"`
	// Remaining is what Check still finds afterwards.
	Remaining *CheckReport `json:"remaining"`
}

// Fix repairs what is safe to repair, under the directory lock and in one
// journaled run: it adds missing index lines, removes lines pointing at
// nothing and repeated lines, rewrites frontmatter that only parsed after
// quoting, and tightens permissions; with Compact, it also compacts MEMORY.md.
// It never deletes a memory.
func (d *Dir) Fix(ctx context.Context, opts *FixOptions) (*FixResult, error) {
	if opts == nil {
		opts = &FixOptions{}
	}
	res := &FixResult{Actions: []string{}}
	if !d.Exists() {
		rep, err := d.Check(ctx)
		res.Remaining = rep
		return res, err
	}
	pending, _ := d.PendingChange()
	root, release, err := d.lockedRoot(ctx, nil) // finishes a pending change
	if err != nil {
		return nil, err
	}
	if pending != "" {
		res.Actions = append(res.Actions, "finished the "+pending+" a killed process had left unfinished")
	}
	rep, err := d.Check(ctx)
	if err != nil {
		release()
		return nil, err
	}
	rec, err := d.journal.Begin("doctor", d.path)
	if err != nil {
		release()
		return nil, err
	}
	err = d.applyFixes(root, rec, rep, opts, res)
	run, ferr := rec.Finish(err)
	release()
	if err == nil {
		err = ferr
	}
	if err != nil {
		return nil, err
	}
	if run != nil && run.HasChanges() {
		res.RunID = run.ID
	}
	if res.Remaining, err = d.Check(ctx); err != nil {
		return nil, err
	}
	return res, nil
}

func (d *Dir) applyFixes(root *os.Root, rec *Recorder, rep *CheckReport, opts *FixOptions, res *FixResult) error {
	rec.SetSummary("doctor --fix")
	indexes := map[string]*Index{}
	index := func(indexRel string) (*Index, error) {
		if ix := indexes[indexRel]; ix != nil {
			return ix, nil
		}
		if err := rec.Before(indexRel); err != nil {
			return nil, err
		}
		ix, err := d.readIndex(root, indexRel)
		if err != nil {
			return nil, err
		}
		indexes[indexRel] = ix
		return ix, nil
	}
	for _, f := range rep.Findings {
		switch f.Kind {
		case FindFrontmatter:
			if f.Fix == "" {
				continue
			}
			data, _, err := memfile.ReadRooted(root, f.Path, MaxMemoryFileBytes)
			if err != nil {
				return err
			}
			m, _ := ParseMemory(data)
			if err := checkTeamWrite(f.Path, m.Format()); err != nil {
				res.Actions = append(res.Actions, "left "+f.Path+" as it is: "+err.Error())
				continue
			}
			if err := rec.Before(f.Path); err != nil {
				return err
			}
			if err := atomicfile.WriteFileIn(root, f.Path, m.Format(), 0o600); err != nil {
				return err
			}
			res.Actions = append(res.Actions, "rewrote the frontmatter of "+f.Path+" with quoted values")
		case FindUnindexed:
			if f.Fix == "" {
				continue
			}
			indexRel, link := IndexFor(f.Path)
			line, err := pointerLine(root, f.Path)
			if err != nil {
				return err
			}
			if err := checkTeamWrite(indexRel, []byte(line)); err != nil {
				res.Actions = append(res.Actions, "left "+f.Path+" out of "+indexRel+": its line would hold a potential secret ("+secretLabels(err)+")")
				continue
			}
			ix, err := index(indexRel)
			if err != nil {
				return err
			}
			ix.Upsert(link, line)
			res.Actions = append(res.Actions, "added "+f.Path+" to "+indexRel)
		case FindDanglingLine, FindDuplicateLine:
			ix, err := index(f.Path)
			if err != nil {
				return err
			}
			if n := dedupeAndDropDangling(d, ix, f.Path); n > 0 {
				res.Actions = append(res.Actions, fmt.Sprintf("removed %d %s from %s that pointed at missing files or repeated a line", n, pluralWord(n, "line", "lines"), f.Path))
			}
		case FindTempFile:
			if f.Fix == "" {
				continue
			}
			if ok, err := removeTempFile(root, rec, f.Path); err != nil {
				return err
			} else if ok {
				res.Actions = append(res.Actions, "removed "+f.Path+", a temporary file a killed write left")
			}
		case FindPermissions:
			want := os.FileMode(0o600)
			fi, err := root.Lstat(f.Path)
			if err != nil {
				continue // removed above (a temporary file), or gone since
			}
			if fi.IsDir() {
				want = 0o700
			}
			if err := rec.BeforeMode(f.Path); err != nil {
				return err
			}
			if err := root.Chmod(f.Path, want); err != nil {
				return fmt.Errorf("chmod %s: %w", d.Abs(f.Path), err)
			}
			res.Actions = append(res.Actions, fmt.Sprintf("set the mode of %s to %04o", f.Path, want))
		}
	}
	if opts.Compact {
		for _, indexRel := range []string{EntrypointName, TeamDirName + "/" + EntrypointName} {
			if _, err := root.Lstat(indexRel); err != nil {
				continue
			}
			ix, err := index(indexRel)
			if err != nil {
				return err
			}
			before := ix.Status()
			dedupeAndDropDangling(d, ix, indexRel)
			ix.compact()
			moved := 0
			if ix.Status().Truncated() {
				// Still too long: the lines of the least recently changed
				// memories move to the overflow file, linked by one line.
				oRel := overflowFor(indexRel)
				oix, err := index(oRel)
				if err != nil {
					return err
				}
				if len(oix.lines) == 0 {
					*oix = *newOverflowIndex()
				}
				moved = d.moveOverflow(root, indexRel, ix, oix)
				if moved > 0 {
					res.Actions = append(res.Actions, fmt.Sprintf("moved %d index line(s) of the least recently changed memories from %s to %s, which %s links", moved, indexRel, oRel, indexRel))
				}
			}
			after := ix.Status()
			if before != after {
				res.Actions = append(res.Actions, fmt.Sprintf("compacted %s from %d lines / %s to %d lines / %s", indexRel, before.Lines, FormatFileSize(before.Chars), after.Lines, FormatFileSize(after.Chars)))
			}
		}
	}
	for indexRel, ix := range indexes {
		if isOverflowIndex(indexRel) && len(ix.lines) == 0 {
			continue // there was none and nothing moved
		}
		if err := d.writeIndex(root, indexRel, ix); err != nil {
			return err
		}
	}
	return nil
}

// dedupeAndDropDangling removes pointer lines that repeat an earlier line's
// target or point at a file that does not exist, and returns how many.
func dedupeAndDropDangling(d *Dir, ix *Index, indexRel string) int {
	base := path.Dir(indexRel)
	seen := map[string]bool{}
	removed := 0
	kept := ix.lines[:0:0]
	for _, l := range ix.lines {
		e, ok := ParseIndexLine(l)
		if ok && e.Path() != "" && !strings.Contains(e.File, "://") {
			target := e.Path()
			rel := path.Join(base, target)
			_, err := os.Lstat(d.Abs(rel))
			if seen[target] || errors.Is(err, fs.ErrNotExist) {
				removed++
				continue
			}
			seen[target] = true
		}
		kept = append(kept, l)
	}
	ix.lines = kept
	return removed
}

// compact shortens pointer lines over the target length, drops blank lines
// between two pointer lines and collapses other runs of blank lines to one.
// Headings and prose are kept as written.
func (ix *Index) compact() {
	var out []string
	pendingBlank := false
	for _, l := range ix.lines {
		if strings.TrimSpace(l) == "" {
			pendingBlank = len(out) > 0
			continue
		}
		e, isEntry := ParseIndexLine(l)
		if pendingBlank {
			_, prevEntry := ParseIndexLine(out[len(out)-1])
			if !(isEntry && prevEntry) {
				out = append(out, "")
			}
			pendingBlank = false
		}
		if isEntry && len([]rune(l)) > IndexLineTarget {
			l = e.String()
		}
		out = append(out, l)
	}
	ix.lines = out
}

// pointerLine is the MEMORY.md line memdir writes for the memory at rel: its
// name (or its file name) and its description.
func pointerLine(root *os.Root, rel string) (string, error) {
	data, _, err := memfile.ReadRooted(root, rel, MaxMemoryFileBytes)
	if err != nil {
		return "", err
	}
	m, _ := ParseMemory(data)
	_, link := IndexFor(rel)
	title := m.Name
	if title == "" {
		title = strings.TrimSuffix(path.Base(link), ".md")
	}
	return IndexEntry{Title: title, File: link, Hook: m.Description}.String(), nil
}

// IndexMissing adds a MEMORY.md line for each memory among rels that has
// none, journaling each index it changes in rec, and returns the memories it
// indexed. MEMORY.md itself, daily logs and files that are not memories are
// skipped, and so are team memories whose line would carry a potential
// secret into team/MEMORY.md. The caller holds the directory lock (see Change), as an agent run
// that wrote the memories does.
func (d *Dir) IndexMissing(rec *Recorder, rels []string) ([]string, error) {
	root, err := d.openRoot()
	if err != nil {
		return nil, err
	}
	defer root.Close()
	indexes := map[string]*Index{}
	var added []string
	for _, rel := range rels {
		if _, err := CleanMemoryFilePath(rel); err != nil || isDailyLog(rel) {
			continue
		}
		indexRel, link := IndexFor(rel)
		ix := indexes[indexRel]
		if ix == nil {
			if ix, err = d.readIndex(root, indexRel); err != nil {
				return added, err
			}
			indexes[indexRel] = ix
		}
		if len(ix.Find(link)) > 0 {
			continue
		}
		if _, _, moved, err := d.overflowHolding(root, indexRel, link, ix); err != nil {
			return added, err
		} else if moved {
			continue // its line is in the overflow file compaction moved it to
		}
		line, err := pointerLine(root, rel)
		if err != nil {
			continue // gone or unreadable: nothing to point at
		}
		if checkTeamWrite(indexRel, []byte(line)) != nil {
			continue // a secret in the title or hook stays out of team/MEMORY.md
		}
		if err := rec.Before(indexRel); err != nil {
			return added, err
		}
		ix.Upsert(link, line)
		if err := d.writeIndex(root, indexRel, ix); err != nil {
			return added, err
		}
		added = append(added, rel)
	}
	return added, nil
}

func pluralWord(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
