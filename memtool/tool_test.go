package memtool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/memdir/memdir"
)

func TestNew(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	mustWrite(t, dir, map[string]string{"file": "x"})
	for _, tc := range []struct {
		root string
		want error
	}{
		{filepath.Join(dir, "missing"), memdir.ErrNotFound},
		{filepath.Join(dir, "file"), memdir.ErrInvalid},
	} {
		if _, err := New(tc.root, nil); !errors.Is(err, tc.want) {
			t.Errorf("New(%s) = %v, want %v", tc.root, err, tc.want)
		}
	}
	tool, err := New(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := tool.Close(); err != nil {
		t.Fatal(err)
	}
	if err := tool.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	for _, in := range []string{`{"command":"view","path":"/memories"}`, `{"command":"delete","path":"/memories/file"}`} {
		if out, isErr := run(t, tool, in); !isErr || !strings.Contains(out, "closed") {
			t.Errorf("after Close, %s = %q, want a closed error", in, out)
		}
	}
}

func TestCreate(t *testing.T) {
	t.Parallel()
	tool, root := mustTool(t, nil)
	mustWrite(t, root, map[string]string{"old.md": "keep me\n"})
	for _, tc := range []struct {
		path, text string
		want       string
		wantErr    error
	}{
		{"/memories/new.md", "hello\n", "File created successfully at: /memories/new.md", nil},
		{"/memories/a/b/c.md", "", "File created successfully at: /memories/a/b/c.md", nil},
		{"/memories//x//y.md", "y", "File created successfully at: /memories/x/y.md", nil},
		{"/memories/old.md", "overwrite?", "File /memories/old.md already exists", memdir.ErrExists},
		{"/memories/a", "dir", "File /memories/a already exists", memdir.ErrExists},
		{"/memories", "root", "File /memories already exists", memdir.ErrExists},
		{"/memories/old.md/under.md", "x", "Cannot create /memories/old.md/under.md: /memories/old.md is a file, not a directory.", memdir.ErrInvalid},
	} {
		out, err := tool.Run(context.Background(), Command{Command: "create", Path: tc.path, FileText: &tc.text})
		got := out
		if err != nil {
			got = err.Error()
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("create %s (-want +got):\n%s", tc.path, diff)
		}
		if !errors.Is(err, tc.wantErr) {
			t.Errorf("create %s: error %v, want %v", tc.path, err, tc.wantErr)
		}
	}
	snap := snapshot(t, root)
	for name, want := range map[string]string{"new.md": "hello\n", "a/b/c.md": "", "x/y.md": "y", "old.md": "keep me\n"} {
		if got := snap[name].Content; got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
	checkNoTemp(t, root)
}

func TestStrReplace(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, file, old, new string
		want, wantFile       string
	}{
		{
			name: "unique", file: "a\nb\nc\nd\ne\nf\ng\n", old: "d", new: "D",
			want: "The memory file has been edited. Here is the snippet showing the change (with line numbers):\n" +
				"     2\tb\n     3\tc\n     4\tD\n     5\te\n     6\tf",
			wantFile: "a\nb\nc\nD\ne\nf\ng\n",
		},
		{
			name: "multi-line new text near the top: two lines after where it starts", file: "one\ntwo\nthree", old: "one", new: "1\n1.5",
			want: "The memory file has been edited. Here is the snippet showing the change (with line numbers):\n" +
				"     1\t1\n     2\t1.5\n     3\ttwo",
			wantFile: "1\n1.5\ntwo\nthree",
		},
		{
			name: "deletion keeps CRLF and the missing final newline", file: "x\r\ny\r\nz", old: "y\r\n", new: "",
			want: "The memory file has been edited. Here is the snippet showing the change (with line numbers):\n" +
				"     1\tx\r\n     2\tz",
			wantFile: "x\r\nz",
		},
		{
			name: "a final newline shows as an empty last line", file: "a\nb\n", old: "b", new: "B",
			want: "The memory file has been edited. Here is the snippet showing the change (with line numbers):\n" +
				"     1\ta\n     2\tB\n     3\t",
			wantFile: "a\nB\n",
		},
		{
			name: "none", file: "abc\n", old: "abd", new: "x",
			want:     "No replacement was performed, old_str `abd` did not appear verbatim in /memories/f.md.",
			wantFile: "abc\n",
		},
		{
			name: "multiple", file: "x\ny\nx\nzx\n", old: "x", new: "q",
			want:     "No replacement was performed. Multiple occurrences of old_str `x` in lines: 1, 3, 4. Please ensure it is unique",
			wantFile: "x\ny\nx\nzx\n",
		},
		{
			name: "overlapping occurrences are all listed", file: "aaa\naaa\n", old: "aa", new: "b",
			want:     "No replacement was performed. Multiple occurrences of old_str `aa` in lines: 1, 1, 2, 2. Please ensure it is unique",
			wantFile: "aaa\naaa\n",
		},
		{
			name: "multiple multi-line", file: "a\nb\na\nb\n", old: "a\nb", new: "c",
			want:     "No replacement was performed. Multiple occurrences of old_str `a\nb` in lines: 1, 3. Please ensure it is unique",
			wantFile: "a\nb\na\nb\n",
		},
		{
			name: "empty old_str", file: "abc\n", old: "", new: "x",
			want:     "old_str is empty; give the exact text in /memories/f.md to replace.",
			wantFile: "abc\n",
		},
		{
			name: "huge old_str is shortened in the message", file: "abc\n", old: strings.Repeat("z", 300), new: "x",
			want:     "No replacement was performed, old_str `" + strings.Repeat("z", 200) + "…` did not appear verbatim in /memories/f.md.",
			wantFile: "abc\n",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tool, root := mustTool(t, nil)
			mustWrite(t, root, map[string]string{"f.md": tc.file})
			got, _ := run(t, tool, cmdJSON(t, "command", "str_replace", "path", "/memories/f.md", "old_str", tc.old, "new_str", tc.new))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("result (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantFile, snapshot(t, root)["f.md"].Content); diff != "" {
				t.Errorf("file (-want +got):\n%s", diff)
			}
		})
	}
}

