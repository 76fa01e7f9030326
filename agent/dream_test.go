package agent_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/memdir/memdir/agent"
	"github.com/memdir/memdir/llm"
	"github.com/memdir/memdir/memdirtest"
)

type dreamWorld struct {
	*extractWorld
	transcripts string
}

func newDreamWorld(tb testing.TB) *dreamWorld {
	tb.Helper()
	w := &dreamWorld{extractWorld: newExtractWorld(tb), transcripts: filepath.Join(tb.TempDir(), "project-transcripts")}
	os.MkdirAll(w.transcripts, 0o700)
	if err := w.dir.Ensure(); err != nil {
		tb.Fatal(err)
	}
	return w
}

// sessions writes n transcripts touched at mtime, plus files the gate must
// not count.
func (w *dreamWorld) sessions(tb testing.TB, n int, mtime time.Time) []string {
	tb.Helper()
	var ids []string
	for i := range n {
		id := "0000000" + strconv.Itoa(i) + "-1111-2222-3333-444455556666"
		p := filepath.Join(w.transcripts, id+".jsonl")
		os.WriteFile(p, []byte("{}\n"), 0o600)
		os.Chtimes(p, mtime, mtime)
		ids = append(ids, id)
	}
	for _, other := range []string{"agent-12345678.jsonl", "notes.txt"} {
		p := filepath.Join(w.transcripts, other)
		os.WriteFile(p, []byte("{}\n"), 0o600)
		os.Chtimes(p, mtime, mtime)
	}
	return ids
}

func (w *dreamWorld) opts(tb testing.TB) *agent.DreamOptions {
	return &agent.DreamOptions{
		Model: clients[0].new(tb, w.srv), Dir: w.dir, TranscriptDir: w.transcripts, Enabled: true,
		StateDir: w.state, Now: func() time.Time { return w.now },
	}
}

func TestDreamGates(t *testing.T) {
	ctx := context.Background()
	w := newDreamWorld(t)
	lock := w.dir.Abs(agent.ConsolidateLockName)

	o := w.opts(t)
	o.Enabled = false
	if res, err := agent.Dream(ctx, o); err != nil || res.Gate != "enabled" {
		t.Errorf("disabled: %+v, %v", res, err)
	}

	// Consolidated 3 hours ago: the time gate holds.
	os.WriteFile(lock, []byte("1"), 0o600)
	os.Chtimes(lock, w.now.Add(-3*time.Hour), w.now.Add(-3*time.Hour))
	if res, err := agent.Dream(ctx, w.opts(t)); err != nil || res.Gate != "time" || !strings.Contains(res.Reason, "3.0 hours ago") {
		t.Errorf("recent consolidation: %+v, %v", res, err)
	}

	// 30 hours ago, but only 3 sessions since (one is the current one).
	last := w.now.Add(-30 * time.Hour)
	os.Chtimes(lock, last, last)
	ids := w.sessions(t, 4, w.now.Add(-time.Hour))
	o = w.opts(t)
	o.CurrentSession = ids[0]
	res, err := agent.Dream(ctx, o)
	if err != nil || res.Gate != "sessions" || len(res.Sessions) != 3 || !strings.Contains(res.Reason, "3 sessions") {
		t.Errorf("too few sessions: %+v, %v", res, err)
	}
	// A second try within 10 minutes does not even count sessions.
	if res, err := agent.Dream(ctx, o); err != nil || res.Gate != "throttle" {
		t.Errorf("within the scan interval: %+v, %v", res, err)
	}
	// Ten minutes later, with five sessions, everything passes: the model
	// is called and the lock is stamped with our PID and the time.
	w.now = w.now.Add(11 * time.Minute)
	w.sessions(t, 6, w.now.Add(-time.Minute))
	w.srv.Enqueue(memdirtest.TextReply("Nothing needed changing."))
	res, err = agent.Dream(ctx, o)
	if err != nil || res.Skipped || len(res.Sessions) != 5 || res.Summary != "Nothing needed changing." {
		t.Fatalf("all gates open: %+v, %v", res, err)
	}
	body, _ := os.ReadFile(lock)
	fi, _ := os.Stat(lock)
	if string(body) != strconv.Itoa(os.Getpid()) || !fi.ModTime().Equal(w.now) {
		t.Errorf("lock after a run: body %q, mtime %v", body, fi.ModTime())
	}
	sent := w.srv.LastRequest()
	if !strings.Contains(sent.System, "# Dream: consolidating memory") || !strings.Contains(sent.System, "Sessions since the last consolidation (5):") {
		t.Errorf("dream prompt lacks its phases or sessions")
	}
	var names []string
	for _, tool := range sent.Tools {
		names = append(names, tool.Name)
	}
	if diff := cmp.Diff([]string{"memory", "read_file", "grep", "glob", "ls"}, names); diff != "" {
		t.Errorf("dream tools (-want +got):\n%s", diff)
	}
}

// sleeper starts a real process whose PID a lock can name.
func sleeper(tb testing.TB) *exec.Cmd {
	tb.Helper()
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		tb.Skipf("cannot start a helper process: %v", err)
	}
	tb.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd
}

