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
