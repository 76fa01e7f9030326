package agent_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/agent"
	"github.com/memdir/memdir/memdirtest"
	"github.com/memdir/memdir/usage"
)

// TestDreamGetsUsage: the dream prompt lists each memory's uses, least used
// first, and tells the model not to delete for disuse alone.
func TestDreamGetsUsage(t *testing.T) {
	ctx := context.Background()
	w := newDreamWorld(t)
	for _, n := range []string{"alpha", "beta", "gamma"} {
		res, err := w.dir.Save(ctx, &memdir.Memory{Name: n, Description: n + " note", Type: memdir.TypeProject, Body: n}, nil)
		if err != nil {
			t.Fatal(err)
		}
		old := w.now.AddDate(0, -6, 0)
		os.Chtimes(w.dir.Abs(res.Path), old, old)
	}
	// The clock of the directory stamps the uses.
	for _, rels := range [][]string{{"project_alpha.md", "project_gamma.md"}, {"project_alpha.md"}} {
		if err := w.dir.Uses().Record(ctx, usage.Hook, rels...); err != nil {
			t.Fatal(err)
		}
	}
	w.srv.Enqueue(memdirtest.TextReply("Nothing needed changing."))
	o := w.opts(t)
	o.Force = true
	if _, err := agent.Dream(ctx, o); err != nil {
		t.Fatal(err)
	}
	sys := w.srv.LastRequest().System
	_, table, ok := strings.Cut(sys, "## How often each memory is used")
	if !ok {
		t.Fatalf("no usage section in the dream prompt:\n%s", sys)
	}
	if !strings.Contains(table, "Never delete a memory only because it is unused") {
		t.Errorf("the usage section does not forbid deleting for disuse:\n%s", table)
	}
	beta := strings.Index(table, "- project_beta.md: 0 uses, never surfaced")
	gamma := strings.Index(table, "- project_gamma.md: 1 uses, last surfaced ")
	alpha := strings.Index(table, "- project_alpha.md: 2 uses, last surfaced ")
	if beta < 0 || gamma < beta || alpha < gamma {
		t.Errorf("usage lines missing or not least used first:\n%s", table)
	}
}

func TestDreamPromptWithoutUsage(t *testing.T) {
	p := agent.DreamPrompt(&agent.DreamPromptOptions{MemoryDir: "/m", Today: time.Now()})
	if strings.Contains(p, "How often each memory is used") {
		t.Error("a usage section without figures")
	}
}
