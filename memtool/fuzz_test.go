package memtool

import (
	"context"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// FuzzExecute sends arbitrary commands to a Tool whose root holds links to
// a sibling directory, and checks that the sibling never changes, that no
// temporary file is left behind and that everything the tool made has the
// private modes.
func FuzzExecute(f *testing.F) {
	f.Add("create", "/memories/a.md", "", "text", 0)
	f.Add("rename", "/memories/a.md", "/memories/out/a.md", "", 0)
	f.Add("delete", "/memories/out", "", "", 0)
	f.Add("insert", "/memories/a.md", "", "x\n", 1)
	f.Add("str_replace", "/memories/a.md", "", "text", 0)
	f.Add("create", "/memories/%2e%2e/outside/x", "", "x", 0)
	f.Add("view", "/memories/out/secret.md", "", "", 0)
	tool, root := mustTool(f, nil)
	base := filepath.Dir(root)
	mustWrite(f, base, map[string]string{"outside/secret.md": "secret\n"})
	mustSymlink(f, "../outside", root, "out")
	mustSymlink(f, filepath.Join(base, "outside", "secret.md"), root, "abs")
	outside := snapshot(f, filepath.Join(base, "outside"))

	f.Fuzz(func(t *testing.T, cmd, p1, p2, text string, line int) {
		c := Command{Command: cmd, Path: p1, OldPath: p1, NewPath: p2, FileText: &text, OldStr: &text, NewStr: &p2, InsertLine: &line, InsertText: &text}
		if out, err := tool.Run(context.Background(), c); err != nil && out != "" {
			t.Fatalf("%+v: both output and error", c)
		}
		if diff := cmp.Diff(outside, snapshot(t, filepath.Join(base, "outside"))); diff != "" {
			t.Fatalf("%+v changed the outside directory (-before +after):\n%s", c, diff)
		}
		for name, e := range snapshot(t, root) {
			if strings.HasPrefix(filepath.Base(name), tempPrefix) {
				t.Fatalf("%+v left %s behind", c, name)
			}
			if name == "out" || name == "abs" || name == "." {
				continue
			}
			if want := map[bool]fs.FileMode{true: fs.ModeDir | dirMode, false: fileMode}[e.Mode.IsDir()]; e.Mode != want {
				t.Fatalf("%+v: %s has mode %v, want %v", c, name, e.Mode, want)
			}
		}
	})
}
