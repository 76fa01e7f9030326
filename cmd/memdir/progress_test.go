package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// MEMDIR_PROGRESS=0 shows every step at once, with no delay and no timer,
// so these tests see the progress lines of a command whose standard error
// is not a terminal (a buffer, as a pipe would be) however fast the
// machine is: no test depends on timing.

// progressLine matches a progress line's end: the time elapsed.
var progressLine = regexp.MustCompile(`, (done in )?[0-9.hms]+$`)

// progressLines are the lines of stderr that are progress of label.
func progressLines(stderr, label string) []string {
	var out []string
	for l := range strings.Lines(stderr) {
		if strings.HasPrefix(l, label+": ") && progressLine.MatchString(strings.TrimSuffix(l, "\n")) {
			out = append(out, strings.TrimSuffix(l, "\n"))
		}
	}
	return out
}

// wantProgress checks that stderr has progress lines of label, one
// containing each of wants, and a last one marked done; and that stdout
// has none.
func wantProgress(tb testing.TB, cmd, stdout, stderr, label string, wants ...string) {
	tb.Helper()
	lines := progressLines(stderr, label)
	if len(lines) == 0 {
		tb.Fatalf("%s: no progress line %q on stderr:\n%s", cmd, label+": ...", stderr)
	}
	for _, want := range wants {
		if !strings.Contains(strings.Join(lines, "\n"), want) {
			tb.Errorf("%s: no progress line has %q:\n%s", cmd, want, strings.Join(lines, "\n"))
		}
	}
	if last := lines[len(lines)-1]; !strings.Contains(last, ", done in ") {
		tb.Errorf("%s: last progress line %q is not marked done", cmd, last)
	}
	if strings.Contains(stdout, label+": ") {
		tb.Errorf("%s: progress on stdout:\n%s", cmd, stdout)
	}
}

// saveMany writes n memories straight into dir, with their index lines.
func saveMany(tb testing.TB, dir string, n int) {
	tb.Helper()
	var ix strings.Builder
	for i := range n {
		name := fmt.Sprintf("note_%04d.md", i)
		writeFile(tb, filepath.Join(dir, name), fmt.Sprintf("---\nname: note %d\ndescription: deploy note number %d\ntype: project\n---\nthe deploy runs step %d\n", i, i, i))
		fmt.Fprintf(&ix, "- [Note %d](%s) — deploy note\n", i, name)
	}
	writeFile(tb, filepath.Join(dir, "MEMORY.md"), ix.String())
}

func TestProgressOfRecallIndexBuildAndList(t *testing.T) {
	w := newMemWorld(t)
	w.vars["MEMDIR_PROGRESS"] = "0"
	saveMany(t, w.memDir(t), 300)
	out, errOut, code := w.run(t, "recall", "how does the deploy run")
	if code != 0 {
		t.Fatalf("recall: exit %d\n%s", code, errOut)
	}
	wantProgress(t, "recall", out, errOut, "recall", "reading memories 64/300 (21%)", "reading memories 300/300 (100%)", "building the index")
	for _, args := range [][]string{{"recall", "--quiet", "deploy steps"}, {"recall", "--json", "deploy steps"}, {"list", "--json"}} {
		os.RemoveAll(w.state) // a cold index again
		_, errOut, _ := w.run(t, args...)
		if l := progressLines(errOut, args[0]); len(l) > 0 {
			t.Errorf("memdir %s shows progress: %q", strings.Join(args, " "), l)
		}
	}
	out, errOut, _ = w.run(t, "list")
	wantProgress(t, "list", out, errOut, "list", "reading memories")
}

func TestProgressOfDoctorFix(t *testing.T) {
	w := newMemWorld(t)
	w.vars["MEMDIR_PROGRESS"] = "0"
	dir := w.memDir(t)
	saveMany(t, dir, 20)
	for i := range 3 {
		writeFile(t, filepath.Join(dir, fmt.Sprintf("loose_%d.md", i)), fmt.Sprintf("---\nname: loose %d\ndescription: not indexed\ntype: user\n---\nbody %d\n", i, i))
	}
	out, errOut, code := w.run(t, "doctor", "--fix")
	if code != 0 {
		t.Fatalf("doctor --fix: exit %d\n%s%s", code, out, errOut)
	}
	wantProgress(t, "doctor --fix", out, errOut, "doctor", "doctor: checking", "repairing 0/3 (0%)", "repairing 3/3 (100%)", "checking the result")
	out, errOut, _ = w.run(t, "doctor")
	wantProgress(t, "doctor", out, errOut, "doctor", "doctor: checking")
	if _, errOut, _ := w.run(t, "doctor", "--quiet"); len(progressLines(errOut, "doctor")) > 0 {
		t.Errorf("doctor --quiet shows progress:\n%s", errOut)
	}
}

