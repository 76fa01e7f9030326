package checkpoint_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/memdir/memdir/checkpoint"
)

// A harness snapshots at the start of each user turn, tracks each file
// before editing it, and can rewind to any turn.
func Example() {
	ctx := context.Background()
	root, err := os.MkdirTemp("", "checkpoint-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(root)
	project := filepath.Join(root, "project")
	os.Mkdir(project, 0o755)
	file := filepath.Join(project, "auth.ts")
	os.WriteFile(file, []byte("login()\n"), 0o644)

	h, err := checkpoint.New(filepath.Join(root, ".claude"), "session-1", &checkpoint.Options{Cwd: project})
	if err != nil {
		log.Fatal(err)
	}

	// Turn 1: the agent rewrites auth.ts.
	h.Snapshot(ctx, "turn-1")
	h.Track(ctx, "auth.ts", "turn-1")
	os.WriteFile(file, []byte("broken()\nmore()\n"), 0o644)

	// The user asks for the file back as it was before turn 1.
	rep, err := h.Rewind(ctx, "turn-1", nil)
	if err != nil {
		log.Fatal(err)
	}
	for _, c := range rep.Changes {
		fmt.Printf("%s %s +%d -%d\n", c.Action, c.Path, c.Added, c.Removed)
	}
	content, _ := os.ReadFile(file)
	fmt.Printf("auth.ts: %q\n", content)
	fmt.Println("undo:", rep.UndoMessageID)
	// Output:
	// restore auth.ts +1 -2
	// auth.ts: "login()\n"
	// undo: before-rewind-2
}
