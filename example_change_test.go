package memdir_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/memdir/memdir"
)

// Make several changes as one: Change holds the directory lock throughout
// and journals every file recorded before it is written, so one
// 'memdir undo' reverts them all.
func ExampleDir_Change() {
	tmp, _ := os.MkdirTemp("", "memdir-example")
	defer os.RemoveAll(tmp)
	d, err := memdir.Open(filepath.Join(tmp, "memory"), &memdir.Options{Journal: memdir.NewJournal(filepath.Join(tmp, "journal"), nil)})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	run, err := d.Change(ctx, "example", nil, func(rec *memdir.Recorder) error {
		rec.SetSummary("write two notes")
		for _, name := range []string{"a.md", "b.md"} {
			if err := rec.Before(name); err != nil {
				return err
			}
			if err := os.WriteFile(d.Abs(name), []byte("note\n"), 0o600); err != nil {
				return err // the run is kept as failed: what it wrote is undoable
			}
		}
		return nil
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(run.Summary, len(run.ChangedFiles()))
	if _, err := d.Undo(ctx, run.ID, nil); err != nil {
		panic(err)
	}
	_, err = os.Stat(d.Abs("a.md"))
	fmt.Println(os.IsNotExist(err))
	// Output:
	// write two notes 2
	// true
}
