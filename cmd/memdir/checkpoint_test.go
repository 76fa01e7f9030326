package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/memdir/memdir/checkpoint"
	"github.com/memdir/memdir/internal/cli"
)

// checkpointWorld runs 'memdir checkpoint' in the memory commands' sandbox;
// the config home is $HOME/.claude.
type checkpointWorld struct{ *memWorld }

func newCheckpointWorld(tb testing.TB) checkpointWorld {
	tb.Helper()
	return checkpointWorld{newMemWorld(tb)}
}

func (w checkpointWorld) config() string { return filepath.Join(w.home, ".claude") }

// run runs 'memdir checkpoint args...' and returns stdout, stderr and the
// exit code.
func (w checkpointWorld) run(tb testing.TB, args ...string) (string, string, int) {
	tb.Helper()
	return w.memWorld.run(tb, append([]string{"checkpoint"}, args...)...)
}

// must runs a checkpoint command that has to succeed.
func (w checkpointWorld) must(tb testing.TB, args ...string) string {
	tb.Helper()
	return w.ok(tb, append([]string{"checkpoint"}, args...)...)
}

func (w checkpointWorld) write(tb testing.TB, name, content string) {
	tb.Helper()
	if err := os.WriteFile(filepath.Join(w.project, name), []byte(content), 0o644); err != nil {
		tb.Fatal(err)
	}
}

func (w checkpointWorld) read(tb testing.TB, name string) string {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join(w.project, name))
	if os.IsNotExist(err) {
		return "<absent>"
	}
	if err != nil {
		tb.Fatal(err)
	}
	return string(b)
}

func TestCheckpointCLIFlow(t *testing.T) {
	w := newCheckpointWorld(t)
	s := []string{"--session", "s1"}
	w.must(t, append([]string{"snapshot", "--message", "t1"}, s...)...)
	w.write(t, "auth.ts", "export const a = 1\n")
	out := w.must(t, append([]string{"track", "auth.ts", "--message", "t1"}, s...)...)
	if !strings.Contains(out, "tracked auth.ts: v1 saved as ") {
		t.Errorf("track output: %q", out)
	}
	w.write(t, "auth.ts", "export const a = 2\nexport const b = 3\n")
	out = w.must(t, append([]string{"track", "new.ts", "--message", "t1"}, s...)...)
	if !strings.Contains(out, "does not exist yet") {
		t.Errorf("track of a new file: %q", out)
	}
	w.write(t, "new.ts", "new\n")
	out = w.must(t, append([]string{"snapshot", "--message", "t2"}, s...)...)
	if want := "snapshot 2 for message t2: 2 files (2 changed, 0 deleted, 0 unchanged)\n"; !strings.HasPrefix(out, want) {
		t.Errorf("snapshot output:\n%s\nwant prefix %q", out, want)
	}

	out = w.must(t, append([]string{"list"}, s...)...)
	if lines := strings.Split(strings.TrimSpace(out), "\n"); len(lines) != 3 || !strings.HasPrefix(lines[0], "SEQ") || !strings.HasSuffix(lines[2], "t2") {
		t.Errorf("list output:\n%s", out)
	}
	var list []checkpoint.Snapshot
	if err := json.Unmarshal([]byte(w.must(t, append([]string{"list", "--json"}, s...)...)), &list); err != nil || len(list) != 2 {
		t.Fatalf("list --json: %v, %d snapshots", err, len(list))
	}

	out = w.must(t, append([]string{"diff", "--message", "t1", "--stat"}, s...)...)
	for _, want := range []string{"modified auth.ts  +2 -1", "added    new.ts  +1 -0"} {
		if !strings.Contains(out, want) {
			t.Errorf("diff --stat lacks %q:\n%s", want, out)
		}
	}
	out = w.must(t, append([]string{"diff", "--message", "t1"}, s...)...)
	if !strings.Contains(out, "-export const a = 1\n+export const a = 2\n+export const b = 3\n") {
		t.Errorf("diff patch:\n%s", out)
	}

	out = w.must(t, append([]string{"rewind", "--message", "t1", "--dry-run"}, s...)...)
	if !strings.Contains(out, "would rewind") || !strings.Contains(out, "restore  auth.ts  +1 -2") || !strings.Contains(out, "delete   new.ts  +0 -1") {
		t.Errorf("dry run output:\n%s", out)
	}
	if got := w.read(t, "auth.ts"); got != "export const a = 2\nexport const b = 3\n" {
		t.Errorf("dry run changed auth.ts: %q", got)
	}

	out = w.must(t, append([]string{"rewind", "--message", "t1"}, s...)...)
	if diff := cmp.Diff([]string{"export const a = 1\n", "<absent>"}, []string{w.read(t, "auth.ts"), w.read(t, "new.ts")}); diff != "" {
		t.Errorf("after rewind (-want +got):\n%s", diff)
	}
	undo := ""
	for line := range strings.SplitSeq(out, "\n") {
		if rest, ok := strings.CutPrefix(line, "undo with: memdir checkpoint rewind --session s1 --message "); ok {
			undo = rest
		}
	}
	if undo == "" {
		t.Fatalf("rewind printed no undo command:\n%s", out)
	}
	var rep checkpoint.RewindReport
	if err := json.Unmarshal([]byte(w.must(t, append([]string{"rewind", "--message", undo, "--json"}, s...)...)), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Changes) != 2 || w.read(t, "new.ts") != "new\n" {
		t.Errorf("undo: %+v; new.ts = %q", rep, w.read(t, "new.ts"))
	}
}

