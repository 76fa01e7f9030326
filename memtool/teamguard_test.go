package memtool

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/memdir/memdir"
)

// Credential-shaped strings are assembled at run time so that no complete
// token sits in the source.
var (
	fakeAWSKey    = "AKIA" + strings.Repeat("Q7ZX", 4)
	fakeGitHubPAT = "ghp_" + strings.Repeat("a1B2", 9)
)

// TestTeamSecretGuard checks that every write command refuses a credential
// bound for team/, names the rule and the file but not the secret, writes
// nothing, and leaves the private area alone.
func TestTeamSecretGuard(t *testing.T) {
	t.Parallel()
	leak := "# Deploy\n\nUse " + fakeAWSKey + " for the bucket.\n"
	tests := []struct {
		name  string
		files map[string]string
		input func(tb testing.TB) string
		label string
		file  string
	}{
		{"create", nil, func(tb testing.TB) string {
			return cmdJSON(tb, "command", "create", "path", "/memories/team/leak.md", "file_text", leak)
		}, "AWS Access Token", "/memories/team/leak.md"},
		{"create nested", nil, func(tb testing.TB) string {
			return cmdJSON(tb, "command", "create", "path", "/memories/team/ops/leak.md", "file_text", "token "+fakeGitHubPAT)
		}, "GitHub PAT", "/memories/team/ops/leak.md"},
		{"str_replace", map[string]string{"team/notes.md": "deploy with KEY\n"}, func(tb testing.TB) string {
			return cmdJSON(tb, "command", "str_replace", "path", "/memories/team/notes.md", "old_str", "KEY", "new_str", fakeAWSKey)
		}, "AWS Access Token", "/memories/team/notes.md"},
		{"insert", map[string]string{"team/notes.md": "line one\n"}, func(tb testing.TB) string {
			return cmdJSON(tb, "command", "insert", "path", "/memories/team/notes.md", "insert_line", 1, "insert_text", "export T="+fakeGitHubPAT)
		}, "GitHub PAT", "/memories/team/notes.md"},
		{"rename file into team", map[string]string{"private.md": leak}, func(tb testing.TB) string {
			return cmdJSON(tb, "command", "rename", "old_path", "/memories/private.md", "new_path", "/memories/team/private.md")
		}, "AWS Access Token", "/memories/team/private.md"},
		{"rename directory into team", map[string]string{"drafts/a.md": "clean\n", "drafts/deep/b.md": leak}, func(tb testing.TB) string {
			return cmdJSON(tb, "command", "rename", "old_path", "/memories/drafts", "new_path", "/memories/team/drafts")
		}, "AWS Access Token", "/memories/team/drafts/deep/b.md"},
		{"rename directory to team", map[string]string{"drafts/b.md": leak}, func(tb testing.TB) string {
			return cmdJSON(tb, "command", "rename", "old_path", "/memories/drafts", "new_path", "/memories/team")
		}, "AWS Access Token", "/memories/team/b.md"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tool, root := mustTool(t, nil)
			mustWrite(t, root, tt.files)
			before := snapshot(t, root)
			input := tt.input(t)
			_, err := tool.Execute(context.Background(), []byte(input))
			if err == nil {
				t.Fatalf("%s: succeeded, want a secret refusal", input)
			}
			var se *memdir.SecretError
			if !errors.As(err, &se) || !errors.Is(err, memdir.ErrSecret) || !errors.Is(err, memdir.ErrInvalid) {
				t.Fatalf("error %v (%T) is not a *memdir.SecretError matching ErrSecret and ErrInvalid", err, err)
			}
			msg := err.Error()
			for _, want := range []string{tt.label, tt.file, "team memory", "nothing was written"} {
				if !strings.Contains(msg, want) {
					t.Errorf("message %q does not contain %q", msg, want)
				}
			}
			for _, secret := range []string{fakeAWSKey, fakeGitHubPAT} {
				if strings.Contains(msg, secret[4:14]) {
					t.Errorf("message %q repeats part of the secret", msg)
				}
			}
			if diff := cmp.Diff(before, snapshot(t, root)); diff != "" {
				t.Errorf("the refused command changed the directory (-before +after):\n%s", diff)
			}
		})
	}
}

// Outside team/ the guard stays out of the way, and clean content and moves
// into team/ go through.
func TestTeamSecretGuardAllows(t *testing.T) {
	t.Parallel()
	tool, root := mustTool(t, nil)
	mustWrite(t, root, map[string]string{"drafts/ok.md": "clean\n", "within/x.md": "also clean\n"})
	mustRun(t, tool, cmdJSON(t, "command", "create", "path", "/memories/private.md", "file_text", "key "+fakeAWSKey))
	mustRun(t, tool, cmdJSON(t, "command", "create", "path", "/memories/teamwork.md", "file_text", "key "+fakeAWSKey))
	mustRun(t, tool, cmdJSON(t, "command", "create", "path", "/memories/team/ok.md", "file_text", "no secrets here\n"))
	mustRun(t, tool, cmdJSON(t, "command", "rename", "old_path", "/memories/drafts", "new_path", "/memories/team/drafts"))
	// A file already in team/ may move within it (it was checked on the way in).
	mustRun(t, tool, cmdJSON(t, "command", "rename", "old_path", "/memories/team/ok.md", "new_path", "/memories/team/sub/ok.md"))
	got := snapshot(t, root)
	for _, p := range []string{"private.md", "teamwork.md", "team/drafts/ok.md", "team/sub/ok.md"} {
		if _, ok := got[p]; !ok {
			t.Errorf("%s missing after the allowed commands", p)
		}
	}
}

// TeamDir "." makes every file of the root team memory.
func TestTeamSecretGuardWholeRoot(t *testing.T) {
	t.Parallel()
	tool, root := mustTool(t, &Options{TeamDir: "."})
	out, isErr := run(t, tool, cmdJSON(t, "command", "create", "path", "/memories/leak.md", "file_text", fakeGitHubPAT))
	if !isErr || !strings.Contains(out, "GitHub PAT") {
		t.Fatalf("create with TeamDir \".\" = %q (error %v), want a refusal naming GitHub PAT", out, isErr)
	}
	if got := snapshot(t, root); len(got) != 1 {
		t.Errorf("the refused create left files: %v", got)
	}
}
