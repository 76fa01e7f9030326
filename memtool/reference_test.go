package memtool

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// The reference for this package's output is the memory tool helpers of
// Anthropic's SDKs, whose results Claude models are trained on:
//
//   - py: anthropic-sdk-python, BetaLocalFilesystemMemoryTool in
//     src/anthropic/lib/tools/_beta_builtin_memory_tool.py, tested in
//     tests/lib/tools/memory_tools/test_filesystem.py (class
//     TestBetaLocalFilesystemMemoryTool) and test_create_short_writes.py;
//   - py-async: the same file's BetaAsyncLocalFilesystemMemoryTool, tested by
//     TestBetaAsyncLocalFilesystemMemoryTool with the same expectations;
//   - ts: anthropic-sdk-typescript, BetaLocalFilesystemMemoryTool in
//     src/tools/memory/node.ts, tested in
//     tests/lib/tools/BetaLocalFilesystemMemoryTool.test.ts.
//
// TestReferenceCases replays those test cases (the inputs and the
// assertions, rewritten here as data) against a Tool. Where the two SDKs
// disagree this package follows the Python helper, as issue 13 asks, and
// where memdir is deliberately stricter the case records what memdir does
// instead and why. docs/memory-tool.md lists the same behaviours as a table.
//
// With -reference every case is checked against the reference's own
// assertion, ignoring memdir's recorded differences, and the test logs how
// many reference tests pass:
//
//	go test ./memtool -run TestReferenceCases -reference -v
var strictReference = flag.Bool("reference", false, "check TestReferenceCases against the reference SDK tests' own assertions and log the count")

// match is one assertion on a result text, in the form the reference test
// makes it: the whole text, substrings of it (jest toContain / toThrow with a
// string), or a regular expression searched for (pytest.raises match=, jest
// toThrow with a RegExp).
type match struct {
	exact    *string
	contains []string
	regex    string
}

func exactly(s string) match         { return match{exact: &s} }
func containing(s ...string) match   { return match{contains: s} }
func matchingRegexp(re string) match { return match{regex: re} }
func (m match) ok(got string) bool {
	switch {
	case m.exact != nil:
		return got == *m.exact
	case m.regex != "":
		return regexp.MustCompile(m.regex).MatchString(got)
	}
	for _, s := range m.contains {
		if !strings.Contains(got, s) {
			return false
		}
	}
	return true
}

// outcome is what a case expects of the command under test: its text, that
// it failed (the reference raised), and, when the reference checks it, every
// regular file under the memory directory afterwards (path → content).
type outcome struct {
	text  match
	err   bool
	files map[string]string
	check func(root string) []string // further checks, such as modes; returns problems
}

// refCase is one reference test case.
type refCase struct {
	name  string   // the reference test's name
	from  []string // the suites that have it: py, py-async, ts
	files map[string]string
	// links are symbolic links to make: name in the memory directory →
	// target, where "OUTSIDE" stands for a directory beside the memory
	// directory holding secret.txt and "SIBLING" for one named like it with
	// a suffix (the reference's memories_backup).
	links map[string]string
	setup []string // commands run first, which must succeed
	in    string   // the command under test
	ref   outcome  // what the reference test asserts
	// ours, when set, is what memdir does instead, and why says why.
	ours *outcome
	why  string
	// oursFiles replaces setup when memdir's own run needs a different
	// arrangement (the reference's setup being refused on purpose).
	oursFiles map[string]string
}

var all3 = []string{"py", "py-async", "ts"}
var pyBoth = []string{"py", "py-async"}

func createCmd(path, text string) string {
	b, _ := json.Marshal(map[string]string{"command": "create", "path": path, "file_text": text})
	return string(b)
}

