package recall

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"hash/fnv"
	"io"
	"io/fs"
	"math"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/internal/atomicfile"
	"github.com/memdir/memdir/internal/flock"
	"github.com/memdir/memdir/internal/prefault"
	"github.com/memdir/memdir/internal/safeopen"
	"github.com/memdir/memdir/internal/statedir"
	"github.com/memdir/memdir/lexical"
)

// recallBodyMax is how much of a memory's body the lexical index reads.
const recallBodyMax = 16 << 10

// recallHashMax bounds how much of a file is read to hash it.
const recallHashMax = 64 << 20

// racyWindow is how recent a change may be for a file's or directory's stamp
// not to be trusted: a second change within the file system's timestamp
// granularity could leave it unchanged, so such entries are checked again
// by content (files) or listing (directories) at the next refresh.
const racyWindow = 2 * time.Second

// fileStamp is what stat says of a file; a file whose stamp is unchanged is
// not read again.
type fileStamp struct {
	Size, MTime, CTime int64 // times in UnixNano
	Ino                uint64
}

// recallFile is what the recall index keeps of one memory file.
type recallFile struct {
	path, name, desc string
	typ              memdir.Type
	stamp            fileStamp
	hash             [sha256.Size]byte
	racy             bool // changed within racyWindow of being read
	bad              bool // could not be read or parsed: not searchable
	// crc covers path, name and description as loaded from the cache
	// file; checked says they were verified (or never came from it).
	crc     uint32
	checked bool
}

func (f *recallFile) strCRC() uint32 {
	zero := []byte{0}
	c := crc32.Checksum(strBytes(f.path), recallCRC())
	c = crc32.Update(c, recallCRC(), zero)
	c = crc32.Update(c, recallCRC(), strBytes(f.name))
	c = crc32.Update(c, recallCRC(), zero)
	return crc32.Update(c, recallCRC(), strBytes(f.desc))
}

