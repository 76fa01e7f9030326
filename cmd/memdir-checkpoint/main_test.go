package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/memdir/memdir/internal/cli"
	"github.com/memdir/memdir/memdirtest"
)

// run runs Main in-process with HOME at home and the working directory at
// dir, and returns stdout, stderr and the exit code.
func run(t *testing.T, home, dir string, args ...string) (string, string, int) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	env := &cli.Env{
		Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr,
		LookupEnv: func(k string) (string, bool) {
			if k == "HOME" {
				return home, true
			}
			return "", false
		},
		Cwd: dir, Now: time.Now,
	}
	code := Main(context.Background(), args, env)
	return stdout.String(), stderr.String(), code
}

func TestMainHelpVersionUsage(t *testing.T) {
	home, dir := t.TempDir(), t.TempDir()
	for _, args := range [][]string{{"--help"}, {"help"}, {"snapshot", "-h"}} {
		out, _, code := run(t, home, dir, args...)
		if code != cli.ExitOK || !strings.HasPrefix(out, "memdir-checkpoint is 'memdir checkpoint'") ||
			!strings.Contains(out, "\nUsage: memdir-checkpoint track FILE | snapshot") || !strings.Contains(out, cli.ExitCodesHelp) {
			t.Errorf("%q: exit %d, help:\n%s", args, code, out)
		}
	}
	if out, _, code := run(t, home, dir, "--version"); code != cli.ExitOK || out != "memdir-checkpoint "+cli.Version+"\n" {
		t.Errorf("--version: exit %d, %q", code, out)
	}
	_, errOut, code := run(t, home, dir, "snapshot", "--session", "s")
	want := "memdir-checkpoint: checkpoint snapshot needs --message\n" +
		"Usage: memdir-checkpoint track FILE | snapshot | list | diff | rewind | resume  [flags]\n" +
		"Run 'memdir-checkpoint --help' for details.\n"
	if code != cli.ExitUsage || errOut != want {
		t.Errorf("usage error: exit %d, stderr:\n%s\nwant:\n%s", code, errOut, want)
	}
	if _, errOut, code := run(t, home, dir, "list", "--session", "nobody"); code != cli.ExitNotFound || !strings.Contains(errOut, "no checkpoints for session nobody") {
		t.Errorf("list of an unknown session: exit %d, %q", code, errOut)
	}
	// The checkpoint package says the snapshot is missing; the program
	// says where to look.
	if _, errOut, code := run(t, home, dir, "snapshot", "--session", "s", "--message", "m"); code != cli.ExitOK {
		t.Fatalf("snapshot: exit %d, %q", code, errOut)
	}
	_, errOut, code = run(t, home, dir, "diff", "--session", "s", "--message", "nope")
	if want := "memdir-checkpoint: no snapshot for message \"nope\" in session s (it may have been evicted; see 'memdir checkpoint list'): not found\n"; code != cli.ExitNotFound || errOut != want {
		t.Errorf("diff of an unknown message: exit %d, %q; want %q", code, errOut, want)
	}
}