func TestInsert(t *testing.T) {
	t.Parallel()
	const edited = "The file /memories/f.md has been edited."
	for _, tc := range []struct {
		file     string
		line     int
		text     string
		want     string
		wantFile string
	}{
		{"a\nb\nc\n", 0, "X", edited, "X\na\nb\nc\n"},
		{"a\nb\nc\n", 2, "X\nY", edited, "a\nb\nX\nY\nc\n"},
		{"a\nb\nc\n", 3, "X\n", edited, "a\nb\nc\nX\n"},
		// As in the Python helper, the file ends with a newline afterwards
		// and the text's own trailing newlines are dropped.
		{"a\nb", 2, "X", edited, "a\nb\nX\n"},
		{"a\nb", 1, "X", edited, "a\nX\nb\n"},
		{"a\n", 1, "X\n\n\n", edited, "a\nX\n"},
		{"", 0, "X", edited, "X\n"},
		{"a\n", 1, "", edited, "a\n"},
		{"a\n", 0, "", edited, "\na\n"},
		// Unlike the Python helper, a blank last line is kept.
		{"a\n\n", 0, "X", edited, "X\na\n\n"},
		{"x\r\ny\r\n", 1, "Z", edited, "x\r\nZ\ny\r\n"},
		{"a\nb\nc\n", 4, "X", "Invalid `insert_line` parameter: 4. It should be within the range [0, 3].", "a\nb\nc\n"},
		{"a\nb\nc\n", -1, "X", "Invalid `insert_line` parameter: -1. It should be within the range [0, 3].", "a\nb\nc\n"},
		{"a\n\n", 3, "X", "Invalid `insert_line` parameter: 3. It should be within the range [0, 2].", "a\n\n"},
		{"", 1, "X", "Invalid `insert_line` parameter: 1. It should be within the range [0, 0].", ""},
	} {
		tool, root := mustTool(t, nil)
		mustWrite(t, root, map[string]string{"f.md": tc.file})
		in := cmdJSON(t, "command", "insert", "path", "/memories/f.md", "insert_line", tc.line, "insert_text", tc.text)
		got, _ := run(t, tool, in)
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s on %q (-want +got):\n%s", in, tc.file, diff)
		}
		if diff := cmp.Diff(tc.wantFile, snapshot(t, root)["f.md"].Content); diff != "" {
			t.Errorf("%s on %q: file (-want +got):\n%s", in, tc.file, diff)
		}
	}
}

// TestNotAFile checks the reference's answers for paths that exist but are
// not regular files, or lead through one.
func TestNotAFile(t *testing.T) {
	t.Parallel()
	tool, root := mustTool(t, nil)
	mustWrite(t, root, map[string]string{"d/x.md": "x\n", "f.md": "f\n"})
	for _, tc := range []struct{ in, want string }{
		{`{"command":"str_replace","path":"/memories/d","old_str":"x","new_str":"y"}`, "The path /memories/d is not a file."},
		{`{"command":"insert","path":"/memories/d","insert_line":0,"insert_text":"y"}`, "The path /memories/d is not a file."},
		{`{"command":"str_replace","path":"/memories","old_str":"x","new_str":"y"}`, "The path /memories is not a file."},
		{`{"command":"view","path":"/memories/f.md/x"}`, "The path /memories/f.md/x does not exist. Please provide a valid path."},
		{`{"command":"insert","path":"/memories/f.md/x","insert_line":0,"insert_text":"y"}`, "The path /memories/f.md/x does not exist. Please provide a valid path."},
		{`{"command":"delete","path":"/memories/f.md/x"}`, "The path /memories/f.md/x does not exist"},
	} {
		got, isErr := run(t, tool, tc.in)
		if !isErr {
			t.Errorf("%s succeeded: %q", tc.in, got)
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.in, diff)
		}
	}
	if err := mkfifo(filepath.Join(root, "fifo")); err != nil {
		t.Skipf("no FIFOs here: %v", err)
	}
	for _, tc := range []struct{ in, want string }{
		{`{"command":"view","path":"/memories/fifo"}`, "Unsupported file type for /memories/fifo"},
		{`{"command":"str_replace","path":"/memories/fifo","old_str":"x","new_str":"y"}`, "The path /memories/fifo is not a file."},
	} {
		if got, _ := run(t, tool, tc.in); got != tc.want {
			t.Errorf("%s = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestViewRange(t *testing.T) {
	t.Parallel()
	tool, root := mustTool(t, nil)
	mustWrite(t, root, map[string]string{"f.md": "l1\nl2\nl3\nl4\nl5\n", "empty.md": ""})
	const head = "Here's the content of /memories/f.md with line numbers:"
	// The file ends with a newline, so, as in the reference, it has a sixth,
	// empty line.
	const all = head + "\n     1\tl1\n     2\tl2\n     3\tl3\n     4\tl4\n     5\tl5\n     6\t"
	for _, tc := range []struct {
		path string
		vr   any
		want string
	}{
		{"/memories/f.md", nil, all},
		{"/memories/f.md", []int{2, 3}, head + "\n     2\tl2\n     3\tl3"},
		{"/memories/f.md", []int{4, -1}, head + "\n     4\tl4\n     5\tl5\n     6\t"},
		{"/memories/f.md", []int{5, 5}, head + "\n     5\tl5"},
		{"/memories/f.md", []int{1, 1}, head + "\n     1\tl1"},
		// The reference slices its list of lines: a start below 1 is 1, an
		// end past the last line stops there, another negative end counts
		// back from the end, and an empty range shows only the header.
		{"/memories/f.md", []int{4, 9}, head + "\n     4\tl4\n     5\tl5\n     6\t"},
		{"/memories/f.md", []int{0, 2}, head + "\n     1\tl1\n     2\tl2"},
		{"/memories/f.md", []int{-3, 1}, head + "\n     1\tl1"},
		{"/memories/f.md", []int{6, -1}, head + "\n     6\t"},
		{"/memories/f.md", []int{7, -1}, head + "\n"},
		{"/memories/f.md", []int{3, 2}, head + "\n"},
		{"/memories/f.md", []int{3, -2}, head + "\n     3\tl3\n     4\tl4"},
		{"/memories/f.md", []int{3, -9}, head + "\n"},
		// Anything but two numbers is ignored.
		{"/memories/f.md", []int{3}, all},
		{"/memories/f.md", []int{1, 2, 3}, all},
		{"/memories/f.md", []int{}, all},
		{"/memories/f.md", []any{1.5, 2}, `Invalid memory tool input: key "view_range" must be an array of two integers, not a JSON number 1.5.`},
		{"/memories/empty.md", nil, "Here's the content of /memories/empty.md with line numbers:\n     1\t"},
		{"/memories/empty.md", []int{1, -1}, "Here's the content of /memories/empty.md with line numbers:\n     1\t"},
	} {
		in := cmdJSON(t, "command", "view", "path", tc.path)
		if tc.vr != nil {
			in = cmdJSON(t, "command", "view", "path", tc.path, "view_range", tc.vr)
		}
		got, _ := run(t, tool, in)
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", in, diff)
		}
	}
	// On a directory, as in the reference, view_range is ignored.
	with := mustRun(t, tool, `{"command":"view","path":"/memories","view_range":[1,2]}`)
	if without := mustRun(t, tool, `{"command":"view","path":"/memories"}`); with != without {
		t.Errorf("listing with a view_range = %q, want the plain listing %q", with, without)
	}
}

func TestViewFormat(t *testing.T) {
	t.Parallel()
	var lines []string
	for i := 1; i <= 1200; i++ {
		lines = append(lines, fmt.Sprintf("line %d", i))
	}
	tool, root := mustTool(t, &Options{MaxViewChars: 200})
	mustWrite(t, root, map[string]string{
		"many.md":  strings.Join(lines, "\n") + "\n",
		"long.md":  strings.Repeat("é", 500) + "\nshort\n",
		"tabs.md":  "\tindented\ttab\n",
		"bin.dat":  "abc\x00def",
		"latin.md": "caf\xe9\n",
	})
	for _, tc := range []struct {
		in   string
		want string
	}{
		{`{"command":"view","path":"/memories/many.md","view_range":[998,1001]}`,
			"Here's the content of /memories/many.md with line numbers:\n   998\tline 998\n   999\tline 999\n  1000\tline 1000\n  1001\tline 1001"},
		{`{"command":"view","path":"/memories/many.md","view_range":[1,-1]}`,
			"Here's the content of /memories/many.md with line numbers:\n" +
				"     1\tline 1\n     2\tline 2\n     3\tline 3\n     4\tline 4\n     5\tline 5\n     6\tline 6\n     7\tline 7\n     8\tline 8\n" +
				"     9\tline 9\n    10\tline 10\n" +
				"[Output truncated at the 200-character view limit: showing lines 1-10 of 1201. Use view_range [11, -1] to read on.]"},
		{`{"command":"view","path":"/memories/long.md"}`,
			"Here's the content of /memories/long.md with line numbers:\n     1\t" + strings.Repeat("é", 134) +
				"\n[Output truncated: line 1 alone is longer than the 200-character view limit, so only its beginning is shown.]"},
		{`{"command":"view","path":"/memories/long.md","view_range":[2,-1]}`,
			"Here's the content of /memories/long.md with line numbers:\n     2\tshort\n     3\t"},
		{`{"command":"view","path":"/memories/tabs.md"}`,
			"Here's the content of /memories/tabs.md with line numbers:\n     1\t\tindented\ttab\n     2\t"},
		{`{"command":"view","path":"/memories/bin.dat"}`,
			"The file /memories/bin.dat is a binary file (it contains NUL bytes) and cannot be read as memory."},
		{`{"command":"view","path":"/memories/latin.md"}`,
			"The file /memories/latin.md is not a valid UTF-8 text file and cannot be read as memory."},
		{`{"command":"view","path":"/memories/missing.md"}`,
			"The path /memories/missing.md does not exist. Please provide a valid path."},
	} {
		got, _ := run(t, tool, tc.in)
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.in, diff)
		}
	}
}