// strBytes views s as bytes without copying it; the bytes are only read.
func strBytes(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

// recallDir is a directory of the tree with the modification time its
// listing had: while it is unchanged, no file was added, removed or renamed
// there, and the directory need not be listed again.
type recallDir struct {
	rel   string
	mtime int64
	racy  bool
}

func (f *recallFile) header(dir string) memdir.Header {
	return memdir.Header{
		Path: f.path, AbsPath: filepath.Join(dir, filepath.FromSlash(f.path)),
		ModTime: time.Unix(0, f.stamp.MTime), Size: f.stamp.Size,
		Name: f.name, Description: f.desc, Type: f.typ,
		HasFrontmatter: f.name != "" || f.desc != "" || f.typ != "",
	}
}

// Index is a lexical index over every memory of a directory, not only
// the newest 200.
//
// With a cache file (see DefaultIndexPath) the index persists between
// processes: a new process maps the file and searches it in place, without
// rebuilding or decoding anything. Refresh then brings it up to date from
// the directory without reading it: each directory whose modification time
// is unchanged has the same entries as before, so it is not even listed,
// and each file whose size, modification and change times and inode are
// unchanged is not read. Only new and changed files are read and
// re-indexed; the file is then rewritten (atomically, under a lock, so
// processes refreshing at once never see a torn file). A missing, damaged
// or foreign cache file is rebuilt from the directory, never an error. See
// docs/performance.md for the layout and why it was chosen.
//
// A long-lived process can call Watch, after which Refresh does nothing
// until the file system reports a change.
//
// A Index is safe for concurrent use.
type Index struct {
	dir       string
	cachePath string

	mu sync.Mutex
	// files is the table of memory files, sorted by path; while view is
	// not nil, the table is read in place from the cache file instead and
	// files is nil (see fileView).
	files []recallFile
	view  *fileView
	dirs  []recallDir // sorted by rel
	lex   *lexical.Index
	// loaded is true once the cache file was tried.
	loaded bool
	// damaged is set when an entry loaded from the cache file fails its
	// checksum: the index is then rebuilt.
	damaged bool
	// watch, when not nil, tells Refresh whether anything changed.
	watch *recallWatch
	// cursor rotates the share of files a Refresh stats.
	cursor uint32
	// base identifies the cache file when it holds what files and dirs
	// do (see recallBase); empty otherwise.
	base string
	// delta holds what changed since the base file was written, by path,
	// and deltaSum identifies the delta file that holds it (see
	// delta.go); both empty when the base holds everything.
	delta    map[string]*deltaEntry
	deltaSum string
	// now is the clock the racy window and edit hints are judged by.
	now func() time.Time
	// buildInMemory makes a first build keep its index in memory, after
	// writing the cache file failed (see finishBuild).
	buildInMemory bool
	// progress is IndexOptions.Progress; nil reports nothing.
	progress func(stage string, done, total int)
}

// IndexOptions adjust NewIndex; nil means an index kept in memory only.
type IndexOptions struct {
	// CachePath, if not empty, is a file outside the memory directory
	// where the index is kept between processes (see DefaultIndexPath).
	CachePath string
	// Now is the clock file times are judged against (a file changed
	// within two seconds of being read is read again; an edit hint lapses
	// after an hour); nil means time.Now. It must follow the file
	// system's clock: tests move it forward to let time pass.
	Now func() time.Time
	// Progress, when set, is told how a refresh that reads files is
	// getting on: stage "reading memories" with the files read of those
	// to read (from several goroutines, so it must be safe for that),
	// then "building the index" while the lexical index is built. A
	// warm refresh reads nothing and reports nothing; the first build
	// of a large directory, or a rebuild, is what takes long. The CLI
	// passes its progress reporter (internal/progress).
	Progress func(stage string, done, total int)
}

// NewIndex returns an index of the memory directory dir.
func NewIndex(dir string, opts *IndexOptions) *Index {
	x := &Index{dir: filepath.Clean(dir), now: time.Now}
	if opts != nil {
		x.cachePath = opts.CachePath
		x.progress = opts.Progress
		if opts.Now != nil {
			x.now = opts.Now
		}
	}
	return x
}

// DefaultIndexPath returns where the recall index of a memory directory
// is kept: <StateDir>/recall/<SanitizePath(dir)>.idx. It is derived data:
// deleting it only makes the next recall rebuild it.
func DefaultIndexPath(memoryDir string, lookup memdir.LookupEnvFunc) (string, error) {
	return statedir.For(lookup, "recall", memoryDir, ".idx")
}

// RefreshStats says what a Refresh did.
type RefreshStats struct {
	Files    int // memory files in the directory
	Read     int // files read because they were new or changed
	Removed  int // files gone since the last refresh
	Listed   int // directories listed because their entries changed
	Problems []memdir.Problem
}

// recallStatBudget is how many files a Refresh stats at most in
// directories whose entries did not change (see Refresh).
const recallStatBudget = 512

// Refresh updates the index from the directory. Directories whose
// modification time changed are listed again, and every file in them is
// stat-ed; so are files changed too recently to trust, and files an edit
// hint names (see NoteEdit). In the other directories, no file was added,
// removed or renamed (that is, nothing written the atomic way memdir and
// most editors write, through a rename), and of their files Refresh stats
// every one when there are at most 512, otherwise a rotating share of 512,
// so that on a stat cost of a few microseconds a refresh costs the same
// (about a millisecond) however large the directory. A file rewritten in
// place is thus seen at once in small directories, or when memdir's
// PreToolUse hook saw Claude Code's tool about to write it, and otherwise
// within ⌈files/512⌉ refreshes — and Search always stats the memories it
// returns, re-reading any that changed, so what it returns is never stale.
// RefreshAll stats every file.
func (x *Index) Refresh(ctx context.Context) (*RefreshStats, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.refreshLocked(ctx, false)
}

// RefreshAll is Refresh stat-ing every file.
func (x *Index) RefreshAll(ctx context.Context) (*RefreshStats, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.refreshLocked(ctx, true)
}

// statShare returns which of n known files in unchanged directories this
// refresh stats: all, or those of one of k residues of their rotation key,
// the residue turning with a cursor kept beside the cache file (or in
// memory), so that every file is stat-ed within k refreshes whatever is
// added or removed meanwhile.
func (x *Index) statShare(n int, all bool) func(i int) bool {
	if all || n <= recallStatBudget {
		return func(int) bool { return true }
	}
	k := (n + recallStatBudget - 1) / recallStatBudget
	slot := int(x.advanceCursor() % uint32(k))
	// By a key of the file that stays as the table changes (its inode, or
	// a hash of its path where there is none), not by its position:
	// files added or removed before it would move a position along with
	// the rotation, and it would never come round.
	return func(i int) bool { return int(x.rotationKey(i)%uint64(k)) == slot }
}

// advanceCursor returns the rotation's cursor and moves it on. Beside a
// cache file the cursor is kept in .idx.cursor, so that it turns across
// processes; it is advanced by writing its 4 bytes in place, not by
// replacing the file: no temporary file, rename or directory change per
// refresh, so a refresh that finds nothing new changes no file but
// these 4 bytes of an advisory one. (Derived and advisory: a torn or lost
// write only changes which share the next refresh checks.) The file is
// created by atomic replace when missing or not 4 bytes long, and never
// written through a symbolic link.
func (x *Index) advanceCursor() uint32 {
	if x.cachePath == "" {
		x.cursor++
		return x.cursor - 1
	}
	p := x.cachePath + ".cursor"
	c := x.cursor
	var b [4]byte
	f, err := safeopen.OpenReadWrite(p)
	if err == nil {
		defer f.Close()
		if n, _ := f.ReadAt(b[:], 0); n == 4 {
			c = uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
		}
	}
	x.cursor = c + 1
	if fi, serr := f.Stat(); err == nil && serr == nil && fi.Size() == 4 {
		f.WriteAt(cursorBytes(x.cursor), 0)
	} else {
		replaceAdvisory(p, cursorBytes(x.cursor))
	}
	return c
}

func cursorBytes(c uint32) []byte { return []byte{byte(c), byte(c >> 8), byte(c >> 16), byte(c >> 24)} }

// rotationKey places the file at position i in the refresh's rotation:
// its inode, or a hash of its path where stat gives none.
func (x *Index) rotationKey(i int) uint64 {
	if s, _ := x.metaAt(i); s.Ino != 0 {
		return s.Ino
	}
	h := fnv.New64a()
	h.Write(strBytes(x.pathAt(i)))
	return h.Sum64()
}

func (x *Index) reset() {
	x.files, x.view, x.dirs, x.lex, x.damaged, x.base = nil, nil, nil, nil, false, ""
	x.delta, x.deltaSum = nil, ""
}

// fileOK verifies the strings of the file at position i loaded from the
// cache file.
func (x *Index) fileOK(i int) bool {
	if x.view != nil {
		if !x.view.fileOK(i) {
			x.damaged = true
			return false
		}
		return true
	}
	f := &x.files[i]
	if f.checked {
		return true
	}
	if f.strCRC() != f.crc {
		x.damaged = true
		return false
	}
	f.checked = true
	return true
}

// checkAll verifies every entry, rebuilding the index if one is damaged.
func (x *Index) checkAll() {
	x.own()
	if x.damaged {
		x.reset()
		x.refreshLocked(context.Background(), true)
		return
	}
	for i := range x.files {
		if !x.fileOK(i) {
			x.reset()
			x.refreshLocked(context.Background(), true)
			return
		}
	}
}

func (x *Index) refreshLocked(ctx context.Context, all bool) (*RefreshStats, error) {
	if !x.loaded {
		x.loaded = true
		x.load()
	}
	if x.watch != nil && !x.watch.begin() && x.lex != nil && !x.dirsChanged() {
		return &RefreshStats{Files: x.lex.Len()}, nil
	}
	sd, err := openStatDir(x.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return x.refreshGone(), nil
	}
	if err != nil {
		return nil, fmt.Errorf("recall index %s: %w", x.dir, err)
	}
	defer sd.Close()
	now := x.now().UnixNano()
	racy := func(t ...int64) bool {
		for _, v := range t {
			if now-v < int64(racyWindow) {
				return true
			}
		}
		return false
	}
	st := &RefreshStats{}
	// 1. Directories: list only those whose entries may have changed.
	w := x.walkDirs(sd, racy)
	st.Listed = len(w.listed)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	// 2. Files: stat every candidate; keep those whose stamp changed.
	stale, removed := x.staleFiles(sd, w, all)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if x.damaged {
		// An entry of the cache file failed its check: rebuild.
		x.reset()
		return x.refreshLocked(ctx, true)
	}
	// 3. Read new and changed files in parallel.
	// A first build puts each document into the lexical index as it is
	// read and drops its body, so that the bodies of the whole directory
	// are never held at once.
	var built *lexical.Builder
	var sink func(r *readResult)
	if x.lex == nil {
		built = lexical.NewBuilder()
		idBytes := 0
		for i := range stale {
			idBytes += len(stale[i].rel)
		}
		built.Reserve(len(stale), idBytes)
		sink = func(r *readResult) {
			if !r.f.bad && !r.gone {
				built.Add(lexical.Doc{ID: r.f.path, Name: r.f.name, Description: r.f.desc, Body: r.body})
			}
			r.body = ""
		}
	}
	read, err := x.readStale(ctx, stale, racy, sink)
	if err != nil {
		return nil, err
	}
	if x.progress != nil && len(stale) > 0 {
		x.progress("building the index", 0, 0)
	}
	if built != nil {
		x.delta = nil
	}
	// 4. Apply: in place when no file came or went. Only a change of what
	// the index holds is written: a refresh that re-read racy files and
	// found them as they were writes nothing.
	dirty := x.apply(st, stale, read, removed, built != nil)
	slices.SortFunc(w.dirs, func(a, b recallDir) int { return strings.Compare(a.rel, b.rel) })
	dirty = dirty || !slices.Equal(w.dirs, x.dirs)
	x.dirs = w.dirs
	if built != nil {
		x.finishBuild(built) // writes the cache file
	} else if dirty && x.cachePath != "" {
		x.save()
	}
	st.Files = x.lex.Len()
	return st, nil
}

// refreshGone empties the index of a directory that does not exist.
func (x *Index) refreshGone() *RefreshStats {
	st := &RefreshStats{Removed: x.nfiles()}
	changed := x.nfiles() > 0 || len(x.dirs) > 0 || x.lex == nil
	x.reset()
	x.lex = lexical.New(nil, nil)
	if changed && x.cachePath != "" {
		x.save()
	}
	return st
}

// staleFile is a file to read: new (oi < 0) or changed since the index
// last read it (oi is its place in x.files). fromRead marks a new file
// that the listing typed a regular file and that was not stat-ed: its
// stamp is taken when it is read (fileReader.readNew), before its
// contents, as a stat would have been.
type staleFile struct {
	rel      string
	oi       int
	stamp    fileStamp
	fromRead bool
}

// staleFiles stats the files a refresh checks (every file of a listed
// directory, and in the others the racy ones, the rotating share and the
// hinted ones) and returns those new or changed, and the positions in the
// file table of those gone. A table viewed in place stays so: paths and
// stamps are read from the view.
func (x *Index) staleFiles(sd *statDir, w dirWalk, all bool) (stale []staleFile, removed []int) {
	check := func(rel string, oi int) {
		s, _, isReg, err := sd.stat(rel)
		if err != nil || !isReg {
			// A path damaged in the cache file would look removed, and
			// the memory would silently drop out: check it first.
			if oi >= 0 && x.fileOK(oi) {
				removed = append(removed, oi)
			}
			return
		}
		if oi >= 0 {
			if old, fl := x.metaAt(oi); *old == s && fl&flagRacy == 0 {
				return
			}
			x.fileOK(oi)
		}
		stale = append(stale, staleFile{rel: rel, oi: oi, stamp: s})
	}
	// Room for the new files, at least: a first build's all of them.
	stale = make([]staleFile, 0, max(0, len(w.found)-x.nfiles()))
	share := x.statShare(x.nfiles(), all)
	var hinted map[string]bool
	if !all && x.watch == nil {
		hinted = x.editHints()
	}
	if x.view != nil && parentsKept(x.dirs, w) {
		x.checkInView(share, hinted, check)
		return stale, removed
	}
	// The files of listed directories are paired with the listing by
	// sums of their paths' hashes and inodes, bucket by bucket (see
	// pairListed): at 100,000 memories, a map lookup per file, at random
	// across the index and the listing, cost several times as much.
	inListed := make([]int, 0, len(w.found))
	lastParent, listed, visited := "", false, false
	racy := func(i int) bool {
		_, fl := x.metaAt(i)
		return fl&flagRacy != 0
	}
	// A path damaged in the cache file would look removed, and the memory
	// would silently drop out: it is checked first.
	gone := func(i int) {
		if x.fileOK(i) {
			removed = append(removed, i)
		}
	}
	for i := range x.nfiles() {
		p := x.pathAt(i)
		parent := "."
		if j := strings.LastIndexByte(p, '/'); j >= 0 {
			parent = p[:j]
		}
		if parent != lastParent { // parent is never "", so the first file sets them
			lastParent, listed, visited = parent, w.listed[parent], w.visited[parent]
		}
		switch {
		case listed:
			inListed = append(inListed, i)
		case visited:
			if racy(i) || share(i) || hinted[p] {
				check(p, i)
			}
		default:
			gone(i)
		}
	}
	paired, sameIno, known := pairListed(func(i int) (string, uint64) {
		s, _ := x.metaAt(i)
		return x.pathAt(i), s.Ino
	}, inListed, w.found)
	for k, i := range inListed {
		switch {
		case !paired[k]:
			gone(i)
		case sameIno[k]:
			// A file with the inode the index read was not replaced by
			// a rename: like a file of an unchanged directory, it is
			// stat-ed only when racy, hinted or in the rotation's share.
			if p := x.pathAt(i); racy(i) || share(i) || hinted[p] {
				check(p, i)
			}
		default:
			// A new inode, an unknown one, or a neighbour of either in
			// pairListed's bucket: the stat says which.
			check(x.pathAt(i), i)
		}
	}
	for j, p := range w.found {
		switch {
		case known[j]:
		case p.reg:
			// New, and a regular file: it is read whatever its stamp,
			// and the read's fstat gives the stamp. A first build of
			// 100,000 memories stat-ed each one before reading it.
			stale = append(stale, staleFile{rel: p.path, oi: -1, fromRead: true})
		default:
			check(p.path, -1)
		}
	}
	return stale, removed
}

// checkInView is staleFiles when every file is where it was: the racy,
// the rotation's share and the hinted are checked, without reading every
// path.
func (x *Index) checkInView(share func(int) bool, hinted map[string]bool, check func(string, int)) {
	for i := range x.view.len() {
		if _, fl := x.view.meta(i); fl&flagRacy != 0 || share(i) {
			check(x.view.path(i), i)
		}
	}
	for p := range hinted {
		if i, ok := x.find(p); ok {
			if _, fl := x.metaAt(i); fl&flagRacy == 0 && !share(i) {
				check(p, i)
			}
		}
	}
}

// readResult is what reading a stale file gave.
type readResult struct {
	f     recallFile
	body  string
	probs []memdir.Problem
	// gone marks a new file that was no longer a regular file when read
	// (see staleFile.fromRead): left out, as a stat would have left it.
	gone bool
	// held is the lent buffer body shares, if any: given back once the
	// body has been used.
	held *heldBuf
}

// readStale reads the stale files in parallel. When sink is not nil, it
// is called with each result once read, one at a time, in this goroutine.
func (x *Index) readStale(ctx context.Context, stale []staleFile, racy func(...int64) bool, sink func(*readResult)) ([]readResult, error) {
	if len(stale) == 0 {
		return nil, ctx.Err()
	}
	root, err := os.OpenRoot(x.dir)
	if err != nil {
		return nil, fmt.Errorf("recall index %s: %w", x.dir, err)
	}
	defer root.Close()
	read := make([]readResult, len(stale))
	var wg sync.WaitGroup
	var next int
	var nmu sync.Mutex
	report := func(int) {}
	if x.progress != nil && len(stale) > 0 {
		x.progress("reading memories", 0, len(stale))
		var n atomic.Int64
		report = func(int) {
			// Every 64 files: often enough for a live line, rarely
			// enough that the reporter's lock costs nothing.
			if d := n.Add(1); d%64 == 0 || int(d) == len(stale) {
				x.progress("reading memories", int(d), len(stale))
			}
		}
	}
	var done chan int
	if sink != nil {
		done = make(chan int, 64)
	}
	rels := make([]string, len(stale))
	for i := range stale {
		rels[i] = stale[i].rel
	}
	fr := newFileReader(root, rels)
	defer fr.close()
	// Many new files (a first build) are read in batches (see
	// readbatch_linux.go): a run of new files at a time.
	batched := len(stale) >= batchMinFiles
	// Bodies used at once by the sink may borrow the batches' buffers.
	var lend *lender
	if sink != nil {
		lend = newLender()
	}
	for w := 0; w < min(max(4, 2*runtime.GOMAXPROCS(0)), len(stale)); w++ {
		wg.Go(func() {
			var hr memdir.HeaderReader
			var buf []byte
			var br *batchReader
			if batched {
				br = newBatchReader(lend)
				defer br.close()
			}
			for {
				nmu.Lock()
				i, j := next, next+1
				if br != nil && i < len(stale) && stale[i].fromRead {
					for j < min(len(stale), i+batchFiles) && stale[j].fromRead {
						j++
					}
				}
				next = j
				nmu.Unlock()
				if i >= len(stale) || ctx.Err() != nil {
					return
				}
				if j-i == 1 || !br.readNew(fr, rels[i:j], read[i:j], &hr, &buf) {
					for k := i; k < j; k++ {
						read[k] = readOne(fr, &stale[k], &hr, &buf)
					}
				}
				for k := i; k < j; k++ {
					read[k].f.racy = racy(read[k].f.stamp.MTime, read[k].f.stamp.CTime)
					report(k)
					if done != nil {
						done <- k
					}
				}
			}
		})
	}
	if done != nil {
		go func() { wg.Wait(); close(done) }()
		for i := range done {
			sink(&read[i])
			if h := read[i].held; h != nil {
				read[i].held, read[i].body = nil, ""
				h.done()
			}
		}
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return read, nil
}

// readOne reads the stale file c on its own.
func readOne(fr *fileReader, c *staleFile, hr *memdir.HeaderReader, buf *[]byte) (r readResult) {
	if c.fromRead {
		r.f, r.body, r.probs, r.gone = fr.readNew(c.rel, hr, buf)
		return r
	}
	r.f, r.body, r.probs = fr.read(c.rel, hr, buf)
	r.f.stamp = c.stamp
	return r
}

// sameRecord reports whether two records of a file say the same.
func sameRecord(a, b *recallFile) bool {
	return a.path == b.path && a.name == b.name && a.desc == b.desc && a.typ == b.typ &&
		a.stamp == b.stamp && a.hash == b.hash && a.racy == b.racy && a.bad == b.bad
}

// apply puts what a refresh found into the index: the lexical index is
// updated in place (or built, the first time), and the file table (owned
// or viewed) gains the new files and loses the removed ones, in path
// order. It reports whether any record changed, noting each change for the
// delta file.
func (x *Index) apply(st *RefreshStats, stale []staleFile, read []readResult, removed []int, build bool) bool {
	changed := len(removed) > 0
	for _, i := range removed {
		p := x.pathAt(i)
		if !build && !x.badAt(i) {
			x.lex.Remove(p)
		}
		x.noteGone(p)
		st.Removed++
	}
	nNew := 0
	for i := range stale {
		if stale[i].oi < 0 && !read[i].gone {
			nNew++
		}
	}
	added := make([]recallFile, 0, nNew)
	for i, c := range stale {
		r := &read[i]
		if r.gone {
			continue
		}
		st.Problems = append(st.Problems, r.probs...)
		var old recallFile
		if c.oi >= 0 {
			old = x.recordAt(c.oi)
		}
		unchanged := c.oi >= 0 && !old.bad && !r.f.bad && old.hash == r.f.hash
		if c.oi >= 0 && sameRecord(&old, &r.f) {
			if r.f.checked {
				x.markChecked(c.oi)
			}
			continue // re-read (racy) and found as it was
		}
		changed = true
		if !build {
			x.noteFile(r.f, !unchanged, r.body)
		}
		if c.oi >= 0 {
			x.replaceAt(c.oi, r.f)
		} else {
			added = append(added, r.f)
		}
		if unchanged && !build {
			continue // touched, not changed: the index holds it already
		}
		switch {
		case r.f.bad:
			if !build && c.oi >= 0 {
				x.lex.Remove(c.rel)
			}
		case build: // put as it was read (see refreshLocked)
		default:
			x.lex.Put(lexical.Doc{ID: r.f.path, Name: r.f.name, Description: r.f.desc, Body: r.body})
		}
		st.Read++
	}
	if len(removed) > 0 || len(added) > 0 {
		x.editTable(removed, added)
	}
	return changed
}

// editTable takes the files at the positions removed out of the file
// table (owned or viewed) and puts added in, in path order.
func (x *Index) editTable(removed []int, added []recallFile) {
	slices.Sort(removed)
	added = sortedByPath(added)
	if x.view != nil {
		x.view.edit(removed, added)
		return
	}
	if len(x.files) == 0 {
		x.files = added // a first build: the new files are the table
		return
	}
	// Both in path order: merged.
	files := make([]recallFile, 0, len(x.files)-len(removed)+len(added))
	for i := range x.files {
		if len(removed) > 0 && removed[0] == i {
			removed = removed[1:]
			continue
		}
		for len(added) > 0 && added[0].path < x.files[i].path {
			files, added = append(files, added[0]), added[1:]
		}
		files = append(files, x.files[i])
	}
	files = append(files, added...)
	x.files = sortedByPath(files) // a table out of order stays correct
}

// sortedByPath returns files in path order: files itself when it is,
// else a new slice. The records are 136 bytes, and a sort that swaps
// them in place moved each one some twenty times: at 100,000 memories
// in a first build, more than the table's own copy. Positions are
// sorted instead, and each record is copied once.
func sortedByPath(files []recallFile) []recallFile {
	if slices.IsSortedFunc(files, func(a, b recallFile) int { return strings.Compare(a.path, b.path) }) {
		return files
	}
	order := make([]int32, len(files))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(a, b int32) int { return strings.Compare(files[a].path, files[b].path) })
	out := make([]recallFile, len(files))
	for i, o := range order {
		out[i] = files[o]
	}
	return out
}

// dirWalk is what walkDirs found.
type dirWalk struct {
	dirs            []recallDir
	visited, listed map[string]bool
	found           []foundFile // memory files in listed directories
}

// foundFile is a memory file a listing found, with the inode the listing
// gave it (0 where unknown) and whether it typed it a regular file.
type foundFile struct {
	path string
	ino  uint64
	reg  bool
}

// walkDirs stats every known directory of the tree and lists those whose
// entries may have changed (and new ones).
func (x *Index) walkDirs(sd *statDir, racy func(...int64) bool) dirWalk {
	oldDirs := make(map[string]recallDir, len(x.dirs))
	children := map[string][]string{}
	for _, d := range x.dirs {
		oldDirs[d.rel] = d
		if d.rel != "." {
			p := path.Dir(d.rel)
			children[p] = append(children[p], d.rel)
		}
	}
	var dirs []recallDir
	visited := map[string]bool{}
	listed := map[string]bool{}
	var found []foundFile // memory files in listed directories
	var visit func(rel string)
	visit = func(rel string) {
		s, isDir, _, err := sd.stat(rel)
		if err != nil || !isDir || visited[rel] {
			return
		}
		visited[rel] = true
		dirs = append(dirs, recallDir{rel: rel, mtime: s.MTime, racy: racy(s.MTime)})
		if old, ok := oldDirs[rel]; ok && old.mtime == s.MTime && !old.racy {
			for _, c := range children[rel] {
				visit(c)
			}
			return
		}
		listed[rel] = true
		// Unsorted, with the types and inodes getdents gives: no lstat
		// per entry.
		if rel == "." && found == nil {
			// The top directory holds most memories (all, in Claude
			// Code's flat layout).
			found = make([]foundFile, 0, x.nfiles()+16)
		}
		var subdirs []string
		listDir(filepath.Join(x.dir, filepath.FromSlash(rel)), func(e dirEnt) {
			p := e.name
			if rel != "." {
				p = rel + "/" + p
			}
			switch {
			case e.isDir:
				subdirs = append(subdirs, p)
			case strings.HasSuffix(p, ".md") && e.name != memdir.EntrypointName:
				found = append(found, foundFile{p, e.ino, e.reg})
			}
		})
		// An unreadable subdirectory is skipped, as a scan does; what a
		// listing that failed half-way gave is kept.
		for _, p := range subdirs {
			visit(p)
		}
	}
	visit(".")
	return dirWalk{dirs, visited, listed, found}
}

// readRecallFile reads a memory for the index: its header from the first 30
// lines, as a scan reads it, up to recallBodyMax bytes of body, and the
// SHA-256 of the whole file.
func readRecallFile(root *os.Root, rel string, hr *memdir.HeaderReader) (recallFile, string, []memdir.Problem) {
	f := recallFile{path: rel, checked: true}
	h, probs, ok := hr.Read(root, rel)
	if !ok {
		f.bad = true
		return f, "", probs
	}
	f.name, f.desc, f.typ = h.Name, h.Description, h.Type
	file, _, err := safeopen.OpenIn(root, rel)
	if err != nil {
		f.bad = true
		return f, "", []memdir.Problem{{Path: rel, Kind: memdir.ProblemRead, Message: err.Error(), Skipped: true}}
	}
	defer file.Close()
	data, err := io.ReadAll(io.LimitReader(file, recallHashMax))
	if err != nil {
		f.bad = true
		return f, "", []memdir.Problem{{Path: rel, Kind: memdir.ProblemRead, Message: err.Error(), Skipped: true}}
	}
	f.hash = sha256.Sum256(data)
	return f, memdir.MemoryBody(data[:min(len(data), recallBodyMax)]), probs
}

// find returns the position of the file at path p in the file table.
func (x *Index) find(p string) (int, bool) {
	if x.view != nil {
		if i, ok := x.view.find(p); ok {
			return i, true
		}
		// Not trusted until the paths are known to be in order.
		x.own()
	}
	// By position, not slices.BinarySearchFunc, whose comparison takes
	// each probed record (136 bytes) by value: recall --json looks up
	// hundreds of hits.
	i := sort.Search(len(x.files), func(i int) bool { return x.files[i].path >= p })
	return i, i < len(x.files) && x.files[i].path == p
}

// has reports whether a searchable memory is at path p.
func (x *Index) has(p string) bool {
	i, ok := x.find(p)
	return ok && !x.badAt(i)
}

// countModified returns, for each of some disjoint spans [from, to) of
// Unix nanoseconds, how many searchable memories were last modified
// within it: one pass over the stamps, a binary search for each stamp
// within the spans' range.
func (x *Index) countModified(spans [][2]int64) []int {
	out := make([]int, len(spans))
	if len(spans) == 0 {
		return out
	}
	order := make([]int, len(spans))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return cmp.Compare(spans[a][0], spans[b][0]) })
	starts := make([]int64, len(order))
	lo, hi := spans[order[0]][0], spans[order[0]][1]
	for k, i := range order {
		starts[k] = spans[i][0]
		hi = max(hi, spans[i][1])
	}
	count := func(t int64) {
		// The last span starting at or before the stamp.
		k, found := slices.BinarySearch(starts, t)
		if !found {
			k--
		}
		if k >= 0 && t < spans[order[k]][1] {
			out[order[k]]++
		}
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if v := x.view; v != nil && v.mtimes != nil {
		// A table read in place, by its column of times (fileView.mtimes);
		// the records put over it, by their own.
		for i := range v.len() {
			t := int64(math.MinInt64)
			if _, e, j := v.at(i); e == nil {
				t = v.mtimes[j]
			} else if st, fl := e.meta(); fl&flagBad == 0 {
				t = st.MTime
			}
			if t >= lo && t < hi { // most memories are of other days than the head's
				count(t)
			}
		}
		return out
	}
	// By the accessors, so that a table read in place counts as one that
	// was copied: it has no records in x.files.
	for i := range x.nfiles() {
		if s, fl := x.metaAt(i); s.MTime >= lo && s.MTime < hi && fl&flagBad == 0 {
			count(s.MTime)
		}
	}
	return out
}

