package doctor

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/internal/atomicfile"
	"github.com/memdir/memdir/internal/memfile"
	"github.com/memdir/memdir/secrets"
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
	// Path is the file concerned, relative to the directory; files of
	// memdir's state outside it (reported by the CLI) are absolute.
	Path    string `json:"path"`
	Message string `json:"message"`
	// Fix says what Fix would do, "" when it leaves this to a person.
	// CompactOnly fixes happen only with FixOptions.Compact.
	Fix         string   `json:"fix,omitempty"`
	CompactOnly bool     `json:"compact_only,omitempty"`
	Related     []string `json:"related,omitempty"`
}

// Report is what Check found.
type Report struct {
	Dir      string    `json:"dir"`
	Memories int       `json:"memories"`
	Findings []Finding `json:"findings"`
}

// Check examines the directory for the problems that make Claude Code see
// less than is there: memories missing from MEMORY.md and lines pointing at
// nothing, an index over its load limits, broken or missing frontmatter,
// untyped memories, identical files, and files other users can read. It
// changes nothing.
func Check(ctx context.Context, d *memdir.Dir) (*Report, error) {
	rep := &Report{Dir: d.Path(), Findings: []Finding{}}
	if !d.Exists() {
		return rep, nil
	}
	scan, err := d.Scan(ctx, &memdir.ScanOptions{Limit: -1})
	if err != nil {
		return nil, err
	}
	rep.Memories = scan.Total
	add := func(f Finding) { rep.Findings = append(rep.Findings, f) }

	what, err := d.PendingChange()
	if err != nil {
		add(Finding{Kind: FindUnfinished, Path: memdir.PendingName, Message: err.Error() + "; the next change to the directory sets it aside, and 'memdir doctor --fix' repairs the index from the files"})
	} else if what != "" {
		add(Finding{Kind: FindUnfinished, Path: memdir.PendingName, Message: "a memdir process was killed in the middle of " + what + ", so the memory and its index line may be out of step; the next change to the directory finishes it", Fix: "finish the " + what})
	}
	if _, err := os.Lstat(d.Abs(memdir.PendingAsideName)); err == nil {
		add(Finding{Kind: FindUnfinished, Path: memdir.PendingAsideName, Message: "a record of a change a killed memdir process left unfinished could not be finished (it does not parse, or names a file the directory cannot reach) and was set aside; the index may be out of step with the memories",
			Fix: "repair the index from the files and remove the record"})
	}

	for _, p := range scan.Problems {
		switch p.Kind {
		case memdir.ProblemRead, memdir.ProblemBinary:
			add(Finding{Kind: FindUnreadable, Path: p.Path, Message: p.Message})
		case memdir.ProblemYAML:
			f := Finding{Kind: FindFrontmatter, Path: p.Path, Message: p.Message}
			if strings.Contains(p.Message, "after quoting") {
				f.Fix = "rewrite the frontmatter with its values quoted"
			}
			add(f)
		case memdir.ProblemUnclosed, memdir.ProblemNoFront:
			if !isDailyLog(p.Path) {
				add(Finding{Kind: FindFrontmatter, Path: p.Path, Message: p.Message})
			}
		case memdir.ProblemUntyped:
			add(Finding{Kind: FindUntyped, Path: p.Path, Message: p.Message})
		case memdir.ProblemDescription:
			add(Finding{Kind: FindNoDescription, Path: p.Path, Message: p.Message})
		}
	}

	for _, team := range []bool{false, true} {
		if err := checkIndex(d, team, scan.Memories, add); err != nil {
			return nil, err
		}
	}
	if err := checkDuplicates(d, scan.Memories, add); err != nil {
		return nil, err
	}
	checkNames(scan.Memories, rep.Findings, add)
	if err := checkPermissions(d, add); err != nil {
		return nil, err
	}
	if err := checkLeftovers(d, add); err != nil {
		return nil, err
	}
	checkAnchors(ctx, d, scan.Memories, add)
	sort.SliceStable(rep.Findings, func(i, j int) bool { return rep.Findings[i].Path < rep.Findings[j].Path })
	return rep, nil
}

// isDailyLog reports whether rel is an assistant-mode daily log, which is
// distilled by consolidation rather than indexed.
func isDailyLog(rel string) bool { return strings.HasPrefix(rel, "logs/") }