func TestViewLineLimit(t *testing.T) {
	t.Parallel()
	tool, root := mustTool(t, nil)
	mustWrite(t, root, map[string]string{
		// Lines are counted as the reference counts them, by splitting on
		// newlines: n newlines make n+1 lines.
		"ok.md":  strings.Repeat("\n", 999_998),
		"big.md": strings.Repeat("\n", 999_999),
	})
	out := mustRun(t, tool, `{"command":"view","path":"/memories/ok.md","view_range":[999999,-1]}`)
	if want := "\n999999\t"; !strings.HasSuffix(out, want) {
		t.Errorf("view of line 999,999 ends %q, want %q", out[len(out)-20:], want)
	}
	got, _ := run(t, tool, `{"command":"view","path":"/memories/big.md"}`)
	if want := "File /memories/big.md exceeds maximum line limit of 999,999 lines."; got != want {
		t.Errorf("view of 1,000,000 lines = %q, want %q", got, want)
	}
}

func TestViewDirectory(t *testing.T) {
	t.Parallel()
	tool, root := mustTool(t, nil)
	mustWrite(t, root, map[string]string{
		"b.md":                  strings.Repeat("x", 1536),
		"k.md":                  strings.Repeat("x", 1024),
		"a.md":                  "",
		"sub/one.md":            "12345",
		"sub/deeper/two.md":     "1234567890",
		"sub/deeper/more/x.md":  "1",
		".hidden.md":            "secret",
		"sub/.git/HEAD":         "ref",
		"node_modules/p/x.js":   "js",
		"sub/node_modules/y.js": "js",
	})
	mustSymlink(t, "a.md", root, "link.md")
	if err := os.Mkdir(filepath.Join(root, "empty"), 0o700); err != nil {
		t.Fatal(err)
	}
	// A directory's size is what the filesystem reports for it, as in the
	// reference (4K on ext4), not the total of its files.
	dir := func(rel string) string {
		fi, err := os.Lstat(filepath.Join(root, filepath.FromSlash(rel)))
		if err != nil {
			t.Fatal(err)
		}
		return humanSize(fi.Size())
	}
	want := "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:\n" +
		dir(".") + "\t/memories\n" +
		"0B\t/memories/a.md\n" +
		"1.5K\t/memories/b.md\n" +
		dir("empty") + "\t/memories/empty/\n" +
		"1K\t/memories/k.md\n" +
		dir("sub") + "\t/memories/sub/\n" +
		dir("sub/deeper") + "\t/memories/sub/deeper/\n" +
		"5B\t/memories/sub/one.md\n" +
		"[1 symbolic link(s) or special file(s) not shown; the memory tool does not follow links.]"
	got := mustRun(t, tool, `{"command":"view","path":"/memories/"}`)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("listing (-want +got):\n%s", diff)
	}
	want = "Here're the files and directories up to 2 levels deep in /memories/sub, excluding hidden items and node_modules:\n" +
		dir("sub") + "\t/memories/sub\n" +
		dir("sub/deeper") + "\t/memories/sub/deeper/\n" +
		dir("sub/deeper/more") + "\t/memories/sub/deeper/more/\n" +
		"10B\t/memories/sub/deeper/two.md\n" +
		"5B\t/memories/sub/one.md"
	got = mustRun(t, tool, `{"command":"view","path":"/memories/sub"}`)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("sub listing (-want +got):\n%s", diff)
	}
	// Without a node_modules, the header does not mention one.
	want = "Here're the files and directories up to 2 levels deep in /memories/sub/deeper, excluding hidden items:\n" +
		dir("sub/deeper") + "\t/memories/sub/deeper\n" +
		dir("sub/deeper/more") + "\t/memories/sub/deeper/more/\n" +
		"1B\t/memories/sub/deeper/more/x.md\n" +
		"10B\t/memories/sub/deeper/two.md"
	got = mustRun(t, tool, `{"command":"view","path":"/memories/sub/deeper"}`)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("deeper listing (-want +got):\n%s", diff)
	}

	// A listing longer than MaxViewChars stops with a note; the limit is
	// set so that the header, the top line and one entry fit.
	_, root2 := mustTool(t, nil)
	mustWrite(t, root2, map[string]string{"aaaaaaaa.md": "1", "bbbbbbbb.md": "2", "cccccccc.md": "3"})
	fi, err := os.Lstat(root2)
	if err != nil {
		t.Fatal(err)
	}
	head := "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items:\n" +
		humanSize(fi.Size()) + "\t/memories\n" +
		"1B\t/memories/aaaaaaaa.md"
	small, err := New(root2, &Options{MaxViewChars: len(head) + 5})
	if err != nil {
		t.Fatal(err)
	}
	defer small.Close()
	want = head + "\n[Listing truncated at the " + thousands(len(head)+5) + "-character view limit after 2 of 4 entries. View a subdirectory to see the rest.]"
	got = mustRun(t, small, `{"command":"view","path":"/memories"}`)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("truncated listing (-want +got):\n%s", diff)
	}
}