// Headers returns every indexed memory, newest first, like a scan.
func (x *Index) Headers() []memdir.Header {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.checkAll()
	out := make([]memdir.Header, 0, len(x.files))
	for i := range x.files {
		if !x.files[i].bad {
			out = append(out, x.files[i].header(x.dir))
		}
	}
	memdir.SortHeaders(out)
	return out
}

// Entry is one indexed memory as Entries returns it.
type Entry struct {
	Path        string // relative to the directory, slash-separated
	AbsPath     string
	Name        string
	Description string
	Type        memdir.Type
	ModTime     time.Time
	Size        int64
	// Hash is the SHA-256 of the file's bytes, in hex: what caches derived
	// from a memory's content (embeddings) are keyed by.
	Hash string
}

// Entries returns every indexed memory, in path order, with the hash of its
// content. Refresh first.
func (x *Index) Entries() []Entry {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.checkAll()
	out := make([]Entry, 0, len(x.files))
	for i := range x.files {
		f := &x.files[i]
		if f.bad {
			continue
		}
		out = append(out, Entry{
			Path: f.path, AbsPath: filepath.Join(x.dir, filepath.FromSlash(f.path)),
			Name: f.name, Description: f.desc, Type: f.typ,
			ModTime: time.Unix(0, f.stamp.MTime), Size: f.stamp.Size,
			Hash: hex.EncodeToString(f.hash[:]),
		})
	}
	return out
}

