package memdir

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Credential-shaped strings are assembled at run time so that no complete
// token sits in the source.
var (
	fakeAWSKey    = "AKIA" + strings.Repeat("Q7ZX", 4)
	fakeGitHubPAT = "ghp_" + strings.Repeat("a1B2", 9)
)

// tree returns every regular file under dir with its content.
func tree(tb testing.TB, dir string) map[string]string {
	tb.Helper()
	out := map[string]string{}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() && d.Name() != ".lock" {
			b, _ := os.ReadFile(p)
			rel, _ := filepath.Rel(dir, p)
			out[filepath.ToSlash(rel)] = string(b)
		}
		return nil
	})
	return out
}

// checkSecretError checks that err refuses a team write of file for label,
// and that its text holds no part of the secret.
func checkSecretError(tb testing.TB, err error, file, label, secret string) {
	tb.Helper()
	var se *SecretError
	if !errors.As(err, &se) || !errors.Is(err, ErrSecret) || !errors.Is(err, ErrInvalid) {
		tb.Fatalf("error = %v (%T), want a *SecretError matching ErrSecret and ErrInvalid", err, err)
	}
	msg := err.Error()
	if !strings.Contains(msg, file) || !strings.Contains(msg, label) {
		tb.Errorf("message %q does not name %s and %s", msg, file, label)
	}
	for i := 0; i+8 <= len(secret); i++ {
		if strings.Contains(msg, secret[i:i+8]) {
			tb.Fatalf("message %q repeats part of the secret", msg)
		}
	}
}

func TestSaveTeamRefusesSecrets(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tests := []struct {
		name   string
		m      Memory
		opts   *SaveOptions
		file   string
		label  string
		secret string
	}{
		{"team body", Memory{Name: "deploy", Description: "how we deploy", Type: TypeProject, Body: "token " + fakeGitHubPAT},
			&SaveOptions{Team: true}, "team/project_deploy.md", "GitHub PAT", fakeGitHubPAT},
		{"team path", Memory{Name: "bucket", Description: "the bucket", Type: TypeReference, Body: "key " + fakeAWSKey, Path: "team/ops/bucket.md"},
			nil, "team/ops/bucket.md", "AWS Access Token", fakeAWSKey},
		{"secret in description", Memory{Name: "ci", Description: "CI uses " + fakeGitHubPAT, Type: TypeReference, Body: "clean"},
			&SaveOptions{Team: true}, "team/reference_ci.md", "GitHub PAT", fakeGitHubPAT},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := mustOpen(t)
			mustSave(t, d, &Memory{Name: "other", Description: "another team memory", Type: TypeUser, Body: "hi"}, &SaveOptions{Team: true})
			before := tree(t, d.Path())
			runs, _ := d.Journal().Runs()
			m := tt.m
			_, err := d.Save(ctx, &m, tt.opts)
			checkSecretError(t, err, tt.file, tt.label, tt.secret)
			if diff := cmp.Diff(before, tree(t, d.Path())); diff != "" {
				t.Errorf("the refused save changed files (-before +after):\n%s", diff)
			}
			if after, _ := d.Journal().Runs(); len(after) != len(runs) {
				t.Errorf("the refused save journaled a run: %d runs before, %d after", len(runs), len(after))
			}
		})
	}

	// The same memory outside team/ is the user's own business.
	d := mustOpen(t)
	mustSave(t, d, &Memory{Name: "deploy", Description: "how we deploy", Type: TypeProject, Body: "token " + fakeGitHubPAT}, nil)
}