func TestCheckpointCLISessionFromEnvironment(t *testing.T) {
	w := newCheckpointWorld(t)
	w.vars["CLAUDE_SESSION_ID"] = "from-claude"
	w.must(t, "snapshot", "--message", "m")
	w.vars["MEMDIR_SESSION_ID"] = "from-memdir"
	w.must(t, "snapshot", "--message", "m")
	for _, session := range []string{"from-claude", "from-memdir"} {
		if _, err := os.Stat(filepath.Join(w.config(), "file-history", session, checkpoint.LogName)); err != nil {
			t.Errorf("session %s: %v", session, err)
		}
	}
}

func TestCheckpointCLIErrors(t *testing.T) {
	w := newCheckpointWorld(t)
	w.write(t, "real", "x\n")
	if err := os.Symlink(filepath.Join(w.project, "real"), filepath.Join(w.project, "link")); err != nil {
		t.Fatal(err)
	}
	w.must(t, "snapshot", "--message", "m", "--session", "s")
	for _, tc := range []struct {
		args   []string
		code   int
		stderr string
	}{
		{nil, cli.ExitUsage, "missing subcommand"},
		{[]string{"frob", "--session", "s"}, cli.ExitUsage, "unknown subcommand"},
		{[]string{"snapshot", "--message", "m"}, cli.ExitUsage, "MEMDIR_SESSION_ID"},
		{[]string{"snapshot", "--session", "s"}, cli.ExitUsage, "needs --message"},
		{[]string{"track", "--message", "m", "--session", "s"}, cli.ExitUsage, "one FILE"},
		{[]string{"list", "extra", "--session", "s"}, cli.ExitUsage, "no arguments"},
		{[]string{"list", "--dry-run", "--session", "s"}, cli.ExitUsage, "--dry-run"},
		{[]string{"resume", "--session", "s"}, cli.ExitUsage, "--from"},
		{[]string{"list", "--from", "old", "--session", "s"}, cli.ExitUsage, "--from is required by resume and applies to nothing else"},
		{[]string{"list", "--message", "m", "--session", "s"}, cli.ExitUsage, "checkpoint list takes no --message"},
		{[]string{"resume", "--from", "old", "--message", "m", "--session", "s"}, cli.ExitUsage, "checkpoint resume takes no --message"},
		{[]string{"rewind", "--message", "m", "--stat", "--session", "s"}, cli.ExitUsage, "--stat applies to diff only"},
		{[]string{"track", "a", "b", "--message", "m", "--session", "s"}, cli.ExitUsage, "checkpoint track takes one FILE, got 2 arguments"},
		// The checks run in order: subcommand, arguments, --message,
		// --dry-run, --stat, --from, then the session.
		{[]string{"frob", "extra"}, cli.ExitUsage, `unknown subcommand "frob"`},
		{[]string{"list", "extra", "--message", "m"}, cli.ExitUsage, `checkpoint list takes no arguments, got ["extra"]`},
		{[]string{"diff", "--dry-run", "--from", "old"}, cli.ExitUsage, "needs --message"},
		{[]string{"diff", "--message", "m", "--dry-run", "--stat", "--from", "old"}, cli.ExitUsage, "--dry-run applies to rewind only"},
		{[]string{"rewind", "--message", "m", "--stat", "--from", "old"}, cli.ExitUsage, "--stat applies to diff only"},
		{[]string{"diff", "--message", "m", "--from", "old"}, cli.ExitUsage, "--from is required by resume"},
		{[]string{"list", "--session", "../x"}, cli.ExitInvalid, "session id"},
		{[]string{"list", "--session", "nobody"}, cli.ExitNotFound, "no checkpoints for session nobody"},
		{[]string{"rewind", "--message", "nope", "--session", "s"}, cli.ExitNotFound, `"nope"`},
		{[]string{"track", "link", "--message", "m", "--session", "s"}, cli.ExitInvalid, "link: it is a symbolic link"},
	} {
		_, errOut, code := w.run(t, tc.args...)
		if code != tc.code || !strings.Contains(errOut, tc.stderr) {
			t.Errorf("checkpoint %q: exit %d, stderr %q; want exit %d mentioning %q", tc.args, code, errOut, tc.code, tc.stderr)
		}
	}
}