// Len returns how many memories the index holds.
func (x *Index) Len() int {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.lex == nil {
		return 0
	}
	return x.lex.Len()
}

// Lookup returns the paths of the indexed memories whose frontmatter name
// is name, in path order. Refresh first.
func (x *Index) Lookup(name string) []string {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.checkAll()
	var out []string
	for i := range x.files {
		if f := &x.files[i]; !f.bad && f.name == name {
			out = append(out, f.path)
		}
	}
	return out
}

// LookupFresh returns the paths of the memories whose frontmatter name may
// be name, without refreshing the index: those the index holds under that
// name, and those the directories list that the index does not know yet,
// whose headers it reads. It stats the directories and lists only those
// whose entries changed, so it costs the same in a large directory as in a
// small one; callers check each path they get (a memory renamed in place
// may still be listed under its old name, and one given this name in place
// may be missing until the index sees the edit). Without a persisted index
// yet, it builds one.
//
// Directories that only memdir's own saves changed since the index file was
// written are not listed either: each save records what it added (see
// recentState), and a lookup that finds every directory as the last save
// left it reads that record instead.
func (x *Index) LookupFresh(ctx context.Context, name string) ([]string, error) {
	paths, _, err := x.lookupFresh(ctx, name)
	return paths, err
}

// lookupFresh is LookupFresh, also returning what it knew of the
// directory's entries beyond the index file (nil when it cannot say), for
// the save that follows to extend (see recentNote).
func (x *Index) lookupFresh(ctx context.Context, name string) ([]string, *recentState, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if !x.loaded && x.cachePath != "" {
		if paths, rs, ok := x.lookupRecent(name); ok {
			return paths, rs, nil
		}
	}
	if !x.loaded {
		x.loaded = true
		x.load()
	}
	if x.lex == nil {
		if _, err := x.refreshLocked(ctx, false); err != nil {
			return nil, nil, err
		}
	}
	x.own()
	var out []string
	for i := range x.files {
		if f := &x.files[i]; !f.bad && f.name == name && x.fileOK(i) {
			out = append(out, f.path)
		}
	}
	sd, err := openStatDir(x.dir)
	if err != nil {
		return out, nil, nil
	}
	defer sd.Close()
	now := x.now().UnixNano()
	w := x.walkDirs(sd, func(t ...int64) bool { return now-t[0] < int64(racyWindow) })
	root, err := os.OpenRoot(x.dir)
	if err != nil {
		return out, nil, nil
	}
	defer root.Close()
	rs := &recentState{Base: x.ident()}
	for _, d := range w.dirs {
		rs.Dirs = append(rs.Dirs, recentDir{d.rel, d.mtime})
	}
	// Files the index does not know: a merge of the sorted listing with the
	// (sorted) index, rather than a search per name.
	slices.SortFunc(w.found, func(a, b foundFile) int { return strings.Compare(a.path, b.path) })
	var hr memdir.HeaderReader
	j := 0
	for _, ff := range w.found {
		p := ff.path
		for j < len(x.files) && x.files[j].path < p {
			j++
		}
		if j < len(x.files) && x.files[j].path == p {
			continue
		}
		h, _, ok := hr.Read(root, p)
		if ok && h.Name == name {
			out = append(out, p)
		}
		rs.Files = append(rs.Files, recentFile{p, h.Name})
	}
	if x.base == "" || x.damaged {
		rs = nil
	}
	return out, rs, nil
}

