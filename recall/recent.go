package recall

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"
	"unsafe"

	"github.com/memdir/memdir/internal/atomicfile"
	"github.com/memdir/memdir/internal/safeopen"
)

// The recent-saves record (<cache>.recent) lets a save find a memory by name
// without listing a directory that memdir's own saves changed since the
// index file was written. Every save changes its directory (it renames its
// file into place), so without it each save after the first lists the whole
// directory, which costs in proportion to its size; rewriting the index file
// after each save would cost more.
//
// It says: with the index file identified by Base, the directories of the
// tree had these modification times, and their memory files were those of
// the index plus Files (whose names are given). A lookup that finds every
// directory's modification time unchanged trusts it instead of listing;
// anything else (a directory changed by another tool, a removal, a new
// directory, another index file) sends the lookup back to listing the
// changed directories. Only Save writes it, under the directory lock, after
// checking under the lock that the directories are as its lookup found
// them. It is derived and advisory, like the cursor: written by rename
// without fsync, so a lost or damaged record (it fails to decode, or its
// times do not match) only costs a listing.

// recentMax bounds the files a record holds beyond the index; past it saves
// list again until a refresh rewrites the index.
const recentMax = 1024

type recentState struct {
	Base  string       `json:"base"`
	Dirs  []recentDir  `json:"dirs"`
	Files []recentFile `json:"files"`
}

type recentDir struct {
	Rel   string `json:"rel"`
	MTime int64  `json:"mtime"`
}

type recentFile struct {
	Path string `json:"path"`
	Name string `json:"name"`
}

func (x *Index) recentPath() string { return x.cachePath + ".recent" }

// fineTime reports whether a modification time can be trusted to change on
// the next change of its directory: on file systems with whole-second (or
// coarser) timestamps, a second change within the same second leaves it
// unchanged, so a record is not trusted there.
func fineTime(t int64) bool { return t%1e9 != 0 }

// recallBase identifies an index file by its header: the header's CRC
// covers the tables' CRC and the file's length.
func recallBase(h *recallDiskHeader) string {
	return fmt.Sprintf("%08x-%08x-%d", h.HeaderCRC, h.TablesCRC, h.SourceSize)
}

// checkRecallHeader checks the header of a mapped index file and returns it with
// the string blob.
func checkRecallHeader(data []byte) (*recallDiskHeader, []byte, bool) {
	if len(data) < int(unsafe.Sizeof(recallDiskHeader{})) {
		return nil, nil, false
	}
	h := (*recallDiskHeader)(unsafe.Pointer(&data[0]))
	if string(h.Magic[:]) != recallMagic || h.Order != recallOrderMark || h.Version != recallVersion || h.SourceSize != uint64(len(data)) || h.HeaderCRC != h.crc() {
		return nil, nil, false
	}
	blob, ok := sliceAt[byte](data, h.BlobOff, uint32(min(h.BlobLen, 1<<32-1)))
	if !ok || uint64(len(blob)) != h.BlobLen {
		return nil, nil, false
	}
	return h, blob, true
}

// readRecent returns the record, or nil when there is none that decodes.
func (x *Index) readRecent() *recentState {
	data, err := safeopen.ReadFile(x.recentPath(), 16<<20)
	if err != nil {
		return nil
	}
	var rs recentState
	if json.Unmarshal(data, &rs) != nil || rs.Base == "" || len(rs.Dirs) == 0 {
		return nil
	}
	return &rs
}

