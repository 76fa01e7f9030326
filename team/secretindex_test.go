package team_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/memdir/memdir/memdirtest"
)

// A file push skips for a secret takes its MEMORY.md line with it: the
// server's index never points at a file it does not have. The local index
// keeps the line.
func TestPushDropsIndexLinesOfSecretFiles(t *testing.T) {
	e := newHTTPEnv(t, nil)
	index := "# Team memory\n\n- [Deploy](deploy.md) — how we ship\n- [CI token](leak.md) — the token CI uses\n* [Nested](./ops/key.md) - ops key\n- [Ops](ops/runbook.md) — on call\n"
	memdirtest.WriteFiles(t, e.dir, map[string]string{
		"MEMORY.md":      index,
		"deploy.md":      "Ship on Fridays.",
		"leak.md":        "token " + fakeGitHubPAT(),
		"ops/key.md":     "key " + fakeGitHubPAT(),
		"ops/runbook.md": "Page the on-call.",
	})
	c := e.client(t, e.dir, false)
	if _, err := c.Push(context.Background()); err != nil {
		t.Fatal(err)
	}
	server := e.server(t)
	want := "# Team memory\n\n- [Deploy](deploy.md) — how we ship\n- [Ops](ops/runbook.md) — on call\n"
	if diff := cmp.Diff(want, server["MEMORY.md"]); diff != "" {
		t.Errorf("server MEMORY.md (-want +got):\n%s", diff)
	}
	if _, ok := server["leak.md"]; ok {
		t.Error("the secret file reached the server")
	}
	if got := readTree(t, e.dir)["MEMORY.md"]; got != index {
		t.Errorf("the local MEMORY.md changed: %q", got)
	}
	// The filtered index is what push compares with: a second push has
	// nothing to send.
	if res, err := c.Push(context.Background()); err != nil || res.Requests != 0 {
		t.Errorf("second push = %+v, %v; want no request", res, err)
	}
}
