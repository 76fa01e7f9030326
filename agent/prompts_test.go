package agent_test

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/memdir/memdir/agent"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata")

func golden(tb testing.TB, name, got string) {
	tb.Helper()
	p := filepath.Join("testdata", "prompts", name)
	if *update {
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(got), 0o644); err != nil {
			tb.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(p)
	if err != nil {
		tb.Fatalf("%v (run with -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		tb.Errorf("%s differs (-want +got); run with -update if intended:\n%s", p, diff)
	}
}

func TestPromptsGolden(t *testing.T) {
	today := time.Date(2026, 3, 5, 10, 0, 0, 0, time.UTC)
	golden(t, "extract.golden", agent.ExtractionInstructions(&agent.ExtractPromptOptions{NewMessages: 12, MaxTurns: 5, Today: today}))
	golden(t, "extract-team-skipindex.golden", agent.ExtractionInstructions(&agent.ExtractPromptOptions{NewMessages: 3, MaxTurns: 5, Team: true, SkipIndex: true, Today: today}))
	golden(t, "dream-auto.golden", agent.DreamPrompt(&agent.DreamPromptOptions{
		MemoryDir: "/home/u/.claude/projects/-src-app/memory/", TranscriptDir: "/home/u/.claude/projects/-src-app",
		Sessions: []string{"0b1c…-a", "0b1c…-b"}, Today: today,
	}))
	golden(t, "dream-manual.golden", agent.DreamPrompt(&agent.DreamPromptOptions{MemoryDir: "/m/", Today: today}))
}