// Search ranks the indexed memories against query and returns the best k
// with their headers. Refresh first.
func (x *Index) Search(query string, k int) ([]lexical.Hit, []memdir.Header) {
	return x.search(query, k, k)
}

// search is Search that re-reads only the first fresh hits when their files
// changed (fresh < 0: all); the headers of the others are those of the last
// refresh, which is what a long manifest tail needs.
func (x *Index) search(query string, k, fresh int) ([]lexical.Hit, []memdir.Header) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.lex == nil {
		return nil, nil
	}
	hits := x.lex.Search(query, k)
	for _, h := range hits {
		if i, ok := x.find(h.ID); ok {
			x.fileOK(i)
		}
	}
	if x.lex.Corrupt() || x.damaged {
		// The mapped file was damaged: rebuild from the directory.
		x.reset()
		if _, err := x.refreshLocked(context.Background(), true); err != nil || x.lex == nil {
			return nil, nil
		}
		hits = x.lex.Search(query, k)
	}
	// What is returned is read from the files as they are now.
	if fresh < 0 || fresh > len(hits) {
		fresh = len(hits)
	}
	ids := make([]string, fresh)
	for i, h := range hits[:fresh] {
		ids[i] = h.ID
	}
	if x.recheck(ids) {
		hits = x.lex.Search(query, k)
	}
	out := hits[:0]
	hs := make([]memdir.Header, 0, len(hits))
	for _, h := range hits {
		if i, ok := x.find(h.ID); ok && !x.badAt(i) {
			out = append(out, h)
			hs = append(hs, x.headerAt(i))
		}
	}
	return out, hs
}