func TestProgressOfEmbed(t *testing.T) {
	w, _ := embedWorld(t)
	w.vars["MEMDIR_PROGRESS"] = "0"
	out, errOut, code := w.run(t, "embed")
	if code != 0 {
		t.Fatalf("embed: exit %d\n%s", code, errOut)
	}
	wantProgress(t, "embed", out, errOut, "embed", "embedding memories 0/3 (0%)", "embedding memories 3/3 (100%)")
	os.RemoveAll(filepath.Join(w.state, "embed"))
	if _, errOut, _ := w.run(t, "embed", "--json"); len(progressLines(errOut, "embed")) > 0 {
		t.Errorf("embed --json shows progress:\n%s", errOut)
	}
}

func TestProgressOfSyncPullAndPush(t *testing.T) {
	alice := newTeamWorld(t)
	srv := alice.server(t, false)
	alice.vars["MEMDIR_PROGRESS"] = "0"
	var ix strings.Builder
	for i := range 120 {
		name := fmt.Sprintf("k%03d.md", i)
		writeFile(t, filepath.Join(alice.teamDir(), name), fmt.Sprintf("---\nname: k%d\n---\nentry %d\n", i, i))
		fmt.Fprintf(&ix, "- [K%d](%s) — entry\n", i, name)
	}
	writeFile(t, filepath.Join(alice.teamDir(), "MEMORY.md"), ix.String())
	out, errOut, code := alice.run(t, "sync", "push")
	if code != 0 {
		t.Fatalf("sync push: exit %d\n%s", code, errOut)
	}
	wantProgress(t, "sync push", out, errOut, "sync push", "reading team/", "pushing 0/121 (0%)", "pushing 121/121 (100%)")

	bob := newTeamWorld(t)
	bob.vars["MEMDIR_TEAM_URL"] = srv.URL
	bob.vars["MEMDIR_TEAM_TOKEN"] = srv.Token(t, "acme/widgets", true)
	bob.vars["MEMDIR_PROGRESS"] = "0"
	out, errOut, code = bob.run(t, "sync", "pull")
	if code != 0 {
		t.Fatalf("sync pull: exit %d\n%s", code, errOut)
	}
	wantProgress(t, "sync pull", out, errOut, "sync pull", "downloading", "bringing in entries 0/121 (0%)", "bringing in entries 121/121 (100%)")
	out, errOut, _ = bob.run(t, "sync", "pull", "--json")
	if !json.Valid([]byte(out)) || len(progressLines(errOut, "sync pull")) > 0 {
		t.Errorf("sync pull --json: stdout valid JSON %v, progress on stderr:\n%s", json.Valid([]byte(out)), errOut)
	}
	if _, errOut, _ := bob.run(t, "sync", "pull", "--quiet"); len(progressLines(errOut, "sync pull")) > 0 {
		t.Errorf("sync pull --quiet shows progress:\n%s", errOut)
	}
}

// MEMDIR_PROGRESS=off turns progress off for every command.
func TestProgressOff(t *testing.T) {
	w := newMemWorld(t)
	saveMany(t, w.memDir(t), 10)
	_, errOut, _ := w.run(t, "recall", "deploy steps")
	if len(progressLines(errOut, "recall")) > 0 {
		t.Errorf("MEMDIR_PROGRESS=off: progress shown:\n%s", errOut)
	}
}

// The hook's standard output is Claude Code's to read: its first index
// build shows no progress there (nor on stderr, which Claude Code may show
// the user), whatever MEMDIR_PROGRESS says.
func TestProgressNeverInTheHook(t *testing.T) {
	w := newHookWorld(t)
	saveNotes(t, w, 3, 200)       // what the prompt is about
	saveMany(t, w.memDir(t), 300) // behind the index's back: the hook reads them
	w.vars["MEMDIR_PROGRESS"] = "0"
	out, errOut, code := w.hook(t, w.input(t, "user_prompt_submit", nil))
	if code != 0 {
		t.Fatalf("hook: exit %d\n%s", code, errOut)
	}
	if o := decodeHookOutput(t, out); o == nil || o.HookSpecificOutput == nil {
		t.Fatalf("hook output is not Claude Code's: %q", out)
	}
	if strings.Contains(out+errOut, "reading memories") {
		t.Errorf("progress from the hook:\nstdout: %s\nstderr: %s", out, errOut)
	}
}

func TestProgressOfEval(t *testing.T) {
	w := newMemWorld(t)
	w.vars["MEMDIR_PROGRESS"] = "0"
	file, _ := filepath.Abs("../../testdata/eval/recall-oss.json")
	out, errOut, code := w.run(t, "eval", "recall", file, "--distractors", "0,100")
	if code != 0 {
		t.Fatalf("eval: exit %d\n%s", code, errOut)
	}
	wantProgress(t, "eval recall", out, errOut, "eval recall", "sets evaluated (+0 distractors) 0/2 (0%)", "sets evaluated (+100 distractors) 2/2 (100%)")
	for _, quiet := range [][]string{{"--json"}, {"--quiet"}} {
		args := append([]string{"eval", "recall", file, "--distractors", "0"}, quiet...)
		if _, errOut, _ := w.run(t, args...); len(progressLines(errOut, "eval recall")) > 0 {
			t.Errorf("eval %v shows progress:\n%s", quiet, errOut)
		}
	}
}