// TestHumanSize checks the reference's size format: whole numbers without
// a decimal, powers of 1024, G the largest unit.
func TestHumanSize(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		n    int64
		want string
	}{
		{0, "0B"}, {1, "1B"}, {1023, "1023B"}, {1024, "1K"}, {1025, "1.0K"}, {1536, "1.5K"}, {4096, "4K"}, {5632, "5.5K"},
		{1048575, "1024.0K"}, {1 << 20, "1M"}, {1258291, "1.2M"}, {3 << 30, "3G"}, {5 << 40, "5120G"},
	} {
		if got := humanSize(tc.n); got != tc.want {
			t.Errorf("humanSize(%d) = %q, want %q", tc.n, got, tc.want)
		}
	}
}

func TestDelete(t *testing.T) {
	t.Parallel()
	tool, root := mustTool(t, nil)
	mustWrite(t, root, map[string]string{"a.md": "a", "d/x.md": "x", "d/e/y.md": "y", "keep.md": "k"})
	for _, tc := range []struct{ path, want string }{
		{"/memories/a.md", "Successfully deleted /memories/a.md"},
		{"/memories/d/", "Successfully deleted /memories/d"},
		{"/memories/a.md", "The path /memories/a.md does not exist"},
		{"/memories", "Cannot delete the /memories directory itself"},
		// Unlike the Python helper, which empties the directory for these.
		{"/memories/", "Cannot delete the /memories directory itself"},
		{"/memories//", "Cannot delete the /memories directory itself"},
		{"/memories/d/..", "Cannot delete the /memories directory itself"},
		{"/memoriesfoo", "Path /memoriesfoo would escape /memories directory"},
	} {
		got, _ := run(t, tool, cmdJSON(t, "command", "delete", "path", tc.path))
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("delete %s (-want +got):\n%s", tc.path, diff)
		}
	}
	want := map[string]entry{".": {Mode: fs.ModeDir | 0o700}, "keep.md": {Mode: 0o600, Content: "k"}}
	if diff := cmp.Diff(want, snapshot(t, root)); diff != "" {
		t.Errorf("after deletes (-want +got):\n%s", diff)
	}
}

func TestRename(t *testing.T) {
	t.Parallel()
	tool, root := mustTool(t, nil)
	mustWrite(t, root, map[string]string{"a.md": "a", "b.md": "b", "d/x.md": "x"})
	for _, tc := range []struct{ from, to, want string }{
		{"/memories/a.md", "/memories/b.md", "The destination /memories/b.md already exists"},
		{"/memories/a.md", "/memories/a.md", "The destination /memories/a.md already exists"},
		{"/memories/a.md", "/memories/d", "The destination /memories/d already exists"},
		{"/memories/a.md", "/memories", "The destination /memories already exists"},
		{"/memories/nope.md", "/memories/c.md", "The path /memories/nope.md does not exist"},
		// As in the reference, a taken destination is reported first.
		{"/memories/nope.md", "/memories/b.md", "The destination /memories/b.md already exists"},
		{"/memories", "/memories/x", "Cannot rename /memories itself, the memory directory; rename the files inside it instead."},
		{"/memories/d", "/memories/d/sub/d", "Cannot move the directory /memories/d into itself (/memories/d/sub/d)."},
		{"/memories/a.md", "/memoriesfoo/a.md", "Path /memoriesfoo/a.md would escape /memories directory"},
		{"/memories/a.md", "/memories/new/deep/a2.md", "Successfully renamed /memories/a.md to /memories/new/deep/a2.md"},
		{"/memories/d", "/memories/dd", "Successfully renamed /memories/d to /memories/dd"},
		{"/memories/dd", "/memories/d-old/dd", "Successfully renamed /memories/dd to /memories/d-old/dd"},
	} {
		got, _ := run(t, tool, cmdJSON(t, "command", "rename", "old_path", tc.from, "new_path", tc.to))
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("rename %s -> %s (-want +got):\n%s", tc.from, tc.to, diff)
		}
	}
	want := map[string]entry{
		".":              {Mode: fs.ModeDir | 0o700},
		"b.md":           {Mode: 0o600, Content: "b"},
		"new":            {Mode: fs.ModeDir | 0o700},
		"new/deep":       {Mode: fs.ModeDir | 0o700},
		"new/deep/a2.md": {Mode: 0o600, Content: "a"},
		"d-old":          {Mode: fs.ModeDir | 0o700},
		"d-old/dd":       {Mode: fs.ModeDir | 0o700},
		"d-old/dd/x.md":  {Mode: 0o600, Content: "x"},
	}
	if diff := cmp.Diff(want, snapshot(t, root)); diff != "" {
		t.Errorf("after renames (-want +got):\n%s", diff)
	}
}

// TestMemoriesFoo guards against the Python SDK's prefix bug, in which
// /memoriesfoo was read as /memories/foo.
func TestMemoriesFoo(t *testing.T) {
	t.Parallel()
	tool, root := mustTool(t, nil)
	mustWrite(t, root, map[string]string{"foo": "f", "a.md": "a"})
	before := snapshot(t, root)
	for _, p := range []string{"/memoriesfoo", "/memoriesbar/x.md"} {
		for _, in := range commandsOn(t, p) {
			got, isErr := run(t, tool, in)
			if !isErr || !strings.Contains(got, "Path "+p+" would escape /memories directory") {
				t.Errorf("%s = %q, want the escape error", in, got)
			}
		}
	}
	if diff := cmp.Diff(before, snapshot(t, root)); diff != "" {
		t.Errorf("directory changed (-before +after):\n%s", diff)
	}
}

// commandsOn returns every command, with p in each of its path arguments.
func commandsOn(tb testing.TB, p string) []string {
	tb.Helper()
	return []string{
		cmdJSON(tb, "command", "view", "path", p),
		cmdJSON(tb, "command", "create", "path", p, "file_text", "pwned"),
		cmdJSON(tb, "command", "str_replace", "path", p, "old_str", "secret", "new_str", "pwned"),
		cmdJSON(tb, "command", "insert", "path", p, "insert_line", 0, "insert_text", "pwned"),
		cmdJSON(tb, "command", "delete", "path", p),
		cmdJSON(tb, "command", "rename", "old_path", p, "new_path", "/memories/stolen.md"),
		cmdJSON(tb, "command", "rename", "old_path", "/memories/a.md", "new_path", p),
	}
}

