//go:build unix

package memdir

import (
	"context"
	"syscall"
	"testing"
	"time"
)

// finishes fails the test when fn does not return within a generous bound.
func finishes(tb testing.TB, what string, fn func() error) {
	tb.Helper()
	done := make(chan error, 1)
	go func() { done <- fn() }()
	select {
	case err := <-done:
		tb.Logf("%s: %v", what, err)
	case <-time.After(20 * time.Second):
		tb.Fatalf("%s did not return: it blocked on a FIFO", what)
	}
}

// TestMemoryFIFODoesNotBlock: a FIFO named like a memory is reported by a
// scan as not a regular file, and neither a scan, a read nor a save over
// it blocks.
func TestMemoryFIFODoesNotBlock(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := mustOpen(t)
	mustSave(t, d, &Memory{Name: "kept", Description: "an earlier memory", Type: TypeUser, Body: "b"}, nil)
	if err := syscall.Mkfifo(d.Abs("user_pipe.md"), 0o600); err != nil {
		t.Fatal(err)
	}
	var scan *ScanResult
	finishes(t, "scan", func() error {
		var err error
		scan, err = d.Scan(ctx, &ScanOptions{Limit: -1})
		return err
	})
	if scan == nil || scan.Total != 1 || len(scan.Problems) != 1 || scan.Problems[0].Path != "user_pipe.md" || scan.Problems[0].Kind != ProblemRead {
		t.Errorf("scan = %+v, want the FIFO reported as unreadable", scan)
	}
	finishes(t, "get", func() error { _, err := d.Get(ctx, "user_pipe.md"); return err })
	finishes(t, "save over it", func() error {
		_, err := d.Save(ctx, &Memory{Path: "user_pipe.md", Name: "pipe", Description: "d", Type: TypeUser, Body: "b"}, nil)
		return err
	})
	finishes(t, "save by name", func() error {
		_, err := d.Save(ctx, &Memory{Name: "pipe", Description: "d", Type: TypeUser, Body: "b"}, nil)
		return err
	})
}
