package review

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/memdir/memdir"
)

// TestUndoneAcceptIsPendingAgain: once the run of an accept is undone (by
// 'memdir undo', the UI's Undo, anything), the held write is out of memory
// again, so the queue lists it as pending, to accept or reject anew; a redo
// (the undo undone) makes it accepted again.
func TestUndoneAcceptIsPendingAgain(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d, q, _ := openWithReview(t)
	held := holdDeploy(t, d)
	file := d.Abs("project_deploy.md")

	accepted, err := q.Accept(ctx, d, held.ID)
	if err != nil {
		t.Fatal(err)
	}
	undo, err := d.Undo(ctx, accepted.RunID, nil)
	if err != nil {
		t.Fatal(err)
	}
	it, err := q.Get(held.ID)
	if err != nil || it.State != Pending || it.UndoneBy != undo.ID || it.RunID != accepted.RunID || it.Decided != nil {
		t.Fatalf("after undoing the accept Get = %+v (%v), want pending, undone by %s, the accept's run kept", it, err, undo.ID)
	}
	if pending, _ := q.List(false); len(pending) != 1 || pending[0].ID != held.ID || pending[0].State != Pending {
		t.Fatalf("after undoing the accept List(false) = %+v, want the item pending again", pending)
	}

	// A redo (undoing the undo) puts the write back: accepted again.
	redo, err := d.Undo(ctx, undo.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	if it, _ := q.Get(held.ID); it.State != Accepted || it.UndoneBy != "" {
		t.Fatalf("after the redo (run %s) Get = %+v, want accepted", redo.ID, it)
	}
	if _, err := q.Accept(ctx, d, held.ID); !errors.Is(err, memdir.ErrExists) {
		t.Fatalf("accept while the first accept is in effect = %v, want ErrExists", err)
	}
	// Undoing the redo undoes the accept again.
	if _, err := d.Undo(ctx, redo.ID, nil); err != nil {
		t.Fatal(err)
	}
	if it, _ := q.Get(held.ID); it.State != Pending {
		t.Fatalf("after undoing the redo Get = %+v, want pending", it)
	}

	// Decided again: accepted anew, in a run of its own.
	again, err := q.Accept(ctx, d, held.ID)
	if err != nil {
		t.Fatalf("accept after the undo: %v", err)
	}
	if again.State != Accepted || again.RunID == "" || again.RunID == accepted.RunID || again.UndoneBy != "" || again.Decided == nil {
		t.Fatalf("second accept = %+v", again)
	}
	if _, err := os.Stat(file); err != nil {
		t.Fatalf("second accept wrote no file: %v", err)
	}
	// Undone and rejected: the item is a rejected record, the file gone.
	if _, err := d.Undo(ctx, again.RunID, nil); err != nil {
		t.Fatal(err)
	}
	rejected, err := q.Reject(ctx, held.ID)
	if err != nil || rejected.State != Rejected || rejected.RunID != "" || rejected.UndoneBy != "" {
		t.Fatalf("reject after the undo = %+v (%v)", rejected, err)
	}
	if it, _ := q.Get(held.ID); it.State != Rejected {
		t.Fatalf("after the reject Get = %+v", it)
	}
	if _, err := os.Stat(file); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("after undo and reject %s: %v, want it absent", file, err)
	}
}

// TestQueueFindsDefaultJournal: a queue made with New, with no journal
// given, reads the directory's default journal, where a directory opened
// with the same environment records its runs.
func TestQueueFindsDefaultJournal(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	base := t.TempDir()
	env := map[string]string{"MEMDIR_STATE_DIR": filepath.Join(base, "state")}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	dir := filepath.Join(base, "memory")
	d, _, err := Open(dir, &memdir.Options{LookupEnv: lookup}, nil)
	if err != nil {
		t.Fatal(err)
	}
	held := holdDeploy(t, d)
	q, err := New(dir, &Options{LookupEnv: lookup})
	if err != nil {
		t.Fatal(err)
	}
	it, err := q.Accept(ctx, d, held.ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Undo(ctx, it.RunID, nil); err != nil {
		t.Fatal(err)
	}
	if it, _ := q.Get(held.ID); it.State != Pending {
		t.Fatalf("a queue from New sees %+v after the undo, want pending", it)
	}
}

// holdDeploy makes an agent's save of project_deploy.md that screening
// holds.
func holdDeploy(tb testing.TB, d *memdir.Dir) *HeldError {
	tb.Helper()
	_, err := d.Save(context.Background(), &memdir.Memory{Name: "deploy", Description: "how to deploy", Type: memdir.TypeProject, Body: hostileBody},
		&memdir.SaveOptions{Origin: &memdir.Provenance{By: memdir.ByAgent, Via: "mcp"}})
	var held *HeldError
	if !errors.As(err, &held) {
		tb.Fatalf("Save = %v, want a HeldError", err)
	}
	return held
}

// TestQueueWithoutStateDir: a queue kept in a directory of its own works
// in an environment where no state directory can be found, as it did
// before it read the journal.
func TestQueueWithoutStateDir(t *testing.T) {
	t.Parallel()
	bad := func(k string) (string, bool) {
		if k == "XDG_STATE_HOME" {
			return "relative/state", true // refused: not absolute
		}
		return "", false
	}
	if _, err := New(t.TempDir(), &Options{Dir: t.TempDir(), LookupEnv: bad}); err != nil {
		t.Fatalf("New with a queue directory and no state directory: %v", err)
	}
	if _, err := New(t.TempDir(), &Options{LookupEnv: bad}); err == nil {
		t.Fatal("New with neither a queue directory nor a state directory succeeded")
	}
}