// TestTraversal sends hostile paths through every command and checks that
// each is refused, in the reference's words where it has them, and that
// nothing inside or outside the root changes.
func TestTraversal(t *testing.T) {
	t.Parallel()
	tool, root := mustTool(t, nil)
	base := filepath.Dir(root)
	mustWrite(t, base, map[string]string{"outside/secret.md": "secret\n", "mem/a.md": "a\n"})
	before := snapshot(t, base)
	const escape = " would escape /memories directory"
	abs := filepath.Join(base, "outside", "secret.md")
	for _, tc := range []struct{ p, want string }{
		{"/memories/../outside/secret.md", "Path /memories/../outside/secret.md" + escape},
		{"/memories/a/../../outside/secret.md", "Path /memories/a/../../outside/secret.md" + escape},
		{"/memories/..", "Path /memories/.." + escape},
		{"/memories/..\\outside\\secret.md", "Path /memories/..\\outside\\secret.md" + escape},
		{"/memories\\..\\outside", "Path /memories\\..\\outside" + escape},
		{"/memories/secret.md\x00.txt", `The path "/memories/secret.md\x00.txt" is not allowed: it contains a NUL byte.`},
		{"/memories/%2e%2e%2foutside%2fsecret.md", "Path /memories/%2e%2e%2foutside%2fsecret.md" + escape + " (../outside/secret.md when percent-decoded)"},
		{"/memories/%2e%2e/outside/secret.md", "Path /memories/%2e%2e/outside/secret.md" + escape + " (.. when percent-decoded)"},
		{"/memories/%252e%252e%252foutside%252fsecret.md", "Path /memories/%252e%252e%252foutside%252fsecret.md" + escape + " (../outside/secret.md when percent-decoded twice)"},
		{"/memories/．．／outside／secret.md", "Path /memories/．．／outside／secret.md" + escape + " (../outside/secret.md after Unicode normalisation)"},
		{"/memories/．．/outside/secret.md", "Path /memories/．．/outside/secret.md" + escape + " (.. after Unicode normalisation)"},
		{"/memories/\u2025/outside/secret.md", "Path /memories/\u2025/outside/secret.md" + escape + " (.. after Unicode normalisation)"},
		{abs, "Path must start with /memories, got: " + abs},
		{"/etc/passwd", "Path must start with /memories, got: /etc/passwd"},
		{"/memoriesoutside/secret.md", "Path /memoriesoutside/secret.md" + escape},
		{"memories/../outside/secret.md", "Path must start with /memories, got: memories/../outside/secret.md"},
		{"/memories/.hidden", `The path /memories/.hidden is not allowed: names starting with "." are hidden and reserved for the tool's own files.`},
	} {
		for _, in := range commandsOn(t, tc.p) {
			_, err := tool.Execute(context.Background(), json.RawMessage(in))
			if !errors.Is(err, memdir.ErrInvalid) {
				t.Errorf("%s: error %v, want ErrInvalid", in, err)
			}
			if err != nil && err.Error() != tc.want {
				t.Errorf("%s: error %q, want %q", in, err, tc.want)
			}
		}
	}
	if diff := cmp.Diff(before, snapshot(t, base)); diff != "" {
		t.Errorf("files changed (-before +after):\n%s", diff)
	}
}

// TestSymlinkEscapes plants links inside the root that point outside it
// and checks that no command reads, writes or deletes through them.
func TestSymlinkEscapes(t *testing.T) {
	t.Parallel()
	tool, root := mustTool(t, nil)
	base := filepath.Dir(root)
	outside := filepath.Join(base, "outside")
	mustWrite(t, base, map[string]string{"outside/secret.md": "secret\n", "mem/a.md": "a\n", "mem/real/r.md": "r\n"})
	mustSymlink(t, filepath.Join(outside, "secret.md"), root, "abs-file")
	mustSymlink(t, "../outside/secret.md", root, "rel-file")
	mustSymlink(t, outside, root, "abs-dir")
	mustSymlink(t, "../outside", root, "rel-dir")
	mustSymlink(t, "a.md", root, "inside-file")
	mustSymlink(t, "real", root, "inside-dir")
	mustSymlink(t, filepath.Join(outside, "missing.md"), root, "dangling")

	// A link that leads out of the root is refused as the reference refuses
	// an escape; one that stays inside is refused too (memdir follows no
	// links), in memdir's own words.
	const escape = " would escape /memories directory"
	const notFollowed = "; the memory tool does not follow links."
	for _, tc := range []struct{ in, want string }{
		{`{"command":"view","path":"/memories/abs-file"}`, "Path /memories/abs-file" + escape},
		{`{"command":"view","path":"/memories/rel-file"}`, "Path /memories/rel-file" + escape},
		{`{"command":"view","path":"/memories/abs-dir"}`, "Path /memories/abs-dir" + escape},
		{`{"command":"view","path":"/memories/rel-dir/secret.md"}`, "Path /memories/rel-dir/secret.md" + escape},
		{`{"command":"view","path":"/memories/dangling"}`, "Path /memories/dangling" + escape},
		{`{"command":"view","path":"/memories/inside-file"}`, "The path /memories/inside-file is a symbolic link" + notFollowed},
		{`{"command":"view","path":"/memories/inside-dir/r.md"}`, "The path /memories/inside-dir/r.md goes through the symbolic link /memories/inside-dir" + notFollowed},
		{`{"command":"create","path":"/memories/abs-dir/new.md","file_text":"x"}`, "Path /memories/abs-dir/new.md" + escape},
		{`{"command":"create","path":"/memories/rel-dir/sub/new.md","file_text":"x"}`, "Path /memories/rel-dir/sub/new.md" + escape},
		{`{"command":"create","path":"/memories/inside-dir/new.md","file_text":"x"}`, "The path /memories/inside-dir/new.md goes through the symbolic link /memories/inside-dir" + notFollowed},
		{`{"command":"create","path":"/memories/dangling","file_text":"x"}`, "File /memories/dangling already exists"},
		{`{"command":"create","path":"/memories/abs-file","file_text":"x"}`, "File /memories/abs-file already exists"},
		{`{"command":"str_replace","path":"/memories/abs-file","old_str":"secret","new_str":"pwned"}`, "Path /memories/abs-file" + escape},
		{`{"command":"insert","path":"/memories/rel-file","insert_line":0,"insert_text":"pwned"}`, "Path /memories/rel-file" + escape},
		{`{"command":"str_replace","path":"/memories/inside-file","old_str":"a","new_str":"b"}`, "The path /memories/inside-file is a symbolic link" + notFollowed},
		{`{"command":"rename","old_path":"/memories/a.md","new_path":"/memories/abs-file"}`, "The destination /memories/abs-file already exists"},
		{`{"command":"rename","old_path":"/memories/a.md","new_path":"/memories/dangling"}`, "The destination /memories/dangling already exists"},
		{`{"command":"rename","old_path":"/memories/a.md","new_path":"/memories/abs-dir/a.md"}`, "Path /memories/abs-dir/a.md" + escape},
		{`{"command":"rename","old_path":"/memories/rel-dir/secret.md","new_path":"/memories/stolen.md"}`, "Path /memories/rel-dir/secret.md" + escape},
		{`{"command":"delete","path":"/memories/abs-dir/secret.md"}`, "Path /memories/abs-dir/secret.md" + escape},
	} {
		got, _ := run(t, tool, tc.in)
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.in, diff)
		}
	}
	outsideBefore := snapshot(t, outside)

	// Renaming a link moves the link itself; deleting one removes only the link.
	mustRun(t, tool, `{"command":"rename","old_path":"/memories/abs-file","new_path":"/memories/moved/abs-file"}`)
	for _, p := range []string{"/memories/moved/abs-file", "/memories/rel-file", "/memories/abs-dir", "/memories/rel-dir", "/memories/dangling"} {
		mustRun(t, tool, cmdJSON(t, "command", "delete", "path", p))
	}
	// A directory holding a link to the outside is deleted without following it.
	mustSymlink(t, outside, root, "real/escape")
	mustRun(t, tool, `{"command":"delete","path":"/memories/real"}`)

	if diff := cmp.Diff(outsideBefore, snapshot(t, outside)); diff != "" {
		t.Errorf("outside changed (-before +after):\n%s", diff)
	}
	want := map[string]entry{
		".":           {Mode: fs.ModeDir | 0o700},
		"a.md":        {Mode: 0o600, Content: "a\n"},
		"inside-dir":  {Mode: fs.ModeSymlink | 0o777, Content: "real"},
		"inside-file": {Mode: fs.ModeSymlink | 0o777, Content: "a.md"},
		"moved":       {Mode: fs.ModeDir | 0o700},
	}
	if diff := cmp.Diff(want, snapshot(t, root)); diff != "" {
		t.Errorf("root after deletes (-want +got):\n%s", diff)
	}
	checkNoTemp(t, root)
}

