package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/memdir/memdir"
	"github.com/memdir/memdir/doctor"
	"github.com/memdir/memdir/internal/atomicfile"
	"github.com/memdir/memdir/internal/cli"
	"github.com/memdir/memdir/locate"
	"github.com/memdir/memdir/recall"
)

// memWorld is a sandbox for the memory commands: a home directory, a project
// and a state directory, all temporary, and an environment holding nothing
// from the real one.
type memWorld struct {
	home, project, state string
	vars                 map[string]string
	now                  time.Time
	stdin                string
	stdinTerminal        bool
	// columns, when set, makes standard output a terminal that wide.
	columns int
}

func newMemWorld(tb testing.TB) *memWorld {
	tb.Helper()
	base := tb.TempDir()
	w := &memWorld{
		home:    filepath.Join(base, "home"),
		project: filepath.Join(base, "project"),
		state:   filepath.Join(base, "state"),
		now:     time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC),
	}
	for _, d := range []string{w.home, w.project} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			tb.Fatal(err)
		}
	}
	w.project, _ = filepath.EvalSymlinks(w.project)
	// No progress lines: a slow machine would otherwise add one to what
	// a test reads on stderr (progress_test.go turns them on).
	w.vars = map[string]string{"HOME": w.home, "MEMDIR_STATE_DIR": w.state, "MEMDIR_PROGRESS": "off"}
	w.stdinTerminal = true
	return w
}

// run runs memdir in-process and returns its output and exit code.
func (w *memWorld) run(tb testing.TB, args ...string) (stdout, stderr string, code int) {
	tb.Helper()
	var out, errb bytes.Buffer
	env := &cli.Env{
		Stdin:           strings.NewReader(w.stdin),
		Stdout:          &out,
		Stderr:          &errb,
		LookupEnv:       func(k string) (string, bool) { v, ok := w.vars[k]; return v, ok },
		Cwd:             w.project,
		Now:             func() time.Time { return w.now },
		StdinIsTerminal: w.stdinTerminal,

		StdoutIsTerminal: w.columns > 0,
		StdoutColumns:    w.columns,
	}
	code = Main(context.Background(), args, env)
	return out.String(), errb.String(), code
}

