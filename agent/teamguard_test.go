package agent_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/memdir/memdir/agent"
	"github.com/memdir/memdir/llm"
	"github.com/memdir/memdir/memdirtest"
)

// The key is assembled at run time so that no key sits in the source.
var agentFakeAWSKey = "AKIA" + strings.Repeat("Q7ZX", 4)

// lastToolResult returns the text of the last tool result the model got.
func lastToolResult(tb testing.TB, srv *memdirtest.ModelServer) string {
	tb.Helper()
	req := srv.LastRequest()
	for i := len(req.Messages) - 1; i >= 0; i-- {
		for _, b := range req.Messages[i].Content {
			if b.Type == llm.BlockToolResult {
				return b.Text
			}
		}
	}
	tb.Fatal("the model was sent no tool result")
	return ""
}

// Extraction writes through the memory tool, so a memory bound for team/
// that holds a key is refused: the model is told which rule and file, and
// nothing reaches team/.
func TestExtractRefusesSecretsInTeam(t *testing.T) {
	ctx := context.Background()
	w := newExtractWorld(t)
	e, err := agent.NewExtractor(&agent.ExtractOptions{
		Model: clients[0].new(t, w.srv), Dir: w.dir, StateDir: w.state, SessionID: "s1",
		Every: 1, Team: true, Now: func() time.Time { return w.now },
	})
	if err != nil {
		t.Fatal(err)
	}
	leak := "---\nname: bucket\ndescription: the deploy bucket\ntype: reference\n---\n\nKey " + agentFakeAWSKey + "\n"
	w.srv.Enqueue(
		reply(llm.Usage{InputTokens: 100}, use("t1", "memory", mustJSON(map[string]string{"command": "create", "path": "/memories/team/leak.md", "file_text": leak}))),
		memdirtest.TextReply("Could not save it."),
	)
	res, err := e.Extract(ctx, agent.Source{Messages: conv("the bucket key is in my notes", "noted")})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Saved) != 0 || res.Team != 0 {
		t.Errorf("result = %+v, want nothing saved", res)
	}
	if _, err := os.Stat(w.dir.Abs("team/leak.md")); !os.IsNotExist(err) {
		t.Errorf("team/leak.md was written: %v", err)
	}
	got := lastToolResult(t, w.srv)
	if !strings.Contains(got, "AWS Access Token") || !strings.Contains(got, "/memories/team/leak.md") || strings.Contains(got, agentFakeAWSKey[4:]) {
		t.Errorf("the model was told %q", got)
	}
}

// Consolidation moving a private memory that holds a key into team/ is
// refused the same way.
func TestDreamRefusesSecretsIntoTeam(t *testing.T) {
	ctx := context.Background()
	w := newDreamWorld(t)
	private := "---\nname: bucket\ndescription: the deploy bucket\ntype: reference\n---\n\nKey " + agentFakeAWSKey + "\n"
	os.WriteFile(w.dir.Abs("reference_bucket.md"), []byte(private), 0o600)
	w.srv.Enqueue(
		reply(llm.Usage{InputTokens: 500}, use("t1", "memory", `{"command":"rename","old_path":"/memories/reference_bucket.md","new_path":"/memories/team/reference_bucket.md"}`)),
		memdirtest.TextReply("Left it private."),
	)
	o := w.opts(t)
	o.Force = true
	if _, err := agent.Dream(ctx, o); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(w.dir.Abs("reference_bucket.md")); string(got) != private {
		t.Errorf("the private memory changed: %q", got)
	}
	if _, err := os.Stat(w.dir.Abs("team/reference_bucket.md")); !os.IsNotExist(err) {
		t.Errorf("the memory reached team/: %v", err)
	}
	if got := lastToolResult(t, w.srv); !strings.Contains(got, "AWS Access Token") || !strings.Contains(got, "cannot be written to team memory") {
		t.Errorf("the model was told %q", got)
	}
}
