package prefault

import (
	"testing"
	"unsafe"
)

func TestWholePages(t *testing.T) {
	buf := make([]byte, 8*pageSize)
	for _, c := range []struct{ off, n, want int }{
		{0, 0, 0}, {0, 1, 0}, {0, pageSize, 0}, {1, 2 * pageSize, 0},
		{1, 3 * pageSize, 2}, {0, 5*pageSize + 7, 5}, {pageSize - 1, 4 * pageSize, 3},
	} {
		// Align the buffer's start, then offset it.
		at := uintptr(unsafe.Pointer(&buf[0]))
		base := int((uintptr(pageSize) - at%uintptr(pageSize)) % uintptr(pageSize))
		b := buf[base+c.off : base+c.off+c.n]
		p := whole(b)
		if len(p)/pageSize != c.want || len(p)%pageSize != 0 {
			t.Errorf("off %d len %d: %d bytes of whole pages, want %d pages", c.off, c.n, len(p), c.want)
			continue
		}
		if p != nil {
			start := uintptr(unsafe.Pointer(&p[0]))
			if start%uintptr(pageSize) != 0 || start < uintptr(unsafe.Pointer(&b[0])) ||
				start+uintptr(len(p)) > uintptr(unsafe.Pointer(&b[0]))+uintptr(len(b)) {
				t.Errorf("off %d len %d: pages not aligned inside the buffer", c.off, c.n)
			}
		}
	}
}

func TestWriteAndReadKeepTheContents(t *testing.T) {
	for _, n := range []int{0, 1, pageSize - 1, pageSize, 3*pageSize + 5, 64 * pageSize} {
		b := make([]byte, n)
		Write(b)
		for i, c := range b {
			if c != 0 {
				t.Fatalf("len %d: byte %d is %d after Write", n, i, c)
			}
		}
		for i := range b {
			b[i] = byte(i*7 + 1)
		}
		Read(b)
		for i, c := range b {
			if c != byte(i*7+1) {
				t.Fatalf("len %d: byte %d changed by Read", n, i)
			}
		}
	}
}
