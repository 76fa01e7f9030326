package mcpserver_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/mcpserver"
	"github.com/memdir/memdir/memdirtest"
)

func TestListTools(t *testing.T) {
	cs := newFixture(t, nil).connect(t)
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	schemas := map[string]map[string]any{}
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
		data, _ := json.Marshal(tool.InputSchema)
		var s map[string]any
		if err := json.Unmarshal(data, &s); err != nil {
			t.Fatal(err)
		}
		schemas[tool.Name] = s
		if tool.Description == "" {
			t.Errorf("tool %s has no description", tool.Name)
		}
	}
	slices.Sort(names)
	if diff := cmp.Diff([]string{"forget", "memory", "recall", "save"}, names); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
	enum := func(tool, prop string) any {
		return schemas[tool]["properties"].(map[string]any)[prop].(map[string]any)["enum"]
	}
	if diff := cmp.Diff([]any{"user", "feedback", "project", "reference"}, enum("save", "type")); diff != "" {
		t.Errorf("save type enum (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]any{"view", "create", "str_replace", "insert", "delete", "rename"}, enum("memory", "command")); diff != "" {
		t.Errorf("memory command enum (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]any{"query"}, schemas["recall"]["required"]); diff != "" {
		t.Errorf("recall required (-want +got):\n%s", diff)
	}
}

func TestInstructions(t *testing.T) {
	for _, team := range []bool{false, true} {
		t.Run(fmt.Sprint("team=", team), func(t *testing.T) {
			cs := newFixture(t, &mcpserver.Options{Team: team}).connect(t)
			got := cs.InitializeResult().Instructions
			for _, want := range []string{"call recall", "call save", "call forget", "/memories", "memdir://MEMORY.md", "user:", "feedback:", "project:", "reference:"} {
				if !strings.Contains(got, want) {
					t.Errorf("instructions do not mention %q", want)
				}
			}
			if strings.Contains(got, "Team memory is on") != team {
				t.Errorf("instructions with team=%v:\n%s", team, got)
			}
		})
	}
}

func TestMemoryTool(t *testing.T) {
	f := newFixture(t, nil)
	cs := f.connect(t)
	steps := []struct {
		name    string
		args    map[string]any
		want    string // the result text, or a part of the error text
		wantErr bool
	}{
		{"create", map[string]any{"command": "create", "path": "/memories/notes/user.md", "file_text": "The user prefers Go.\n"}, "File created successfully at: /memories/notes/user.md", false},
		{"view file", map[string]any{"command": "view", "path": "/memories/notes/user.md"}, "Here's the content of /memories/notes/user.md with line numbers:\n     1\tThe user prefers Go.", false},
		{"str_replace", map[string]any{"command": "str_replace", "path": "/memories/notes/user.md", "old_str": "Go", "new_str": "Go and Rust"}, "The memory file has been edited.", false},
		{"insert", map[string]any{"command": "insert", "path": "/memories/notes/user.md", "insert_line": 0, "insert_text": "# User\n"}, "The file /memories/notes/user.md has been edited.", false},
		{"rename", map[string]any{"command": "rename", "old_path": "/memories/notes", "new_path": "/memories/people"}, "Successfully renamed /memories/notes to /memories/people", false},
		{"unknown key ignored", map[string]any{"command": "view", "path": "/memories/people/user.md", "mood": "curious"}, "# User", false},
		{"traversal", map[string]any{"command": "create", "path": "/memories/../outside.md", "file_text": "x"}, "/memories/../outside.md", true},
		{"encoded traversal", map[string]any{"command": "view", "path": "/memories/%2e%2e/etc/passwd"}, "%2e%2e", true},
		{"outside prefix", map[string]any{"command": "view", "path": "/etc/passwd"}, "Path must start with /memories, got: /etc/passwd", true},
		{"unknown command", map[string]any{"command": "shred", "path": "/memories/people/user.md"}, "shred", true},
		{"missing file", map[string]any{"command": "view", "path": "/memories/nope.md"}, "does not exist", true},
		{"create over existing", map[string]any{"command": "create", "path": "/memories/people/user.md", "file_text": "x"}, "already exists", true},
		{"delete", map[string]any{"command": "delete", "path": "/memories/people/user.md"}, "Successfully deleted /memories/people/user.md", false},
	}
	for _, st := range steps {
		res := call(t, cs, "memory", st.args)
		got := text(res)
		if res.IsError != st.wantErr {
			t.Fatalf("%s: isError = %v, want %v: %s", st.name, res.IsError, st.wantErr, got)
		}
		if st.wantErr || st.name == "unknown key ignored" {
			if !strings.Contains(got, st.want) {
				t.Errorf("%s: result %q does not contain %q", st.name, got, st.want)
			}
			continue
		}
		if !strings.HasPrefix(got, st.want) {
			t.Errorf("%s: result %q, want it to start with %q", st.name, got, st.want)
		}
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(f.dir.Path()), "outside.md")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the traversal created a file outside the directory: %v", err)
	}
	if diff := cmp.Diff(map[string]string{}, snapshot(t, f.dir.Path())); diff != "" {
		t.Errorf("directory after the steps (-want +got):\n%s", diff)
	}
}

