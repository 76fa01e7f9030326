package recall

import (
	"sort"

	"github.com/memdir/memdir"
)

// fileView is the file table of a mapped cache file, read in place: what a
// process that only searches needs of the records (a few stamps and flags
// for the refresh, the headers of the hits) costs about what it reads, not
// a copy of every record. At 100,000 memories the copy was 14 MB written
// into fresh pages, a third of a warm hook's opening of the index.
//
// The records a replayed delta file or a refresh put over the base are
// held beside it: order then says where each sits. Anything that changes the table, or
// needs every record, first makes it records of its own (see Index.own).
type fileView struct {
	disk []diskFile // the base's table, sorted by path
	blob []byte     // its strings
	// extra holds the records put over the base; order, when not nil,
	// gives the table in path order: a position of disk, or ^ a position
	// of extra.
	extra []recallFile
	order []int32
	// checked has a bit per position of disk whose strings were verified
	// against their checksum.
	checked []uint64
	// good counts the files that can be searched.
	good int
	// mtimes has, for each record of disk, its modification time, or
	// math.MinInt64 when it cannot be searched: what the day factor
	// counts on every query (Index.countModified), in 8 bytes a file
	// rather than a pass over 104-byte records. Made at load, from the
	// pass that checks the table (scanFiles); nil where the view was made
	// without it.
	mtimes []int64
}

// newFileView views the table disk, whose strings are in blob and of
// which good files can be searched.
func newFileView(disk []diskFile, blob []byte, good int) *fileView {
	return &fileView{disk: disk, blob: blob, checked: make([]uint64, (len(disk)+63)/64), good: good}
}

func (v *fileView) len() int {
	if v.order != nil {
		return len(v.order)
	}
	return len(v.disk)
}

// at returns where the file at position i is: in disk (d) or in extra (e).
func (v *fileView) at(i int) (d *diskFile, e *recallFile, j int) {
	if v.order == nil {
		return &v.disk[i], nil, i
	}
	s := v.order[i]
	if s < 0 {
		return nil, &v.extra[^s], 0
	}
	return &v.disk[s], nil, int(s)
}

// The strings were checked against the blob's length at load.
func (v *fileView) str(off, n uint32) string {
	s, _ := strAt(v.blob, off, n)
	return s
}

func (v *fileView) path(i int) string {
	d, e, _ := v.at(i)
	if e != nil {
		return e.path
	}
	return v.str(d.PathOff, d.PathLen)
}

// meta returns the stamp of the file at position i, in place, and its
// flags (flagRacy, flagBad).
func (v *fileView) meta(i int) (*fileStamp, uint32) {
	d, e, _ := v.at(i)
	if e != nil {
		return e.meta()
	}
	return &d.Stamp, d.Flags
}

// record returns the file at position i as a record of its own.
func (v *fileView) record(i int) recallFile {
	d, e, j := v.at(i)
	if e != nil {
		return *e
	}
	return recallFile{
		path: v.str(d.PathOff, d.PathLen), name: v.str(d.NameOff, d.NameLen), desc: v.str(d.DescOff, d.DescLen),
		typ: recallTypes[d.Type], stamp: d.Stamp, hash: d.Hash,
		racy: d.Flags&flagRacy != 0, bad: d.Flags&flagBad != 0,
		crc: d.StrCRC, checked: v.checked[j/64]&(1<<(j%64)) != 0,
	}
}

// fileOK verifies the strings of the file at position i, as Index.fileOK.
func (v *fileView) fileOK(i int) bool {
	_, e, j := v.at(i)
	if e != nil {
		if !e.checked && e.strCRC() != e.crc {
			return false
		}
		e.checked = true
		return true
	}
	bit := uint64(1) << (j % 64)
	if v.checked[j/64]&bit != 0 {
		return true
	}
	f := v.record(i)
	if f.strCRC() != f.crc {
		return false
	}
	v.checked[j/64] |= bit
	return true
}

// find returns the position of path p, by a binary search of the paths.
// A path damaged in the blob can misplace the search: a miss is only
// trusted once the table is checked in order (see Index.find).
func (v *fileView) find(p string) (int, bool) {
	i := sort.Search(v.len(), func(i int) bool { return v.path(i) >= p })
	return i, i < v.len() && v.path(i) == p
}

// records returns every file as records, in path order, and whether the
// paths are in order, as a table the index wrote always is.
func (v *fileView) records() ([]recallFile, bool) {
	files := make([]recallFile, v.len())
	sorted := true
	for i := range files {
		files[i] = v.record(i)
		if i > 0 && files[i-1].path >= files[i].path {
			sorted = false
		}
	}
	return files, sorted
}

