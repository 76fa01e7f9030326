package recall

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"unsafe"

	"github.com/memdir/memdir/internal/atomicfile"
	"github.com/memdir/memdir/internal/framed"
	"github.com/memdir/memdir/internal/safeopen"
	"github.com/memdir/memdir/lexical"
)

// The delta file (<cache>.delta) holds what changed since the index file
// (the base) was written, so that a refresh that finds one memory changed
// writes about that memory instead of the whole index: the record of every
// file added, changed or removed since, with the body of those whose
// lexical document changed, and the directories' times. A process that
// opens the index maps the base and replays the delta over it: records
// replace the base's, documents are put over the mapped lexical segment
// (lexical's overlay), whose statistics stay exact, so recall ranks as
// after a full rebuild.
//
// The delta names the base it extends by the base header's checksums; one
// that names another base (a process wrote a new base since) is ignored,
// and the files it recorded are found changed again by the next refresh
// that stats them, as with any lost update. One that is damaged (it fails
// its CRC-32C, or does not decode) makes the index rebuild from the
// directory. It grows with every change until it passes deltaMaxEntries
// entries, a 64th of the directory (see deltaFits), or deltaMaxBytes of
// text: the next write is then a full one (the merge), which removes it.
//
// It is written under the index's lock, by atomic replace, like the base.

var deltaFormat = framed.Format{Magic: "MDRECDLT", Version: 1}

const secDelta uint32 = 1

const (
	deltaMaxEntries = 256
	deltaMinEntries = 16
	deltaMaxBytes   = 512 << 10
)

const (
	deltaGone = 1 << iota
	deltaDoc
	deltaRacy
	deltaBad
)

// deltaEntry is what changed of one file since the base was written.
type deltaEntry struct {
	gone bool       // removed since
	f    recallFile // its record now, unless gone
	doc  bool       // its lexical document is not the base's: body is it
	body string
}

func (x *Index) deltaPath() string { return x.cachePath + ".delta" }

// ident identifies what the persisted files hold (base and delta), for the
// recent-saves record; empty when they do not hold what x does.
func (x *Index) ident() string {
	if x.base == "" || x.deltaSum == "" {
		return x.base
	}
	return x.base + "+" + x.deltaSum
}

// noteGone records that the file at p was removed.
func (x *Index) noteGone(p string) {
	if x.delta == nil {
		x.delta = map[string]*deltaEntry{}
	}
	x.delta[p] = &deltaEntry{gone: true}
}

// noteFile records the file's new record, and its lexical document when
// doc is set (body is the document's body).
func (x *Index) noteFile(f recallFile, doc bool, body string) {
	if x.delta == nil {
		x.delta = map[string]*deltaEntry{}
	}
	e := x.delta[f.path]
	if e == nil || e.gone {
		e = &deltaEntry{}
		x.delta[f.path] = e
	}
	e.f = f
	if doc {
		e.doc, e.body = true, body
	}
}

// deltaFits reports whether the changes since the base are few enough to
// be written as a delta rather than a new base.
func (x *Index) deltaFits() bool {
	if x.base == "" || x.damaged {
		return false
	}
	// Every process replays the delta (about 0.13 ms a memory: the
	// tokenising and the dictionary lookups), and a merge writes the
	// whole base (about 0.015 ms a memory of the directory: 30 ms at
	// 2,000, 290 ms at 20,000). At a 64th of the directory a full delta
	// costs each prompt a seventh of a merge; at an eighth, as before,
	// 100 changes pending at 2,000 memories took the warm hook from 1.45
	// to 2.34 times memdir --version.
	limit := max(deltaMinEntries, min(deltaMaxEntries, x.nfiles()/64))
	if len(x.delta) > limit {
		return false
	}
	n := 0
	for _, e := range x.delta {
		n += len(e.body) + len(e.f.name) + len(e.f.desc) + len(e.f.path)
	}
	return n <= deltaMaxBytes
}

