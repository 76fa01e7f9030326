package agent

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// testProject opens a project holding files (name → content) with the
// default limits, and returns it with its directory. A sibling "outside"
// holds a secret that links in the project point at.
func testProject(tb testing.TB, files map[string]string) (*project, string) {
	tb.Helper()
	base := tb.TempDir()
	dir := filepath.Join(base, "proj")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		tb.Fatal(err)
	}
	all := map[string]string{"../outside/secret.txt": "TOPSECRET\n"}
	maps.Copy(all, files)
	for name, content := range all {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			tb.Fatal(err)
		}
	}
	if err := os.Symlink("../outside/secret.txt", filepath.Join(dir, "leak.txt")); err != nil {
		tb.Skipf("symbolic links unavailable: %v", err)
	}
	p, err := openProject(dir)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { p.Close() })
	return p, dir
}

// toolFunc is one of the project tools.
type toolFunc func(*project, context.Context, []byte) (string, error)

var toolFuncs = map[string]toolFunc{
	ToolReadFile: (*project).readFile,
	ToolGrep:     (*project).grep,
	ToolGlob:     (*project).glob,
	ToolLs:       (*project).ls,
}

// answer runs a tool and returns what the model would see.
func answer(tb testing.TB, p *project, tool, input string) (string, bool) {
	tb.Helper()
	out, err := toolFuncs[tool](p, context.Background(), []byte(input))
	if err != nil {
		if out != "" {
			tb.Errorf("%s %s: both output and error", tool, input)
		}
		return err.Error(), true
	}
	return out, false
}

type toolCase struct {
	name, tool, input string
	lim               func(*limits)
	want              string // the whole answer, or with wantErr a phrase in it
	wantErr           bool
}

func runToolCases(t *testing.T, files map[string]string, cases []toolCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, dir := testProject(t, files)
			if tc.lim != nil {
				tc.lim(&p.lim)
			}
			input := strings.ReplaceAll(tc.input, "PROJ", dir)
			got, isErr := answer(t, p, tc.tool, input)
			if isErr != tc.wantErr {
				t.Fatalf("%s %s: error %v, want %v: %s", tc.tool, input, isErr, tc.wantErr, got)
			}
			if tc.wantErr {
				if !strings.Contains(got, tc.want) {
					t.Errorf("%s %s = %q, want it to say %q", tc.tool, input, got, tc.want)
				}
				return
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s %s (-want +got):\n%s", tc.tool, input, diff)
			}
		})
	}
}

