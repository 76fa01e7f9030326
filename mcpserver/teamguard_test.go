package mcpserver_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/memdir/memdir/mcpserver"
)

// Credential-shaped strings are assembled at run time so that no complete
// token sits in the source.
var (
	mcpFakeAWSKey = "AKIA" + strings.Repeat("Q7ZX", 4)
	mcpFakePAT    = "ghp_" + strings.Repeat("a1B2", 9)
)

// The save tool with team: true and the memory tool writing under
// /memories/team/ both refuse a credential with isError, naming the rule
// and the file, never the secret, and change nothing.
func TestTeamWritesRefuseSecrets(t *testing.T) {
	f := newFixture(t, &mcpserver.Options{Team: true})
	cs := f.connect(t)
	callOK(t, cs, "save", map[string]any{"name": "oncall", "description": "pager rota", "type": "reference", "body": "PagerDuty", "team": true}, nil)
	callOK(t, cs, "memory", map[string]any{"command": "create", "path": "/memories/draft.md", "file_text": "key " + mcpFakeAWSKey}, nil)
	before := snapshot(t, f.dir.Path())

	tests := []struct {
		name, tool string
		args       map[string]any
		label      string
		file       string
	}{
		{"save", "save", map[string]any{"name": "ci", "description": "CI token", "type": "reference", "body": "use " + mcpFakePAT, "team": true},
			"GitHub PAT", "team/reference_ci.md"},
		{"memory create", "memory", map[string]any{"command": "create", "path": "/memories/team/leak.md", "file_text": "AWS key " + mcpFakeAWSKey},
			"AWS Access Token", "/memories/team/leak.md"},
		{"memory str_replace", "memory", map[string]any{"command": "str_replace", "path": "/memories/team/reference_oncall.md", "old_str": "PagerDuty", "new_str": mcpFakePAT},
			"GitHub PAT", "/memories/team/reference_oncall.md"},
		{"memory insert", "memory", map[string]any{"command": "insert", "path": "/memories/team/reference_oncall.md", "insert_line": 0, "insert_text": mcpFakePAT},
			"GitHub PAT", "/memories/team/reference_oncall.md"},
		{"memory rename", "memory", map[string]any{"command": "rename", "old_path": "/memories/draft.md", "new_path": "/memories/team/draft.md"},
			"AWS Access Token", "/memories/team/draft.md"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			msg := callErr(t, cs, tt.tool, tt.args)
			if !strings.Contains(msg, tt.label) || !strings.Contains(msg, tt.file) || !strings.Contains(msg, "team memory") {
				t.Errorf("error %q does not name %s and %s", msg, tt.label, tt.file)
			}
			if strings.Contains(msg, mcpFakeAWSKey[4:14]) || strings.Contains(msg, mcpFakePAT[4:14]) {
				t.Errorf("error %q repeats the secret", msg)
			}
			if diff := cmp.Diff(before, snapshot(t, f.dir.Path())); diff != "" {
				t.Errorf("the refused call changed files (-before +after):\n%s", diff)
			}
		})
	}
}