// marshalDelta encodes the delta.
func (x *Index) marshalDelta() []byte {
	b := appendStr(nil, x.base)
	b = binary.AppendUvarint(b, uint64(len(x.dirs)))
	for _, d := range x.dirs {
		b = appendStr(b, d.rel)
		b = binary.LittleEndian.AppendUint64(b, uint64(d.mtime))
		b = append(b, boolByte(d.racy))
	}
	paths := make([]string, 0, len(x.delta))
	for p := range x.delta {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	b = binary.AppendUvarint(b, uint64(len(paths)))
	for _, p := range paths {
		e := x.delta[p]
		b = appendStr(b, p)
		var fl byte
		if e.gone {
			b = append(b, deltaGone)
			continue
		}
		if e.doc {
			fl |= deltaDoc
		}
		if e.f.racy {
			fl |= deltaRacy
		}
		if e.f.bad {
			fl |= deltaBad
		}
		b = append(b, fl)
		b = appendStr(b, e.f.name)
		b = appendStr(b, e.f.desc)
		b = append(b, byte(max(0, slices.Index(recallTypes, e.f.typ))))
		s := e.f.stamp
		for _, v := range []uint64{uint64(s.Size), uint64(s.MTime), uint64(s.CTime), s.Ino} {
			b = binary.LittleEndian.AppendUint64(b, v)
		}
		b = append(b, e.f.hash[:]...)
		if e.doc {
			b = appendStr(b, e.body)
		}
	}
	return b
}

func boolByte(v bool) byte {
	if v {
		return 1
	}
	return 0
}

func appendStr(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

// deltaFile is a decoded delta file.
type deltaFile struct {
	base    string
	sum     string
	dirs    []recallDir
	paths   []string // sorted
	entries []deltaEntry
}

var errBadDelta = errors.New("recall index delta: damaged")

// deltaReader decodes the delta's encoding; strings point into it.
type deltaReader struct {
	b   []byte
	bad bool
}

func (r *deltaReader) uvarint() uint64 {
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.bad, r.b = true, nil
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *deltaReader) bytes(n uint64) []byte {
	if n > uint64(len(r.b)) {
		r.bad, r.b = true, nil
		return nil
	}
	v := r.b[:n:n]
	r.b = r.b[n:]
	return v
}

func (r *deltaReader) str() string {
	v := r.bytes(r.uvarint())
	if len(v) == 0 {
		return ""
	}
	return unsafe.String(&v[0], len(v))
}

func (r *deltaReader) u64() uint64 {
	v := r.bytes(8)
	if v == nil {
		return 0
	}
	return binary.LittleEndian.Uint64(v)
}

// readDelta reads the delta file at p: fs.ErrNotExist when there is none,
// errBadDelta (wrapped) when it is damaged.
func readDelta(p string) (*deltaFile, error) {
	f, err := deltaFormat.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fs.ErrNotExist
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errBadDelta, err)
	}
	data, err := f.Section(secDelta)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errBadDelta, err)
	}
	r := &deltaReader{b: data}
	d := &deltaFile{base: r.str(), sum: fmt.Sprintf("%08x", f.Sum())}
	nd := r.uvarint()
	if nd > uint64(len(data)) {
		return nil, errBadDelta
	}
	for range nd {
		dir := recallDir{rel: r.str(), mtime: int64(r.u64())}
		fl := r.bytes(1)
		dir.racy = len(fl) == 1 && fl[0] != 0
		d.dirs = append(d.dirs, dir)
	}
	ne := r.uvarint()
	if ne > uint64(len(data)) {
		return nil, errBadDelta
	}
	for range ne {
		p := r.str()
		fl := r.bytes(1)
		if r.bad || p == "" || len(d.paths) > 0 && d.paths[len(d.paths)-1] >= p {
			return nil, errBadDelta
		}
		d.paths = append(d.paths, p)
		if fl[0] == deltaGone {
			d.entries = append(d.entries, deltaEntry{gone: true})
			continue
		}
		e := deltaEntry{f: recallFile{path: p, checked: true}}
		e.doc, e.f.racy, e.f.bad = fl[0]&deltaDoc != 0, fl[0]&deltaRacy != 0, fl[0]&deltaBad != 0
		e.f.name, e.f.desc = r.str(), r.str()
		if t := r.bytes(1); len(t) == 1 && int(t[0]) < len(recallTypes) {
			e.f.typ = recallTypes[t[0]]
		} else {
			return nil, errBadDelta
		}
		e.f.stamp = fileStamp{Size: int64(r.u64()), MTime: int64(r.u64()), CTime: int64(r.u64()), Ino: r.u64()}
		copy(e.f.hash[:], r.bytes(sha256.Size))
		if e.doc {
			e.body = r.str()
		}
		d.entries = append(d.entries, e)
	}
	if r.bad || len(r.b) != 0 || len(d.dirs) == 0 {
		return nil, errBadDelta
	}
	return d, nil
}