// searchable counts the files that can be searched.
func (v *fileView) searchable() int { return v.good }

// parentsKept reports whether a refresh's walk leaves every file where it
// was: no directory was listed, and every directory the table knows was
// visited (a file's directory is always one of them). Such a refresh
// need not read every file's path.
func parentsKept(dirs []recallDir, w dirWalk) bool {
	if len(w.listed) > 0 {
		return false
	}
	for _, d := range dirs {
		if !w.visited[d.rel] {
			return false
		}
	}
	return true
}

// The index's file table, whether viewed in place or owned: x.view when
// not nil, else x.files. All are called with x.mu held.

func (x *Index) nfiles() int {
	if x.view != nil {
		return x.view.len()
	}
	return len(x.files)
}

func (x *Index) pathAt(i int) string {
	if x.view != nil {
		return x.view.path(i)
	}
	return x.files[i].path
}

// metaAt returns the stamp of the file at position i, in place, and its
// flags (flagRacy, flagBad).
func (x *Index) metaAt(i int) (*fileStamp, uint32) {
	if x.view != nil {
		return x.view.meta(i)
	}
	return x.files[i].meta()
}

func (f *recallFile) meta() (*fileStamp, uint32) {
	var fl uint32
	if f.racy {
		fl |= flagRacy
	}
	if f.bad {
		fl |= flagBad
	}
	return &f.stamp, fl
}

func (x *Index) badAt(i int) bool {
	_, fl := x.metaAt(i)
	return fl&flagBad != 0
}

func (x *Index) headerAt(i int) memdir.Header {
	if x.view != nil {
		f := x.view.record(i)
		return f.header(x.dir)
	}
	return x.files[i].header(x.dir)
}

// own makes the viewed file table records of the index's own, for what
// changes it or reads all of it. Paths out of order (a damaged blob) mark
// the index damaged, to be rebuilt.
func (x *Index) own() {
	if x.view == nil {
		return
	}
	files, sorted := x.view.records()
	x.files, x.view = files, nil
	if !sorted {
		x.damaged = true
	}
}

// recordAt returns the file at position i as a record of its own.
func (x *Index) recordAt(i int) recallFile {
	if x.view != nil {
		return x.view.record(i)
	}
	return x.files[i]
}

// markChecked notes that the strings of the file at position i are known
// to be right (it was just read).
func (x *Index) markChecked(i int) {
	if x.view == nil {
		x.files[i].checked = true
		return
	}
	if _, e, j := x.view.at(i); e != nil {
		e.checked = true
	} else {
		x.view.checked[j/64] |= 1 << (j % 64)
	}
}

// replaceAt puts f, of the same path, in place of the file at position i.
func (x *Index) replaceAt(i int, f recallFile) {
	if x.view == nil {
		x.files[i] = f
		return
	}
	v := x.view
	if _, fl := v.meta(i); fl&flagBad == 0 {
		v.good--
	}
	if !f.bad {
		v.good++
	}
	v.ordered()
	v.order[i] = ^int32(len(v.extra))
	v.extra = append(v.extra, f)
}

// ordered gives the view an order, the base's files in turn, to edit.
func (v *fileView) ordered() {
	if v.order != nil {
		return
	}
	v.order = make([]int32, len(v.disk))
	for i := range v.order {
		v.order[i] = int32(i)
	}
}

// edit removes the files at positions removed (sorted) and adds those of
// added (sorted by path, none of them in the table): a pass over the
// order, a search of the paths for each added file.
func (v *fileView) edit(removed []int, added []recallFile) {
	v.ordered()
	// Where each added file goes among the present positions.
	at := make([]int, len(added))
	for k := range added {
		p := added[k].path
		at[k] = sort.Search(v.len(), func(i int) bool { return v.path(i) >= p })
	}
	order := make([]int32, 0, len(v.order)-len(removed)+len(added))
	k := 0
	for i, s := range v.order {
		for k < len(added) && at[k] == i {
			order = append(order, ^int32(len(v.extra)))
			v.extra = append(v.extra, added[k])
			k++
		}
		if len(removed) > 0 && removed[0] == i {
			removed = removed[1:]
			if _, fl := v.meta(i); fl&flagBad == 0 {
				v.good--
			}
			continue
		}
		order = append(order, s)
	}
	for ; k < len(added); k++ {
		order = append(order, ^int32(len(v.extra)))
		v.extra = append(v.extra, added[k])
	}
	for i := range added {
		if !added[i].bad {
			v.good++
		}
	}
	v.order = order
}
