package prompt

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/memdir/memdir"
	"github.com/memdir/memdir/locate"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata")

// golden compares got with testdata/<name>, or rewrites it with -update.
func golden(tb testing.TB, name, got string) {
	tb.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			tb.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		tb.Fatalf("%v (run the test with -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		tb.Errorf("%s differs (-want +got); run with -update if the change is intended:\n%s", path, diff)
	}
}

func TestBuildPromptGolden(t *testing.T) {
	t.Parallel()
	loaded, _ := memdir.LoadIndexText([]byte("- [Reviewer style](feedback_style.md) — prefers small diffs\n"))
	for _, tc := range []struct {
		name string
		opts Options
	}{
		{"individual", Options{Mode: Individual, Dir: "/home/u/.claude/projects/-src-app/memory/"}},
		{"individual-skip-index", Options{Mode: Individual, Dir: "/m/", SkipIndex: true, ExtraGuidelines: []string{"Save memories in English.", "  "}}},
		{"individual-search", Options{Mode: Individual, Dir: "/m", SearchDir: "/home/u/.claude/projects/-src-app"}},
		{"team", Options{Mode: Team, Dir: "/home/u/.claude/projects/-src-app/memory/"}},
		{"team-skip-index", Options{Mode: Team, Dir: "/m/", SkipIndex: true}},
		{"daily-log", Options{Mode: DailyLog, Dir: "/m/"}},
		{"daily-log-skip-index", Options{Mode: DailyLog, Dir: "/m/", SkipIndex: true}},
		{"agent-project", Options{Mode: Agent, Dir: "/src/app/.claude/agent-memory/reviewer/", AgentScope: locate.ScopeProject, Index: loaded, IndexExists: true}},
		{"agent-user-empty", Options{Mode: Agent, Dir: "/home/u/.claude/agent-memory/reviewer/", AgentScope: locate.ScopeUser}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Build(&tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			golden(t, filepath.Join("prompt", tc.name+".golden"), got)
		})
	}
}

func TestBuildPromptRules(t *testing.T) {
	t.Parallel()
	ind, _ := Build(&Options{Dir: "/m/"})
	skip, _ := Build(&Options{Dir: "/m/", SkipIndex: true})
	team, _ := Build(&Options{Mode: Team, Dir: "/m/"})
	agent, _ := Build(&Options{Mode: Agent, Dir: "/a/", AgentScope: locate.ScopeLocal, SkipIndex: true})
	sections := []string{"## Types of memory", "## What NOT to save in memory", "## How to save memories", "## When to access memories", "## Before recommending from memory", "## Memory and other forms of persistence"}
	for _, s := range sections {
		for name, p := range map[string]string{"individual": ind, "team": team, "agent": agent} {
			if !strings.Contains(p, s) {
				t.Errorf("%s prompt lacks %q", name, s)
			}
		}
	}
	if !strings.Contains(ind, "**Step 2**") || strings.Contains(skip, "**Step 2**") || strings.Contains(skip, "200th") {
		t.Error("skip-index should drop exactly the MEMORY.md step and its truncation note")
	}
	if !strings.Contains(agent, "**Step 2**") || !strings.Contains(agent, "## MEMORY.md") {
		t.Error("agent prompts always keep the index step and inline MEMORY.md")
	}
	if !strings.Contains(team, "<scope>Always private.</scope>") || !strings.Contains(team, "Never save secrets") || !strings.Contains(team, "`/m/team/`") {
		t.Error("team prompt lacks scopes, the secrets rule or the team directory")
	}
	if _, err := Build(&Options{Mode: "nope", Dir: "/m"}); err == nil {
		t.Error("unknown mode accepted")
	}
	if _, err := Build(&Options{Mode: Agent, Dir: "/m"}); err == nil {
		t.Error("agent mode without a scope accepted")
	}
}
