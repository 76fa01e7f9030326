package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/memdir/memdir/internal/cli"
	"github.com/memdir/memdir/memdirtest"
)

func TestAgentCommands(t *testing.T) {
	w := newMemWorld(t)
	memdirtest.WriteFiles(t, filepath.Join(w.home, ".claude", "agents"), map[string]string{
		"reviewer.md": "---\nname: reviewer\ndescription: reviews diffs\nmemory: user\n---\nReview.\n",
		"planner.md":  "---\nname: planner\ndescription: plans work\n---\nPlan.\n",
	})
	memdirtest.WriteFiles(t, filepath.Join(w.project, ".claude", "agents"), map[string]string{
		"tester.md": "---\nname: tester\ndescription: writes tests\nmemory: local\n---\nTest.\n",
	})
	snap := filepath.Join(w.project, ".claude", "agent-memory-snapshots", "reviewer")
	memdirtest.WriteFiles(t, snap, map[string]string{
		"snapshot.json": `{"updatedAt":"2026-11-01T00:00:00Z"}`,
		"MEMORY.md":     "- [Style](style.md) — house style\n",
		"style.md":      "---\nname: Style\ndescription: house style\ntype: feedback\n---\n\nTabs.\n",
	})
	memdirtest.WriteFiles(t, filepath.Join(w.project, ".claude", "agent-memory-snapshots", "ghost"), map[string]string{"snapshot.json": `{"updatedAt":"2026-11-01"}`})
	reviewerDir := filepath.Join(w.home, ".claude", "agent-memory", "reviewer")

	out, errOut, code := w.run(t, "agent", "list")
	if code != 0 {
		t.Fatalf("agent list: exit %d: %s", code, errOut)
	}
	for _, want := range []string{
		"AGENT     SCOPE  MEMORIES  SNAPSHOT    DIRECTORY",
		"planner   -      -         -           -",
		"reviewer  user   0         initialize  " + reviewerDir + "/",
		"tester    local  0         -           " + w.project + "/.claude/agent-memory-local/tester/",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("agent list lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(errOut, `snapshot for agent "ghost", which has no definition`) {
		t.Errorf("stderr = %q", errOut)
	}

	out = w.ok(t, "agent", "sync", "reviewer")
	if !strings.Contains(out, "Initialized the user memory of reviewer") || !strings.Contains(out, "copied 2 files") || !strings.Contains(out, "memdir undo --agent reviewer --scope user ") {
		t.Errorf("sync printed %q", out)
	}
	if got := memdirtest.ReadFile(t, filepath.Join(reviewerDir, ".snapshot-synced.json")); got != `{"syncedFrom":"2026-11-01T00:00:00Z"}` {
		t.Errorf("marker = %q", got)
	}
	if out := w.ok(t, "agent", "sync", "reviewer"); !strings.Contains(out, "in step with the snapshot") {
		t.Errorf("second sync printed %q", out)
	}

	// The agent learns something; the project ships a newer snapshot.
	w.ok(t, "save", "--agent", "reviewer", "--scope", "user", "--name", "mine", "--type", "project", "--description", "learned locally", "--body", "local lesson")
	memdirtest.WriteFiles(t, snap, map[string]string{
		"snapshot.json": `{"updatedAt":"2026-11-20T00:00:00Z"}`,
		"style.md":      "---\nname: Style\ndescription: house style v2\ntype: feedback\n---\n\nTabs and gofmt.\n",
	})
	var listed struct {
		Agents []agentRow `json:"agents"`
	}
	if err := json.Unmarshal([]byte(w.ok(t, "agent", "list", "--json")), &listed); err != nil {
		t.Fatal(err)
	}
	var actions []string
	for _, a := range listed.Agents {
		s := a.Name + ":" + string(a.Scope)
		if a.Snapshot != nil && a.Snapshot.HasSnapshot {
			s += ":" + string(a.Snapshot.Action)
		}
		actions = append(actions, s)
	}
	if diff := cmp.Diff([]string{"planner:", "reviewer:user:prompt-update", "tester:local"}, actions); diff != "" {
		t.Errorf("agents (-want +got):\n%s", diff)
	}

	before := memdirtest.ReadFile(t, filepath.Join(reviewerDir, "project_mine.md"))
	out, _, code = w.run(t, "agent", "sync", "reviewer")
	if code != cli.ExitExists || !strings.Contains(out, "would remove 3 local memory files:") || !strings.Contains(out, "project_mine.md") || !strings.Contains(out, "--yes") {
		t.Errorf("unconfirmed replace: exit %d\n%s", code, out)
	}
	out = w.ok(t, "agent", "sync", "reviewer", "--yes")
	if !strings.Contains(out, "Replaced the user memory of reviewer") {
		t.Errorf("replace printed %q", out)
	}
	if _, err := os.Stat(filepath.Join(reviewerDir, "project_mine.md")); !os.IsNotExist(err) {
		t.Errorf("replace kept the local memory: %v", err)
	}
	w.ok(t, "undo", "--agent", "reviewer", "--scope", "user")
	if got := memdirtest.ReadFile(t, filepath.Join(reviewerDir, "project_mine.md")); got != before {
		t.Errorf("undo restored %q, want %q", got, before)
	}
	if got := memdirtest.ReadFile(t, filepath.Join(reviewerDir, "style.md")); !strings.Contains(got, "Tabs.") {
		t.Errorf("undo left the snapshot's style.md: %q", got)
	}
	if out := w.ok(t, "agent", "sync", "reviewer", "--keep"); !strings.Contains(out, "recorded as seen") {
		t.Errorf("keep printed %q", out)
	}

	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"agent"}, cli.ExitUsage, "needs a subcommand"},
		{[]string{"agent", "frob"}, cli.ExitUsage, "unknown agent subcommand"},
		{[]string{"agent", "sync"}, cli.ExitUsage, "one agent name"},
		{[]string{"agent", "sync", "reviewer", "--yes", "--keep"}, cli.ExitUsage, "exclude each other"},
		{[]string{"agent", "sync", "nobody"}, cli.ExitNotFound, `no agent named "nobody"`},
		{[]string{"agent", "sync", "planner"}, cli.ExitInvalid, "keeps no memory"},
		{[]string{"agent", "sync", "../x", "--scope", "user"}, cli.ExitInvalid, "cannot name a directory"},
	} {
		_, errOut, code := w.run(t, tc.args...)
		if code != tc.code || !strings.Contains(errOut, tc.want) {
			t.Errorf("memdir %s: exit %d, stderr %q; want %d and %q", strings.Join(tc.args, " "), code, errOut, tc.code, tc.want)
		}
	}
	// An undefined agent can still be synced with an explicit scope.
	if out := w.ok(t, "agent", "sync", "ghost", "--scope", "local"); !strings.Contains(out, "Initialized the local memory of ghost") {
		t.Errorf("sync of an undefined agent: %q", out)
	}
}
