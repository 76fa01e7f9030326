//go:build linux

package prefault

import (
	"runtime"
	"syscall"
	"testing"
)

func minorFaults(t *testing.T) int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_THREAD, &ru); err != nil {
		t.Skip("no per-thread rusage:", err)
	}
	return int64(ru.Minflt) // int32 on 32-bit platforms
}

// After Write, a loop that reads then writes every page of a fresh
// allocation faults none of them; without it each page faults twice, as
// it is read first.
func TestWriteMapsThePages(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	const pages = 1024
	loop := func(b []byte) int64 {
		f0 := minorFaults(t)
		for i := 0; i < len(b); i += pageSize {
			b[i] += 1
		}
		return minorFaults(t) - f0
	}
	without := loop(make([]byte, pages*pageSize))
	b := make([]byte, pages*pageSize)
	Write(b)
	with := loop(b)
	t.Logf("faults over %d fresh pages: %d without Write, %d after it", pages, without, with)
	if without < pages/2 {
		t.Skipf("fresh pages did not fault (%d faults for %d pages): nothing to compare", without, pages)
	}
	// Without Write each page faults twice (read, then write); after it,
	// none of the buffer's own pages does. Under the race detector each
	// access also faults the detector's shadow pages, as many again
	// whatever Write did: so at most half as many faults as without, and
	// a little slack.
	if with > without/2+pages/16 {
		t.Errorf("%d faults over %d pages after Write, want at most half of the %d without", with, pages, without)
	}
}
