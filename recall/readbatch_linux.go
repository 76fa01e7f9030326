package recall

import (
	"strings"
	"sync/atomic"

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/internal/uring"
	"golang.org/x/sys/unix"
)

// A refresh that reads many new files (a first build) reads them in
// batches through io_uring (package uring): the open, stat, read and close
// of every file of a batch in three system calls, where each file cost
// four. A file the batch cannot read as readFast would (not a regular
// file, larger than the batch's buffer, in a directory without a
// descriptor, any error) is read again on its own, by readNew, so records
// and problems are those of the one-by-one path
// (TestBatchReadSameAsOneByOne).

const (
	// batchMinFiles is how many new files a refresh must read for its
	// readers to set up rings: a ring costs a few system calls of its own.
	batchMinFiles = 256
	// batchFiles is how many files a batch reads.
	batchFiles = 64
	// batchBuf is how much of each file a batch reads; a file as large
	// or larger is read on its own. Memories are a few KB.
	batchBuf = 16 << 10
)

// uringFailed is set once io_uring has failed in this process: it is not
// tried again.
var uringFailed atomic.Bool

// batchReader is a reader goroutine's ring and buffers.
type batchReader struct {
	ring   *uring.Ring
	files  []uring.File
	bufs   []byte
	lend   *lender // when set, bodies borrow the batch's buffers
	served int     // files read through the ring, for the tests
	broken bool    // the ring failed: not used again
}

// newBatchReader returns a batch reader, or nil where io_uring cannot
// serve. With a lender, the bodies it reads share the buffers the files
// were read into, lent by l for each batch and given back through each
// result's held (see lender); without, every body is a copy.
func newBatchReader(l *lender) *batchReader {
	if uringFailed.Load() {
		return nil
	}
	ring, err := uring.New(2 * batchFiles)
	if err != nil {
		uringFailed.Store(true)
		return nil
	}
	b := &batchReader{ring: ring, files: make([]uring.File, batchFiles), lend: l}
	if l == nil {
		b.bufs = make([]byte, batchFiles*batchBuf)
	}
	return b
}

func (b *batchReader) close() {
	if b != nil {
		b.ring.Close()
	}
}

// readNew reads the new files at rels as fr.readNew reads each, into
// out. It reports false, having read nothing, when the ring failed: the
// caller reads them one by one.
func (b *batchReader) readNew(fr *fileReader, rels []string, out []readResult, hr *memdir.HeaderReader, buf *[]byte) bool {
	if b.broken {
		return false
	}
	var lent *heldBuf
	if b.lend != nil {
		lent = b.lend.get()
		b.bufs = lent.data
	}
	files := b.files[:len(rels)]
	inBatch := make([]bool, len(rels))
	n := 0
	for i, rel := range rels {
		dir, base := ".", rel
		if k := strings.LastIndexByte(rel, '/'); k >= 0 {
			dir, base = rel[:k], rel[k+1:]
		}
		if dfd, ok := fr.fds[dir]; ok && dfd >= 0 {
			files[n] = uring.File{Dir: dfd, Name: uring.CString(base), Buf: b.bufs[n*batchBuf : n*batchBuf : (n+1)*batchBuf]}
			inBatch[i] = true
			n++
		}
	}
	if err := b.ring.ReadFiles(files[:n], unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK); err != nil {
		b.broken = true
		uringFailed.Store(true)
		return false
	}
	k := 0
	for i, rel := range rels {
		r := &out[i]
		done := false
		if inBatch[i] {
			f := &files[k]
			k++
			st := &f.Stat
			if f.Err == nil && !f.Full && st.Mode&unix.S_IFMT == unix.S_IFREG && st.Size < recallHashMax {
				stamp := stampOf(st)
				var ok bool
				if r.f, r.body, r.probs, ok = readDone(rel, stamp, f.Data, lent != nil); ok {
					r.f.stamp, r.gone, done = stamp, false, true
					b.served++
					if lent != nil && r.body != "" {
						r.held = lent
						lent.users++
					}
				}
			}
		}
		if !done {
			r.f, r.body, r.probs, r.gone = fr.readNew(rel, hr, buf)
		}
	}
	if lent != nil {
		b.bufs = nil
		lent.lent()
	}
	return true
}

// A lender lends the buffers a first build's batches are read into, so
// that each body is the bytes read rather than a copy of them (every
// file of the directory, copied once and dropped): a batch's buffer
// comes back when every body that borrows it has been put into the
// index, and is lent again.
type lender struct {
	free chan []byte
}

func newLender() *lender { return &lender{free: make(chan []byte, 16)} }

// heldBuf is one lent buffer and the bodies that borrow it.
type heldBuf struct {
	l     *lender
	data  []byte
	users int          // bodies that borrow it, counted as the batch is read
	left  atomic.Int32 // of those, not yet given back (set by lent)
}

func (l *lender) get() *heldBuf {
	h := &heldBuf{l: l}
	select {
	case h.data = <-l.free:
	default:
		h.data = make([]byte, batchFiles*batchBuf)
	}
	return h
}

// lent is called once the batch is read, before any body is used: the
// buffer comes back at once when no body borrows it.
func (h *heldBuf) lent() {
	if h.left.Add(int32(h.users)) == 0 {
		h.giveBack()
	}
}

// done gives back one body's share.
func (h *heldBuf) done() {
	if h.left.Add(-1) == 0 {
		h.giveBack()
	}
}

func (h *heldBuf) giveBack() {
	select {
	case h.l.free <- h.data:
	default:
	}
	h.data = nil
}
