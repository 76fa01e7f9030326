// Package framed is the container under memdir's binary files: a magic and
// a format version naming what the file is, numbered sections, the frame's
// length and CRC-32C checksums, written by atomic replace and read in place.
//
// It knows nothing of what the sections hold. A [Format] names a kind of
// file; [Format.NewWriter] builds one section by section, each starting
// 8-byte aligned so that a reader can view a section of fixed-size records
// as a slice of them ([View]); [Format.Open] maps a file (reads it into
// aligned memory where mapping is not available), [Format.ReadFile] reads
// one into aligned memory, and [Format.Parse] takes bytes already in
// memory. All three check the header and the section table and
// nothing else: each section's checksum is checked when [File.Section]
// first returns it, so a reader that uses a few sections of a large file
// pays for those only, and a section whose content carries finer checksums
// of its own can be used unchecked ([File.Unverified]).
//
// # Layout
//
// The frame's own numbers are little-endian; what the sections hold is the
// caller's, written in the writer's byte order, which the header records: a
// reader on a machine of the other byte order refuses the file, as the
// files framed here are derived data kept on one machine.
//
//	offset size field
//	0      8    magic, naming the kind of file
//	8      4    version of that kind's format
//	12     4    flags: bit 0 set when the writer was big-endian; no other bit is used
//	16     4    number of sections
//	20     4    CRC-32C of bytes 0–19 and 24–31, then of the section table
//	24     8    length of the frame in bytes, table included
//	32          the sections, in the order of the table
//	            the section table, 24 bytes a section:
//	              0  4 id: the caller's number, strictly increasing along the table
//	              4  4 CRC-32C of the section's bytes
//	              8  8 offset from the start of the frame
//	              16 8 length in bytes
//
// The first section starts at 32, each later one at the first multiple of
// 8 at or after the end of the one before, and the table at the first
// multiple of 8 at or after the end of the last section (at 32 when there
// is none); the
// bytes in between are zero, and the frame ends with the table. There is
// exactly one valid frame for a given format and list of sections, and a
// reader accepts nothing else.
//
// A frame may be a section of another frame, or lie inside another file
// (memdir's recall index holds the lexical segment so): its offsets are
// relative to its own start, which the enclosing file puts at a multiple
// of 8.
package framed

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"sort"
	"sync/atomic"
	"unsafe"
)

// Format names a kind of framed file.
type Format struct {
	// Magic is exactly 8 bytes.
	Magic string
	// Version is the format version of the sections' content. A reader
	// accepts this version only: a file of any other is to be rebuilt.
	Version uint32
}

// The errors a file that cannot be read wraps. All three mean the same to
// a reader of derived data, that the file is to be ignored and rebuilt;
// they say why.
var (
	// ErrMagic: the file does not start with the format's magic (it is
	// another kind of file, or an older layout that had none).
	ErrMagic = errors.New("not a file of this kind")
	// ErrVersion: the file is of another format version, or was written
	// on a machine of the other byte order.
	ErrVersion = errors.New("another format version")
	// ErrCorrupt: the file is truncated, damaged, or lacks a section its
	// reader needs.
	ErrCorrupt = errors.New("damaged file")
)

const (
	headerSize = 32
	entrySize  = 24
	flagBig    = 1 << 0
)

// nativeFlags are the flags a writer on this machine sets.
var nativeFlags = func() uint32 {
	if binary.NativeEndian.Uint16([]byte{1, 0}) == 1 {
		return 0
	}
	return flagBig
}()

func align8(n uint64) uint64 { return (n + 7) &^ 7 }

// headerSum is the header's checksum field for frame b whose table starts
// at table.
func headerSum(b []byte, table int) uint32 {
	c := checksum(0, b[:20])
	c = checksum(c, b[24:headerSize])
	return checksum(c, b[table:])
}

// File is a framed file opened for reading. Its methods are safe for
// concurrent use.
type File struct {
	data  []byte
	sum   uint32
	secs  []section
	unmap func()
	// file is the mapped file, open until Close, for ReadAt; nil for a
	// file read into memory or parsed.
	file *os.File
}

type section struct {
	id, crc uint32
	off, n  int
	// state is unchecked, good or bad: the outcome of the first check of
	// the section's checksum.
	state atomic.Uint32
}

const (
	unchecked = iota
	good
	bad
)