func checkIndex(d *memdir.Dir, team bool, mems []memdir.Header, add func(Finding)) error {
	ix, err := d.ReadIndex(team)
	if err != nil {
		return err
	}
	indexRel := memdir.EntrypointName
	if team {
		indexRel = memdir.TeamDirName + "/" + memdir.EntrypointName
	}
	inArea := map[string]memdir.Header{}
	for _, h := range mems {
		ir, link := memdir.IndexFor(h.Path)
		if ir == indexRel && !isDailyLog(h.Path) {
			inArea[link] = h
		}
	}
	seen := map[string]int{}
	checkLines(d, indexRel, ix, inArea, seen, add)
	// Lines compaction moved to the overflow file index their memories too.
	oRel := overflowFor(indexRel)
	if oix, err := d.ReadOverflowIndex(team); err != nil {
		return err
	} else if oix != nil {
		checkLines(d, oRel, oix, inArea, seen, add)
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
		add(Finding{Kind: FindIndexOverLimit, Path: indexRel, Message: "the index " + st.Problem(), Fix: "compact: shorten long lines, drop repeated lines and blank runs, then move the lines of the least recently changed memories to " + oRel, CompactOnly: true})
	}
	lines := ix.Lines()
	for _, e := range ix.Entries() {
		if n := len([]rune(lines[e.Line-1])); n > 200 {
			add(Finding{Kind: FindLongIndexLine, Path: indexRel, Message: fmt.Sprintf("line %d is %d characters; index lines should stay under ~150", e.Line, n), Fix: "shorten its hook", CompactOnly: true})
		}
	}
	return nil
}

// checkLines reports the repeated lines of the index file at rel and those
// pointing at no file, counting in seen the memories it indexes.
func checkLines(d *memdir.Dir, rel string, ix *memdir.Index, inArea map[string]memdir.Header, seen map[string]int, add func(Finding)) {
	here := map[string]int{}
	for _, e := range ix.Entries() {
		target := e.Path()
		if target == "" || strings.Contains(e.File, "://") {
			continue
		}
		here[target]++
		seen[target]++
		if here[target] == 2 {
			add(Finding{Kind: FindDuplicateLine, Path: rel, Message: fmt.Sprintf("line %d points at %s again", e.Line, target), Fix: "remove the repeated line"})
		}
		if _, ok := inArea[target]; !ok && here[target] == 1 {
			if _, err := os.Lstat(d.Abs(path.Join(path.Dir(rel), target))); errors.Is(err, fs.ErrNotExist) {
				add(Finding{Kind: FindDanglingLine, Path: rel, Message: fmt.Sprintf("line %d points at %s, which does not exist", e.Line, target), Fix: "remove the line"})
			}
		}
	}
}

// overflowFor returns the overflow file of the index at indexRel.
func overflowFor(indexRel string) string {
	return path.Join(path.Dir(indexRel), memdir.OverflowIndexName)
}

