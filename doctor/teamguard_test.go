package doctor

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/memdir/memdir"
)

var fakeGitHubPAT = "ghp_" + strings.Repeat("a1B2", 9)

// Fix and IndexMissing write index lines from a memory's name and
// description; for a team file placed by hand with a secret there, the line
// is left out of team/MEMORY.md and Fix says why.
func TestFixKeepsSecretsOutOfTeamIndex(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := mustOpen(t)
	mustSave(t, d, &memdir.Memory{Name: "ok", Description: "fine", Type: memdir.TypeUser, Body: "clean"}, &memdir.SaveOptions{Team: true})
	leak := "---\nname: ci\ndescription: CI token " + fakeGitHubPAT + "\ntype: reference\n---\n\nsee the description\n"
	if err := os.WriteFile(d.Abs("team/reference_ci.md"), []byte(leak), 0o600); err != nil {
		t.Fatal(err)
	}
	index := readString(t, d.Abs("team/MEMORY.md"))
	if added, err := d.IndexMissing(nil, []string{"team/reference_ci.md"}); err != nil || len(added) != 0 {
		t.Errorf("IndexMissing = %v, %v; want nothing added", added, err)
	}
	res, err := Fix(ctx, d, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := readString(t, d.Abs("team/MEMORY.md")); got != index {
		t.Errorf("team/MEMORY.md = %q, want it unchanged", got)
	}
	said := strings.Join(res.Actions, "\n")
	if !strings.Contains(said, "team/reference_ci.md") || !strings.Contains(said, "GitHub PAT") || strings.Contains(said, fakeGitHubPAT[4:14]) {
		t.Errorf("Fix actions = %q", said)
	}
}
