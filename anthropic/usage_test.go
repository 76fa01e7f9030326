package anthropic_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/memdir/memdir/anthropic"
	"github.com/memdir/memdir/usage"
)

// TestMemoryToolCountsViews: a view of a memory file through the adapter is
// counted in the directory's default use log, under the state directory,
// and the file's mtime is left alone.
func TestMemoryToolCountsViews(t *testing.T) {
	state := t.TempDir()
	t.Setenv("MEMDIR_STATE_DIR", state)
	dir := t.TempDir()
	p := filepath.Join(dir, "user_role.md")
	if err := os.WriteFile(p, []byte("---\nname: role\ndescription: the user is a Go developer\ntype: user\n---\nGo.\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	before, _ := os.Stat(p)
	mem, err := anthropic.NewMemoryTool(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	for _, in := range []string{`{"command":"view","path":"/memories/user_role.md"}`, `{"command":"view","path":"/memories"}`} {
		if _, err := mem.Execute(context.Background(), json.RawMessage(in)); err != nil {
			t.Fatal(err)
		}
	}
	logPath, err := usage.DefaultPath(dir, os.LookupEnv)
	if err != nil {
		t.Fatal(err)
	}
	st, err := usage.New(logPath, nil).Stats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got := st.Get("user_role.md").Uses; got != 1 || len(st.Memories) != 1 {
		t.Errorf("counted %v, want user_role.md once", st.Memories)
	}
	if after, _ := os.Stat(p); !after.ModTime().Equal(before.ModTime()) {
		t.Errorf("the view changed the memory's mtime")
	}
}

// TestMain keeps the use logs of every test's memory tool out of the real
// state directory.
func TestMain(m *testing.M) {
	state, err := os.MkdirTemp("", "memdir-anthropic-state")
	if err != nil {
		panic(err)
	}
	os.Setenv("MEMDIR_STATE_DIR", state)
	code := m.Run()
	os.RemoveAll(state)
	os.Exit(code)
}
