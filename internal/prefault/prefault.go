// Package prefault maps the pages of a buffer at once, before a loop that
// would fault them in one by one.
//
// A page fault costs a few microseconds, more in a virtual machine, and a
// one-shot process (a hook) that reads a few megabytes of a mapped index
// or fills a fresh accumulator pays one per page, or per 16 pages of a
// file read ahead. Where the whole buffer is about to be used, a single
// madvise(MADV_POPULATE_READ or _WRITE) call (Linux 5.14) maps it for less.
// Elsewhere, or on an older kernel, Write touches each page and Read does
// nothing.
package prefault

import (
	"os"
	"unsafe"
)

var pageSize = os.Getpagesize()

// Write maps the pages of b, about to be written, most likely out of
// order, writable: for a fresh allocation that a loop reads before it
// writes (a += at random), each page is then faulted once, not first read
// as the shared zero page and then copied on the first write. b must be
// all zeros, as a fresh allocation is: where the kernel does not take the
// advice, a zero byte is written into each page.
func Write(b []byte) {
	if p := whole(b); p == nil || !populate(p, true) {
		for i := 0; i < len(b); i += pageSize {
			b[i] = 0
		}
	}
}

// Read maps the pages of b, a read-only mapping of a file about to be
// read whole, in one call where the kernel can; it reads nothing itself.
func Read(b []byte) {
	if p := whole(b); p != nil {
		populate(p, false)
	}
}

// whole returns the whole pages inside b, nil when there are fewer than
// two: madvise takes page-aligned ranges, and the partial pages at the
// ends fault as they are used.
func whole(b []byte) []byte {
	at := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	off := int((uintptr(pageSize) - at%uintptr(pageSize)) % uintptr(pageSize))
	if len(b) < off+2*pageSize {
		return nil
	}
	return b[off : off+(len(b)-off)/pageSize*pageSize]
}
