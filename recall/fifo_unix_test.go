//go:build unix

package recall

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/memdir/memdir"
)

// finishes fails the test when fn does not return within a generous bound:
// a FIFO where a regular file belongs would block an open or a read for
// ever.
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

// TestStateFIFOsDoNotBlock: a FIFO in the place of any of the recall
// index's state files (the index, its cursor, the recent-saves record, the
// edit hints) neither blocks recall, a save's name lookup nor an edit
// hint: it is not a regular file, so it is ignored (or replaced).
func TestStateFIFOsDoNotBlock(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, ext := range []string{"", ".cursor", ".recent", ".hint", ".delta"} {
		t.Run("idx"+ext, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "memory")
			os.MkdirAll(dir, 0o700)
			for i := range 600 {
				writeMem(t, dir, fmt.Sprintf("m%03d.md", i), fmt.Sprintf("memory %d", i), "a note", "body")
			}
			cache := filepath.Join(t.TempDir(), "idx")
			if ext != "" {
				// The index itself exists; the state file beside it is a FIFO.
				if _, err := NewIndex(dir, &IndexOptions{CachePath: cache}).Refresh(ctx); err != nil {
					t.Fatal(err)
				}
			}
			if err := syscall.Mkfifo(cache+ext, 0o600); err != nil {
				t.Fatal(err)
			}
			finishes(t, "refresh", func() error { _, err := NewIndex(dir, &IndexOptions{CachePath: cache}).Refresh(ctx); return err })
			finishes(t, "search", func() error {
				x := NewIndex(dir, &IndexOptions{CachePath: cache})
				x.Refresh(ctx)
				x.Search("memory note", 5)
				return nil
			})
			finishes(t, "name lookup", func() error { _, err := NewNames(dir, cache).LookupName(ctx, "memory 7"); return err })
			finishes(t, "edit hint", func() error {
				_, err := NewIndex(dir, &IndexOptions{CachePath: cache}).NoteEdit(filepath.Join(dir, "m001.md"))
				return err
			})
			d, err := memdir.Open(dir, &memdir.Options{Journal: memdir.NewJournal(t.TempDir(), nil), Names: NewNames(dir, cache)})
			if err != nil {
				t.Fatal(err)
			}
			finishes(t, "save", func() error {
				_, err := d.Save(ctx, &memdir.Memory{Name: "memory 7", Description: "updated", Type: memdir.TypeProject, Body: "x"}, nil)
				return err
			})
			finishes(t, "recall", func() error {
				_, err := Recall(ctx, d, "a note about memory", &Options{Index: NewIndex(dir, &IndexOptions{CachePath: cache})})
				return err
			})
		})
	}
}
