package framed

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"

	"github.com/memdir/memdir/internal/atomicfile"
)

// Writer builds a framed file in memory, section by section. Its methods
// record the first error and do nothing after it; [Writer.Finish] returns
// it.
type Writer struct {
	ft    Format
	buf   []byte
	start int // where the frame starts in buf
	ents  []entry
	err   error
	done  bool
}

type entry struct {
	id, crc uint32
	off, n  int
}

// NewWriter starts a frame of format ft at the end of b (nil for a buffer
// of its own). Sections are aligned relative to the frame's start, so they
// are aligned in b when len(b) is a multiple of 8.
func (ft Format) NewWriter(b []byte) *Writer {
	w := &Writer{ft: ft, buf: b, start: len(b)}
	if len(ft.Magic) != 8 {
		w.err = fmt.Errorf("framed: magic %q is not 8 bytes", ft.Magic)
	}
	w.buf = append(w.buf, make([]byte, headerSize)...)
	return w
}

// Grow makes room for n more bytes without another allocation, for a
// caller that knows about how large the file will be.
//
// The room is made, not appended and cleared as slices.Grow does: fresh
// memory is already zero, and left untouched its pages cost nothing, so a
// generous estimate costs only the bytes written (a checkpoint's state
// file faulted in a quarter more pages than it wrote).
func (w *Writer) Grow(n int) {
	if n > 0 && cap(w.buf)-len(w.buf) < n {
		b := make([]byte, len(w.buf), len(w.buf)+n)
		copy(b, w.buf)
		w.buf = b
	}
}

// begin pads to the next section and checks that id may follow the
// sections already added.
func (w *Writer) begin(id uint32) bool {
	switch {
	case w.err != nil:
		return false
	case w.done:
		w.err = errors.New("framed: section added after Finish")
		return false
	case len(w.ents) > 0 && id <= w.ents[len(w.ents)-1].id:
		w.err = fmt.Errorf("framed: section %d added after section %d; ids must increase", id, w.ents[len(w.ents)-1].id)
		return false
	}
	w.pad()
	return true
}

func (w *Writer) pad() {
	for (len(w.buf)-w.start)%8 != 0 {
		w.buf = append(w.buf, 0)
	}
}

// end records the section id that runs from from to the end of the buffer.
func (w *Writer) end(id uint32, from int) {
	sec := w.buf[from:]
	w.ents = append(w.ents, entry{id: id, crc: checksum(0, sec), off: from - w.start, n: len(sec)})
}

// Add appends section id, the concatenation of parts. Ids must increase
// from one section to the next.
func (w *Writer) Add(id uint32, parts ...[]byte) {
	if !w.begin(id) {
		return
	}
	from := len(w.buf)
	for _, p := range parts {
		w.buf = append(w.buf, p...)
	}
	w.end(id, from)
}

// AddFunc appends section id as what fn appends to the buffer it is given
// (8-byte aligned where the frame is), without copying it: fn must return
// the buffer extended, its existing bytes unchanged. An error from fn is
// the Writer's.
func (w *Writer) AddFunc(id uint32, fn func(b []byte) ([]byte, error)) {
	if !w.begin(id) {
		return
	}
	from := len(w.buf)
	b, err := fn(w.buf)
	switch {
	case err != nil:
		w.err = err
		return
	case len(b) < from:
		w.err = fmt.Errorf("framed: section %d's writer shortened the buffer", id)
		return
	}
	w.buf = b
	w.end(id, from)
}

// Finish appends the section table, fills in the header and returns the
// buffer: what NewWriter was given followed by the frame.
func (w *Writer) Finish() ([]byte, error) {
	if w.err != nil {
		return nil, w.err
	}
	if w.done {
		return w.buf, nil
	}
	if uint64(len(w.ents)) > 1<<32-1 {
		return nil, errors.New("framed: too many sections")
	}
	w.done = true
	le := binary.LittleEndian
	w.pad()
	table := len(w.buf) - w.start
	for _, e := range w.ents {
		w.buf = le.AppendUint32(w.buf, e.id)
		w.buf = le.AppendUint32(w.buf, e.crc)
		w.buf = le.AppendUint64(w.buf, uint64(e.off))
		w.buf = le.AppendUint64(w.buf, uint64(e.n))
	}
	frame := w.buf[w.start:]
	copy(frame, w.ft.Magic)
	le.PutUint32(frame[8:], w.ft.Version)
	le.PutUint32(frame[12:], nativeFlags)
	le.PutUint32(frame[16:], uint32(len(w.ents)))
	le.PutUint64(frame[24:], uint64(len(frame)))
	le.PutUint32(frame[20:], headerSum(frame, table))
	return w.buf, nil
}

// WriteFile finishes the frame and replaces the file path with it
// atomically (see [atomicfile.WriteFile]).
func (w *Writer) WriteFile(path string, perm fs.FileMode) error {
	return w.write(path, perm, atomicfile.WriteFile)
}

// WriteMapped is WriteFile for a file that readers map and touch sparsely
// (see [atomicfile.WriteMapped]).
func (w *Writer) WriteMapped(path string, perm fs.FileMode) error {
	return w.write(path, perm, atomicfile.WriteMapped)
}

func (w *Writer) write(path string, perm fs.FileMode, write func(string, []byte, fs.FileMode) error) error {
	b, err := w.Finish()
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return write(path, b[w.start:], perm)
}
