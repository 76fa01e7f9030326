package doctor

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"strings"
	"testing"

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/internal/memfile"
)

// TestCheckAndFixAnUnfinishedChange: a save killed between writing the
// memory and its index line (as the store's crash tests leave it) is
// reported, and Fix finishes it, saying so.
func TestCheckAndFixAnUnfinishedChange(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := mustOpen(t)
	mustSave(t, d, &memdir.Memory{Name: "kept", Description: "an earlier memory", Type: memdir.TypeUser, Body: "b"}, nil)
	content := (&memdir.Memory{Name: "deploy", Description: "how we deploy", Type: memdir.TypeProject, Body: "make deploy"}).Format()
	if err := os.WriteFile(d.Abs("project_deploy.md"), content, 0o600); err != nil {
		t.Fatal(err)
	}
	record, _ := json.Marshal(map[string]any{"op": "save", "path": "project_deploy.md", "sum": memfile.ContentSum(content),
		"index": memdir.EntrypointName, "link": "project_deploy.md", "line": "- [deploy](project_deploy.md) — how we deploy"})
	if err := os.WriteFile(d.Abs(memdir.PendingName), record, 0o600); err != nil {
		t.Fatal(err)
	}
	rep, err := Check(ctx, d)
	if err != nil {
		t.Fatal(err)
	}
	var found bool
	for _, f := range rep.Findings {
		found = found || f.Kind == FindUnfinished && strings.Contains(f.Message, "save project_deploy.md")
	}
	if !found {
		t.Fatalf("doctor does not report the unfinished save: %+v", rep.Findings)
	}
	res, err := Fix(ctx, d, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Actions) == 0 || !strings.Contains(res.Actions[0], "killed") {
		t.Errorf("doctor --fix actions = %q, want the finished change first", res.Actions)
	}
	if _, err := os.Lstat(d.Abs(memdir.PendingName)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("%s is still there: %v", memdir.PendingName, err)
	}
	if !strings.Contains(readString(t, d.Abs(memdir.EntrypointName)), "(project_deploy.md)") {
		t.Errorf("MEMORY.md after the fix:\n%s", readString(t, d.Abs(memdir.EntrypointName)))
	}
	for _, f := range res.Remaining.Findings {
		t.Errorf("doctor still finds %s %s: %s", f.Kind, f.Path, f.Message)
	}
}

// A record the store set aside (it could not act on it) is reported, and
// Fix repairs the index from the files and removes it, undoably.
func TestFixRemovesASetAsideRecord(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := mustOpen(t)
	mustSave(t, d, &memdir.Memory{Name: "kept", Description: "an earlier memory", Type: memdir.TypeUser, Body: "b"}, nil)
	if err := os.WriteFile(d.Abs(memdir.PendingName), []byte("{garbage"), 0o600); err != nil {
		t.Fatal(err)
	}
	// A memory written by hand while the record stood: unindexed.
	content := (&memdir.Memory{Name: "loose", Description: "written by hand", Type: memdir.TypeUser, Body: "x"}).Format()
	if err := os.WriteFile(d.Abs("user_loose.md"), content, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := d.WithLock(ctx, func() error { return nil }); err != nil {
		t.Fatalf("the lock with a bad record: %v", err)
	}
	rep, err := Check(ctx, d)
	if err != nil {
		t.Fatal(err)
	}
	var aside bool
	for _, f := range rep.Findings {
		aside = aside || f.Kind == FindUnfinished && f.Path == memdir.PendingAsideName && f.Fix != ""
	}
	if !aside {
		t.Fatalf("doctor does not report the record set aside: %+v", rep.Findings)
	}
	res, err := Fix(ctx, d, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(d.Abs(memdir.PendingAsideName)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("%s is still there after the fix: %v (actions %q)", memdir.PendingAsideName, err, res.Actions)
	}
	if !strings.Contains(readString(t, d.Abs(memdir.EntrypointName)), "(user_loose.md)") {
		t.Errorf("the fix did not index the memory written meanwhile")
	}
	for _, f := range res.Remaining.Findings {
		t.Errorf("doctor still finds %s %s: %s", f.Kind, f.Path, f.Message)
	}
	if _, err := d.Undo(ctx, res.RunID, nil); err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(d.Abs(memdir.PendingAsideName)); err != nil || string(got) != "{garbage" {
		t.Errorf("undo of the fix: the record is %q, %v", got, err)
	}
}