func TestReadFile(t *testing.T) {
	files := map[string]string{
		"five.txt":   "one\ntwo\nthree\nfour\nfive\n",
		"crlf.txt":   "a\r\nb\r\n",
		"empty.txt":  "",
		"nonl.txt":   "last line without newline",
		"long.txt":   strings.Repeat("x", 30) + "\n",
		"binary.bin": "PK\x03\x04\x00\x00data",
		"latin1.txt": "caf\xe9\n",
		"src/a.go":   "package a\n",
	}
	runToolCases(t, files, []toolCase{
		{name: "whole", tool: ToolReadFile, input: `{"path":"five.txt"}`,
			want: "     1\tone\n     2\ttwo\n     3\tthree\n     4\tfour\n     5\tfive"},
		{name: "page", tool: ToolReadFile, input: `{"path":"five.txt","offset":2,"limit":2}`,
			want: "     2\ttwo\n     3\tthree\n[Lines 2-3 of 5 shown; call read_file with offset 4 to read on.]"},
		{name: "default limit", tool: ToolReadFile, input: `{"path":"five.txt"}`, lim: func(l *limits) { l.readLines = 1 },
			want: "     1\tone\n[Lines 1-1 of 5 shown; call read_file with offset 2 to read on.]"},
		{name: "output cap", tool: ToolReadFile, input: `{"path":"five.txt"}`, lim: func(l *limits) { l.outputChars = 20 },
			want: "     1\tone\n[Output stopped at the 20-character limit after line 1 of 5; call read_file with offset 2 to read on.]"},
		{name: "last line", tool: ToolReadFile, input: `{"path":"five.txt","offset":5,"limit":10}`, want: "     5\tfive"},
		{name: "crlf", tool: ToolReadFile, input: `{"path":"crlf.txt"}`, want: "     1\ta\n     2\tb"},
		{name: "no final newline", tool: ToolReadFile, input: `{"path":"nonl.txt"}`, want: "     1\tlast line without newline"},
		{name: "long line", tool: ToolReadFile, input: `{"path":"long.txt"}`, lim: func(l *limits) { l.lineChars = 10 },
			want: "     1\txxxxxxxxxx [line cut at 10 characters]"},
		{name: "not utf-8", tool: ToolReadFile, input: `{"path":"latin1.txt"}`, want: "     1\tcaf\uFFFD"},
		{name: "empty", tool: ToolReadFile, input: `{"path":"empty.txt"}`, want: "empty.txt is empty."},
		{name: "absolute inside", tool: ToolReadFile, input: `{"path":"PROJ/src/a.go"}`, want: "     1\tpackage a"},
		{name: "dot segments", tool: ToolReadFile, input: `{"path":"./src//a.go"}`, want: "     1\tpackage a"},
		{name: "binary", tool: ToolReadFile, input: `{"path":"binary.bin"}`, wantErr: true, want: "binary.bin is a binary file"},
		{name: "too big", tool: ToolReadFile, input: `{"path":"five.txt"}`, lim: func(l *limits) { l.fileBytes = 10 }, wantErr: true,
			want: "five.txt is 24 bytes, over the 10-byte limit for reading; use grep"},
		{name: "past the end", tool: ToolReadFile, input: `{"path":"five.txt","offset":6}`, wantErr: true, want: "five.txt has 5 lines; offset 6 is past the end"},
		{name: "directory", tool: ToolReadFile, input: `{"path":"src"}`, wantErr: true, want: "src is a directory; use ls"},
		{name: "root", tool: ToolReadFile, input: `{"path":"."}`, wantErr: true, want: "the project directory is a directory"},
		{name: "missing", tool: ToolReadFile, input: `{"path":"nope.txt"}`, wantErr: true, want: "nope.txt does not exist"},
		{name: "link out", tool: ToolReadFile, input: `{"path":"leak.txt"}`, wantErr: true, want: "the symbolic link leak.txt leads outside"},
		{name: "no path", tool: ToolReadFile, input: `{}`, wantErr: true, want: `the "path" key is required`},
		{name: "zero offset", tool: ToolReadFile, input: `{"path":"five.txt","offset":0}`, wantErr: true, want: `key "offset" must be at least 1, not 0`},
		{name: "fraction", tool: ToolReadFile, input: `{"path":"five.txt","limit":1.5}`, wantErr: true, want: `key "limit" must be an integer, not 1.5`},
		{name: "null is absent", tool: ToolReadFile, input: `{"path":"five.txt","offset":null,"limit":1}`, want: "     1\tone\n[Lines 1-1 of 5 shown; call read_file with offset 2 to read on.]"},
	})
}

// A FIFO is refused without opening it, which would block.
func TestLs(t *testing.T) {
	files := map[string]string{"b.txt": "bb", "a/x.txt": "", "c/.hidden": "", "empty/.keep": ""}
	runToolCases(t, files, []toolCase{
		{name: "root", tool: ToolLs, input: `{}`,
			want: "The project directory holds 5 entries (directories end in /, symbolic links in @):\na/\nb.txt  (2 bytes)\nc/\nempty/\nleak.txt@"},
		{name: "cap", tool: ToolLs, input: `{"path":""}`, lim: func(l *limits) { l.lsEntries = 2 },
			want: "The project directory holds 5 entries (directories end in /, symbolic links in @):\na/\nb.txt  (2 bytes)\n[3 more entries not shown; use glob with a pattern to find specific files.]"},
		{name: "subdirectory", tool: ToolLs, input: `{"path":"c"}`, want: "C holds 1 entry (directories end in /, symbolic links in @):\n.hidden  (0 bytes)"},
		{name: "file", tool: ToolLs, input: `{"path":"b.txt"}`, wantErr: true, want: "b.txt is a file"},
		{name: "unknown key", tool: ToolLs, input: `{"dir":"a"}`, wantErr: true, want: `unknown key "dir"; the keys are path`},
	})
}

