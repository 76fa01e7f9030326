package mcpserver_test

import (
	"context"
	"testing"

	"github.com/memdir/memdir/mcpserver"
	"github.com/memdir/memdir/memdirtest"
)

// TestRecallAndViewAreCounted: the recall tool counts what it surfaces and
// a memory-tool view counts the file viewed; listing a directory or viewing
// MEMORY.md counts nothing.
func TestRecallAndViewAreCounted(t *testing.T) {
	f := newFixture(t, nil)
	memdirtest.WriteFiles(t, f.dir.Path(), recallFiles)
	memdirtest.WriteFiles(t, f.dir.Path(), map[string]string{"MEMORY.md": "- [db tests](feedback_db_tests.md) — real Postgres\n"})
	cs := f.connect(t)
	var out mcpserver.RecallOutput
	callOK(t, cs, "recall", map[string]any{"query": "should the integration tests mock the database?"}, &out)
	if len(out.Memories) == 0 {
		t.Fatal("recall surfaced nothing")
	}
	callOK(t, cs, "memory", map[string]any{"command": "view", "path": "/memories/project_freeze.md"}, nil)
	callOK(t, cs, "memory", map[string]any{"command": "view", "path": "/memories/project_freeze.md", "view_range": []int{1, 2}}, nil)
	callOK(t, cs, "memory", map[string]any{"command": "view", "path": "/memories"}, nil)
	callOK(t, cs, "memory", map[string]any{"command": "view", "path": "/memories/MEMORY.md"}, nil)

	st, err := f.dir.Uses().Stats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"project_freeze.md": 2}
	for _, m := range out.Memories {
		want[m.Path]++
	}
	for rel, n := range want {
		if got := st.Get(rel); got.Uses != n || !got.LastUsed.Equal(testNow) {
			t.Errorf("%s: %+v, want %d uses at %v", rel, got, n, testNow)
		}
	}
	if len(st.Memories) != len(want) {
		t.Errorf("counted %v, want only %v", st.Memories, want)
	}
}