// lookupRecent is LookupFresh through the recent-saves record: when the
// record extends the index file as it is and every directory is as the
// record says, the memories named name are those the index and the record
// list under it, and no directory need be listed. ok is false when the
// record cannot be used.
func (x *Index) lookupRecent(name string) (paths []string, rs *recentState, ok bool) {
	defer func() {
		if recover() != nil { // a damaged mapping: list instead
			paths, rs, ok = nil, nil, false
		}
	}()
	rs = x.readRecent()
	if rs == nil {
		return nil, nil, false
	}
	data, err := mapFile(x.cachePath)
	if err != nil {
		return nil, nil, false
	}
	// Unmapped on return, so that a long-lived process saving often does
	// not pile up mappings: the paths returned are copies.
	defer unmapFile(data)
	h, blob, ok := checkRecallHeader(data)
	if !ok {
		return nil, nil, false
	}
	// The delta file, when it extends this base, is part of what the
	// record extends.
	ident := recallBase(h)
	var delta *deltaFile
	switch d, err := readDelta(x.deltaPath()); {
	case err == nil && d.base == ident:
		delta, ident = d, ident+"+"+d.sum
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return nil, nil, false
	}
	if ident != rs.Base {
		return nil, nil, false
	}
	if dir, ok := strAt(blob, h.DirOff, h.DirLen); !ok || dir != x.dir {
		return nil, nil, false
	}
	sd, err := openStatDir(x.dir)
	if err != nil {
		return nil, nil, false
	}
	defer sd.Close()
	for _, d := range rs.Dirs {
		s, isDir, _, err := sd.stat(d.Rel)
		if err != nil || !isDir || s.MTime != d.MTime || !fineTime(d.MTime) {
			return nil, nil, false
		}
	}
	dfs, ok1 := sliceAt[diskFile](data, h.FilesOff, h.NFiles)
	dds, ok2 := sliceAt[diskDir](data, h.DirsOff, h.NDirs)
	if !ok1 || !ok2 || tablesCRC(dfs, dds, blob, h.DirOff, h.DirLen) != h.TablesCRC {
		return nil, nil, false
	}
	for i := range dfs {
		d := &dfs[i]
		if d.Flags&flagBad != 0 || int(d.NameLen) != len(name) {
			continue
		}
		n, ok := strAt(blob, d.NameOff, d.NameLen)
		if !ok || n != name {
			continue
		}
		if delta != nil {
			p, _ := strAt(blob, d.PathOff, d.PathLen)
			if _, ok := slices.BinarySearch(delta.paths, p); ok {
				continue // the delta says what it is now
			}
		}
		f := recallFile{name: n}
		var ok1, ok2 bool
		f.path, ok1 = strAt(blob, d.PathOff, d.PathLen)
		f.desc, ok2 = strAt(blob, d.DescOff, d.DescLen)
		if !ok1 || !ok2 || f.strCRC() != d.StrCRC {
			return nil, nil, false // damaged: the full lookup rebuilds it
		}
		paths = append(paths, strings.Clone(f.path))
	}
	if delta != nil {
		for i, p := range delta.paths {
			if e := &delta.entries[i]; !e.gone && !e.f.bad && e.f.name == name {
				paths = append(paths, strings.Clone(p))
			}
		}
	}
	for _, f := range rs.Files {
		if f.Name == name {
			paths = append(paths, f.Path)
		}
	}
	return paths, rs, true
}

// recentNote carries what a save's lookup knew of the directory to the
// save's end, where it becomes the record the next save's lookup uses.
type recentNote struct {
	x  *Index
	rs *recentState
	ok bool
}

// before is called under the directory lock, before the save changes
// anything: the record may be written only if every directory is still as
// the lookup found it (no one changed it in between).
func (n *recentNote) before() {
	if n == nil || n.rs == nil || n.rs.Base == "" || len(n.rs.Files) >= recentMax {
		return
	}
	sd, err := openStatDir(n.x.dir)
	if err != nil {
		return
	}
	defer sd.Close()
	for _, d := range n.rs.Dirs {
		s, isDir, _, err := sd.stat(d.Rel)
		if err != nil || !isDir || s.MTime != d.MTime {
			return
		}
	}
	n.ok = true
}

// after is called under the directory lock once the save has written the
// memory at rel, named name, and its index line: the directories now have
// the entries they had plus rel, so the record takes their new times.
func (n *recentNote) after(rel, name string) {
	if n == nil || !n.ok {
		return
	}
	n.ok = false
	rs := *n.rs
	parent := path.Dir(rel)
	known := false
	for _, d := range rs.Dirs {
		known = known || d.Rel == parent
	}
	if !known {
		return // the save made a directory: the next lookup lists it
	}
	sd, err := openStatDir(n.x.dir)
	if err != nil {
		return
	}
	defer sd.Close()
	rs.Dirs = make([]recentDir, len(n.rs.Dirs))
	for i, d := range n.rs.Dirs {
		s, isDir, _, err := sd.stat(d.Rel)
		if err != nil || !isDir || !fineTime(s.MTime) {
			return
		}
		rs.Dirs[i] = recentDir{d.Rel, s.MTime}
	}
	rs.Files = make([]recentFile, 0, len(n.rs.Files)+1)
	for _, f := range n.rs.Files {
		if f.Path != rel {
			rs.Files = append(rs.Files, f)
		}
	}
	rs.Files = append(rs.Files, recentFile{rel, name})
	n.x.writeRecent(&rs)
}

// writeRecent replaces the record by rename. It is not fsynced: see above.
func (x *Index) writeRecent(rs *recentState) {
	data, err := json.Marshal(rs)
	if err != nil {
		return
	}
	replaceAdvisory(x.recentPath(), data)
}

// replaceAdvisory replaces the small advisory file at p (the cursor, the
// recent-saves record) with data by rename, never through whatever stands
// at p, without fsync: a lost or torn write only costs the next refresh a
// little work.
func replaceAdvisory(p string, data []byte) { atomicfile.ReplaceNoSync(p, data, 0o600) }