// dirsChanged reports whether a directory of the tree changed its entries
// since the last refresh: a few stats, which cover a notification not yet
// delivered for a file just created or renamed (as every memdir write is).
func (x *Index) dirsChanged() bool {
	sd, err := openStatDir(x.dir)
	if err != nil {
		return true
	}
	defer sd.Close()
	for _, d := range x.dirs {
		s, isDir, _, err := sd.stat(d.rel)
		if err != nil || !isDir || s.MTime != d.mtime || d.racy {
			return true
		}
	}
	return false
}

// recheck stats the files at paths (known to the index) and re-reads those
// that changed, or changed too recently to trust, updating the index. It
// reports whether the index changed.
func (x *Index) recheck(paths []string) bool {
	sd, err := openStatDir(x.dir)
	if err != nil {
		return false
	}
	defer sd.Close()
	type change struct {
		i     int
		stamp fileStamp
		gone  bool
	}
	var changes []change
	for _, p := range paths {
		i, ok := x.find(p)
		if !ok {
			continue
		}
		s, _, isReg, err := sd.stat(p)
		switch {
		case err != nil || !isReg:
			changes = append(changes, change{i: i, gone: true})
		default:
			if old, fl := x.metaAt(i); s != *old || fl&flagRacy != 0 {
				changes = append(changes, change{i: i, stamp: s})
			}
		}
	}
	if len(changes) == 0 {
		return false
	}
	x.own() // positions stay what they were
	root, err := os.OpenRoot(x.dir)
	if err != nil {
		return false
	}
	defer root.Close()
	now := x.now().UnixNano()
	changed, dirty := false, false
	var gone []int
	for _, c := range changes {
		old := &x.files[c.i]
		if c.gone {
			if !old.bad {
				x.lex.Remove(old.path)
			}
			x.noteGone(old.path)
			gone = append(gone, c.i)
			changed, dirty = true, true
			continue
		}
		f, body, _ := readRecallFile(root, old.path, &memdir.HeaderReader{})
		f.stamp = c.stamp
		f.racy = now-max(c.stamp.MTime, c.stamp.CTime) < int64(racyWindow)
		if sameRecord(old, &f) {
			continue
		}
		dirty = true
		doc := false
		switch {
		case f.bad:
			changed = changed || !old.bad
			doc = true
			x.lex.Remove(old.path)
		case old.bad || f.hash != old.hash:
			changed, doc = true, true
			x.lex.Put(lexical.Doc{ID: f.path, Name: f.name, Description: f.desc, Body: body})
		}
		x.noteFile(f, doc, body)
		*old = f
	}
	slices.Sort(gone)
	for j := len(gone) - 1; j >= 0; j-- {
		x.files = slices.Delete(x.files, gone[j], gone[j]+1)
	}
	if dirty && x.cachePath != "" {
		x.save()
	}
	return changed
}

// The cache file: a header, a table of files and one of directories, a
// string blob, then the lexical segment (see lexical.Load), each section
// 8-byte aligned, in the machine's byte order.

const (
	recallMagic     = "MDRECIDX"
	recallVersion   = 3
	recallOrderMark = 0x01020304
)

type recallDiskHeader struct {
	Magic      [8]byte
	Order      uint32
	Version    uint32
	NFiles     uint32
	NDirs      uint32
	DirOff     uint32
	DirLen     uint32
	BlobOff    uint64
	BlobLen    uint64
	LexOff     uint64
	LexLen     uint64
	FilesOff   uint64
	DirsOff    uint64
	SourceSize uint64 // the file's own length, to catch truncation
	// TablesCRC is the CRC-32C of the file and directory tables and the
	// strings; HeaderCRC that of the header up to it.
	TablesCRC, HeaderCRC uint32
}

// diskFile.StrCRC and the strings of each file are checked on first use;
// TablesCRC covers the two tables and the strings of the directory and of
// the directory table.

var recallCRC = sync.OnceValue(func() *crc32.Table { return crc32.MakeTable(crc32.Castagnoli) })

func (h *recallDiskHeader) crc() uint32 {
	return crc32.Checksum(unsafe.Slice((*byte)(unsafe.Pointer(h)), unsafe.Offsetof(h.TablesCRC)), recallCRC())
}

func tablesCRC(files []diskFile, dirs []diskDir, blob []byte, dirOff, dirLen uint32) uint32 {
	return dirsCRC(crc32.Update(0, recallCRC(), rawBytes(files)), dirs, blob, dirOff, dirLen)
}

// scanFiles sums the file table as tablesCRC does, and checks what in it
// the checksum does not make sound: each record's strings lie in a blob of
// blobLen bytes, and its type is known. The file table is read in place
// (see fileView), so these are all its checks at load; each file's strings
// are checked on first use, and the paths' order when the table is owned.
// It counts the files that can be searched, and fills mtimes (when not
// nil, of len(files)) as fileView.mtimes. The table is summed and
// checked a block at a time, so that it is read from memory once: at
// 100,000 memories it is 10 MB, and the check was a pass of its own.
func scanFiles(files []diskFile, blobLen uint64, mtimes []int64) (crc uint32, good int, ok bool) {
	const block = 512 // records, about 50 KB
	for at := 0; at < len(files); at += block {
		part := files[at:min(at+block, len(files))]
		crc = crc32.Update(crc, recallCRC(), rawBytes(part))
		for i := range part {
			d := &part[i]
			if uint64(d.PathOff)+uint64(d.PathLen) > blobLen || uint64(d.NameOff)+uint64(d.NameLen) > blobLen ||
				uint64(d.DescOff)+uint64(d.DescLen) > blobLen || int(d.Type) >= len(recallTypes) {
				return 0, 0, false
			}
			t := d.Stamp.MTime
			if d.Flags&flagBad == 0 {
				good++
			} else {
				t = math.MinInt64
			}
			if mtimes != nil {
				mtimes[at+i] = t
			}
		}
	}
	return crc, good, true
}