func checkDuplicates(d *memdir.Dir, mems []memdir.Header, add func(Finding)) error {
	// Identical files have the same size and the same frontmatter, which
	// the scan read: only files that share both with another are read
	// whole and hashed, in parallel. (Reading every file made doctor, and
	// memdir status, cost twice a list.)
	type sameness struct {
		size                    int64
		name, description, kind string
	}
	bySize := map[sameness][]memdir.Header{}
	for _, h := range mems {
		if h.Size <= memdir.MaxMemoryFileBytes {
			k := sameness{h.Size, h.Name, h.Description, h.RawType}
			bySize[k] = append(bySize[k], h)
		}
	}
	var candidates []memdir.Header
	for _, hs := range bySize {
		if len(hs) > 1 {
			candidates = append(candidates, hs...)
		}
	}
	sums := make([][32]byte, len(candidates))
	read := make([]bool, len(candidates))
	var wg sync.WaitGroup
	var next atomic.Int64
	for range min(max(4, 2*runtime.GOMAXPROCS(0)), len(candidates)) {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= len(candidates) {
					return
				}
				data, err := os.ReadFile(candidates[i].AbsPath)
				if err != nil {
					continue // reported by the scan
				}
				sums[i], read[i] = sha256.Sum256(data), true
			}
		})
	}
	wg.Wait()
	bySum := map[[32]byte][]string{}
	for i, h := range candidates {
		if read[i] {
			bySum[sums[i]] = append(bySum[sums[i]], h.Path)
		}
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

func checkPermissions(d *memdir.Dir, add func(Finding)) error {
	return filepath.WalkDir(d.Path(), func(p string, e fs.DirEntry, err error) error {
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
		rel, _ := filepath.Rel(d.Path(), p)
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
	// Progress, when set, is told how the repair is getting on, for a
	// progress line: stage "checking" (no counts) while the directory
	// is examined, "repairing" with the findings handled of those found,
	// and "checking the result" at the end.
	Progress func(stage string, done, total int)
}

// FixResult reports what Fix did.
type FixResult struct {
	// Actions describe each repair, for people.
	Actions []string `json:"actions"`
	// RunID is the journal run that undoes the changes, modes included.
	RunID string `json:"run,omitempty"`
	// Remaining is what Check still finds afterwards.
	Remaining *Report `json:"remaining"`
}

// Fix repairs what is safe to repair, under the directory lock and in one
// journaled run: it adds missing index lines, removes lines pointing at
// nothing and repeated lines, rewrites frontmatter that only parsed after
// quoting, and tightens permissions; with Compact, it also compacts MEMORY.md.
// It never deletes a memory.
func Fix(ctx context.Context, d *memdir.Dir, opts *FixOptions) (*FixResult, error) {
	if opts == nil {
		opts = &FixOptions{}
	}
	res := &FixResult{Actions: []string{}}
	report := opts.Progress
	if report == nil {
		report = func(string, int, int) {}
	}
	if !d.Exists() {
		rep, err := Check(ctx, d)
		res.Remaining = rep
		return res, err
	}
	// Taking the lock finishes a change a killed process left half-made.
	if pending, _ := d.PendingChange(); pending != "" {
		res.Actions = append(res.Actions, "finished the "+pending+" a killed process had left unfinished")
	}
	run, err := d.Change(ctx, "doctor", nil, func(rec *memdir.Recorder) error {
		report("checking", 0, 0)
		rep, err := Check(ctx, d)
		if err != nil {
			return err
		}
		rec.SetSummary("doctor --fix")
		f, err := newFixer(d, rec, res)
		if err != nil {
			return err
		}
		defer f.close()
		return f.apply(rep, opts, report)
	})
	if err != nil {
		return nil, err
	}
	if run != nil && run.HasChanges() {
		res.RunID = run.ID
	}
	report("checking the result", 0, 0)
	if res.Remaining, err = Check(ctx, d); err != nil {
		return nil, err
	}
	return res, nil
}

// fixer makes the repairs of one Fix, inside its Change.
type fixer struct {
	d    *memdir.Dir
	root *os.Root
	rec  *memdir.Recorder
	ix   *memdir.IndexEdits
	res  *FixResult
}

func newFixer(d *memdir.Dir, rec *memdir.Recorder, res *FixResult) (*fixer, error) {
	root, err := os.OpenRoot(d.Path())
	if err != nil {
		return nil, fmt.Errorf("memory directory %s: %w", d.Path(), err)
	}
	ix, err := memdir.NewIndexEdits(d, rec)
	if err != nil {
		root.Close()
		return nil, err
	}
	return &fixer{d: d, root: root, rec: rec, ix: ix, res: res}, nil
}

func (f *fixer) close() {
	f.ix.Close()
	f.root.Close()
}

func (f *fixer) did(format string, args ...any) {
	f.res.Actions = append(f.res.Actions, fmt.Sprintf(format, args...))
}

// apply repairs what rep found, then compacts when asked, and writes the
// indexes it changed.
func (f *fixer) apply(rep *Report, opts *FixOptions, report func(string, int, int)) error {
	for i, fd := range rep.Findings {
		report("repairing", i, len(rep.Findings))
		var err error
		switch fd.Kind {
		case FindFrontmatter:
			err = f.frontmatter(fd)
		case FindUnindexed:
			err = f.unindexed(fd)
		case FindDanglingLine, FindDuplicateLine:
			err = f.dropLines(fd.Path)
		case FindTempFile:
			err = f.tempFile(fd)
		case FindUnfinished:
			err = f.pendingAside(fd)
		case FindPermissions:
			err = f.permissions(fd)
		}
		if err != nil {
			return err
		}
	}
	report("repairing", len(rep.Findings), len(rep.Findings))
	if opts.Compact {
		for _, indexRel := range []string{memdir.EntrypointName, memdir.TeamDirName + "/" + memdir.EntrypointName} {
			if err := f.compact(indexRel); err != nil {
				return err
			}
		}
	}
	return f.ix.Write()
}

// frontmatter rewrites frontmatter that only parsed after quoting.
func (f *fixer) frontmatter(fd Finding) error {
	if fd.Fix == "" {
		return nil
	}
	data, _, err := memfile.ReadRooted(f.root, fd.Path, memdir.MaxMemoryFileBytes)
	if err != nil {
		return err
	}
	m, _ := memdir.ParseMemory(data)
	if err := checkTeamWrite(fd.Path, m.Format()); err != nil {
		f.did("left %s as it is: %s", fd.Path, err.Error())
		return nil
	}
	if err := f.rec.Before(fd.Path); err != nil {
		return err
	}
	if err := atomicfile.WriteFileIn(f.root, fd.Path, m.Format(), 0o600); err != nil {
		return err
	}
	f.did("rewrote the frontmatter of %s with quoted values", fd.Path)
	return nil
}

// unindexed adds the missing line of a memory to its index.
func (f *fixer) unindexed(fd Finding) error {
	if fd.Fix == "" {
		return nil
	}
	indexRel, link := memdir.IndexFor(fd.Path)
	line, err := f.ix.PointerLine(fd.Path)
	if err != nil {
		return err
	}
	if err := checkTeamWrite(indexRel, []byte(line)); err != nil {
		f.did("left %s out of %s: its line would hold a potential secret (%s)", fd.Path, indexRel, secretLabels(err))
		return nil
	}
	ix, err := f.ix.Index(indexRel)
	if err != nil {
		return err
	}
	ix.Upsert(link, line)
	f.did("added %s to %s", fd.Path, indexRel)
	return nil
}

// dropLines removes the dangling and repeated lines of an index file.
func (f *fixer) dropLines(indexRel string) error {
	ix, err := f.ix.Index(indexRel)
	if err != nil {
		return err
	}
	if n := dedupeAndDropDangling(f.d, ix, indexRel); n > 0 {
		f.did("removed %d %s from %s that pointed at missing files or repeated a line", n, pluralWord(n, "line", "lines"), indexRel)
	}
	return nil
}

// tempFile removes a temporary file a killed write left.
func (f *fixer) tempFile(fd Finding) error {
	if fd.Fix == "" {
		return nil
	}
	ok, err := removeTempFile(f.root, f.rec, fd.Path)
	if err == nil && ok {
		f.did("removed %s, a temporary file a killed write left", fd.Path)
	}
	return err
}

// pendingAside removes, journaled, the record of an unfinished change the
// store set aside: the other fixes repair the index from the files.
func (f *fixer) pendingAside(fd Finding) error {
	if fd.Path != memdir.PendingAsideName {
		return nil // a pending change: taking the lock finished it
	}
	ok, err := removeTempFile(f.root, f.rec, fd.Path)
	if err == nil && ok {
		f.did("removed %s, a record of an unfinished change set aside, after repairing the index from the files", fd.Path)
	}
	return err
}

// permissions makes a file 0600 or a directory 0700.
func (f *fixer) permissions(fd Finding) error {
	want := os.FileMode(0o600)
	fi, err := f.root.Lstat(fd.Path)
	if err != nil {
		return nil // removed above (a temporary file), or gone since
	}
	if fi.IsDir() {
		want = 0o700
	}
	if err := f.rec.BeforeMode(fd.Path); err != nil {
		return err
	}
	if err := f.root.Chmod(fd.Path, want); err != nil {
		return fmt.Errorf("chmod %s: %w", f.d.Abs(fd.Path), err)
	}
	f.did("set the mode of %s to %04o", fd.Path, want)
	return nil
}

// compact compacts the index at indexRel: repeated and dangling lines go,
// long lines are shortened, and when it is still over its limits the lines
// of the least recently changed memories move to the overflow file.
func (f *fixer) compact(indexRel string) error {
	if _, err := f.root.Lstat(indexRel); err != nil {
		return nil
	}
	ix, err := f.ix.Index(indexRel)
	if err != nil {
		return err
	}
	before := ix.Status()
	dedupeAndDropDangling(f.d, ix, indexRel)
	ix.Compact()
	if ix.Status().Truncated() {
		moved, err := f.ix.MoveOverflow(indexRel)
		if err != nil {
			return err
		}
		if moved > 0 {
			oRel := overflowFor(indexRel)
			f.did("moved %d index line(s) of the least recently changed memories from %s to %s, which %s links", moved, indexRel, oRel, indexRel)
		}
	}
	if after := ix.Status(); before != after {
		f.did("compacted %s from %d lines / %s to %d lines / %s", indexRel, before.Lines, memdir.FormatFileSize(before.Chars), after.Lines, memdir.FormatFileSize(after.Chars))
	}
	return nil
}

// dedupeAndDropDangling removes pointer lines that repeat an earlier line's
// target or point at a file that does not exist, and returns how many.
func dedupeAndDropDangling(d *memdir.Dir, ix *memdir.Index, indexRel string) int {
	base := path.Dir(indexRel)
	seen := map[string]bool{}
	return ix.Drop(func(e memdir.IndexEntry) bool {
		target := e.Path()
		if target == "" || strings.Contains(e.File, "://") {
			return false
		}
		_, err := os.Lstat(d.Abs(path.Join(base, target)))
		if seen[target] || errors.Is(err, fs.ErrNotExist) {
			return true
		}
		seen[target] = true
		return false
	})
}

// checkTeamWrite is memdir.CheckTeamContent for a write to rel, which is
// checked only when it lies under team/.
func checkTeamWrite(rel string, content []byte) error {
	if !memdir.IsTeamPath(rel) {
		return nil
	}
	return memdir.CheckTeamContent(rel, content)
}

// secretLabels returns the labels of a *memdir.SecretError, or err's text.
func secretLabels(err error) string {
	var se *memdir.SecretError
	if errors.As(err, &se) {
		return secrets.Labels(se.Findings)
	}
	return err.Error()
}

func pluralWord(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