func TestModes(t *testing.T) {
	t.Parallel()
	tool, root := mustTool(t, nil)
	mustWrite(t, root, map[string]string{"loose.md": "a\n"})
	if err := os.Chmod(filepath.Join(root, "loose.md"), 0o644); err != nil {
		t.Fatal(err)
	}
	mustRun(t, tool, `{"command":"create","path":"/memories/x/y/z.md","file_text":"z"}`)
	mustRun(t, tool, `{"command":"str_replace","path":"/memories/loose.md","old_str":"a","new_str":"b"}`)
	mustRun(t, tool, `{"command":"rename","old_path":"/memories/x/y/z.md","new_path":"/memories/p/q/z.md"}`)
	got := map[string]fs.FileMode{}
	for name, e := range snapshot(t, root) {
		got[name] = e.Mode
	}
	want := map[string]fs.FileMode{
		".":        fs.ModeDir | 0o700,
		"loose.md": 0o600,
		"x":        fs.ModeDir | 0o700,
		"x/y":      fs.ModeDir | 0o700,
		"p":        fs.ModeDir | 0o700,
		"p/q":      fs.ModeDir | 0o700,
		"p/q/z.md": 0o600,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("modes (-want +got):\n%s", diff)
	}
}

// TestWriteFailures makes the final step of a write fail, or loses the race
// for a new name, and checks that the old state and no temporary files
// remain.
func TestWriteFailures(t *testing.T) {
	boom := errors.New("disk on fire")
	for _, tc := range []struct {
		name, in string
		hook     func(root string) func(string) error
		want     string
		wantErr  error
	}{
		{
			name: "replace fails", in: `{"command":"str_replace","path":"/memories/a.md","old_str":"a","new_str":"b"}`,
			hook: func(string) func(string) error { return func(string) error { return boom } },
			want: "Could not write /memories/a.md: disk on fire", wantErr: boom,
		},
		{
			name: "create fails", in: `{"command":"create","path":"/memories/new.md","file_text":"n"}`,
			hook: func(string) func(string) error { return func(string) error { return boom } },
			want: "Could not write /memories/new.md: disk on fire", wantErr: boom,
		},
		{
			name: "create loses a race", in: `{"command":"create","path":"/memories/new.md","file_text":"mine"}`,
			hook: func(root string) func(string) error {
				return func(string) error { return os.WriteFile(filepath.Join(root, "new.md"), []byte("theirs"), 0o600) }
			},
			want: "File /memories/new.md already exists", wantErr: memdir.ErrExists,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tool, root := mustTool(t, nil)
			mustWrite(t, root, map[string]string{"a.md": "a\n"})
			before := snapshot(t, root)
			placeHook = tc.hook(root)
			defer func() { placeHook = nil }()
			_, err := tool.Execute(context.Background(), json.RawMessage(tc.in))
			placeHook = nil
			if err == nil || err.Error() != tc.want || !errors.Is(err, tc.wantErr) {
				t.Errorf("error = %v, want %q wrapping %v", err, tc.want, tc.wantErr)
			}
			after := snapshot(t, root)
			if tc.name == "create loses a race" {
				if got := after["new.md"].Content; got != "theirs" {
					t.Errorf("the other writer's file = %q, want it kept", got)
				}
				delete(after, "new.md")
			}
			if diff := cmp.Diff(before, after); diff != "" {
				t.Errorf("files changed (-before +after):\n%s", diff)
			}
			checkNoTemp(t, root)
		})
	}
}

func TestSizeCap(t *testing.T) {
	t.Parallel()
	tool, root := mustTool(t, &Options{MaxFileBytes: 10})
	mustWrite(t, root, map[string]string{"f.md": "123456789\n"})
	before := snapshot(t, root)
	for _, tc := range []struct{ in, want string }{
		{`{"command":"create","path":"/memories/ok.md","file_text":"0123456789"}`, "File created successfully at: /memories/ok.md"},
		{`{"command":"create","path":"/memories/big.md","file_text":"0123456789a"}`,
			"/memories/big.md would be 11B, over the 10B limit for a memory file; nothing was written. Keep memories short: split the content or drop what is outdated."},
		{`{"command":"str_replace","path":"/memories/f.md","old_str":"1","new_str":"11"}`,
			"/memories/f.md would be 11B, over the 10B limit for a memory file; nothing was written. Keep memories short: split the content or drop what is outdated."},
		{`{"command":"insert","path":"/memories/f.md","insert_line":1,"insert_text":""}`, "The file /memories/f.md has been edited."},
		{`{"command":"insert","path":"/memories/f.md","insert_line":1,"insert_text":"x"}`,
			"/memories/f.md would be 12B, over the 10B limit for a memory file; nothing was written. Keep memories short: split the content or drop what is outdated."},
		{`{"command":"create","path":"/memories/nul.md","file_text":"a\u0000b"}`,
			"The new content of /memories/nul.md is not UTF-8 text (it contains a NUL byte or invalid UTF-8); nothing was written."},
	} {
		got, _ := run(t, tool, tc.in)
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.in, diff)
		}
	}
	after := snapshot(t, root)
	delete(after, "ok.md")
	if diff := cmp.Diff(before, after); diff != "" {
		t.Errorf("files changed (-before +after):\n%s", diff)
	}
}