// dirsCRC continues tablesCRC's sum c of the file table with the rest.
func dirsCRC(c uint32, dirs []diskDir, blob []byte, dirOff, dirLen uint32) uint32 {
	c = crc32.Update(c, recallCRC(), rawBytes(dirs))
	str := func(off, n uint32) {
		if uint64(off)+uint64(n) <= uint64(len(blob)) {
			c = crc32.Update(c, recallCRC(), blob[off:off+n])
		}
	}
	str(dirOff, dirLen)
	for _, d := range dirs {
		str(d.RelOff, d.RelLen)
	}
	return c
}

type diskFile struct {
	PathOff, PathLen, NameOff, NameLen, DescOff, DescLen uint32
	Type, Flags                                          uint32
	StrCRC, _                                            uint32
	Stamp                                                fileStamp
	Hash                                                 [sha256.Size]byte
}

type diskDir struct {
	RelOff, RelLen, Flags, _ uint32
	MTime                    int64
}

const (
	flagRacy = 1 << iota
	flagBad
)

var recallTypes = []memdir.Type{"", memdir.TypeUser, memdir.TypeFeedback, memdir.TypeProject, memdir.TypeReference}

func sliceAt[T any](data []byte, off uint64, n uint32) ([]T, bool) {
	size := uint64(unsafe.Sizeof(*new(T)))
	if off%8 != 0 || off > uint64(len(data)) || uint64(n)*size > uint64(len(data))-off {
		return nil, false
	}
	if n == 0 {
		return nil, true
	}
	return unsafe.Slice((*T)(unsafe.Pointer(&data[off])), n), true
}

func strAt(blob []byte, off, n uint32) (string, bool) {
	if uint64(off)+uint64(n) > uint64(len(blob)) {
		return "", false
	}
	if n == 0 {
		return "", true
	}
	return unsafe.String(&blob[off], int(n)), true
}

// load opens the cache file in place. Anything wrong with it leaves the
// index empty, to be rebuilt.
func (x *Index) load() {
	if x.cachePath == "" {
		return
	}
	defer func() {
		if recover() != nil {
			x.reset()
		}
	}()
	data, err := mapFile(x.cachePath)
	if err != nil {
		return
	}
	h, blob, ok := checkRecallHeader(data)
	if !ok {
		return
	}
	if dir, ok := strAt(blob, h.DirOff, h.DirLen); !ok || dir != x.dir {
		return // another directory's index (or a hash collision of names)
	}
	dfs, ok1 := sliceAt[diskFile](data, h.FilesOff, h.NFiles)
	dds, ok2 := sliceAt[diskDir](data, h.DirsOff, h.NDirs)
	lexData, ok3 := sliceAt[byte](data, h.LexOff, uint32(min(h.LexLen, 1<<32-1)))
	if ok1 {
		// The mapped table is read whole, by its checksum here and by the
		// refresh: mapped in one call, not a fault per 16 pages (160 of
		// them at 100,000 memories).
		prefault.Read(rawBytes(dfs))
	}
	if !ok1 || !ok2 || !ok3 || uint64(len(lexData)) != h.LexLen {
		return
	}
	mtimes := make([]int64, len(dfs))
	c, good, ok := scanFiles(dfs, uint64(len(blob)), mtimes)
	if !ok || dirsCRC(c, dds, blob, h.DirOff, h.DirLen) != h.TablesCRC {
		return
	}
	dirs := make([]recallDir, len(dds))
	for i := range dds {
		rel, ok := strAt(blob, dds[i].RelOff, dds[i].RelLen)
		if !ok {
			return
		}
		dirs[i] = recallDir{rel: rel, mtime: dds[i].MTime, racy: dds[i].Flags&flagRacy != 0}
	}
	lex, err := lexical.Load(lexData, nil)
	if err != nil || lex.Len() != good {
		return
	}
	x.files, x.view, x.dirs, x.lex = nil, newFileView(dfs, blob, good), dirs, lex
	x.view.mtimes = mtimes
	x.base = recallBase(h)
	x.loadDelta()
	if x.lex != nil && x.lex.Corrupt() {
		x.reset() // damage found replaying the delta: rebuild
	}
}

// save writes the cache file atomically. It is derived data: when another
// process holds the lock, or the write fails, the next refresh catches up.
//
// When few files changed since the base file was written, only the delta
// file is written (see delta.go); otherwise the whole index, which
// replaces both.
func (x *Index) save() {
	if err := atomicfile.MkdirAll(filepath.Dir(x.cachePath), 0o700); err != nil {
		x.base = ""
		return
	}
	lock, ok, err := flock.TryAcquire(x.cachePath + ".lock")
	if err != nil || !ok {
		x.base = "" // the files do not hold what x does
		return
	}
	defer lock.Unlock()
	if x.deltaFits() && x.saveDelta() {
		return
	}
	x.base, x.delta, x.deltaSum = "", nil, "" // until the file holds what x does
	data, err := x.marshal()
	if err != nil {
		return
	}
	if atomicfile.WriteMapped(x.cachePath, data, 0o600) != nil {
		return
	}
	x.base = recallBase((*recallDiskHeader)(unsafe.Pointer(&data[0])))
	x.replacedBase()
}

func (x *Index) marshal() ([]byte, error) {
	out, h, err := x.marshalHead()
	if err != nil {
		return nil, err
	}
	out, err = x.lex.AppendBinary(out)
	if err != nil {
		return nil, err
	}
	h.finish(uint64(len(out)) - h.LexOff)
	copy(out, rawBytes([]recallDiskHeader{h}))
	return out, nil
}

// marshalHead returns what the cache file holds before the lexical
// segment, up to where it starts (h.LexOff): the header's place (to be
// filled in by h.finish once the segment's length is known), the file and
// directory tables and the strings.
func (x *Index) marshalHead() ([]byte, recallDiskHeader, error) {
	h, err := x.headLayout()
	if err != nil {
		return nil, h, err
	}
	out := bytes.NewBuffer(make([]byte, 0, h.LexOff))
	h, err = x.writeHead(out, h)
	return out.Bytes(), h, err
}

// headLayout returns the header of the head marshalHead makes, its
// tables' offsets set.
func (x *Index) headLayout() (recallDiskHeader, error) {
	x.own()
	blobLen := uint64(len(x.dir))
	for i := range x.files {
		f := &x.files[i]
		blobLen += uint64(len(f.path) + len(f.name) + len(f.desc))
	}
	for _, d := range x.dirs {
		blobLen += uint64(len(d.rel))
	}
	var h recallDiskHeader
	if blobLen > math.MaxUint32 {
		return h, errors.New("recall index too large")
	}
	copy(h.Magic[:], recallMagic)
	h.Order, h.Version = recallOrderMark, recallVersion
	h.NFiles, h.NDirs = uint32(len(x.files)), uint32(len(x.dirs))
	h.FilesOff = align8(uint64(unsafe.Sizeof(h)))
	h.DirsOff = align8(h.FilesOff + uint64(len(x.files))*uint64(unsafe.Sizeof(diskFile{})))
	h.BlobOff, h.BlobLen = align8(h.DirsOff+uint64(len(x.dirs))*uint64(unsafe.Sizeof(diskDir{}))), blobLen
	h.LexOff = align8(h.BlobOff + blobLen)
	h.DirOff, h.DirLen = 0, uint32(len(x.dir))
	return h, nil
}