func TestCheckpointCLISnapshotProblemsExitNonZero(t *testing.T) {
	w := newCheckpointWorld(t)
	w.write(t, "f", "x\n")
	w.must(t, "track", "f", "--message", "m1", "--session", "s")
	if err := os.Remove(filepath.Join(w.project, "f")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc/hostname", filepath.Join(w.project, "f")); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := w.run(t, "snapshot", "--message", "m2", "--session", "s")
	if code != cli.ExitInvalid || !strings.Contains(out, "1 not backed up") || !strings.Contains(errOut, "symbolic link") {
		t.Errorf("exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
}

func TestCheckpointCLIResume(t *testing.T) {
	w := newCheckpointWorld(t)
	w.write(t, "f", "one\n")
	w.must(t, "track", "f", "--message", "m1", "--session", "old")
	w.write(t, "f", "two\n")
	out := w.must(t, "resume", "--from", "old", "--session", "new")
	if !strings.Contains(out, "1 snapshot (0 dropped); backups: 1 linked") {
		t.Errorf("resume output: %q", out)
	}
	w.must(t, "rewind", "--message", "m1", "--session", "new")
	if got := w.read(t, "f"); got != "one\n" {
		t.Errorf("after rewind in the resumed session: %q", got)
	}
}

func TestCheckpointCLIHelpNamesSessionSource(t *testing.T) {
	w := newCheckpointWorld(t)
	out, _, code := w.run(t, "--help")
	if code != 0 || !strings.Contains(out, "$MEMDIR_SESSION_ID") || !strings.Contains(out, "$CLAUDE_SESSION_ID") || !strings.Contains(out, "Exit status") {
		t.Errorf("help (exit %d):\n%s", code, out)
	}
}

// TestCheckpointCLIPartialRewindAndResume: a rewind that leaves a file
// alone, and a resume that cannot carry a backup over, still report what
// they did and then exit non-zero naming the files.
func TestCheckpointCLIPartialRewindAndResume(t *testing.T) {
	w := newCheckpointWorld(t)
	w.write(t, "f", "one\n")
	w.write(t, "g", "one\n")
	w.must(t, "track", "f", "--message", "m1", "--session", "s")
	w.must(t, "track", "g", "--message", "m1", "--session", "s")
	w.write(t, "g", "two\n")
	if err := os.Remove(filepath.Join(w.project, "f")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(w.project, "g"), filepath.Join(w.project, "f")); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := w.run(t, "rewind", "--message", "m1", "--session", "s")
	if code != cli.ExitInvalid || !strings.Contains(out, "restore  g  +1 -1") || !strings.Contains(out, "  skipped  f: ") ||
		!strings.Contains(errOut, `rewind to "m1" was partial: f: `) {
		t.Errorf("partial rewind: exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	if got := w.read(t, "g"); got != "one\n" {
		t.Errorf("g after the partial rewind: %q", got)
	}

	w.write(t, "h", "one\n")
	w.must(t, "track", "h", "--message", "m1", "--session", "old")
	dir := filepath.Join(w.config(), "file-history", "old")
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() != checkpoint.LogName {
			if err := os.Remove(filepath.Join(dir, e.Name())); err != nil {
				t.Fatal(err)
			}
		}
	}
	out, errOut, code = w.run(t, "resume", "--from", "old", "--session", "new")
	if code != cli.ExitFailure || !strings.Contains(out, "resumed session new from old: 0 snapshots (1 dropped)") ||
		!strings.Contains(errOut, "1 backup could not be carried over:\n  h: ") {
		t.Errorf("resume without its backups: exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
}