func TestRenameIntoTeamRefusesSecrets(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := mustOpen(t)
	mustSave(t, d, &Memory{Name: "bucket", Description: "the bucket", Type: TypeReference, Body: "key " + fakeAWSKey}, nil)
	mustSave(t, d, &Memory{Name: "hooked", Description: "says " + fakeGitHubPAT, Type: TypeReference, Body: "clean body"}, nil)
	// The index line alone can carry a secret: its hook was edited by hand.
	ix := readString(t, d.Abs("MEMORY.md"))
	mustSave(t, d, &Memory{Name: "plain", Description: "plain", Type: TypeUser, Body: "clean"}, nil)
	if err := os.WriteFile(d.Abs("MEMORY.md"), []byte(ix+"- [plain](user_plain.md) — see "+fakeAWSKey+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	before := tree(t, d.Path())
	for _, tt := range []struct{ from, to, file, label, secret string }{
		{"reference_bucket.md", "team/bucket", "team/bucket.md", "AWS Access Token", fakeAWSKey},
		{"reference_hooked.md", "team/hooked.md", "team/hooked.md", "GitHub PAT", fakeGitHubPAT},
		{"user_plain.md", "team/plain.md", "team/plain.md", "AWS Access Token", fakeAWSKey},
	} {
		_, err := d.Rename(ctx, tt.from, tt.to, nil)
		checkSecretError(t, err, tt.file, tt.label, tt.secret)
	}
	if diff := cmp.Diff(before, tree(t, d.Path())); diff != "" {
		t.Errorf("the refused renames changed files (-before +after):\n%s", diff)
	}
}

// A team file that holds a secret (written by hand, or before the guard
// existed) and was then removed is not brought back into team/ by undo.
func TestUndoRefusesSecretsIntoTeam(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := mustOpen(t)
	mustSave(t, d, &Memory{Name: "notes", Description: "notes", Type: TypeProject, Body: "clean"}, &SaveOptions{Team: true})
	file := d.Abs("team/project_notes.md")
	if err := os.WriteFile(file, []byte(readString(t, file)+"key "+fakeAWSKey+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	res, err := d.Remove(ctx, "team/project_notes.md", nil)
	if err != nil {
		t.Fatal(err)
	}
	before := tree(t, d.Path())
	_, err = d.Undo(ctx, res.RunID, nil)
	checkSecretError(t, err, "team/project_notes.md", "AWS Access Token", fakeAWSKey)
	if diff := cmp.Diff(before, tree(t, d.Path())); diff != "" {
		t.Errorf("the refused undo changed files (-before +after):\n%s", diff)
	}
}

func TestIsTeamPath(t *testing.T) {
	t.Parallel()
	for p, want := range map[string]bool{"team": true, "team/a.md": true, "team/x/y.md": true,
		"teamwork.md": false, "a/team/b.md": false, "MEMORY.md": false} {
		if got := IsTeamPath(p); got != want {
			t.Errorf("IsTeamPath(%q) = %v, want %v", p, got, want)
		}
	}
}

// IndexMissing writes index lines from a memory's name and description; for
// a team file placed by hand with a secret there, the line is left out of
// team/MEMORY.md (package doctor's Fix says why).
func TestIndexMissingKeepsSecretsOutOfTeamIndex(t *testing.T) {
	t.Parallel()
	d := mustOpen(t)
	mustSave(t, d, &Memory{Name: "ok", Description: "fine", Type: TypeUser, Body: "clean"}, &SaveOptions{Team: true})
	leak := "---\nname: ci\ndescription: CI token " + fakeGitHubPAT + "\ntype: reference\n---\n\nsee the description\n"
	if err := os.WriteFile(d.Abs("team/reference_ci.md"), []byte(leak), 0o600); err != nil {
		t.Fatal(err)
	}
	index := readString(t, d.Abs("team/MEMORY.md"))
	if added, err := d.IndexMissing(nil, []string{"team/reference_ci.md"}); err != nil || len(added) != 0 {
		t.Errorf("IndexMissing = %v, %v; want nothing added", added, err)
	}
	if got := readString(t, d.Abs("team/MEMORY.md")); got != index {
		t.Errorf("team/MEMORY.md = %q, want it unchanged", got)
	}
}