func TestMainSnapshotTrackRewind(t *testing.T) {
	home, dir := t.TempDir(), t.TempDir()
	file := filepath.Join(dir, "a.txt")
	write := func(s string) {
		if err := os.WriteFile(file, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	must := func(args ...string) string {
		t.Helper()
		out, errOut, code := run(t, home, dir, append(args, "--session", "s1")...)
		if code != cli.ExitOK {
			t.Fatalf("%q: exit %d: %s", args, code, errOut)
		}
		return out
	}
	write("one\n")
	must("track", "a.txt", "--message", "t1")
	write("two\n")
	if out := must("snapshot", "--message", "t2"); !strings.HasPrefix(out, "snapshot 2 for message t2: 1 file (1 changed, 0 deleted, 0 unchanged)") {
		t.Errorf("snapshot: %q", out)
	}
	if _, err := os.Stat(filepath.Join(home, ".claude", "file-history", "s1")); err != nil {
		t.Errorf("the session is not under $HOME/.claude/file-history: %v", err)
	}
	if out := must("rewind", "--message", "t1"); !strings.Contains(out, "undo with: memdir-checkpoint rewind --session s1 --message before-rewind-") {
		t.Errorf("rewind does not name this program in its undo hint:\n%s", out)
	}
	if b, _ := os.ReadFile(file); string(b) != "one\n" {
		t.Errorf("after rewind to t1 the file holds %q", b)
	}
	os.Symlink(file, filepath.Join(dir, "link"))
	if _, errOut, code := run(t, home, dir, "track", "link", "--message", "t3", "--session", "s1"); code != cli.ExitInvalid {
		t.Errorf("track of a symlink: exit %d, %q", code, errOut)
	}
}

// TestSameAsMemdirCheckpoint runs one scripted session through both
// binaries, built from this module: memdir-checkpoint must print, write and
// exit exactly as 'memdir checkpoint' does, times and the program's name
// aside.
func TestSameAsMemdirCheckpoint(t *testing.T) {
	lean := memdirtest.BuildProgram(t, ".", "memdir-checkpoint")
	full := memdirtest.BuildProgram(t, "../memdir", "memdir")
	script := [][]string{
		{"snapshot", "--message", "t1"},
		{"track", "a.txt", "--message", "t1"},
		{"track", "new.txt", "--message", "t1"},
		{"!write", "a.txt", "changed\n"},
		{"!write", "new.txt", "new\n"},
		{"snapshot", "--message", "t2", "--json"},
		{"snapshot", "--message", "t3"},
		{"list"},
		{"list", "--json"},
		{"diff", "--message", "t1", "--stat"},
		{"diff", "--message", "t1"},
		{"rewind", "--message", "t1", "--dry-run"},
		{"rewind", "--message", "t1", "--json"},
		{"track", "--message", "t4"},
		{"diff", "--message", "nope"},
		{"resume", "--from", "s1"},
	}
	// Both runs use the same project path (backup names hash it) and a
	// HOME of their own.
	root := t.TempDir()
	project := filepath.Join(root, "project")
	times := regexp.MustCompile(`\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)?`)
	transcript := func(bin, home string) string {
		os.RemoveAll(project)
		if err := os.MkdirAll(project, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(project, "a.txt"), []byte("first\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		var log strings.Builder
		for _, step := range script {
			if step[0] == "!write" {
				if err := os.WriteFile(filepath.Join(project, step[1]), []byte(step[2]), 0o644); err != nil {
					t.Fatal(err)
				}
				continue
			}
			args := append(step[:len(step):len(step)], "--session", "s1")
			if bin == full {
				args = append([]string{"checkpoint"}, args...)
			}
			cmd := exec.Command(bin, args...)
			cmd.Dir = project
			cmd.Env = append(os.Environ(), "HOME="+home, "CLAUDE_CONFIG_DIR=", "MEMDIR_SESSION_ID=", "CLAUDE_SESSION_ID=")
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			out := stdout.String() + "\nstderr:\n" + stderr.String()
			out = strings.ReplaceAll(out, home, "$HOME")
			out = strings.ReplaceAll(out, "memdir checkpoint", "memdir-checkpoint")
			out = strings.ReplaceAll(out, "Run 'memdir help checkpoint' for details.", "Run 'memdir-checkpoint --help' for details.")
			log.WriteString("$ " + strings.Join(step, " ") + "\n" + times.ReplaceAllString(out, "TIME") + "exit " + strconv.Itoa(code) + "\n")
		}
		for _, f := range []string{"a.txt", "new.txt"} {
			b, err := os.ReadFile(filepath.Join(project, f))
			log.WriteString(f + ": " + string(b) + " " + strings.ReplaceAll(errString(err), project, "$PROJECT") + "\n")
		}
		return log.String()
	}
	want := transcript(full, t.TempDir())
	got := transcript(lean, t.TempDir())
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("memdir-checkpoint differs from memdir checkpoint (-memdir +memdir-checkpoint):\n%s", diff)
	}
	for _, s := range []string{"snapshot 3 for message t3", "\"undo_message_id\"", "would rewind to snapshot", "+1 -1", "exit 2", "exit 3", "exit 4"} {
		if !strings.Contains(got, s) {
			t.Errorf("the session's transcript lacks %q, so the comparison proves less than it should:\n%s", s, got)
		}
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