func align8(n uint64) uint64 { return (n + 7) &^ 7 }

// writeHead writes the head of layout h (headLayout's) to w in order,
// the header's place zeroed, and returns h with its tables' checksum.
// The records are made a block at a time: a first build of 100,000
// memories streams its 27 MB head into the file instead of holding it
// while the lexical segment is laid out.
func (x *Index) writeHead(w io.Writer, h recallDiskHeader) (recallDiskHeader, error) {
	pos := uint64(0)
	var werr error
	put := func(b []byte) {
		if werr == nil {
			_, werr = w.Write(b)
		}
		pos += uint64(len(b))
	}
	var zero [8]byte
	padTo := func(off uint64) { put(zero[:off-pos]) }
	put(make([]byte, unsafe.Sizeof(h)))
	padTo(h.FilesOff)
	crc := uint32(0)
	// The strings' offsets in the blob, in the order they are written.
	next := uint32(h.DirLen)
	str := func(s string) (uint32, uint32) {
		off := next
		next += uint32(len(s))
		return off, uint32(len(s))
	}
	var block [256]diskFile
	for i := 0; i < len(x.files); i += len(block) {
		recs := block[:min(len(block), len(x.files)-i)]
		for k := range recs {
			f := &x.files[i+k]
			d := &recs[k]
			*d = diskFile{Stamp: f.stamp, Hash: f.hash, StrCRC: f.strCRC()}
			d.PathOff, d.PathLen = str(f.path)
			d.NameOff, d.NameLen = str(f.name)
			d.DescOff, d.DescLen = str(f.desc)
			d.Type = uint32(max(0, slices.Index(recallTypes, f.typ)))
			if f.racy {
				d.Flags |= flagRacy
			}
			if f.bad {
				d.Flags |= flagBad
			}
		}
		crc = crc32.Update(crc, recallCRC(), rawBytes(recs))
		put(rawBytes(recs))
	}
	padTo(h.DirsOff)
	dds := make([]diskDir, len(x.dirs))
	for i, d := range x.dirs {
		dds[i].RelOff, dds[i].RelLen = str(d.rel)
		dds[i].MTime = d.mtime
		if d.racy {
			dds[i].Flags = flagRacy
		}
	}
	crc = crc32.Update(crc, recallCRC(), rawBytes(dds))
	put(rawBytes(dds))
	// tablesCRC's strings: the directory's, then each directory's.
	crc = crc32.Update(crc, recallCRC(), strBytes(x.dir))
	for _, d := range x.dirs {
		crc = crc32.Update(crc, recallCRC(), strBytes(d.rel))
	}
	h.TablesCRC = crc
	padTo(h.BlobOff)
	put(strBytes(x.dir))
	for i := range x.files {
		f := &x.files[i]
		put(strBytes(f.path))
		put(strBytes(f.name))
		put(strBytes(f.desc))
	}
	for _, d := range x.dirs {
		put(strBytes(d.rel))
	}
	padTo(h.LexOff)
	if werr == nil && pos != h.LexOff {
		werr = fmt.Errorf("recall index: head of %d bytes, laid out as %d", pos, h.LexOff)
	}
	return h, werr
}

// finish completes a header of marshalHead once the lexical segment,
// lexLen bytes, is written.
func (h *recallDiskHeader) finish(lexLen uint64) {
	h.LexLen = lexLen
	h.SourceSize = h.LexOff + lexLen
	h.HeaderCRC = h.crc()
}

func rawBytes[T any](s []T) []byte {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), len(s)*int(unsafe.Sizeof(s[0])))
}

// Newest returns the k newest indexed memories whose paths are not in skip,
// newest first (as Headers orders them), and how many memories the index
// holds outside skip: what recall needs of the whole directory, without
// building and sorting a header for every memory. Refresh first.
func (x *Index) Newest(k int, skip map[string]bool) ([]memdir.Header, int) {
	x.mu.Lock()
	defer x.mu.Unlock()
	out, total, ok := x.newest(k, skip)
	if !ok {
		// A returned entry failed its check: rebuild and choose again.
		x.reset()
		x.refreshLocked(context.Background(), true)
		out, total, _ = x.newest(k, skip)
	}
	return out, total
}

// positionsOf returns the positions in the file table of the paths in
// skip, ascending, found by binary search: a session's surfaced memories
// are a few dozen, and looking every path of the directory up in their set
// hashed 100,000 strings on each prompt after a session's first. bySet is
// true, with no positions, when a path is not found (a memory removed
// since it was surfaced, or a table out of order): the set is then looked
// up for every path, as before.
func (x *Index) positionsOf(skip map[string]bool) (at []int, bySet bool) {
	for p := range skip {
		var i int
		var ok bool
		if x.view != nil {
			i, ok = x.view.find(p) // a miss must not copy the table (see find)
		} else {
			i, ok = x.find(p)
		}
		if !ok {
			return nil, true
		}
		at = append(at, i)
	}
	slices.Sort(at)
	return at, false
}

// newest is Newest under the lock. The choice rests on the stamps, which
// the file table's checksum covers; only the strings of the entries
// returned are checked (a check of every entry would cost a pass over all
// the directory's names and descriptions on every prompt). ok is false if
// one of them is damaged.
func (x *Index) newest(k int, skip map[string]bool) (out []memdir.Header, total int, ok bool) {
	older := func(a, b int) bool { // a sorts after b
		sa, _ := x.metaAt(a)
		sb, _ := x.metaAt(b)
		if sa.MTime != sb.MTime {
			return sa.MTime < sb.MTime
		}
		return x.pathAt(a) > x.pathAt(b)
	}
	// A min-heap of the k newest so far, the oldest of them at the root.
	h := make([]int, 0, max(k, 0))
	down := func(i int) {
		for {
			l, s := 2*i+1, i
			if l < len(h) && older(h[l], h[s]) {
				s = l
			}
			if r := l + 1; r < len(h) && older(h[r], h[s]) {
				s = r
			}
			if s == i {
				return
			}
			h[i], h[s] = h[s], h[i]
			i = s
		}
	}
	skipAt, bySet := x.positionsOf(skip)
	for i := range x.nfiles() {
		if len(skipAt) > 0 && skipAt[0] == i {
			skipAt = skipAt[1:]
			continue
		}
		if x.badAt(i) || bySet && skip[x.pathAt(i)] {
			continue
		}
		total++
		switch {
		case k <= 0:
		case len(h) < k:
			h = append(h, i)
			for j := len(h) - 1; j > 0; {
				p := (j - 1) / 2
				if !older(h[j], h[p]) {
					break
				}
				h[j], h[p] = h[p], h[j]
				j = p
			}
		case older(h[0], i):
			h[0] = i
			down(0)
		}
	}
	out = make([]memdir.Header, len(h))
	for i, j := range h {
		if !x.fileOK(j) {
			return nil, 0, false
		}
		out[i] = x.headerAt(j)
	}
	memdir.SortHeaders(out)
	return out, total, true
}
