package memdir

import (
	"context"
	"errors"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestChangeRecordsOneUndoableRun(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := mustOpen(t)
	run, err := d.Change(ctx, "test", nil, func(rec *Recorder) error {
		rec.SetSummary("write a and b")
		for _, name := range []string{"a.md", "b.md"} {
			if err := rec.Before(name); err != nil {
				return err
			}
			if err := os.WriteFile(d.Abs(name), []byte("x\n"), 0o600); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if run == nil || !run.HasChanges() || run.State != RunDone || run.Kind != "test" || run.Summary != "write a and b" {
		t.Fatalf("Change returned run %+v, want a done run of kind test with its summary and changes", run)
	}
	stored, err := d.Journal().Run(run.ID)
	if err != nil {
		t.Fatalf("the run's id does not name a stored run: %v", err)
	}
	if diff := cmp.Diff(len(run.Files), len(stored.Files)); diff != "" {
		t.Errorf("stored run files (-returned +stored):\n%s", diff)
	}
	if _, err := d.Undo(ctx, run.ID, nil); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"a.md", "b.md"} {
		if _, err := os.Stat(d.Abs(name)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("undo left %s: %v", name, err)
		}
	}
}

func TestChangeFailedRunStaysUndoable(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := mustOpen(t)
	d.Ensure()
	boom := errors.New("boom")
	run, err := d.Change(ctx, "test", nil, func(rec *Recorder) error {
		rec.Before("half.md")
		os.WriteFile(d.Abs("half.md"), []byte("x\n"), 0o600)
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("Change returned %v, want fn's error", err)
	}
	if run == nil || run.State != RunFailed || run.Error != "boom" {
		t.Fatalf("run = %+v, want a failed run with fn's error", run)
	}
	if _, err := d.Undo(ctx, run.ID, nil); err != nil {
		t.Fatal(err)
	}
}

func TestChangeWithoutChangesLeavesNoRun(t *testing.T) {
	t.Parallel()
	d := mustOpen(t)
	run, err := d.Change(context.Background(), "test", nil, func(*Recorder) error { return nil })
	if err != nil || run == nil || run.HasChanges() {
		t.Fatalf("Change = %+v, %v; want an empty run and no error", run, err)
	}
	if runs, _ := d.Journal().Runs(); len(runs) != 0 {
		t.Errorf("an empty run was kept: %+v", runs)
	}
}

func TestChangePanicFinishesRunAndUnlocks(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := mustOpen(t)
	d.Ensure()
	func() {
		defer func() {
			if p := recover(); p != "oops" {
				t.Errorf("recovered %v, want the panic to go on", p)
			}
		}()
		d.Change(ctx, "test", nil, func(rec *Recorder) error {
			rec.Before("p.md")
			os.WriteFile(d.Abs("p.md"), []byte("x\n"), 0o600)
			panic("oops")
		})
	}()
	runs, errs := d.Journal().Runs()
	if len(errs) > 0 || len(runs) != 1 || runs[0].State != RunFailed {
		t.Fatalf("after a panic the journal holds %+v (%v), want one failed run", runs, errs)
	}
	// The lock was released: taking it again does not wait.
	tctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := d.WithLock(tctx, func() error { return nil }); err != nil {
		t.Fatalf("the lock was not released after a panic: %v", err)
	}
}

func TestChangeHoldsTheLockUnlessUnlocked(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := mustOpen(t)
	try := func() error {
		tctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
		defer cancel()
		return d.WithLock(tctx, func() error { return nil })
	}
	d.Change(ctx, "test", nil, func(*Recorder) error {
		if err := try(); err == nil {
			t.Error("a second locker got the lock while Change held it")
		}
		return nil
	})
	d.Change(ctx, "test", &ChangeOptions{Unlocked: true}, func(*Recorder) error {
		if err := try(); err != nil {
			t.Errorf("an Unlocked change held the lock: %v", err)
		}
		return nil
	})
}

func TestUpdateIndex(t *testing.T) {
	t.Parallel()
	d := mustOpen(t)
	mustSave(t, d, &Memory{Name: "a", Description: "first", Type: TypeUser, Body: "a"}, nil)
	before := readString(t, d.Abs(EntrypointName))
	changed, err := d.UpdateIndex(false, func(*Index) bool { return false })
	if err != nil || changed {
		t.Fatalf("UpdateIndex with no change = %v, %v", changed, err)
	}
	if got := readString(t, d.Abs(EntrypointName)); got != before {
		t.Errorf("an unchanged index was rewritten: %q", got)
	}
	changed, err = d.UpdateIndex(false, func(ix *Index) bool { return len(ix.Remove("user_a.md")) > 0 })
	if err != nil || !changed {
		t.Fatalf("UpdateIndex removing a line = %v, %v", changed, err)
	}
	if got := readString(t, d.Abs(EntrypointName)); got != "" {
		t.Errorf("MEMORY.md = %q, want its one line removed", got)
	}
	changed, err = d.UpdateIndex(true, func(ix *Index) bool { return ix.Upsert("t.md", "- [t](t.md) — team") })
	if err != nil || !changed {
		t.Fatalf("UpdateIndex of team/ = %v, %v", changed, err)
	}
	if got := readString(t, d.Abs(TeamDirName+"/"+EntrypointName)); got != "- [t](t.md) — team\n" {
		t.Errorf("team/MEMORY.md = %q", got)
	}
}

func TestCreateExclusive(t *testing.T) {
	t.Parallel()
	d := mustOpen(t)
	created, err := d.CreateExclusive("sub/new.md", []byte("first\n"))
	if err != nil || !created {
		t.Fatalf("CreateExclusive = %v, %v; want a new file", created, err)
	}
	created, err = d.CreateExclusive("sub/new.md", []byte("second\n"))
	if err != nil || created {
		t.Fatalf("CreateExclusive of an existing file = %v, %v; want false, nil", created, err)
	}
	if got := readString(t, d.Abs("sub/new.md")); got != "first\n" {
		t.Errorf("the existing file was overwritten: %q", got)
	}
	if fi, err := os.Stat(d.Abs("sub/new.md")); err != nil || runtime.GOOS != "windows" && fi.Mode().Perm() != 0o600 {
		t.Errorf("mode = %v, %v; want 0600", fi.Mode().Perm(), err)
	}
	if _, err := d.CreateExclusive("../escape.md", nil); !errors.Is(err, ErrInvalid) {
		t.Errorf("CreateExclusive outside the directory = %v, want ErrInvalid", err)
	}
}

// TestChangeSaveAndRemoveInside: Save and Remove given the Change's
// recorder use the lock it holds (they would wait on it forever
// otherwise), and one undo reverts both.
func TestChangeSaveAndRemoveInside(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	d := mustOpen(t)
	if _, err := d.Save(ctx, &Memory{Name: "old notes", Type: TypeProject, Description: "notes to be replaced", Body: "old"}, nil); err != nil {
		t.Fatal(err)
	}
	run, err := d.Change(ctx, "import", nil, func(rec *Recorder) error {
		if _, err := d.Remove(ctx, "project_old_notes.md", &RemoveOptions{Recorder: rec}); err != nil {
			return err
		}
		_, err := d.Save(ctx, &Memory{Name: "new notes", Type: TypeProject, Description: "notes that replace the old", Body: "new"}, &SaveOptions{Recorder: rec})
		return err
	})
	if err != nil {
		t.Fatalf("Change with Save and Remove inside: %v", err)
	}
	if _, err := os.Stat(d.Abs("project_new_notes.md")); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Undo(ctx, run.ID, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(d.Abs("project_old_notes.md")); err != nil {
		t.Errorf("undo did not bring the removed memory back: %v", err)
	}
	if _, err := os.Stat(d.Abs("project_new_notes.md")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("undo did not take the saved memory away: %v", err)
	}
	// The recorder does not carry the lock past the Change.
	var kept *Recorder
	d.Change(ctx, "keep", nil, func(rec *Recorder) error { kept = rec; return nil })
	if kept.lockedFor != nil {
		t.Error("a recorder kept past its Change still skips the lock")
	}
}