func referenceCases() []refCase {
	tooMany := strings.TrimSuffix(strings.Repeat("line\n", 1_000_000), "\n")
	outsideRegexp := `Path .* would escape /memories directory`
	return []refCase{
		// create
		{name: "create a file", from: all3, in: createCmd("/memories/test_file.txt", "Hello, World!"),
			ref: outcome{text: exactly("File created successfully at: /memories/test_file.txt"), files: map[string]string{"test_file.txt": "Hello, World!"}}},
		{name: "create nested directories", from: all3, in: createCmd("/memories/deep/nested/file.txt", "Nested file"),
			ref: outcome{text: exactly("File created successfully at: /memories/deep/nested/file.txt"), files: map[string]string{"deep/nested/file.txt": "Nested file"}}},
		{name: "create fails if the file exists", from: all3, setup: []string{createCmd("/memories/existing.txt", "Original")},
			in:  createCmd("/memories/existing.txt", "New"),
			ref: outcome{text: matchingRegexp(`File /memories/existing.txt already exists`), err: true, files: map[string]string{"existing.txt": "Original"}}},
		{name: "create retries short writes", from: pyBoth, in: createCmd("/memories/short-write.txt", "prefix-☃-suffix"),
			ref: outcome{text: exactly("File created successfully at: /memories/short-write.txt"), files: map[string]string{"short-write.txt": "prefix-☃-suffix"}}},
		{name: "directories made under a permissive umask are private", from: pyBoth, in: createCmd("/memories/deep/nested/file.txt", "x"),
			ref: outcome{text: exactly("File created successfully at: /memories/deep/nested/file.txt"), check: checkPrivateUnderUmask0},
		},

		// view
		{name: "view a file with line numbers", from: all3, setup: []string{createCmd("/memories/view_test.txt", "Line 1\nLine 2\nLine 3")},
			in:  `{"command":"view","path":"/memories/view_test.txt"}`,
			ref: outcome{text: exactly("Here's the content of /memories/view_test.txt with line numbers:\n     1\tLine 1\n     2\tLine 2\n     3\tLine 3")}},
		{name: "view a directory", from: all3, setup: []string{createCmd("/memories/dir/file1.txt", "File 1"), createCmd("/memories/dir/file2.txt", "File 2")},
			in:  `{"command":"view","path":"/memories/dir"}`,
			ref: outcome{text: containing("Here're the files and directories up to 2 levels deep in /memories/dir", "/memories/dir", "/memories/dir/file1.txt", "/memories/dir/file2.txt")}},
		{name: "view a file with a range", from: all3, setup: []string{createCmd("/memories/range_test.txt", "Line 1\nLine 2\nLine 3\nLine 4\nLine 5")},
			in:  `{"command":"view","path":"/memories/range_test.txt","view_range":[2,4]}`,
			ref: outcome{text: exactly("Here's the content of /memories/range_test.txt with line numbers:\n     2\tLine 2\n     3\tLine 3\n     4\tLine 4")}},
		{name: "view a missing file", from: all3, in: `{"command":"view","path":"/memories/nonexistent.txt"}`,
			ref: outcome{text: containing("The path /memories/nonexistent.txt does not exist. Please provide a valid path."), err: true}},
		{name: "view a file that is not UTF-8", from: pyBoth, files: map[string]string{"binary.dat": "\xff\xfe\x80 not utf-8"},
			in:  `{"command":"view","path":"/memories/binary.dat"}`,
			ref: outcome{text: matchingRegexp(`is not a valid UTF-8 text file`), err: true}},
		{name: "view a file with too many lines", from: pyBoth, setup: []string{createCmd("/memories/huge.txt", tooMany)},
			in:        `{"command":"view","path":"/memories/huge.txt"}`,
			ref:       outcome{text: matchingRegexp(`exceeds maximum line limit of 999,999 lines`), err: true},
			oursFiles: map[string]string{"huge.txt": tooMany},
			ours:      &outcome{text: exactly("File /memories/huge.txt exceeds maximum line limit of 999,999 lines."), err: true},
			why:       "create refuses the 4.8 MiB file (the 1 MiB cap on files the tool writes), so the file is put in place directly; view then answers as the reference does",
		},
		{name: "view a file with too many lines", from: []string{"ts"}, setup: []string{createCmd("/memories/huge.txt", tooMany)},
			in:        `{"command":"view","path":"/memories/huge.txt"}`,
			ref:       outcome{text: matchingRegexp(`Maximum is 999,999 lines`), err: true},
			oursFiles: map[string]string{"huge.txt": tooMany},
			ours:      &outcome{text: exactly("File /memories/huge.txt exceeds maximum line limit of 999,999 lines."), err: true},
			why:       "the SDKs word this differently; memdir uses the Python helper's message (and create refuses the file, as above)",
		},
		{name: "view keeps CRLF line endings", from: pyBoth, files: map[string]string{"crlf.txt": "line1\r\nline2\r\nline3\r\n"},
			in:  `{"command":"view","path":"/memories/crlf.txt"}`,
			ref: outcome{text: exactly("Here's the content of /memories/crlf.txt with line numbers:\n     1\tline1\r\n     2\tline2\r\n     3\tline3\r\n     4\t")}},

		// str_replace
		{name: "str_replace", from: all3, setup: []string{createCmd("/memories/replace_test.txt", "Line 1\nOld Text\nLine 3")},
			in: `{"command":"str_replace","path":"/memories/replace_test.txt","old_str":"Old Text","new_str":"New Text"}`,
			ref: outcome{text: exactly("The memory file has been edited. Here is the snippet showing the change (with line numbers):\n     1\tLine 1\n     2\tNew Text\n     3\tLine 3"),
				files: map[string]string{"replace_test.txt": "Line 1\nNew Text\nLine 3"}}},
		{name: "str_replace of a string that is not there", from: all3, setup: []string{createCmd("/memories/replace_test.txt", "Hello, World!")},
			in:  `{"command":"str_replace","path":"/memories/replace_test.txt","old_str":"NotFound","new_str":"Python"}`,
			ref: outcome{text: containing("No replacement was performed, old_str `NotFound` did not appear verbatim in /memories/replace_test.txt."), err: true}},
		{name: "str_replace of a string that appears several times", from: all3, setup: []string{createCmd("/memories/replace_test.txt", "Hello\nMiddle\nHello")},
			in:  `{"command":"str_replace","path":"/memories/replace_test.txt","old_str":"Hello","new_str":"Hi"}`,
			ref: outcome{text: containing("No replacement was performed. Multiple occurrences of old_str `Hello` in lines: 1, 3. Please ensure it is unique"), err: true}},
		{name: "str_replace in a missing file", from: all3, in: `{"command":"str_replace","path":"/memories/nonexistent.txt","old_str":"old","new_str":"new"}`,
			ref: outcome{text: containing("The path /memories/nonexistent.txt does not exist. Please provide a valid path."), err: true}},
		{name: "str_replace keeps CRLF line endings", from: pyBoth, files: map[string]string{"crlf.txt": "line1\r\nline2\r\nline3\r\n"},
			in:  `{"command":"str_replace","path":"/memories/crlf.txt","old_str":"line2","new_str":"LINE2"}`,
			ref: outcome{text: containing("The memory file has been edited."), files: map[string]string{"crlf.txt": "line1\r\nLINE2\r\nline3\r\n"}}},

		// insert
		{name: "insert", from: pyBoth, setup: []string{createCmd("/memories/insert_test.txt", "Line 1\nLine 2")},
			in:  `{"command":"insert","path":"/memories/insert_test.txt","insert_line":1,"insert_text":"Inserted Line"}`,
			ref: outcome{text: exactly("The file /memories/insert_test.txt has been edited."), files: map[string]string{"insert_test.txt": "Line 1\nInserted Line\nLine 2\n"}}},
		{name: "insert", from: []string{"ts"}, setup: []string{createCmd("/memories/insert_test.txt", "Line 1\nLine 2")},
			in:   `{"command":"insert","path":"/memories/insert_test.txt","insert_line":1,"insert_text":"Inserted Line"}`,
			ref:  outcome{text: exactly("The file /memories/insert_test.txt has been edited."), files: map[string]string{"insert_test.txt": "Line 1\nInserted Line\nLine 2"}},
			ours: &outcome{text: exactly("The file /memories/insert_test.txt has been edited."), files: map[string]string{"insert_test.txt": "Line 1\nInserted Line\nLine 2\n"}},
			why:  "the TypeScript helper keeps a missing final newline missing, the Python one adds it; memdir follows Python",
		},
		{name: "insert at the beginning", from: pyBoth, setup: []string{createCmd("/memories/insert_test.txt", "Line 1\nLine 2")},
			in:  `{"command":"insert","path":"/memories/insert_test.txt","insert_line":0,"insert_text":"First Line"}`,
			ref: outcome{text: exactly("The file /memories/insert_test.txt has been edited."), files: map[string]string{"insert_test.txt": "First Line\nLine 1\nLine 2\n"}}},
		{name: "insert at the beginning", from: []string{"ts"}, setup: []string{createCmd("/memories/insert_test.txt", "Line 1\nLine 2")},
			in:   `{"command":"insert","path":"/memories/insert_test.txt","insert_line":0,"insert_text":"First Line"}`,
			ref:  outcome{text: containing(""), files: map[string]string{"insert_test.txt": "First Line\nLine 1\nLine 2"}},
			ours: &outcome{text: exactly("The file /memories/insert_test.txt has been edited."), files: map[string]string{"insert_test.txt": "First Line\nLine 1\nLine 2\n"}},
			why:  "as above: the Python helper's final newline",
		},
		{name: "insert at the end", from: pyBoth, setup: []string{createCmd("/memories/insert_test.txt", "Line 1\nLine 2")},
			in:  `{"command":"insert","path":"/memories/insert_test.txt","insert_line":2,"insert_text":"Last Line"}`,
			ref: outcome{text: exactly("The file /memories/insert_test.txt has been edited."), files: map[string]string{"insert_test.txt": "Line 1\nLine 2\nLast Line\n"}}},
		{name: "insert at the end", from: []string{"ts"}, setup: []string{createCmd("/memories/insert_test.txt", "Line 1\nLine 2")},
			in:   `{"command":"insert","path":"/memories/insert_test.txt","insert_line":2,"insert_text":"Last Line"}`,
			ref:  outcome{text: containing(""), files: map[string]string{"insert_test.txt": "Line 1\nLine 2\nLast Line"}},
			ours: &outcome{text: exactly("The file /memories/insert_test.txt has been edited."), files: map[string]string{"insert_test.txt": "Line 1\nLine 2\nLast Line\n"}},
			why:  "as above: the Python helper's final newline",
		},
		{name: "insert keeps CRLF line endings", from: pyBoth, files: map[string]string{"crlf.txt": "line1\r\nline2\r\nline3\r\n"},
			in:  `{"command":"insert","path":"/memories/crlf.txt","insert_line":1,"insert_text":"Inserted"}`,
			ref: outcome{text: exactly("The file /memories/crlf.txt has been edited."), files: map[string]string{"crlf.txt": "line1\r\nInserted\nline2\r\nline3\r\n"}}},
		{name: "insert in a missing file", from: all3, in: `{"command":"insert","path":"/memories/nonexistent.txt","insert_line":0,"insert_text":"text"}`,
			ref: outcome{text: containing("The path /memories/nonexistent.txt does not exist. Please provide a valid path."), err: true}},
		{name: "insert at an invalid line", from: pyBoth, setup: []string{createCmd("/memories/insert_test.txt", "Line 1\nLine 2")},
			in:  `{"command":"insert","path":"/memories/insert_test.txt","insert_line":10,"insert_text":"text"}`,
			ref: outcome{text: matchingRegexp(`Invalid ` + "`insert_line`" + ` parameter: 10\. It should be within the range \[0, 2\]`), err: true, files: map[string]string{"insert_test.txt": "Line 1\nLine 2"}}},
		{name: "insert at an invalid line", from: []string{"ts"}, setup: []string{createCmd("/memories/insert_test.txt", "Line 1\nLine 2")},
			in:   `{"command":"insert","path":"/memories/insert_test.txt","insert_line":10,"insert_text":"text"}`,
			ref:  outcome{text: containing("Invalid `insert_line` parameter: 10. It should be within the range of lines of the file: [0, 2]"), err: true},
			ours: &outcome{text: exactly("Invalid `insert_line` parameter: 10. It should be within the range [0, 2]."), err: true, files: map[string]string{"insert_test.txt": "Line 1\nLine 2"}},
			why:  "the SDKs word this differently; memdir uses the Python helper's message",
		},

		// delete
		{name: "delete a file", from: all3, setup: []string{createCmd("/memories/delete_me.txt", "To be deleted")},
			in:  `{"command":"delete","path":"/memories/delete_me.txt"}`,
			ref: outcome{text: exactly("Successfully deleted /memories/delete_me.txt"), files: map[string]string{}}},
		{name: "delete a directory", from: all3, setup: []string{createCmd("/memories/subdir/file.txt", "Content")},
			in:  `{"command":"delete","path":"/memories/subdir"}`,
			ref: outcome{text: exactly("Successfully deleted /memories/subdir"), files: map[string]string{}}},
		{name: "delete a missing file", from: all3, in: `{"command":"delete","path":"/memories/nonexistent.txt"}`,
			ref: outcome{text: containing("The path /memories/nonexistent.txt does not exist"), err: true}},
		{name: "delete /memories itself", from: all3, files: map[string]string{"keep.md": "k"}, in: `{"command":"delete","path":"/memories"}`,
			ref: outcome{text: containing("Cannot delete the /memories directory itself"), err: true}},

		// rename
		{name: "rename a file", from: all3, setup: []string{createCmd("/memories/old_name.txt", "Original content")},
			in:  `{"command":"rename","old_path":"/memories/old_name.txt","new_path":"/memories/new_name.txt"}`,
			ref: outcome{text: exactly("Successfully renamed /memories/old_name.txt to /memories/new_name.txt"), files: map[string]string{"new_name.txt": "Original content"}}},
		{name: "rename to a nested path", from: all3, setup: []string{createCmd("/memories/file.txt", "Content")},
			in:  `{"command":"rename","old_path":"/memories/file.txt","new_path":"/memories/nested/dir/file.txt"}`,
			ref: outcome{text: exactly("Successfully renamed /memories/file.txt to /memories/nested/dir/file.txt"), files: map[string]string{"nested/dir/file.txt": "Content"}}},
		{name: "rename a missing file", from: all3, in: `{"command":"rename","old_path":"/memories/nonexistent.txt","new_path":"/memories/new.txt"}`,
			ref: outcome{text: containing("The path /memories/nonexistent.txt does not exist"), err: true}},
		{name: "rename onto an existing file", from: all3, setup: []string{createCmd("/memories/file1.txt", "File 1"), createCmd("/memories/file2.txt", "File 2")},
			in:  `{"command":"rename","old_path":"/memories/file1.txt","new_path":"/memories/file2.txt"}`,
			ref: outcome{text: containing("The destination /memories/file2.txt already exists"), err: true, files: map[string]string{"file1.txt": "File 1", "file2.txt": "File 2"}}},

		// paths
		{name: "a path outside /memories", from: all3, in: createCmd("/invalid/path.txt", "Invalid"),
			ref:  outcome{text: containing("Path must start with /memories"), err: true},
			ours: &outcome{text: exactly("Path must start with /memories, got: /invalid/path.txt"), err: true, files: map[string]string{}}},
		{name: "a path escaping /memories", from: all3, in: createCmd("/memories/../../../etc/passwd", "Escape attempt"),
			ref:  outcome{text: containing("Path /memories/../../../etc/passwd would escape /memories directory"), err: true},
			ours: &outcome{text: exactly("Path /memories/../../../etc/passwd would escape /memories directory"), err: true, files: map[string]string{}}},
		{name: "a symbolic link to a sibling named like the directory", from: []string{"ts"}, links: map[string]string{"escape_link": "SIBLING"},
			in:  `{"command":"view","path":"/memories/escape_link/secret.txt"}`,
			ref: outcome{text: containing("would escape /memories directory"), err: true}},
		{name: "a path into a sibling named like the directory", from: []string{"ts"},
			in:  `{"command":"view","path":"/memories/../memories_backup/secret.txt"}`,
			ref: outcome{text: containing("would escape /memories directory"), err: true}},
		{name: "view through a symbolic link to outside", from: pyBoth, links: map[string]string{"escape_link": "OUTSIDE"},
			in:   `{"command":"view","path":"/memories/escape_link/secret.txt"}`,
			ref:  outcome{text: matchingRegexp(outsideRegexp), err: true},
			ours: &outcome{text: exactly("Path /memories/escape_link/secret.txt would escape /memories directory"), err: true}},
		{name: "view through a symbolic link to outside", from: []string{"ts"}, links: map[string]string{"escape_link": "OUTSIDE"},
			in:   `{"command":"view","path":"/memories/escape_link/secret.txt"}`,
			ref:  outcome{text: containing("Path would escape /memories directory via symlink"), err: true},
			ours: &outcome{text: exactly("Path /memories/escape_link/secret.txt would escape /memories directory"), err: true},
			why:  "the SDKs word symbolic link escapes differently; memdir uses the Python helper's message, which names the path",
		},
		{name: "create through a symbolic link to outside", from: pyBoth, links: map[string]string{"bad_link": "OUTSIDE"},
			in:  createCmd("/memories/bad_link/hacked.txt", "malicious content"),
			ref: outcome{text: matchingRegexp(outsideRegexp), err: true, check: outsideUntouched}},
		{name: "create through a symbolic link to outside", from: []string{"ts"}, links: map[string]string{"bad_link": "OUTSIDE"},
			in:   createCmd("/memories/bad_link/hacked.txt", "malicious content"),
			ref:  outcome{text: containing("Path would escape /memories directory via symlink"), err: true},
			ours: &outcome{text: exactly("Path /memories/bad_link/hacked.txt would escape /memories directory"), err: true, check: outsideUntouched},
			why:  "as above",
		},
		{name: "create under a parent that is a symbolic link to outside", from: pyBoth, links: map[string]string{"subdir": "OUTSIDE"},
			in:  createCmd("/memories/subdir/nested/file.txt", "content"),
			ref: outcome{text: matchingRegexp(outsideRegexp), err: true, check: outsideUntouched}},
		{name: "create under a parent that is a symbolic link to outside", from: []string{"ts"}, links: map[string]string{"subdir": "OUTSIDE"},
			in:   createCmd("/memories/subdir/nested/file.txt", "content"),
			ref:  outcome{text: containing("Path would escape /memories directory via symlink"), err: true},
			ours: &outcome{text: exactly("Path /memories/subdir/nested/file.txt would escape /memories directory"), err: true, check: outsideUntouched},
			why:  "as above",
		},
	}
}