// ok runs memdir and fails the test unless it exits 0.
func (w *memWorld) ok(tb testing.TB, args ...string) string {
	tb.Helper()
	out, errOut, code := w.run(tb, args...)
	if code != 0 {
		tb.Fatalf("memdir %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), code, out, errOut)
	}
	return out
}

// memDir is the project's located memory directory.
func (w *memWorld) memDir(tb testing.TB) string {
	tb.Helper()
	return filepath.Join(w.home, ".claude", "projects", locate.SanitizePath(w.project, locate.HashBun), "memory")
}

func TestPathCommand(t *testing.T) {
	w := newMemWorld(t)
	if got, want := w.ok(t, "path"), w.memDir(t)+"/\n"; got != want {
		t.Errorf("path = %q, want %q", got, want)
	}
	if got, want := w.ok(t, "path", "--team"), w.memDir(t)+"/team/\n"; got != want {
		t.Errorf("path --team = %q, want %q", got, want)
	}
	out := w.ok(t, "path", "--explain")
	for _, want := range []string{"memory base:", "project root: " + w.project, "not inside a git repository", "auto memory: enabled (default)"} {
		if !strings.Contains(out, want) {
			t.Errorf("path --explain does not say %q:\n%s", want, out)
		}
	}
	w.vars["CLAUDE_CODE_DISABLE_AUTO_MEMORY"] = "1"
	var loc map[string]any
	if err := json.Unmarshal([]byte(w.ok(t, "path", "--json")), &loc); err != nil {
		t.Fatal(err)
	}
	if loc["enabled"] != false || loc["source"] != "default" {
		t.Errorf("path --json = %v", loc)
	}
	if got := w.ok(t, "path", "--agent", "plugin:rev", "--scope", "local"); got != w.project+"/.claude/agent-memory-local/plugin-rev/\n" {
		t.Errorf("agent path = %q", got)
	}
	if _, _, code := w.run(t, "path", "--agent", "x"); code != cli.ExitUsage {
		t.Errorf("--agent without --scope: exit %d, want %d", code, cli.ExitUsage)
	}
	if _, _, code := w.run(t, "path", "--agent", "x", "--scope", "galaxy"); code != cli.ExitInvalid {
		t.Errorf("bad scope: exit %d, want %d", code, cli.ExitInvalid)
	}
}

func TestMemoryLifecycleCommands(t *testing.T) {
	w := newMemWorld(t)
	dir := w.memDir(t)

	out := w.ok(t, "save", "--name", "testing-policy", "--type", "feedback", "--description", "integration tests hit a real database", "--body", "Use Postgres.\n\n**Why:** mocks hid a broken migration.")
	if out != "Saved "+dir+"/feedback_testing_policy.md (new)\n" {
		t.Errorf("save printed %q", out)
	}
	// Body from a pipe; flags after positional-free args.
	w.stdin, w.stdinTerminal = "dashboards live in Grafana\n", false
	w.ok(t, "save", "--name", "grafana", "--description", "where the dashboards are", "--type", "reference")
	w.stdin, w.stdinTerminal = "", true
	w.ok(t, "save", "--team", "--name", "oncall", "--type", "reference", "--description", "pager rota", "--body", "PagerDuty schedule X")

	index, _ := os.ReadFile(filepath.Join(dir, "MEMORY.md"))
	wantIndex := "- [testing-policy](feedback_testing_policy.md) — integration tests hit a real database\n- [grafana](reference_grafana.md) — where the dashboards are\n"
	if diff := cmp.Diff(wantIndex, string(index)); diff != "" {
		t.Errorf("MEMORY.md (-want +got):\n%s", diff)
	}

	out = w.ok(t, "list")
	for _, want := range []string{"TYPE", "feedback_testing_policy.md", "team/reference_oncall.md", "reference_grafana.md"} {
		if !strings.Contains(out, want) {
			t.Errorf("list lacks %q:\n%s", want, out)
		}
	}
	var listed struct {
		Memories []struct {
			Path string `json:"path"`
			Type string `json:"type"`
			Age  string `json:"age"`
		} `json:"memories"`
		Total int `json:"total"`
	}
	if err := json.Unmarshal([]byte(w.ok(t, "list", "--team", "--json")), &listed); err != nil {
		t.Fatal(err)
	}
	if len(listed.Memories) != 1 || listed.Memories[0].Path != "team/reference_oncall.md" || listed.Total != 3 || listed.Memories[0].Age != "today" {
		t.Errorf("list --team --json = %+v", listed)
	}

	// show prints the file exactly; the name works as a reference.
	if got, want := w.ok(t, "show", "grafana"), "---\nname: grafana\ndescription: where the dashboards are\ntype: reference\nprovenance: {by: user, via: cli, at: \"2026-11-29T12:00:00Z\"}\n---\n\ndashboards live in Grafana\n"; got != want {
		t.Errorf("show = %q, want %q", got, want)
	}
	if _, errOut, code := w.run(t, "show", "nothing-here"); code != cli.ExitNotFound || !strings.Contains(errOut, "memdir list") {
		t.Errorf("show missing: exit %d, stderr %q", code, errOut)
	}

	if got := w.ok(t, "index"); got != strings.TrimSpace(wantIndex)+"\n" {
		t.Errorf("index = %q", got)
	}
	if got := w.ok(t, "index", "--team"); got != "- [oncall](reference_oncall.md) — pager rota\n" {
		t.Errorf("index --team = %q", got)
	}

	out = w.ok(t, "mv", "grafana", "team/reference_grafana")
	if !strings.Contains(out, "Renamed reference_grafana.md to team/reference_grafana.md") {
		t.Errorf("mv printed %q", out)
	}
	out = w.ok(t, "rm", "testing-policy")
	if !strings.Contains(out, "Removed feedback_testing_policy.md and its MEMORY.md line. Undo with: memdir undo ") {
		t.Errorf("rm printed %q", out)
	}
	if _, err := os.Stat(filepath.Join(dir, "feedback_testing_policy.md")); !os.IsNotExist(err) {
		t.Fatal("rm left the file")
	}
	out = w.ok(t, "undo")
	if !strings.Contains(out, "recreated feedback_testing_policy.md") {
		t.Errorf("undo printed %q", out)
	}
	got, _ := os.ReadFile(filepath.Join(dir, "feedback_testing_policy.md"))
	if !strings.Contains(string(got), "mocks hid a broken migration") {
		t.Errorf("undo did not restore the content: %q", got)
	}
	log := w.ok(t, "log")
	for _, kind := range []string{"undo", "remove", "rename", "save"} {
		if !strings.Contains(log, kind) {
			t.Errorf("log lacks a %s run:\n%s", kind, log)
		}
	}
}

func TestSaveCommandErrors(t *testing.T) {
	w := newMemWorld(t)
	for _, tc := range []struct {
		args     []string
		wantCode int
		wantErr  string
	}{
		{[]string{"save", "--name", "x", "--type", "user"}, cli.ExitUsage, "--name, --description and --type are required"},
		{[]string{"save", "--name", "x", "--description", "d", "--type", "idea", "--body", "b"}, cli.ExitUsage, `--type "idea"`},
		{[]string{"save", "--name", "x", "--description", "d", "--type", "user"}, cli.ExitUsage, "pipe it on standard input"},
		{[]string{"save", "--name", "x", "--description", "d", "--type", "user", "--body", "b", "--file", "../escape.md"}, cli.ExitInvalid, "climbs out"},
		{[]string{"save", "--name", "x", "--description", "d", "--type", "user", "--body", "b", "--file", "MEMORY.md"}, cli.ExitInvalid, "is the index"},
		{[]string{"save", "stray", "--name", "x"}, cli.ExitUsage, "takes no arguments"},
		{[]string{"save", "--bogus"}, cli.ExitUsage, "unknown flag --bogus"},
	} {
		_, errOut, code := w.run(t, tc.args...)
		if code != tc.wantCode || !strings.Contains(errOut, tc.wantErr) {
			t.Errorf("memdir %s: exit %d, stderr %q; want exit %d mentioning %q", strings.Join(tc.args, " "), code, errOut, tc.wantCode, tc.wantErr)
		}
	}
	w.ok(t, "save", "--name", "x", "--description", "d", "--type", "user", "--body", "b")
	if _, errOut, code := w.run(t, "save", "--name", "x", "--description", "d", "--type", "user", "--body", "b", "--file", "user_x.md", "--create"); code != cli.ExitExists {
		t.Errorf("save --create over an existing file: exit %d (%s)", code, errOut)
	}
}

func TestSaveWarnsWhenIndexOverflows(t *testing.T) {
	w := newMemWorld(t)
	dir := w.memDir(t)
	os.MkdirAll(dir, 0o700)
	var b strings.Builder
	for i := range 200 {
		fmt.Fprintf(&b, "- [m%d](m%d.md) — hook\n", i, i)
	}
	os.WriteFile(filepath.Join(dir, "MEMORY.md"), []byte(b.String()), 0o600)
	_, errOut, code := w.run(t, "save", "--name", "x", "--description", "d", "--type", "user", "--body", "b")
	if code != 0 || !strings.Contains(errOut, "warning: MEMORY.md has 201 lines; only the first 200 are loaded") {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
	out, errOut := w.ok(t, "index"), ""
	_, errOut, _ = w.run(t, "index")
	if !strings.Contains(out, "> WARNING: MEMORY.md is 201 lines (limit: 200). Only part of it was loaded.") || !strings.Contains(errOut, "agents do not see the last 1") {
		t.Errorf("index output:\n%s\nstderr: %s", out, errOut)
	}
}

func TestDoctorCommand(t *testing.T) {
	w := newMemWorld(t)
	dir := w.memDir(t)
	w.ok(t, "save", "--name", "a", "--description", "first", "--type", "user", "--body", "same")
	w.ok(t, "save", "--name", "b", "--description", "second", "--type", "user", "--body", "b")
	os.WriteFile(filepath.Join(dir, "loose.md"), []byte("---\nname: loose\ndescription: a: b\ntype: project\n---\nbody\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "copy.md"), []byte("---\nname: loose\ndescription: a: b\ntype: project\n---\nbody\n"), 0o600)
	ix, _ := os.ReadFile(filepath.Join(dir, "MEMORY.md"))
	os.WriteFile(filepath.Join(dir, "MEMORY.md"), append(ix, []byte("- [gone](gone.md) — deleted by hand\n- [a again](user_a.md) — repeated\n")...), 0o600)

	out, _, code := w.run(t, "doctor")
	if code != cli.ExitProblems {
		t.Fatalf("doctor exit %d, want %d\n%s", code, cli.ExitProblems, out)
	}
	for _, want := range []string{
		"dangling-index-line  MEMORY.md: line 3 points at gone.md",
		"duplicate-index-line MEMORY.md: line 4 points at user_a.md again",
		"unindexed            loose.md",
		"unindexed            copy.md",
		"permissions          loose.md: mode 0644",
		"frontmatter          loose.md",
		"duplicate-content    copy.md: identical to loose.md",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("doctor output lacks %q:\n%s", want, out)
		}
	}
	out, _, code = w.run(t, "doctor", "--fix")
	if code != cli.ExitProblems || !strings.Contains(out, "Undo these repairs with: memdir undo") {
		t.Fatalf("doctor --fix exit %d:\n%s", code, out)
	}
	// Duplicates are left for a person; everything safe is fixed.
	var rep struct {
		Findings []doctor.Finding `json:"findings"`
	}
	out, _, _ = w.run(t, "doctor", "--json")
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, f := range rep.Findings {
		kinds = append(kinds, string(f.Kind)+" "+f.Path)
	}
	if diff := cmp.Diff([]string{"duplicate-content copy.md", "duplicate-content loose.md"}, kinds); diff != "" {
		t.Errorf("findings after --fix (-want +got):\n%s", diff)
	}
	fi, _ := os.Stat(filepath.Join(dir, "loose.md"))
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("loose.md mode %v after --fix", fi.Mode().Perm())
	}
	// The fix is undoable.
	w.ok(t, "undo")
	if got, _ := os.ReadFile(filepath.Join(dir, "MEMORY.md")); !strings.Contains(string(got), "gone.md") {
		t.Errorf("undo of the doctor run did not restore MEMORY.md: %q", got)
	}
}

func TestDoctorCompact(t *testing.T) {
	w := newMemWorld(t)
	dir := w.memDir(t)
	os.MkdirAll(dir, 0o700)
	var b strings.Builder
	for i := range 120 {
		name := fmt.Sprintf("m%03d.md", i)
		os.WriteFile(filepath.Join(dir, name), fmt.Appendf(nil, "---\nname: m%d\ndescription: d\ntype: user\n---\nx%d\n", i, i), 0o600)
		fmt.Fprintf(&b, "- [m%d](%s) — %s\n\n\n", i, name, strings.Repeat("long hook words ", 20))
	}
	os.WriteFile(filepath.Join(dir, "MEMORY.md"), []byte(b.String()), 0o600)
	out, _, _ := w.run(t, "doctor")
	if !strings.Contains(out, "index-over-limit") || !strings.Contains(out, "'memdir doctor --fix --compact' compacts MEMORY.md") {
		t.Fatalf("doctor did not offer to compact:\n%s", out)
	}
	out, errOut, code := w.run(t, "doctor", "--fix", "--compact")
	if code != 0 {
		t.Fatalf("doctor --fix --compact: exit %d\n%s\n%s", code, out, errOut)
	}
	if !strings.Contains(out, "compacted MEMORY.md from 358 lines") {
		t.Errorf("doctor --fix --compact printed:\n%s", out)
	}
	ix, _ := os.ReadFile(filepath.Join(dir, "MEMORY.md"))
	st := memdir.MeasureIndex(string(ix))
	if st.Truncated() || len(memdir.ParseIndex(ix).Entries()) != 120 {
		t.Errorf("after compacting: %+v, %d entries", st, len(memdir.ParseIndex(ix).Entries()))
	}
}

func TestHelpAndUnknownCommands(t *testing.T) {
	w := newMemWorld(t)
	out := w.ok(t, "help")
	for _, c := range []string{"path", "list", "show", "save", "rm", "mv", "index", "doctor", "undo", "log", "Exit status:"} {
		if !strings.Contains(out, c) {
			t.Errorf("help lacks %q", c)
		}
	}
	out = w.ok(t, "save", "--help")
	if !strings.Contains(out, "Usage: memdir save") || !strings.Contains(out, "-description") || !strings.Contains(out, "3    not found") {
		t.Errorf("save --help:\n%s", out)
	}
	if _, errOut, code := w.run(t, "frobnicate"); code != cli.ExitUsage || !strings.Contains(errOut, "unknown command") {
		t.Errorf("unknown command: exit %d, %q", code, errOut)
	}
	if out, _, code := w.run(t); code != 0 || !strings.Contains(out, "Memory directory:") {
		t.Errorf("no command: exit %d, want the status:\n%s", code, out)
	}
}

// TestCommandListIsAlphabetical: the help and the completion scripts show
// the commands in commandList's order, which is kept alphabetical.
func TestCommandListIsAlphabetical(t *testing.T) {
	for i := 1; i < len(commandList); i++ {
		if prev, c := commandList[i-1].Name, commandList[i].Name; prev >= c {
			t.Errorf("commandList has %q before %q", prev, c)
		}
	}
	if len(commands) != len(commandList) {
		t.Errorf("commands has %d entries, commandList %d", len(commands), len(commandList))
	}
}

// TestUndoRevertsChangesOutsideTheMemoryDirectory checks that a journaled
// change to a file elsewhere (the user's settings) is reverted by plain
// 'memdir undo', like a change inside the directory.
func TestUndoRevertsChangesOutsideTheMemoryDirectory(t *testing.T) {
	w := newMemWorld(t)
	settings := filepath.Join(w.home, ".claude", "settings.json")
	os.MkdirAll(filepath.Dir(settings), 0o700)
	original := "{\n  \"theme\": \"dark\"\n}\n"
	os.WriteFile(settings, []byte(original), 0o600)
	w.ok(t, "settings", "set", "autoDreamEnabled=true")
	if got, _ := os.ReadFile(settings); !strings.Contains(string(got), `"autoDreamEnabled": true`) {
		t.Fatalf("settings after set: %s", got)
	}
	out := w.ok(t, "undo")
	if got, _ := os.ReadFile(settings); string(got) != original {
		t.Errorf("after undo (%s): settings = %q, want %q", out, got, original)
	}
}

func TestDoctorRemovesStateLeftovers(t *testing.T) {
	w := newMemWorld(t)
	dir := w.memDir(t)
	w.ok(t, "save", "--name", "a", "--description", "first", "--type", "user", "--body", "same")
	lookup := func(k string) (string, bool) { v, ok := w.vars[k]; return v, ok }
	idx, _ := recall.DefaultIndexPath(dir, lookup)
	os.MkdirAll(filepath.Dir(idx), 0o700)
	torn := atomicfile.TempPrefix(idx) + "4242"
	os.WriteFile(torn, bytes.Repeat([]byte("x"), 2048), 0o600)
	hour := time.Now().Add(-time.Hour)
	os.Chtimes(torn, hour, hour)

	out, _, code := w.run(t, "doctor")
	if code != cli.ExitProblems || !strings.Contains(out, "temp-file") || !strings.Contains(out, torn) {
		t.Fatalf("doctor exit %d, want a temp-file finding for %s:\n%s", code, torn, out)
	}
	out, _, code = w.run(t, "doctor", "--fix")
	if code != 0 || !strings.Contains(out, "removed "+torn) {
		t.Fatalf("doctor --fix exit %d:\n%s", code, out)
	}
	if _, err := os.Stat(torn); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("%s is still there: %v", torn, err)
	}
}

// A --dir that is missing or not a directory is refused by the commands
// that read one, instead of reporting an empty directory; those that
// create memories create it.
func TestWrongDirIsRefused(t *testing.T) {
	w := newMemWorld(t)
	missing := filepath.Join(w.home, "nonexistent")
	file := filepath.Join(w.home, "a-file")
	os.WriteFile(file, []byte("x"), 0o600)
	for _, args := range [][]string{
		{"doctor"}, {"list"}, {"show", "x"}, {"recall", "deploy steps"}, {"log"}, {"index"}, {"undo"}, {"ui", "--addr", "127.0.0.1:0"},
	} {
		for _, dir := range []string{missing, file} {
			full := append(slices.Clone(args[:1]), append([]string{"--dir", dir}, args[1:]...)...)
			_, errOut, code := w.run(t, full...)
			if code == 0 || !strings.Contains(errOut, dir) {
				t.Errorf("memdir %s: exit %d, %q; want an error naming %s", strings.Join(full, " "), code, errOut, dir)
			}
		}
	}
	_, errOut, code := w.run(t, "doctor", "--dir", missing)
	if code != cli.ExitNotFound || !strings.Contains(errOut, "no such directory") {
		t.Errorf("doctor --dir missing: exit %d, %q", code, errOut)
	}
	if _, errOut, code := w.run(t, "save", "--dir", file, "--name", "n", "--description", "d", "--type", "user", "--body", "b"); code != cli.ExitInvalid || !strings.Contains(errOut, "not a directory") {
		t.Errorf("save --dir FILE: exit %d, %q", code, errOut)
	}
	w.ok(t, "save", "--dir", missing, "--name", "n", "--description", "d", "--type", "user", "--body", "b")
	if _, err := os.Stat(filepath.Join(missing, "user_n.md")); err != nil {
		t.Errorf("save --dir did not create the directory: %v", err)
	}
}
