//go:build !linux

package recall

import "github.com/memdir/memdir"

// batchMinFiles is as in readbatch_linux.go; batches read nothing here.
const (
	batchMinFiles = 256
	batchFiles    = 64
)

// batchReader reads batches through io_uring on Linux; elsewhere there
// is none, and files are read one by one.
type batchReader struct{}

func newBatchReader(*lender) *batchReader { return nil }

func (b *batchReader) close() {}

func (b *batchReader) readNew(*fileReader, []string, []readResult, *memdir.HeaderReader, *[]byte) bool {
	return false
}

// lender lends batches' buffers on Linux; here there are no batches.
type lender struct{}

func newLender() *lender { return nil }

type heldBuf struct{}

func (*heldBuf) done() {}