// checkPrivateUnderUmask0 is the Python helper's permissive-umask test as it
// applies here: memtool does not create the memory directory itself (New
// wants an existing one), so the directories it must keep private are the
// ones create makes. The umask is set by setupUmask0 for this case.
func checkPrivateUnderUmask0(root string) (problems []string) {
	for name, want := range map[string]fs.FileMode{"deep": 0o700, "deep/nested": 0o700, "deep/nested/file.txt": 0o600} {
		fi, err := os.Stat(filepath.Join(root, name))
		if err != nil {
			problems = append(problems, err.Error())
		} else if m := fi.Mode().Perm(); m != want {
			problems = append(problems, fmt.Sprintf("%s has mode %o, want %o", name, m, want))
		}
	}
	return problems
}

// outsideUntouched checks that nothing appeared in the outside directory.
func outsideUntouched(root string) []string {
	entries, err := os.ReadDir(filepath.Join(filepath.Dir(root), "outside"))
	if err != nil {
		return []string{err.Error()}
	}
	if len(entries) != 1 || entries[0].Name() != "secret.txt" {
		return []string{fmt.Sprintf("outside directory holds %v, want only secret.txt", entries)}
	}
	return nil
}

// regularFiles returns every regular file under root (path → content),
// like the reference tests' directory snapshots.
func regularFiles(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(root, p)
		out[filepath.ToSlash(rel)] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestReferenceCases replays the reference SDK helpers' test cases. Without
// -reference a case passes when memdir does what it documents (the
// reference's behaviour, or the recorded difference); with it, only the
// reference's own assertion counts, and the test logs the tally without
// failing.
func TestReferenceCases(t *testing.T) {
	t.Parallel()
	total, passed := 0, 0
	var differ []string
	for _, rc := range referenceCases() {
		for _, suite := range rc.from {
			total++
			t.Run(suite+"/"+rc.name, func(t *testing.T) {
				want := rc.ref
				files := rc.files
				setup := rc.setup
				if !*strictReference && rc.ours != nil {
					want = *rc.ours
				}
				if !*strictReference && rc.oursFiles != nil {
					files, setup = rc.oursFiles, nil
				}
				problems := runRefCase(t, rc, files, setup, want)
				if *strictReference {
					if len(problems) == 0 {
						passed++
					} else {
						differ = append(differ, suite+"/"+rc.name+": "+strings.Join(problems, "; "))
					}
					return
				}
				for _, p := range problems {
					t.Error(p)
				}
			})
		}
	}
	if *strictReference {
		t.Logf("reference tests passed: %d of %d", passed, total)
		for _, d := range differ {
			t.Logf("differs: %s", d)
		}
	}
}

// runRefCase runs one case and returns what did not go as want says.
func runRefCase(t *testing.T, rc refCase, files map[string]string, setup []string, want outcome) (problems []string) {
	t.Helper()
	if rc.name == "directories made under a permissive umask are private" {
		defer setUmask(0)()
	}
	tool, root := mustTool(t, nil)
	base := filepath.Dir(root)
	mustWrite(t, base, map[string]string{"outside/secret.txt": "sensitive data", "mem_backup/secret.txt": "stolen data"})
	mustWrite(t, root, files)
	for name, target := range rc.links {
		switch target {
		case "OUTSIDE":
			target = filepath.Join(base, "outside")
		case "SIBLING":
			target = filepath.Join(base, "mem_backup")
		}
		mustSymlink(t, target, root, name)
	}
	for _, in := range setup {
		if _, err := tool.Execute(context.Background(), json.RawMessage(in)); err != nil {
			return []string{"setup " + shorten(in) + " failed: " + err.Error()}
		}
	}
	got, err := tool.Execute(context.Background(), json.RawMessage(rc.in))
	if err != nil {
		got = err.Error()
	}
	if (err != nil) != want.err {
		problems = append(problems, fmt.Sprintf("is_error = %v: %s", err != nil, shorten(got)))
	} else if !want.text.ok(got) {
		problems = append(problems, "result "+shorten(got)+" does not match the expectation")
	}
	if want.files != nil {
		gotFiles := regularFiles(t, root)
		if len(gotFiles) != len(want.files) {
			problems = append(problems, "files differ")
		} else {
			for k, v := range want.files {
				if gotFiles[k] != v {
					problems = append(problems, "file "+k+" = "+shorten(gotFiles[k]))
				}
			}
		}
	}
	if want.check != nil {
		problems = append(problems, want.check(root)...)
	}
	return problems
}

func shorten(s string) string {
	if len(s) > 200 {
		return strconv.Quote(s[:200]) + "…"
	}
	return strconv.Quote(s)
}