func TestBinaryNotEdited(t *testing.T) {
	t.Parallel()
	tool, root := mustTool(t, nil)
	mustWrite(t, root, map[string]string{"b.bin": "a\x00b\n"})
	for _, in := range []string{
		`{"command":"str_replace","path":"/memories/b.bin","old_str":"a","new_str":"c"}`,
		`{"command":"insert","path":"/memories/b.bin","insert_line":0,"insert_text":"c"}`,
	} {
		got, _ := run(t, tool, in)
		if want := "The file /memories/b.bin is a binary file (it contains NUL bytes) and cannot be read as memory."; got != want {
			t.Errorf("%s = %q, want %q", in, got, want)
		}
	}
	if got := snapshot(t, root)["b.bin"].Content; got != "a\x00b\n" {
		t.Errorf("binary file changed to %q", got)
	}
}

// TestBeforeChange checks the hooks' arguments on success and that a
// refusing BeforeChange leaves everything as it was.
func TestBeforeChange(t *testing.T) {
	t.Parallel()
	cmds := []struct {
		in         string
		wantBefore []string
		wantAfter  string
	}{
		{`{"command":"create","path":"/memories/n/new.md","file_text":"n"}`, []string{"n/new.md"}, "create n/new.md"},
		{`{"command":"str_replace","path":"/memories/a.md","old_str":"a","new_str":"b"}`, []string{"a.md"}, "str_replace a.md"},
		{`{"command":"insert","path":"/memories/a.md","insert_line":0,"insert_text":"i"}`, []string{"a.md"}, "insert a.md"},
		{`{"command":"delete","path":"/memories/d"}`, []string{"d"}, "delete d"},
		{`{"command":"rename","old_path":"/memories/d/x.md","new_path":"/memories/e/y.md"}`, []string{"d/x.md", "e/y.md"}, "rename d/x.md e/y.md"},
	}
	for _, tc := range cmds {
		var before, after []string
		tool, root := mustTool(t, &Options{
			BeforeChange: func(rel string) error { before = append(before, rel); return nil },
			AfterChange:  func(op string, rels ...string) { after = append(after, op+" "+strings.Join(rels, " ")) },
		})
		mustWrite(t, root, map[string]string{"a.md": "a\n", "d/x.md": "x\n"})
		mustRun(t, tool, tc.in)
		if diff := cmp.Diff(tc.wantBefore, before); diff != "" {
			t.Errorf("%s: BeforeChange (-want +got):\n%s", tc.in, diff)
		}
		if diff := cmp.Diff([]string{tc.wantAfter}, after); diff != "" {
			t.Errorf("%s: AfterChange (-want +got):\n%s", tc.in, diff)
		}
	}

	refuse := errors.New("journal full")
	for _, tc := range cmds {
		for n := range tc.wantBefore {
			calls, afterCalled := 0, false
			tool, root := mustTool(t, &Options{
				BeforeChange: func(string) error {
					if calls++; calls > n {
						return refuse
					}
					return nil
				},
				AfterChange: func(string, ...string) { afterCalled = true },
			})
			mustWrite(t, root, map[string]string{"a.md": "a\n", "d/x.md": "x\n"})
			snap := snapshot(t, root)
			_, err := tool.Execute(context.Background(), json.RawMessage(tc.in))
			if !errors.Is(err, refuse) || !strings.Contains(err.Error(), "was stopped before anything was modified: journal full") {
				t.Errorf("%s refused at call %d: error %v", tc.in, n+1, err)
			}
			if afterCalled {
				t.Errorf("%s: AfterChange called after a refusal", tc.in)
			}
			if diff := cmp.Diff(snap, snapshot(t, root)); diff != "" {
				t.Errorf("%s: files changed (-before +after):\n%s", tc.in, diff)
			}
		}
	}
}

func TestReadOnly(t *testing.T) {
	t.Parallel()
	called := false
	tool, root := mustTool(t, &Options{ReadOnly: true, BeforeChange: func(string) error { called = true; return nil }})
	mustWrite(t, root, map[string]string{"a.md": "a\n"})
	before := snapshot(t, root)
	mustRun(t, tool, `{"command":"view","path":"/memories/a.md"}`)
	for _, in := range []string{
		`{"command":"create","path":"/memories/b.md","file_text":"b"}`,
		`{"command":"str_replace","path":"/memories/a.md","old_str":"a","new_str":"b"}`,
		`{"command":"insert","path":"/memories/a.md","insert_line":0,"insert_text":"b"}`,
		`{"command":"delete","path":"/memories/a.md"}`,
		`{"command":"rename","old_path":"/memories/a.md","new_path":"/memories/b.md"}`,
	} {
		got, _ := run(t, tool, in)
		if want := "The memory directory is read-only here; only the view command is allowed."; got != want {
			t.Errorf("%s = %q, want %q", in, got, want)
		}
	}
	if called {
		t.Error("BeforeChange called in read-only mode")
	}
	if diff := cmp.Diff(before, snapshot(t, root)); diff != "" {
		t.Errorf("files changed (-before +after):\n%s", diff)
	}
}

func TestMalformedInput(t *testing.T) {
	t.Parallel()
	tool, _ := mustTool(t, nil)
	for _, tc := range []struct{ in, want string }{
		{``, `The memory tool input must be a JSON object with a "command" key.`},
		{`[]`, `The memory tool input must be a JSON object with a "command" key.`},
		{`"view"`, `The memory tool input must be a JSON object with a "command" key.`},
		{`{"command":"view"`, `The memory tool input is not valid JSON: unexpected end of JSON input.`},
		{`{}`, `The memory tool input has no "command" key; use one of view, create, str_replace, insert, delete, rename.`},
		{`{"command":"undo_all"}`, `Unknown memory tool command undo_all; use one of view, create, str_replace, insert, delete, rename.`},
		{`{"command":7}`, `Invalid memory tool input: key "command" must be a string, not a JSON number.`},
		{`{"command":"view","path":["/memories"]}`, `Invalid memory tool input: key "path" must be a string, not a JSON array.`},
		{`{"command":"insert","path":"/memories/a","insert_line":"2","insert_text":"x"}`, `Invalid memory tool input: key "insert_line" must be an integer, not a JSON string.`},
		{`{"command":"create","path":"/memories/a","file_text":null}`, `The create command needs the "file_text" key (the content of the new file).`},
		{`{"command":"view"}`, `The view command needs the "path" key (a path starting with /memories).`},
		{`{"command":"create","file_text":"x"}`, `The create command needs the "path" key (a path starting with /memories).`},
		{`{"command":"create","path":"/memories/a"}`, `The create command needs the "file_text" key (the content of the new file).`},
		{`{"command":"str_replace","path":"/memories/a","new_str":"x"}`, `The str_replace command needs the "old_str" key (the exact text to replace).`},
		{`{"command":"str_replace","path":"/memories/a","old_str":"x"}`, `The str_replace command needs the "new_str" key (the replacement text, which may be empty).`},
		{`{"command":"insert","path":"/memories/a","insert_text":"x"}`, `The insert command needs the "insert_line" key (the line after which to insert; 0 inserts at the top).`},
		{`{"command":"insert","path":"/memories/a","insert_line":0}`, `The insert command needs the "insert_text" key (the text to insert).`},
		{`{"command":"delete"}`, `The delete command needs the "path" key (a path starting with /memories).`},
		{`{"command":"rename","new_path":"/memories/b"}`, `The rename command needs the "old_path" key (a path starting with /memories).`},
		{`{"command":"rename","old_path":"/memories/a"}`, `The rename command needs the "new_path" key (a path starting with /memories).`},
		{`{"command":"view","path":"/memories","extra":"ignored"}`, ""},
	} {
		got, isErr := run(t, tool, tc.in)
		if tc.want == "" {
			if isErr {
				t.Errorf("%s: unexpected error %q", tc.in, got)
			}
			continue
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.in, diff)
		}
	}
}