func TestGrep(t *testing.T) {
	files := map[string]string{
		"a.md":            "alpha\nBeta\nalphabet\n",
		"docs/b.md":       "alpha in docs\n",
		"docs/deep/c.txt": "alpha deep\n",
		"bin.dat":         "alpha\x00binary",
		"big.txt":         "alpha " + strings.Repeat("z", 200) + "\n",
		".git/HEAD":       "alpha in git\n",
		"many.txt":        strings.Repeat("match\n", 5),
	}
	runToolCases(t, files, []toolCase{
		{name: "everywhere", tool: ToolGrep, input: `{"pattern":"^alpha"}`,
			want: "a.md:1:alpha\na.md:3:alphabet\nbig.txt:1:alpha " + strings.Repeat("z", 200) + "\ndocs/b.md:1:alpha in docs\ndocs/deep/c.txt:1:alpha deep"},
		{name: "ignore case", tool: ToolGrep, input: `{"pattern":"^beta$","ignore_case":true}`, want: "a.md:2:Beta"},
		{name: "case matters", tool: ToolGrep, input: `{"pattern":"^beta$"}`, want: `No matches for "^beta$" in the project directory.`},
		{name: "name filter", tool: ToolGrep, input: `{"pattern":"alpha","glob":"*.md"}`, want: "a.md:1:alpha\na.md:3:alphabet\ndocs/b.md:1:alpha in docs"},
		{name: "path filter", tool: ToolGrep, input: `{"pattern":"alpha","glob":"docs/*.md"}`, want: "docs/b.md:1:alpha in docs"},
		{name: "filter below path", tool: ToolGrep, input: `{"pattern":"alpha","path":"docs","glob":"deep/*"}`, want: "docs/deep/c.txt:1:alpha deep"},
		{name: "one file", tool: ToolGrep, input: `{"pattern":"alpha","path":"docs/b.md"}`, want: "docs/b.md:1:alpha in docs"},
		{name: "match cap", tool: ToolGrep, input: `{"pattern":"match"}`, lim: func(l *limits) { l.matches = 3 },
			want: "many.txt:1:match\nmany.txt:2:match\nmany.txt:3:match\n[Stopped at 3 matches; narrow the pattern, the path or the glob filter to see the rest.]"},
		{name: "exactly the cap", tool: ToolGrep, input: `{"pattern":"match"}`, lim: func(l *limits) { l.matches = 5 },
			want: "many.txt:1:match\nmany.txt:2:match\nmany.txt:3:match\nmany.txt:4:match\nmany.txt:5:match"},
		{name: "long line", tool: ToolGrep, input: `{"pattern":"alpha z","path":"big.txt"}`, lim: func(l *limits) { l.matchChars = 8 },
			want: "big.txt:1:alpha zz [cut]"},
		{name: "big file", tool: ToolGrep, input: `{"pattern":"alpha","glob":"*.txt"}`, lim: func(l *limits) { l.fileBytes = 50 },
			want: "docs/deep/c.txt:1:alpha deep\n[Not searched, over 50 bytes: big.txt.]"},
		{name: "walk limit", tool: ToolGrep, input: `{"pattern":"alpha"}`, lim: func(l *limits) { l.walkEntries = 2 },
			want: "a.md:1:alpha\na.md:3:alphabet\n[The search stopped after 2 entries; give a narrower path to search everything.]"},
		{name: "output cap", tool: ToolGrep, input: `{"pattern":"match"}`, lim: func(l *limits) { l.outputChars = 40 },
			want: "many.txt:1:match\nmany.txt:2:match\n[The grep result was cut at 40 characters; narrow the request.]"},
		{name: "binary file alone", tool: ToolGrep, input: `{"pattern":"alpha","path":"bin.dat"}`, wantErr: true, want: "bin.dat is a binary file"},
		{name: "big file alone", tool: ToolGrep, input: `{"pattern":"alpha","path":"big.txt"}`, lim: func(l *limits) { l.fileBytes = 50 }, wantErr: true, want: "big.txt is over the 50-byte limit"},
		{name: "bad regexp", tool: ToolGrep, input: `{"pattern":"(?<=x)y"}`, wantErr: true, want: "not a valid regular expression"},
		{name: "bad filter", tool: ToolGrep, input: `{"pattern":"x","glob":"[x"}`, wantErr: true, want: `the glob filter "[x" is invalid: a "[" class is not closed`},
		{name: "no pattern", tool: ToolGrep, input: `{"path":"docs"}`, wantErr: true, want: `the "pattern" key is required`},
		{name: "flag type", tool: ToolGrep, input: `{"pattern":"x","ignore_case":"yes"}`, wantErr: true, want: `key "ignore_case" must be true or false, not "yes"`},
	})
}