// TestMemoryToolIsUndoable changes the directory through the memory tool and
// checks that undoing the call's journal run restores it byte for byte.
func TestMemoryToolIsUndoable(t *testing.T) {
	existing := map[string]string{
		"MEMORY.md":           "- [Testing](feedback_testing.md) — integration tests hit a real database\n",
		"feedback_testing.md": memoryFile("testing", "integration tests hit a real database", memdir.TypeFeedback, "Use Postgres.\n"),
		"notes/a.md":          "alpha\n",
		"notes/deep/b.md":     "beta\n",
	}
	twoEntries := map[string]string{
		"MEMORY.md": "- [A](a.md) - first\n- [B](b.md) - second\n",
		"a.md":      "a\n",
		"b.md":      "b\n",
	}
	cases := []struct {
		name  string
		files map[string]string
		args  map[string]any
	}{
		{"create in an empty directory", nil, map[string]any{"command": "create", "path": "/memories/user_role.md", "file_text": "---\nname: role\n---\nA data scientist.\n"}},
		{"edit a memory listed first", twoEntries, map[string]any{"command": "str_replace", "path": "/memories/a.md", "old_str": "a", "new_str": "A"}},
		{"create next to an index", existing, map[string]any{"command": "create", "path": "/memories/project_freeze.md", "file_text": "Merge freeze from Thursday.\n"}},
		{"create in a new directory", existing, map[string]any{"command": "create", "path": "/memories/new/dir/x.md", "file_text": "x\n"}},
		{"edit the index", existing, map[string]any{"command": "str_replace", "path": "/memories/MEMORY.md", "old_str": "real database", "new_str": "real Postgres"}},
		{"insert", existing, map[string]any{"command": "insert", "path": "/memories/feedback_testing.md", "insert_line": 0, "insert_text": "top\n"}},
		{"delete a file", existing, map[string]any{"command": "delete", "path": "/memories/feedback_testing.md"}},
		{"delete a directory", existing, map[string]any{"command": "delete", "path": "/memories/notes"}},
		{"rename a file", existing, map[string]any{"command": "rename", "old_path": "/memories/notes/a.md", "new_path": "/memories/a.md"}},
		{"rename a directory", existing, map[string]any{"command": "rename", "old_path": "/memories/notes", "new_path": "/memories/archive/notes"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, nil)
			memdirtest.WriteFiles(t, f.dir.Path(), tc.files)
			if err := os.MkdirAll(f.dir.Path(), 0o700); err != nil {
				t.Fatal(err)
			}
			before := snapshot(t, f.dir.Path())
			var out mcpserver.MemoryOutput
			callOK(t, f.connect(t), "memory", tc.args, &out)
			if out.Run == "" || len(out.Changed) == 0 {
				t.Fatalf("no journal run or changed files reported: %+v", out)
			}
			if diff := cmp.Diff(before, snapshot(t, f.dir.Path())); diff == "" {
				t.Fatal("the call changed nothing")
			}
			run, err := f.dir.Journal().Run(out.Run)
			if err != nil {
				t.Fatal(err)
			}
			if run.Kind != "mcp" || run.State != memdir.RunDone {
				t.Errorf("run kind %q state %q, want mcp done", run.Kind, run.State)
			}
			if _, err := f.dir.Undo(context.Background(), out.Run, nil); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(before, snapshot(t, f.dir.Path())); diff != "" {
				t.Errorf("directory after undo (-want +got):\n%s", diff)
			}
		})
	}
}

func TestMemoryToolRefusesWhatItCannotJournal(t *testing.T) {
	f := newFixture(t, nil)
	memdirtest.WriteFiles(t, f.dir.Path(), map[string]string{"notes/a.md": "a\n"})
	outside := filepath.Join(t.TempDir(), "target.md")
	memdirtest.WriteFiles(t, filepath.Dir(outside), map[string]string{"target.md": "t\n"})
	if err := os.Symlink(outside, filepath.Join(f.dir.Path(), "notes", "link.md")); err != nil {
		t.Skip("no symbolic links here:", err)
	}
	before := snapshot(t, f.dir.Path())
	got := callErr(t, f.connect(t), "memory", map[string]any{"command": "delete", "path": "/memories/notes"})
	if !strings.Contains(got, "stopped before anything was modified") {
		t.Errorf("error = %q", got)
	}
	if diff := cmp.Diff(before, snapshot(t, f.dir.Path())); diff != "" {
		t.Errorf("directory changed (-want +got):\n%s", diff)
	}
}