func TestDefinition(t *testing.T) {
	t.Parallel()
	d := Definition()
	if d.Name != "memory" || d.Description == "" {
		t.Errorf("Definition() = %q, %q", d.Name, d.Description)
	}
	var schema struct {
		Type       string `json:"type"`
		Properties map[string]struct {
			Type string   `json:"type"`
			Enum []string `json:"enum"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	if err := json.Unmarshal(d.InputSchema, &schema); err != nil {
		t.Fatalf("schema is not JSON: %v", err)
	}
	if diff := cmp.Diff(Commands, schema.Properties["command"].Enum); diff != "" {
		t.Errorf("command enum (-want +got):\n%s", diff)
	}
	// Every field of Command is in the schema, and nothing else.
	var keys []string
	ct := reflect.TypeFor[Command]()
	for field := range ct.Fields() {
		keys = append(keys, strings.Split(field.Tag.Get("json"), ",")[0])
	}
	var props []string
	for k := range schema.Properties {
		props = append(props, k)
	}
	slices.Sort(keys)
	slices.Sort(props)
	if diff := cmp.Diff(keys, props); diff != "" {
		t.Errorf("schema properties (-Command fields +schema):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"command"}, schema.Required); diff != "" {
		t.Errorf("required (-want +got):\n%s", diff)
	}
}

// TestConcurrent runs writers and readers at once (meaningful under -race)
// and checks that every edit landed.
func TestConcurrent(t *testing.T) {
	t.Parallel()
	tool, root := mustTool(t, nil)
	mustWrite(t, root, map[string]string{"log.md": ""})
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			mustRun(t, tool, fmt.Sprintf(`{"command":"insert","path":"/memories/log.md","insert_line":0,"insert_text":"w%d"}`, i))
			mustRun(t, tool, fmt.Sprintf(`{"command":"create","path":"/memories/f%d.md","file_text":"x"}`, i))
			mustRun(t, tool, `{"command":"view","path":"/memories"}`)
		})
	}
	wg.Wait()
	lines := strings.Split(strings.TrimSpace(snapshot(t, root)["log.md"].Content), "\n")
	slices.Sort(lines)
	if diff := cmp.Diff([]string{"w0", "w1", "w2", "w3", "w4", "w5", "w6", "w7"}, lines); diff != "" {
		t.Errorf("log.md lines (-want +got):\n%s", diff)
	}
	checkNoTemp(t, root)
}

func TestContextCancelled(t *testing.T) {
	t.Parallel()
	tool, root := mustTool(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	text := "x"
	if _, err := tool.Run(ctx, Command{Command: "create", Path: "/memories/a.md", FileText: &text}); !errors.Is(err, context.Canceled) {
		t.Errorf("Run with a cancelled context = %v, want context.Canceled", err)
	}
	if _, err := os.Stat(filepath.Join(root, "a.md")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("file created despite cancellation: %v", err)
	}
}

// TestDotDotInside checks that, as in the reference, ".." and "." segments
// that stay inside /memories are stepped through, and that results name the
// clean path.
func TestDotDotInside(t *testing.T) {
	t.Parallel()
	tool, root := mustTool(t, nil)
	mustWrite(t, root, map[string]string{"a.md": "a\n"})
	for _, tc := range []struct{ in, want string }{
		{`{"command":"view","path":"/memories/x/../a.md"}`, "Here's the content of /memories/a.md with line numbers:\n     1\ta\n     2\t"},
		{`{"command":"create","path":"/memories/./n/../b.md","file_text":"b"}`, "File created successfully at: /memories/b.md"},
		{`{"command":"rename","old_path":"/memories/b.md","new_path":"/memories/d/../c.md"}`, "Successfully renamed /memories/b.md to /memories/c.md"},
	} {
		if got := mustRun(t, tool, tc.in); got != tc.want {
			t.Errorf("%s = %q, want %q", tc.in, got, tc.want)
		}
	}
	if got := snapshot(t, root)["c.md"].Content; got != "b" {
		t.Errorf("c.md = %q, want %q", got, "b")
	}
}

// TestViewTooLarge checks that view refuses to read a file over its 64 MiB
// read limit (the reference reads any size), without reading it.
func TestViewTooLarge(t *testing.T) {
	t.Parallel()
	tool, root := mustTool(t, nil)
	f, err := os.Create(filepath.Join(root, "big.log"))
	if err != nil {
		t.Fatal(err)
	}
	// A sparse file: its size is all that matters.
	if err := f.Truncate(maxViewFileBytes + 1); err != nil {
		t.Fatal(err)
	}
	f.Close()
	got, isErr := run(t, tool, `{"command":"view","path":"/memories/big.log"}`)
	if want := "/memories/big.log is 64.0M, too large for the memory tool (limit 64M)."; !isErr || got != want {
		t.Errorf("view = %q, want the error %q", got, want)
	}
}

// TestViewUnreadableSubdirectory checks that, as in the reference, a
// subdirectory that cannot be read is listed without its contents rather
// than failing the whole listing.
func TestViewUnreadableSubdirectory(t *testing.T) {
	t.Parallel()
	tool, root := mustTool(t, nil)
	mustWrite(t, root, map[string]string{"locked/x.md": "x", "open.md": "o"})
	locked := filepath.Join(root, "locked")
	if err := os.Chmod(locked, 0); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(locked, 0o700)
	if _, err := os.ReadDir(locked); err == nil {
		t.Skip("running with privileges that read any directory")
	}
	got := mustRun(t, tool, `{"command":"view","path":"/memories"}`)
	lines := strings.Split(got, "\n")
	if len(lines) != 4 || !strings.HasSuffix(lines[2], "\t/memories/locked/") || lines[3] != "1B\t/memories/open.md" {
		t.Errorf("listing = %q, want the top line, locked/ without contents, and open.md", got)
	}
}