func TestDreamLock(t *testing.T) {
	ctx := context.Background()
	w := newDreamWorld(t)
	lock := w.dir.Abs(agent.ConsolidateLockName)
	live := sleeper(t)

	// Held by a live process 10 minutes ago: blocked.
	os.WriteFile(lock, []byte(strconv.Itoa(live.Process.Pid)), 0o600)
	os.Chtimes(lock, w.now.Add(-10*time.Minute), w.now.Add(-10*time.Minute))
	o := w.opts(t)
	o.Force = true
	res, err := agent.Dream(ctx, o)
	if err != nil || res.Gate != "lock" || !strings.Contains(res.Reason, strconv.Itoa(live.Process.Pid)) {
		t.Fatalf("live holder: %+v, %v", res, err)
	}

	// Held by a live process but stale (over an hour): reclaimed.
	os.Chtimes(lock, w.now.Add(-2*time.Hour), w.now.Add(-2*time.Hour))
	w.srv.Enqueue(memdirtest.TextReply("done"))
	if res, err := agent.Dream(ctx, o); err != nil || res.Skipped {
		t.Errorf("stale lock: %+v, %v", res, err)
	}

	// Held by a dead process a minute ago: reclaimed.
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Skip(err)
	}
	os.WriteFile(lock, []byte(strconv.Itoa(dead.Process.Pid)), 0o600)
	os.Chtimes(lock, w.now.Add(-time.Minute), w.now.Add(-time.Minute))
	w.srv.Enqueue(memdirtest.TextReply("done"))
	if res, err := agent.Dream(ctx, o); err != nil || res.Skipped {
		t.Errorf("dead holder: %+v, %v", res, err)
	}
}

func TestDreamFailureRollsBackLock(t *testing.T) {
	ctx := context.Background()
	w := newDreamWorld(t)
	lock := w.dir.Abs(agent.ConsolidateLockName)
	o := w.opts(t)
	o.Force = true

	// No lock before: none after a failed run.
	w.srv.Enqueue(memdirtest.ErrorReply(500, "overloaded"))
	if _, err := agent.Dream(ctx, o); err == nil {
		t.Fatal("a failing model did not fail the run")
	}
	if _, err := os.Stat(lock); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("lock left after a failed first run: %v", err)
	}
	// A previous consolidation: its time comes back, with an empty body.
	prior := w.now.Add(-48 * time.Hour)
	os.WriteFile(lock, []byte("123"), 0o600)
	os.Chtimes(lock, prior, prior)
	w.srv.Enqueue(memdirtest.ErrorReply(500, "overloaded"))
	if _, err := agent.Dream(ctx, o); err == nil {
		t.Fatal("a failing model did not fail the run")
	}
	body, _ := os.ReadFile(lock)
	fi, _ := os.Stat(lock)
	if len(body) != 0 || !fi.ModTime().Equal(prior) {
		t.Errorf("rolled-back lock: body %q, mtime %v, want empty and %v", body, fi.ModTime(), prior)
	}
}

func TestDreamDeletionIsRestorable(t *testing.T) {
	ctx := context.Background()
	w := newDreamWorld(t)
	old := "---\nname: old-rule\ndescription: superseded rule\ntype: feedback\n---\nold\n"
	os.WriteFile(w.dir.Abs("feedback_old.md"), []byte(old), 0o600)
	os.WriteFile(w.dir.Abs("MEMORY.md"), []byte("- [old-rule](feedback_old.md) — superseded rule\n"), 0o600)
	w.srv.Enqueue(
		reply(llm.Usage{InputTokens: 500}, use("t1", "memory", `{"command":"delete","path":"/memories/feedback_old.md"}`),
			use("t2", "memory", mustJSON(map[string]string{"command": "str_replace", "path": "/memories/MEMORY.md", "old_str": "- [old-rule](feedback_old.md) — superseded rule\n", "new_str": ""}))),
		memdirtest.TextReply("Removed a superseded rule."),
	)
	o := w.opts(t)
	o.Force = true
	res, err := agent.Dream(ctx, o)
	if err != nil || len(res.Removed) != 1 || res.RunID == "" {
		t.Fatalf("dream: %+v, %v", res, err)
	}
	if _, err := w.dir.Undo(ctx, res.RunID, nil); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(w.dir.Abs("feedback_old.md"))
	ix, _ := os.ReadFile(w.dir.Abs("MEMORY.md"))
	if string(got) != old || string(ix) != "- [old-rule](feedback_old.md) — superseded rule\n" {
		t.Errorf("after undo: file %q, index %q", got, ix)
	}
}

func TestSessionsSince(t *testing.T) {
	w := newDreamWorld(t)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ids := w.sessions(t, 3, t0)
	got, err := agent.SessionsSince(w.transcripts, t0.Add(-time.Second), ids[1])
	if err != nil || len(got) != 2 || got[0] != ids[0] || got[1] != ids[2] {
		t.Errorf("SessionsSince = %v, %v", got, err)
	}
	if got, _ := agent.SessionsSince(w.transcripts, t0, ""); len(got) != 0 {
		t.Errorf("sessions not newer than the cut-off were counted: %v", got)
	}
	if got, err := agent.SessionsSince(filepath.Join(w.transcripts, "missing"), t0, ""); err != nil || len(got) != 0 {
		t.Errorf("missing directory: %v, %v", got, err)
	}
}