func TestSaveTool(t *testing.T) {
	f := newFixture(t, &mcpserver.Options{})
	team := newFixture(t, &mcpserver.Options{Team: true})
	cs, teamCS := f.connect(t), team.connect(t)
	save := func(name, typ, body string, isTeam bool) map[string]any {
		return map[string]any{"name": name, "description": "how " + name + " works", "type": typ, "body": body, "team": isTeam}
	}
	cases := []struct {
		name    string
		cs      *mcp.ClientSession
		args    map[string]any
		want    mcpserver.SaveOutput
		wantErr string
	}{
		{"create", cs, save("testing", "feedback", "Use Postgres.", false), mcpserver.SaveOutput{Path: "feedback_testing.md", URI: "memdir://memory/feedback_testing.md", Status: "created"}, ""},
		{"same again", cs, save("testing", "feedback", "Use Postgres.", false), mcpserver.SaveOutput{Path: "feedback_testing.md", URI: "memdir://memory/feedback_testing.md", Status: "unchanged"}, ""},
		{"update", cs, save("testing", "feedback", "Use Postgres 16.", false), mcpserver.SaveOutput{Path: "feedback_testing.md", URI: "memdir://memory/feedback_testing.md", Status: "updated"}, ""},
		{"bad type", cs, save("x", "memo", "b", false), mcpserver.SaveOutput{}, "memo does not equal any of: [user feedback project reference]"},
		{"no name", cs, save(" ", "user", "b", false), mcpserver.SaveOutput{}, "name is required"},
		{"team off", cs, save("release", "project", "b", true), mcpserver.SaveOutput{}, "team memory is off"},
		{"team on", teamCS, save("release", "project", "Ship on Friday.", true), mcpserver.SaveOutput{Path: "team/project_release.md", URI: "memdir://memory/team/project_release.md", Status: "created"}, ""},
		{"missing body key", cs, map[string]any{"name": "n", "description": "d", "type": "user"}, mcpserver.SaveOutput{}, "body"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.wantErr != "" {
				if got := callErr(t, tc.cs, "save", tc.args); !strings.Contains(got, tc.wantErr) {
					t.Errorf("error %q does not contain %q", got, tc.wantErr)
				}
				return
			}
			var got mcpserver.SaveOutput
			callOK(t, tc.cs, "save", tc.args, &got)
			if (got.Run != "") != (got.Status != "unchanged") {
				t.Errorf("run %q with status %s", got.Run, got.Status)
			}
			got.Run = ""
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("save (-want +got):\n%s", diff)
			}
		})
	}
	m, err := f.dir.Get(context.Background(), "testing")
	if err != nil || m.Body != "Use Postgres 16.\n" && m.Body != "Use Postgres 16." {
		t.Errorf("saved memory = %+v, %v", m, err)
	}
	ix, err := team.dir.ReadIndex(true)
	if err != nil || len(ix.Find("project_release.md")) != 1 {
		t.Errorf("team index has no line for the team memory: %v", err)
	}
}

func TestSaveWarnsWhenTheIndexIsTooLong(t *testing.T) {
	f := newFixture(t, nil)
	var long strings.Builder
	for i := range 210 {
		fmt.Fprintf(&long, "- [m%d](m%d.md) — memory %d\n", i, i, i)
	}
	memdirtest.WriteFiles(t, f.dir.Path(), map[string]string{"MEMORY.md": long.String()})
	var got mcpserver.SaveOutput
	callOK(t, f.connect(t), "save", map[string]any{"name": "one more", "description": "d", "type": "user", "body": "b"}, &got)
	if !strings.Contains(got.IndexWarning, "MEMORY.md has 211 lines") {
		t.Errorf("index warning = %q", got.IndexWarning)
	}
}

func TestForgetTool(t *testing.T) {
	f := newFixture(t, nil)
	cs := f.connect(t)
	callOK(t, cs, "save", map[string]any{"name": "testing", "description": "integration tests hit a real database", "type": "feedback", "body": "Use Postgres."}, nil)
	before := snapshot(t, f.dir.Path())

	var got mcpserver.ForgetOutput
	callOK(t, cs, "forget", map[string]any{"memory": "testing"}, &got)
	if got.Path != "feedback_testing.md" || got.Run == "" || len(got.IndexLines) != 1 {
		t.Errorf("forget = %+v", got)
	}
	if _, err := os.Stat(f.dir.Abs("feedback_testing.md")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the memory file is still there: %v", err)
	}
	for _, tc := range []struct{ ref, want string }{
		{"testing", "not found"},
		{"no such memory", "recall or the memdir://MEMORY.md resource"},
		{"../outside.md", "climbs out"},
		{"", "needs the memory's name"},
	} {
		if msg := callErr(t, cs, "forget", map[string]any{"memory": tc.ref}); !strings.Contains(msg, tc.want) {
			t.Errorf("forget %q: error %q does not contain %q", tc.ref, msg, tc.want)
		}
	}
	if _, err := f.dir.Undo(context.Background(), got.Run, nil); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(before, snapshot(t, f.dir.Path())); diff != "" {
		t.Errorf("directory after undoing forget (-want +got):\n%s", diff)
	}
}
