package framed

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// StreamWriter writes a frame through an [io.WriterAt], section by section,
// for a file too large to build in memory first (memdir's first build of a
// recall index of 100,000 memories): what it writes is byte for byte what a
// [Writer] given the same sections builds. Sections are written as they
// come, in writes of at most streamChunk bytes; the header, which covers
// the section table, is written last, at the frame's start. Its methods
// record the first error and do nothing after it; [StreamWriter.Finish]
// returns it.
type StreamWriter struct {
	ft   Format
	w    io.WriterAt
	base int64 // where the frame starts in w
	off  int64 // bytes of the frame so far, buffered ones included
	buf  []byte
	ents []entry
	open bool // a section is being written
	err  error
	done bool
}

// streamChunk bounds the writes a StreamWriter makes, for the reason
// atomicfile.WriteMapped writes in chunks: a file system caching the file in
// large folios would make a reader's page fault map far more than the page
// it touched.
const streamChunk = 64 << 10

// NewStreamWriter starts a frame of format ft at offset base of w, which
// should be a multiple of 8 for the sections to be aligned in a mapping.
func (ft Format) NewStreamWriter(w io.WriterAt, base int64) *StreamWriter {
	s := &StreamWriter{ft: ft, w: w, base: base, off: headerSize, buf: make([]byte, 0, streamChunk)}
	if len(ft.Magic) != 8 {
		s.err = fmt.Errorf("framed: magic %q is not 8 bytes", ft.Magic)
	}
	return s
}

// Begin starts section id, ending the one before. Ids must increase.
func (s *StreamWriter) Begin(id uint32) {
	s.endSection()
	switch {
	case s.err != nil:
		return
	case s.done:
		s.err = errors.New("framed: section added after Finish")
		return
	case len(s.ents) > 0 && id <= s.ents[len(s.ents)-1].id:
		s.err = fmt.Errorf("framed: section %d added after section %d; ids must increase", id, s.ents[len(s.ents)-1].id)
		return
	}
	s.pad()
	s.ents = append(s.ents, entry{id: id, off: int(s.off)})
	s.open = true
}

// Write appends p to the section begun last.
func (s *StreamWriter) Write(p []byte) (int, error) {
	if s.err != nil {
		return 0, s.err
	}
	if !s.open {
		s.err = errors.New("framed: write outside a section")
		return 0, s.err
	}
	e := &s.ents[len(s.ents)-1]
	e.crc = checksum(e.crc, p)
	s.put(p)
	return len(p), s.err
}

// put buffers p, flushing full chunks.
func (s *StreamWriter) put(p []byte) {
	for len(p) > 0 && s.err == nil {
		n := min(len(p), cap(s.buf)-len(s.buf))
		s.buf = append(s.buf, p[:n]...)
		p = p[n:]
		s.off += int64(n)
		if len(s.buf) == cap(s.buf) {
			s.flush()
		}
	}
}

func (s *StreamWriter) flush() {
	if s.err != nil || len(s.buf) == 0 {
		return
	}
	at := s.base + s.off - int64(len(s.buf))
	if _, err := s.w.WriteAt(s.buf, at); err != nil {
		s.err = err
	}
	s.buf = s.buf[:0]
}

func (s *StreamWriter) pad() {
	var zero [8]byte
	if r := s.off % 8; r != 0 {
		s.put(zero[:8-r])
	}
}

func (s *StreamWriter) endSection() {
	if s.open {
		e := &s.ents[len(s.ents)-1]
		e.n = int(s.off) - e.off
		s.open = false
	}
}

// Finish writes the section table and the header, and returns the frame's
// length.
func (s *StreamWriter) Finish() (int64, error) {
	s.endSection()
	if s.err != nil {
		return 0, s.err
	}
	if s.done {
		return s.off, nil
	}
	if uint64(len(s.ents)) > 1<<32-1 {
		return 0, errors.New("framed: too many sections")
	}
	s.done = true
	le := binary.LittleEndian
	s.pad()
	table := make([]byte, 0, len(s.ents)*entrySize)
	for _, e := range s.ents {
		table = le.AppendUint32(table, e.id)
		table = le.AppendUint32(table, e.crc)
		table = le.AppendUint64(table, uint64(e.off))
		table = le.AppendUint64(table, uint64(e.n))
	}
	s.put(table)
	s.flush()
	if s.err != nil {
		return 0, s.err
	}
	var h [headerSize]byte
	copy(h[:], s.ft.Magic)
	le.PutUint32(h[8:], s.ft.Version)
	le.PutUint32(h[12:], nativeFlags)
	le.PutUint32(h[16:], uint32(len(s.ents)))
	le.PutUint64(h[24:], uint64(s.off))
	c := checksum(0, h[:20])
	c = checksum(c, h[24:headerSize])
	le.PutUint32(h[20:], checksum(c, table))
	if _, err := s.w.WriteAt(h[:], s.base); err != nil {
		s.err = err
		return 0, err
	}
	return s.off, nil
}

// Buffer is an [io.WriterAt] over memory, 8-byte aligned, for a
// StreamWriter whose frame is wanted in memory (tests, and an index kept in
// memory only).
type Buffer struct{ words []uint64 }

// WriteAt writes p at off, growing the buffer as needed.
func (b *Buffer) WriteAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, errors.New("framed: negative offset")
	}
	end := off + int64(len(p))
	if need := int((end + 7) / 8); need > len(b.words) {
		if need > cap(b.words) {
			w := make([]uint64, need, max(need, 2*cap(b.words)))
			copy(w, b.words)
			b.words = w
		} else {
			b.words = b.words[:need]
		}
	}
	copy(Raw(b.words)[off:], p)
	return len(p), nil
}

// Grow makes room for n bytes in all without another allocation.
func (b *Buffer) Grow(n int64) {
	if need := int((n + 7) / 8); need > cap(b.words) {
		w := make([]uint64, len(b.words), need)
		copy(w, b.words)
		b.words = w
	}
}

// Bytes returns the first n bytes written (n at most what was written),
// 8-byte aligned.
func (b *Buffer) Bytes(n int64) []byte { return Raw(b.words)[:n] }