// Parse reads the frame data holds, checking its header, its table and
// everything they say about the layout; not the sections' checksums, which
// [File.Section] checks. The File refers to data, which must stay unchanged
// while it is in use. A section is 8-byte aligned in memory when data is.
func (ft Format) Parse(data []byte) (*File, error) {
	le := binary.LittleEndian
	if len(ft.Magic) != 8 {
		return nil, fmt.Errorf("framed: magic %q is not 8 bytes", ft.Magic)
	}
	if len(data) < 8 || string(data[:8]) != ft.Magic {
		return nil, fmt.Errorf("%w: no %q magic", ErrMagic, ft.Magic)
	}
	if len(data) < headerSize {
		return nil, fmt.Errorf("%w: %d bytes, shorter than a header", ErrCorrupt, len(data))
	}
	if v, flags := le.Uint32(data[8:]), le.Uint32(data[12:]); v != ft.Version || flags != nativeFlags {
		return nil, fmt.Errorf("%w: version %d (flags %#x), not %d", ErrVersion, v, flags, ft.Version)
	}
	n, size := uint64(le.Uint32(data[16:])), le.Uint64(data[24:])
	if size != uint64(len(data)) || n > (size-headerSize)/entrySize {
		return nil, fmt.Errorf("%w: length %d, %d sections, in %d bytes", ErrCorrupt, size, n, len(data))
	}
	table := size - n*entrySize
	if le.Uint32(data[20:]) != headerSum(data, int(table)) {
		return nil, fmt.Errorf("%w: header checksum mismatch", ErrCorrupt)
	}
	f := &File{data: data, sum: le.Uint32(data[20:]), secs: make([]section, n)}
	end := uint64(headerSize) // of the previous section
	for i := range f.secs {
		e := data[table+uint64(i)*entrySize:]
		id, off, length := le.Uint32(e), le.Uint64(e[8:]), le.Uint64(e[16:])
		if i > 0 && id <= f.secs[i-1].id {
			return nil, fmt.Errorf("%w: section %d follows section %d", ErrCorrupt, id, f.secs[i-1].id)
		}
		if off != align8(end) || off > table || length > table-off || !zero(data[end:off]) {
			return nil, fmt.Errorf("%w: section %d at %d (%d bytes) out of place", ErrCorrupt, id, off, length)
		}
		f.secs[i] = section{id: id, crc: le.Uint32(e[4:]), off: int(off), n: int(length)}
		end = off + length
	}
	if align8(end) != table || !zero(data[end:table]) {
		return nil, fmt.Errorf("%w: the section table is out of place", ErrCorrupt)
	}
	return f, nil
}

func zero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// Len returns the number of sections.
func (f *File) Len() int { return len(f.secs) }

// ID returns the id of the i'th section, in increasing order of id.
func (f *File) ID(i int) uint32 { return f.secs[i].id }

func (f *File) find(id uint32) (*section, error) {
	i := sort.Search(len(f.secs), func(i int) bool { return f.secs[i].id >= id })
	if i == len(f.secs) || f.secs[i].id != id {
		return nil, fmt.Errorf("%w: no section %d", ErrCorrupt, id)
	}
	return &f.secs[i], nil
}

// Section returns the bytes of the section id, a view into the file,
// after checking them against their checksum the first time.
func (f *File) Section(id uint32) ([]byte, error) {
	s, err := f.find(id)
	if err != nil {
		return nil, err
	}
	b := f.data[s.off : s.off+s.n : s.off+s.n]
	switch s.state.Load() {
	case good:
		return b, nil
	case unchecked:
		if checksum(0, b) == s.crc {
			s.state.Store(good)
			return b, nil
		}
		s.state.Store(bad)
	}
	return nil, fmt.Errorf("%w: section %d fails its checksum", ErrCorrupt, id)
}

// Unverified returns the section id without checking its checksum, for a
// reader that checks the parts it uses by checksums of its own: a large
// table searched in place, whose every use would otherwise cost a pass
// over all of it.
func (f *File) Unverified(id uint32) ([]byte, error) {
	s, err := f.find(id)
	if err != nil {
		return nil, err
	}
	return f.data[s.off : s.off+s.n : s.off+s.n], nil
}

// ReadAt copies into p the bytes of section id from offset off, without
// checking any checksum (see Unverified). Of a mapped file it reads the
// file rather than the mapping: touching a page of a mapping makes the
// kernel map the pages around it too (fault-around, 64 KiB on Linux,
// whatever madvise says), which a reader of scattered pieces of a large
// section pays for in resident memory.
func (f *File) ReadAt(id uint32, p []byte, off int) error {
	s, err := f.find(id)
	if err != nil {
		return err
	}
	if off < 0 || off+len(p) > s.n {
		return fmt.Errorf("%w: %d bytes at %d past the end of section %d (%d bytes)", ErrCorrupt, len(p), off, id, s.n)
	}
	if f.file != nil {
		if _, err := f.file.ReadAt(p, int64(s.off+off)); err == nil {
			return nil
		}
		// The file can still be read through the mapping.
	}
	copy(p, f.data[s.off+off:])
	return nil
}

// Verify checks every section's checksum.
func (f *File) Verify() error {
	for i := range f.secs {
		if _, err := f.Section(f.secs[i].id); err != nil {
			return err
		}
	}
	return nil
}

// Sum returns the header's checksum, which covers every section's, the
// version and the length: two files with the same sum hold, as near as a
// CRC-32C can tell, the same content.
func (f *File) Sum() uint32 { return f.sum }

// Bytes returns the whole frame.
func (f *File) Bytes() []byte { return f.data }

// Close unmaps a file that [Format.Open] mapped; nothing returned from it
// may be used afterwards. It does nothing for a parsed one.
func (f *File) Close() error {
	if f.unmap != nil {
		f.unmap()
		f.unmap = nil
	}
	return nil
}

// View returns b as a slice of T, for a section written from a []T (see
// [Raw]) on this machine. T must be a fixed-size type without pointers.
// ok is false when b's length is not a multiple of T's size or b is not
// aligned for T.
func View[T any](b []byte) (s []T, ok bool) {
	size, align := unsafe.Sizeof(*new(T)), unsafe.Alignof(*new(T))
	if size == 0 || uintptr(len(b))%size != 0 {
		return nil, false
	}
	if len(b) == 0 {
		return nil, true
	}
	if uintptr(unsafe.Pointer(&b[0]))%align != 0 {
		return nil, false
	}
	return unsafe.Slice((*T)(unsafe.Pointer(&b[0])), uintptr(len(b))/size), true
}

// Raw returns the memory of s as bytes, to write as a section that [View]
// reads back. T must be a fixed-size type without pointers.
func Raw[T any](s []T) []byte {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), len(s)*int(unsafe.Sizeof(s[0])))
}