// loadDelta replays the delta file over the base just loaded (load leaves
// the base's table in view), putting its records over the view as a
// refresh applies its changes. A delta of another base is ignored; a
// damaged one empties the index, to be rebuilt.
func (x *Index) loadDelta() {
	d, err := readDelta(x.deltaPath())
	if errors.Is(err, fs.ErrNotExist) {
		return
	}
	if err != nil {
		x.reset()
		return
	}
	if d.base != x.base {
		return // a delta of an older or newer base: ignored
	}
	x.delta = make(map[string]*deltaEntry, len(d.paths))
	var removed []int
	var added []recallFile
	for i, p := range d.paths { // in path order, as readDelta checks
		e := &d.entries[i]
		x.delta[p] = e
		j, ok := x.view.find(p) // a miss is an added file, not damage
		baseDoc := ok && !x.badAt(j)
		switch {
		case e.gone && ok:
			removed = append(removed, j)
		case e.gone:
		case ok:
			x.replaceAt(j, e.f)
		default:
			added = append(added, e.f)
		}
		if (e.gone || e.f.bad) && baseDoc {
			x.lex.Remove(p)
		}
		if !e.gone && !e.f.bad && e.doc {
			x.lex.Put(lexical.Doc{ID: p, Name: e.f.name, Description: e.f.desc, Body: e.body})
		}
	}
	if len(removed) > 0 || len(added) > 0 {
		x.view.edit(removed, added)
	}
	if x.lex.Len() != x.searchable() {
		x.reset()
		return
	}
	x.dirs = d.dirs
	x.deltaSum = d.sum
}

// saveDelta writes the delta file. It reports false when the base on disk
// is no longer the one the delta extends (another process replaced it), so
// that a full write is due instead.
func (x *Index) saveDelta() bool {
	if !x.baseOnDisk() {
		return false
	}
	w := deltaFormat.NewWriter(nil)
	w.Add(secDelta, x.marshalDelta())
	data, err := w.Finish()
	if err != nil {
		return false
	}
	f, err := deltaFormat.Parse(data)
	if err != nil {
		return false
	}
	if err := writeStateFile(x.deltaPath(), data); err != nil {
		return true // derived: the next refresh tries again
	}
	x.deltaSum = fmt.Sprintf("%08x", f.Sum())
	return true
}

// baseOnDisk reports whether the index file is the base x holds.
func (x *Index) baseOnDisk() bool {
	f, _, err := safeopen.Open(x.cachePath)
	if err != nil {
		return false
	}
	defer f.Close()
	var h recallDiskHeader
	b := unsafe.Slice((*byte)(unsafe.Pointer(&h)), unsafe.Sizeof(h))
	if _, err := io.ReadFull(f, b); err != nil {
		return false
	}
	return recallBase(&h) == x.base && h.HeaderCRC == h.crc()
}

// writeStateFile replaces the state file p with data atomically (never
// through a symbolic link at p: the temporary file is renamed over it).
func writeStateFile(p string, data []byte) error { return atomicfile.WriteFile(p, data, 0o600) }
