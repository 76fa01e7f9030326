package memdir

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
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
	loaded, _ := LoadIndexText([]byte("- [Reviewer style](feedback_style.md) — prefers small diffs\n"))
	for _, tc := range []struct {
		name string
		opts PromptOptions
	}{
		{"individual", PromptOptions{Mode: PromptIndividual, Dir: "/home/u/.claude/projects/-src-app/memory/"}},
		{"individual-skip-index", PromptOptions{Mode: PromptIndividual, Dir: "/m/", SkipIndex: true, ExtraGuidelines: []string{"Save memories in English.", "  "}}},
		{"individual-search", PromptOptions{Mode: PromptIndividual, Dir: "/m", SearchDir: "/home/u/.claude/projects/-src-app"}},
		{"team", PromptOptions{Mode: PromptTeam, Dir: "/home/u/.claude/projects/-src-app/memory/"}},
		{"team-skip-index", PromptOptions{Mode: PromptTeam, Dir: "/m/", SkipIndex: true}},
		{"daily-log", PromptOptions{Mode: PromptDailyLog, Dir: "/m/"}},
		{"daily-log-skip-index", PromptOptions{Mode: PromptDailyLog, Dir: "/m/", SkipIndex: true}},
		{"agent-project", PromptOptions{Mode: PromptAgent, Dir: "/src/app/.claude/agent-memory/reviewer/", AgentScope: ScopeProject, Index: loaded, IndexExists: true}},
		{"agent-user-empty", PromptOptions{Mode: PromptAgent, Dir: "/home/u/.claude/agent-memory/reviewer/", AgentScope: ScopeUser}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := BuildPrompt(&tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			golden(t, filepath.Join("prompt", tc.name+".golden"), got)
		})
	}
}

func TestBuildPromptRules(t *testing.T) {
	ind, _ := BuildPrompt(&PromptOptions{Dir: "/m/"})
	skip, _ := BuildPrompt(&PromptOptions{Dir: "/m/", SkipIndex: true})
	team, _ := BuildPrompt(&PromptOptions{Mode: PromptTeam, Dir: "/m/"})
	agent, _ := BuildPrompt(&PromptOptions{Mode: PromptAgent, Dir: "/a/", AgentScope: ScopeLocal, SkipIndex: true})
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
	if _, err := BuildPrompt(&PromptOptions{Mode: "nope", Dir: "/m"}); err == nil {
		t.Error("unknown mode accepted")
	}
	if _, err := BuildPrompt(&PromptOptions{Mode: PromptAgent, Dir: "/m"}); err == nil {
		t.Error("agent mode without a scope accepted")
	}
}
