package memdir

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// errCrash is what the crash hook panics with to stop a change midway, as
// SIGKILL would: nothing after the step runs but the deferred unlock, which
// the kernel does for a killed process.
var errCrash = errors.New("simulated crash")

// crashAt runs op with the process "dying" at step, and reports whether it
// got there.
func crashAt(tb testing.TB, step string, op func()) {
	tb.Helper()
	crashHook = func(s string) {
		if s == step {
			panic(errCrash)
		}
	}
	defer func() { crashHook = nil }()
	crashed := false
	func() {
		defer func() {
			if r := recover(); r != nil {
				if r != errCrash {
					panic(r)
				}
				crashed = true
			}
		}()
		op()
	}()
	if !crashed {
		tb.Fatalf("the change never reached %s", step)
	}
}

// dirFiles returns every file in the memory directory but the pending record.
func dirFiles(tb testing.TB, d *Dir) map[string]string {
	tb.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(d.Path(), func(p string, e fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) && p == d.Path() {
			return filepath.SkipDir
		}
		if err != nil || e.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(d.Path(), p)
		out[filepath.ToSlash(rel)] = string(data)
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	return out
}

// openRun returns the one open run of the journal.
func openRuns(tb testing.TB, d *Dir) []*JournalRun {
	tb.Helper()
	runs, errs := d.Journal().Runs()
	if len(errs) > 0 {
		tb.Fatal(errs)
	}
	var open []*JournalRun
	for _, r := range runs {
		if r.State == RunOpen {
			open = append(open, r)
		}
	}
	return open
}

func openRun(tb testing.TB, d *Dir) *JournalRun {
	tb.Helper()
	open := openRuns(tb, d)
	if len(open) != 1 {
		tb.Fatalf("%d open runs, want 1", len(open))
	}
	return open[0]
}

// TestChangeKilledMidwayIsFinished kills save, remove and rename between the
// memory file and its index line, and checks that the directory reports the
// unfinished change, that the next write under the lock (or doctor --fix)
// finishes it, and that undoing the killed run then restores the directory.
func TestChangeKilledMidwayIsFinished(t *testing.T) {
	ctx := context.Background()
	policy := &Memory{Name: "testing", Description: "tests hit a real database", Type: TypeFeedback, Body: "Use Postgres."}
	cases := []struct {
		name  string
		setup func(tb testing.TB, d *Dir)
		step  string
		op    func(d *Dir) error
		// want is the file left behind and its index after recovery.
		wantIndex string
		wantFile  string
	}{
		{
			name: "new save", step: "save:file",
			setup: func(tb testing.TB, d *Dir) {
				mustSave(tb, d, &Memory{Name: "first", Description: "an earlier memory", Type: TypeUser, Body: "b"}, nil)
			},
			op:        func(d *Dir) error { _, err := d.Save(ctx, policy, nil); return err },
			wantIndex: "- [testing](feedback_testing.md) — tests hit a real database\n",
			wantFile:  "feedback_testing.md",
		},
		{
			name: "update", step: "save:file",
			setup: func(tb testing.TB, d *Dir) { mustSave(tb, d, policy, nil) },
			op: func(d *Dir) error {
				_, err := d.Save(ctx, &Memory{Name: "testing", Description: "tests hit Postgres 16", Type: TypeFeedback, Body: "Use Postgres 16."}, nil)
				return err
			},
			wantIndex: "- [testing](feedback_testing.md) — tests hit Postgres 16\n",
			wantFile:  "feedback_testing.md",
		},
		{
			name: "save killed before the file", step: "save:begin",
			setup: func(tb testing.TB, d *Dir) { mustSave(tb, d, policy, nil) },
			op: func(d *Dir) error {
				_, err := d.Save(ctx, &Memory{Name: "testing", Description: "tests hit Postgres 16", Type: TypeFeedback, Body: "Use Postgres 16."}, nil)
				return err
			},
			wantIndex: "- [testing](feedback_testing.md) — tests hit a real database\n",
			wantFile:  "feedback_testing.md",
		},
		{
			name: "remove", step: "remove:file",
			setup:     func(tb testing.TB, d *Dir) { mustSave(tb, d, policy, nil) },
			op:        func(d *Dir) error { _, err := d.Remove(ctx, "testing", nil); return err },
			wantIndex: "",
		},
		{
			name: "rename", step: "rename:file",
			setup:     func(tb testing.TB, d *Dir) { mustSave(tb, d, policy, nil) },
			op:        func(d *Dir) error { _, err := d.Rename(ctx, "testing", "feedback_db.md", nil); return err },
			wantIndex: "- [testing](feedback_db.md) — tests hit a real database\n",
			wantFile:  "feedback_db.md",
		},
	}
	for _, tc := range cases {
		for _, via := range []string{"save", "lock"} {
			t.Run(tc.name+"/finished by "+via, func(t *testing.T) {
				d := mustOpen(t)
				if tc.setup != nil {
					tc.setup(t, d)
				}
				before := dirFiles(t, d)
				crashAt(t, tc.step, func() {
					if err := tc.op(d); err != nil {
						t.Fatal(err)
					}
				})
				if what, err := d.PendingChange(); err != nil || what == "" {
					t.Fatalf("PendingChange = %q, %v; want the killed change", what, err)
				}
				// A killed update left its run open; a killed save of a new
				// file left none (its run is written as it finishes), and
				// the recovery journals the change in a run of its own.
				var deadID string
				if runs := openRuns(t, d); len(runs) == 1 {
					deadID = runs[0].ID
				} else if len(runs) > 1 {
					t.Fatalf("%d open runs, want at most 1", len(runs))
				}

				var other string
				switch via {
				case "save":
					other = mustSave(t, d, &Memory{Name: "other", Description: "another memory", Type: TypeUser, Body: "b"}, nil).RunID
				case "lock":
					// Any process taking the lock finishes it ('memdir
					// doctor --fix' does, see package doctor).
					if err := d.WithLock(ctx, func() error { return nil }); err != nil {
						t.Fatal(err)
					}
				}
				if _, err := os.Lstat(d.Abs(PendingName)); !errors.Is(err, fs.ErrNotExist) {
					t.Errorf("%s is still there: %v", PendingName, err)
				}
				ix, err := d.ReadIndex(false)
				if err != nil {
					t.Fatal(err)
				}
				var gotIndex strings.Builder
				for _, e := range ix.Entries() {
					if !strings.HasPrefix(e.File, "user_") { // the memories the case did not change
						gotIndex.WriteString(e.String() + "\n")
					}
				}
				if diff := cmp.Diff(tc.wantIndex, gotIndex.String()); diff != "" {
					t.Errorf("index after recovery (-want +got):\n%s", diff)
				}
				if tc.wantFile != "" {
					if _, err := os.Stat(d.Abs(tc.wantFile)); err != nil {
						t.Errorf("memory file: %v", err)
					}
				}
				checkConsistent(t, d)

				// The killed run is closed and undoes the whole change.
				if other != "" {
					if _, err := d.Undo(ctx, other, nil); err != nil {
						t.Fatal(err)
					}
				}
				if deadID == "" {
					runs, _ := d.Journal().Runs()
					for _, r := range runs {
						if r.Kind == "recover" {
							deadID = r.ID
						}
					}
				}
				if run, err := d.Journal().Run(deadID); err == nil {
					if run.State != RunDone {
						t.Errorf("killed run %s is %s after recovery", run.ID, run.State)
					}
					if _, err := d.Undo(ctx, deadID, nil); err != nil {
						t.Fatal(err)
					}
				} else if tc.step != "save:begin" {
					t.Fatalf("killed run: %v", err)
				}
				if diff := cmp.Diff(before, dirFiles(t, d)); diff != "" {
					t.Errorf("directory after undo (-want +got):\n%s", diff)
				}
			})
		}
	}
}

// TestUndoOfAKilledRunFinishesItFirst undoes the open run of a killed
// update directly: the undo finishes the change, then reverts all of it.
// A killed save of a new file leaves no run (its run is written when it
// finishes); the next write finishes it in a recovery run that records the
// new file, and undoing that run reverts the whole change.
func TestUndoOfAKilledRunFinishesItFirst(t *testing.T) {
	ctx := context.Background()
	t.Run("update", func(t *testing.T) {
		d := mustOpen(t)
		mustSave(t, d, &Memory{Name: "first", Description: "d", Type: TypeUser, Body: "b"}, nil)
		before := dirFiles(t, d)
		crashAt(t, "save:file", func() {
			_, _ = d.Save(ctx, &Memory{Name: "first", Description: "d2", Type: TypeUser, Body: "b2"}, nil)
		})
		if _, err := d.Undo(ctx, openRun(t, d).ID, nil); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(before, dirFiles(t, d)); diff != "" {
			t.Errorf("directory after undo (-want +got):\n%s", diff)
		}
	})
	t.Run("new file", func(t *testing.T) {
		d := mustOpen(t)
		mustSave(t, d, &Memory{Name: "first", Description: "d", Type: TypeUser, Body: "b"}, nil)
		before := dirFiles(t, d)
		crashAt(t, "save:file", func() {
			_, _ = d.Save(ctx, &Memory{Name: "n", Description: "d", Type: TypeUser, Body: "b"}, nil)
		})
		lock, err := d.lock(ctx)
		if err != nil {
			t.Fatal(err)
		}
		lock.Unlock()
		runs, errs := d.Journal().Runs()
		if len(errs) > 0 {
			t.Fatal(errs)
		}
		var recover *JournalRun
		for _, r := range runs {
			if r.Kind == "recover" {
				recover = r
			}
		}
		if recover == nil {
			t.Fatalf("no recovery run among %d runs", len(runs))
		}
		if _, err := d.Undo(ctx, recover.ID, nil); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(before, dirFiles(t, d)); diff != "" {
			t.Errorf("directory after undo (-want +got):\n%s", diff)
		}
	})
}

// checkConsistent fails the test unless every memory of the directory has
// exactly one index line and every index line points at a memory.
func checkConsistent(tb testing.TB, d *Dir) {
	tb.Helper()
	scan, err := d.Scan(context.Background(), &ScanOptions{Limit: -1})
	if err != nil {
		tb.Fatal(err)
	}
	lines := map[string]int{}
	for _, team := range []bool{false, true} {
		ix, err := d.ReadIndex(team)
		if err != nil {
			tb.Fatal(err)
		}
		for _, e := range ix.Entries() {
			rel := e.Path()
			if team {
				rel = TeamDirName + "/" + rel
			}
			lines[rel]++
		}
	}
	for _, h := range scan.Memories {
		if lines[h.Path] != 1 {
			tb.Errorf("%s has %d index lines, want 1", h.Path, lines[h.Path])
		}
		delete(lines, h.Path)
	}
	for rel := range lines {
		tb.Errorf("an index line points at %s, which is not a memory", rel)
	}
}
