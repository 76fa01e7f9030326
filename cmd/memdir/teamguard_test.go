package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memdir/memdir/internal/cli"
)

// The token is assembled at run time so that no token sits in the source.
var cliFakeToken = "ghp_" + strings.Repeat("a1B2", 9)

// dirFiles returns every regular file under dir with its content.
func dirFiles(tb testing.TB, dir string) map[string]string {
	tb.Helper()
	out := map[string]string{}
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() && fi.Name() != ".lock" {
			b, _ := os.ReadFile(p)
			out[p] = string(b)
		}
		return nil
	})
	return out
}

func TestSaveTeamRefusesSecret(t *testing.T) {
	w := newMemWorld(t)
	dir := w.memDir(t)
	w.ok(t, "save", "--team", "--name", "oncall", "--type", "reference", "--description", "pager rota", "--body", "PagerDuty")
	before := dirFiles(t, dir)
	for _, args := range [][]string{
		{"save", "--team", "--name", "ci", "--type", "reference", "--description", "CI token", "--body", "use " + cliFakeToken},
		{"save", "--team", "--json", "--name", "oncall", "--type", "reference", "--description", "pager rota", "--body", cliFakeToken},
		{"save", "--file", "team/ci.md", "--name", "ci", "--type", "reference", "--description", "CI", "--body", cliFakeToken},
	} {
		out, errOut, code := w.run(t, args...)
		if code != cli.ExitInvalid || !strings.Contains(errOut, "GitHub PAT") || !strings.Contains(errOut, "team/") || !strings.Contains(errOut, "team memory") {
			t.Errorf("memdir %s: exit %d, stdout %q, stderr %q; want exit 4 naming the rule and the file", args[0:3], code, out, errOut)
		}
		if strings.Contains(out+errOut, cliFakeToken[4:16]) {
			t.Errorf("the output repeats the secret: %q %q", out, errOut)
		}
	}
	if after := dirFiles(t, dir); len(after) != len(before) {
		t.Errorf("refused saves changed the files: %d before, %d after", len(before), len(after))
	} else {
		for p, c := range before {
			if after[p] != c {
				t.Errorf("%s changed", p)
			}
		}
	}
	// Private memory is the user's own: the same body is saved there.
	w.ok(t, "save", "--name", "ci", "--type", "reference", "--description", "CI token", "--body", "use "+cliFakeToken)
}

func TestMvIntoTeamRefusesSecret(t *testing.T) {
	w := newMemWorld(t)
	dir := w.memDir(t)
	w.ok(t, "save", "--name", "ci", "--type", "reference", "--description", "CI token", "--body", "use "+cliFakeToken)
	w.ok(t, "save", "--name", "grafana", "--type", "reference", "--description", "dashboards", "--body", "grafana.internal")
	out, errOut, code := w.run(t, "mv", "--json", "reference_ci", "team/reference_ci")
	if code != cli.ExitInvalid || !strings.Contains(errOut, "GitHub PAT") || !strings.Contains(errOut, "team/reference_ci.md") {
		t.Fatalf("mv into team/: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(dir, "reference_ci.md")); err != nil {
		t.Errorf("the refused mv moved the file: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "team")); !os.IsNotExist(err) {
		t.Errorf("the refused mv created team/: %v", err)
	}
	var res map[string]any
	if err := json.Unmarshal([]byte(w.ok(t, "mv", "--json", "reference_grafana", "team/reference_grafana")), &res); err != nil {
		t.Fatal(err)
	}
}