func TestGlob(t *testing.T) {
	files := map[string]string{
		"a.go": "", "b.md": "", "src/c.go": "", "src/d/e.go": "", "src/d/f.txt": "",
		".git/x.go": "", ".github/ci.yml": "",
	}
	runToolCases(t, files, []toolCase{
		{name: "recursive", tool: ToolGlob, input: `{"pattern":"**/*.go"}`,
			want: "3 paths match \"**/*.go\" (directories end in /):\na.go\nsrc/c.go\nsrc/d/e.go"},
		{name: "top level", tool: ToolGlob, input: `{"pattern":"*"}`,
			want: "5 paths match \"*\" (directories end in /):\n.github/\na.go\nb.md\nleak.txt\nsrc/"},
		{name: "under a path", tool: ToolGlob, input: `{"pattern":"*","path":"src/d"}`,
			want: "2 paths match \"*\" under src/d (directories end in /):\nsrc/d/e.go\nsrc/d/f.txt"},
		{name: "braces", tool: ToolGlob, input: `{"pattern":"**/*.{md,yml}"}`,
			want: "2 paths match \"**/*.{md,yml}\" (directories end in /):\n.github/ci.yml\nb.md"},
		{name: "cap", tool: ToolGlob, input: `{"pattern":"**"}`, lim: func(l *limits) { l.globResults = 2 },
			want: "10 paths match \"**\" (directories end in /):\n.github/\n.github/ci.yml\n[Only the first 2 are shown; narrow the pattern or the path.]"},
		{name: "one", tool: ToolGlob, input: `{"pattern":"*.md"}`,
			want: "1 path matches \"*.md\" (directories end in /):\nb.md"},
		{name: "none", tool: ToolGlob, input: `{"pattern":"*.rs"}`, want: `No paths match "*.rs".`},
		{name: "file as path", tool: ToolGlob, input: `{"pattern":"*","path":"a.go"}`, wantErr: true, want: "the path a.go is a file"},
		{name: "missing path", tool: ToolGlob, input: `{"pattern":"*","path":"nope"}`, wantErr: true, want: "nope does not exist"},
	})
}

func TestResolve(t *testing.T) {
	p, dir := testProject(t, map[string]string{})
	for _, tc := range []struct {
		in, want, err string
	}{
		{"", ".", ""},
		{".", ".", ""},
		{"a/./b", "a/b", ""},
		{"a//b/", "a/b", ""},
		{dir + "/x/y", "x/y", ""},
		{dir, ".", ""},
		{dir + "/", ".", ""},
		{".github/workflows", ".github/workflows", ""},
		{"50%.md", "50%.md", ""},
		{"x/%41", "x/%41", ""},
		{"/etc/passwd", "", "outside the project directory"},
		{dir + "x/y", "", "outside the project directory"},
		{"../x", "", `".." segments`},
		{"a/../b", "", `".." segments`},
		{dir + "/../x", "", "outside the project directory"},
		{`a\b`, "", "backslash"},
		{"a\x00b", "", "NUL or control"},
		{"a\nb", "", "NUL or control"},
		{"\xff", "", "UTF-8"},
		{"%2e%2e/x", "", "decoded or normalised"},
		{"%252e%252e/x", "", "decoded or normalised"},
		{"a%2fb", "", "decoded or normalised"},
		{"a%5cb", "", "decoded or normalised"},
		{"．．/x", "", "decoded or normalised"},
		{"a／b", "", "decoded or normalised"},
		{"%25252525252e", "", "decoded or normalised"},
	} {
		got, err := p.resolve("t", "path", tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("resolve(%q) = %q, %v; want an error saying %q", tc.in, got, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("resolve(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}
