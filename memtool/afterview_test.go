package memtool

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestAfterView: the hook sees each successful file view, not directory
// listings or failed views.
func TestAfterView(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "a.md"), []byte("one\ntwo\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var seen []string
	tool, err := New(root, &Options{AfterView: func(rel string) { seen = append(seen, rel) }})
	if err != nil {
		t.Fatal(err)
	}
	defer tool.Close()
	ctx := context.Background()
	for _, c := range []Command{
		{Command: "view", Path: "/memories/a.md"},
		{Command: "view", Path: "/memories/a.md", ViewRange: []int{2, -1}},
		{Command: "view", Path: "/memories"},
		{Command: "view", Path: "/memories/missing.md"},
	} {
		tool.Run(ctx, c)
	}
	if want := []string{"a.md", "a.md"}; !slices.Equal(seen, want) {
		t.Errorf("AfterView saw %q, want %q", seen, want)
	}
}
