package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/memdir/memdir/internal/cli"
	"github.com/memdir/memdir/memdirtest"
)

// fakeEditor writes a shell script that plays the editor: it records its
// arguments and the file as it found it in seen/, then runs body with the
// file's path as $f. It returns the script's path.
func fakeEditor(tb testing.TB, body string) (script, seen string) {
	tb.Helper()
	if runtime.GOOS == "windows" {
		tb.Skip("the fake editor is a shell script")
	}
	dir := tb.TempDir()
	seen = filepath.Join(dir, "seen")
	script = filepath.Join(dir, "editor.sh")
	src := "#!/bin/sh\nfor f; do :; done\nprintf '%s\\n' \"$@\" > '" + seen + ".args'\ncp \"$f\" '" + seen + "' 2>/dev/null\n" + body + "\n"
	if err := os.WriteFile(script, []byte(src), 0o700); err != nil {
		tb.Fatal(err)
	}
	return script, seen
}

// writeWith is an editor body replacing the file with content.
func writeWith(content string) string {
	return "cat > \"$f\" <<'MEMDIR_EOF'\n" + content + "MEMDIR_EOF"
}

func TestEditCreatesFromTemplate(t *testing.T) {
	w := newMemWorld(t)
	dir := w.memDir(t)
	script, seen := fakeEditor(t, writeWith("---\nname: deploys go through Argo\ndescription: never kubectl apply to prod; Argo syncs from main\ntype: feedback\n---\n\nDeploy through Argo.\n\n**Why:** a manual apply drifted prod.\n"))
	w.vars["VISUAL"] = script
	w.vars["EDITOR"] = "/nonexistent/editor"
	out := w.ok(t, "edit", "--type", "feedback", "deploys go through Argo")
	file := filepath.Join(dir, "feedback_deploys_go_through_argo.md")
	if !strings.Contains(out, "Created "+file+" and its MEMORY.md line.") || !strings.Contains(out, "Undo with: memdir undo ") {
		t.Errorf("edit printed %q", out)
	}
	wantTemplate := "---\nname: deploys go through Argo\n# One line saying what this memory is about; recall reads it to decide relevance.\ndescription: \n# user, feedback, project or reference\ntype: feedback\n---\n\n\n\n**Why:** \n**How to apply:** \n"
	if diff := cmp.Diff(wantTemplate, memdirtest.ReadFile(t, seen)); diff != "" {
		t.Errorf("the editor was given (-want +got):\n%s", diff)
	}
	if got := memdirtest.ReadFile(t, seen+".args"); got != file+"\n" {
		t.Errorf("editor arguments = %q", got)
	}
	if fi, _ := os.Stat(file); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", fi.Mode().Perm())
	}
	if got := memdirtest.ReadFile(t, filepath.Join(dir, "MEMORY.md")); got != "- [deploys go through Argo](feedback_deploys_go_through_argo.md) — never kubectl apply to prod; Argo syncs from main\n" {
		t.Errorf("MEMORY.md = %q", got)
	}
	w.ok(t, "undo")
	if _, err := os.Stat(file); !os.IsNotExist(err) {
		t.Errorf("undo left the new memory: %v", err)
	}
	if got := memdirtest.ReadFile(t, filepath.Join(dir, "MEMORY.md")); got != "" {
		t.Errorf("undo left the index line: %q", got)
	}
}

func TestEditExistingKeepsIndexInStep(t *testing.T) {
	w := newMemWorld(t)
	dir := w.memDir(t)
	w.ok(t, "save", "--name", "grafana", "--type", "reference", "--description", "where the dashboards are", "--body", "grafana.internal")
	w.ok(t, "save", "--name", "oncall", "--type", "reference", "--description", "pager rota", "--body", "PagerDuty")
	before := memdirtest.ReadFile(t, filepath.Join(dir, "reference_grafana.md"))
	edited := "---\nname: Grafana\ndescription: dispatch latency dashboards\ntype: reference\nowner: sre # kept as written\n---\n\ngrafana.internal/d/dispatch\n"
	script, seen := fakeEditor(t, writeWith(edited))
	w.vars["EDITOR"] = script + " --wait" // arguments in EDITOR, as with "code --wait"
	out := w.ok(t, "edit", "grafana")
	if !strings.Contains(out, "Saved "+filepath.Join(dir, "reference_grafana.md")+" and its MEMORY.md line.") {
		t.Errorf("edit printed %q", out)
	}
	if got := memdirtest.ReadFile(t, seen); got != before {
		t.Errorf("the editor saw %q, want the file %q", got, before)
	}
	if got := memdirtest.ReadFile(t, seen+".args"); got != "--wait\n"+filepath.Join(dir, "reference_grafana.md")+"\n" {
		t.Errorf("editor arguments = %q", got)
	}
	if got := memdirtest.ReadFile(t, filepath.Join(dir, "reference_grafana.md")); got != edited {
		t.Errorf("the file was rewritten: %q", got)
	}
	wantIndex := "- [Grafana](reference_grafana.md) — dispatch latency dashboards\n- [oncall](reference_oncall.md) — pager rota\n"
	if diff := cmp.Diff(wantIndex, memdirtest.ReadFile(t, filepath.Join(dir, "MEMORY.md"))); diff != "" {
		t.Errorf("MEMORY.md (-want +got):\n%s", diff)
	}
	w.ok(t, "undo")
	if got := memdirtest.ReadFile(t, filepath.Join(dir, "reference_grafana.md")); got != before {
		t.Errorf("undo: %q", got)
	}
	if got := memdirtest.ReadFile(t, filepath.Join(dir, "MEMORY.md")); !strings.Contains(got, "- [grafana](reference_grafana.md) — where the dashboards are") {
		t.Errorf("undo did not restore the index line: %q", got)
	}
}

func TestEditReportsProblems(t *testing.T) {
	w := newMemWorld(t)
	dir := w.memDir(t)
	w.ok(t, "save", "--name", "style", "--type", "user", "--description", "tabs", "--body", "Tabs.")
	index := memdirtest.ReadFile(t, filepath.Join(dir, "MEMORY.md"))
	broken := "---\ndescription: \ntype: idea\n---\nTabs, and gofmt.\n"
	script, _ := fakeEditor(t, writeWith(broken))
	w.vars["VISUAL"] = script
	out, errOut, code := w.run(t, "edit", "style")
	if code != cli.ExitInvalid {
		t.Fatalf("exit %d, want %d\n%s\n%s", code, cli.ExitInvalid, out, errOut)
	}
	for _, want := range []string{
		"problem: user_style.md: name is empty",
		"problem: user_style.md: description is empty",
		`warning: user_style.md: type "idea" is not user, feedback, project or reference`,
		"has 2 problems, so its MEMORY.md line was not written; the file is kept as you wrote it: run 'memdir edit user_style.md' again",
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	if got := memdirtest.ReadFile(t, filepath.Join(dir, "user_style.md")); got != broken {
		t.Errorf("the file is not as written: %q", got)
	}
	if got := memdirtest.ReadFile(t, filepath.Join(dir, "MEMORY.md")); got != index {
		t.Errorf("the index changed: %q", got)
	}
	// The edit is journaled even so.
	if !strings.Contains(out, "Undo with: memdir undo ") {
		t.Errorf("stdout = %q", out)
	}

	script, _ = fakeEditor(t, writeWith("no frontmatter at all\n"))
	w.vars["VISUAL"] = script
	if _, errOut, code := w.run(t, "edit", "user_style.md"); code != cli.ExitInvalid || !strings.Contains(errOut, "no frontmatter") {
		t.Errorf("no frontmatter: exit %d, %q", code, errOut)
	}
	script, _ = fakeEditor(t, writeWith("---\nname: a\ndescription: [unclosed\n---\nbody\n"))
	w.vars["VISUAL"] = script
	if _, errOut, code := w.run(t, "edit", "user_style.md"); code != cli.ExitInvalid || !strings.Contains(errOut, "not valid YAML") {
		t.Errorf("broken YAML: exit %d, %q", code, errOut)
	}
	// The command the error names opens the broken file, not a template.
	fixed := "---\nname: style\ndescription: tabs\ntype: user\n---\nTabs.\n"
	script, _ = fakeEditor(t, writeWith(fixed))
	w.vars["VISUAL"] = script
	w.ok(t, "edit", "user_style.md")
	if got := memdirtest.ReadFile(t, filepath.Join(dir, "user_style.md")); got != fixed {
		t.Errorf("after the named command the file is %q", got)
	}
}

func TestEditTemplateEditorFailureAndRemoval(t *testing.T) {
	w := newMemWorld(t)
	dir := w.memDir(t)

	// Quitting without writing leaves no memory and no journal run.
	script, _ := fakeEditor(t, "exit 0")
	w.vars["VISUAL"] = script
	out := w.ok(t, "edit", "scratch")
	if !strings.Contains(out, "Nothing saved") {
		t.Errorf("printed %q", out)
	}
	if _, err := os.Stat(filepath.Join(dir, "scratch.md")); !os.IsNotExist(err) {
		t.Errorf("the unfilled template stayed: %v", err)
	}
	if _, errOut, _ := w.run(t, "log"); !strings.Contains(errOut, "is empty") {
		t.Errorf("an unfilled template left a journal run: %q", errOut)
	}

	// An editor that fails is reported, and the template goes.
	script, _ = fakeEditor(t, "exit 3")
	w.vars["VISUAL"] = script
	if _, errOut, code := w.run(t, "edit", "--team", "oncall"); code != cli.ExitFailure || !strings.Contains(errOut, "the editor ("+script+") failed") {
		t.Errorf("failing editor: exit %d, %q", code, errOut)
	}
	if _, err := os.Stat(filepath.Join(dir, "team", "oncall.md")); !os.IsNotExist(err) {
		t.Errorf("the template of a failed edit stayed: %v", err)
	}

	// A team memory holding a token is refused (exit 4): nothing reaches
	// team/, and the edited text is kept outside it, at the path named.
	token := "ghp_" + strings.Repeat("a1B2", 9)
	leaky := "---\nname: oncall\ndescription: pager rota\ntype: reference\n---\n\nToken " + token + "\n"
	script, _ = fakeEditor(t, writeWith(leaky))
	w.vars["VISUAL"] = script
	out, errOut, code := w.run(t, "edit", "--team", "--json", "oncall")
	if code != cli.ExitInvalid || !strings.Contains(errOut, "GitHub PAT") || !strings.Contains(errOut, "team/oncall.md") || strings.Contains(errOut, token[4:20]) {
		t.Fatalf("edit of a team memory holding a token: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(dir, "team", "oncall.md")); !os.IsNotExist(err) {
		t.Errorf("the refused team memory was written: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "team", "MEMORY.md")); !os.IsNotExist(err) {
		t.Errorf("the refused team memory got an index: %v", err)
	}
	kept := errOut[strings.LastIndex(errOut, " in ")+4:]
	kept = strings.TrimSpace(kept)
	if got := memdirtest.ReadFile(t, kept); got != leaky {
		t.Errorf("the edited text kept at %s = %q, want what the editor wrote", kept, got)
	}
	os.RemoveAll(filepath.Dir(kept))

	// Clean, it is saved into team/ (and edited as a copy outside it).
	script, seen := fakeEditor(t, writeWith(strings.Replace(leaky, token, "in the vault", 1)))
	w.vars["VISUAL"] = script
	var res editResult
	out, errOut, code = w.run(t, "edit", "--team", "--json", "oncall")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	if res.Path != "team/oncall.md" || !res.Created || !res.Index || len(res.Warnings) != 0 {
		t.Errorf("result = %+v", res)
	}
	if args := memdirtest.ReadFile(t, seen+".args"); strings.HasPrefix(args, filepath.Join(dir, "team")) {
		t.Errorf("the editor was given the team file itself: %s", args)
	}
	if got := memdirtest.ReadFile(t, filepath.Join(dir, "team", "MEMORY.md")); got != "- [oncall](oncall.md) — pager rota\n" {
		t.Errorf("team/MEMORY.md = %q", got)
	}

	// Editing the existing team memory to add a token is refused too, and
	// leaves the file as it was.
	saved := memdirtest.ReadFile(t, filepath.Join(dir, "team", "oncall.md"))
	script, _ = fakeEditor(t, writeWith(leaky))
	w.vars["VISUAL"] = script
	if _, errOut, code := w.run(t, "edit", "team/oncall.md"); code != cli.ExitInvalid || !strings.Contains(errOut, "GitHub PAT") {
		t.Errorf("edit adding a token: exit %d, %q", code, errOut)
	} else {
		os.RemoveAll(filepath.Dir(strings.TrimSpace(errOut[strings.LastIndex(errOut, " in ")+4:])))
	}
	if got := memdirtest.ReadFile(t, filepath.Join(dir, "team", "oncall.md")); got != saved {
		t.Errorf("the refused edit changed the team memory to %q", got)
	}

	// An editor that deletes the file takes the index line with it.
	script, _ = fakeEditor(t, `rm "$f"`)
	w.vars["VISUAL"] = script
	if out := w.ok(t, "edit", "team/oncall.md"); !strings.Contains(out, "The editor removed") || !strings.Contains(out, "MEMORY.md line is gone too") {
		t.Errorf("printed %q", out)
	}
	if got := memdirtest.ReadFile(t, filepath.Join(dir, "team", "MEMORY.md")); got != "" {
		t.Errorf("team/MEMORY.md = %q", got)
	}
	w.ok(t, "undo")
	if _, err := os.Stat(filepath.Join(dir, "team", "oncall.md")); err != nil {
		t.Errorf("undo did not bring the memory back: %v", err)
	}

	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"edit"}, cli.ExitUsage, "one memory name"},
		{[]string{"edit", "--type", "idea", "x"}, cli.ExitUsage, `--type "idea"`},
		{[]string{"edit", "../escape.md"}, cli.ExitInvalid, "climbs out"},
		{[]string{"edit", "MEMORY.md"}, cli.ExitInvalid, "is the index"},
	} {
		_, errOut, code := w.run(t, tc.args...)
		if code != tc.code || !strings.Contains(errOut, tc.want) {
			t.Errorf("memdir %s: exit %d, %q; want %d and %q", strings.Join(tc.args, " "), code, errOut, tc.code, tc.want)
		}
	}
}

// TestEditOutcomes covers the outcomes the other edit tests leave out: a
// file left as it was, a private memory the editor deletes or turns into
// something unreadable, a new private memory whose editor fails (the
// template goes unless it was written to), a new team memory left as the
// template, and a team memory someone else creates during the edit.
func TestEditOutcomes(t *testing.T) {
	w := newMemWorld(t)
	dir := w.memDir(t)
	w.ok(t, "save", "--name", "grafana", "--type", "reference", "--description", "where the dashboards are", "--body", "grafana.internal")
	w.ok(t, "save", "--name", "oncall", "--type", "reference", "--description", "pager rota", "--body", "PagerDuty")
	index := filepath.Join(dir, "MEMORY.md")
	if err := os.WriteFile(index, []byte("- [grafana](reference_grafana.md) — stale hook\n- [oncall](reference_oncall.md) — pager rota\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	edit := func(body string, args ...string) (string, string, int) {
		t.Helper()
		script, _ := fakeEditor(t, body)
		w.vars["VISUAL"] = script
		return w.run(t, append([]string{"edit"}, args...)...)
	}

	// Unchanged, but its index line is brought in step with the file.
	out, errOut, code := edit("exit 0", "grafana")
	if code != 0 || !strings.Contains(out, filepath.Join(dir, "reference_grafana.md")+" is unchanged; its MEMORY.md line was brought in step.") {
		t.Errorf("unchanged: exit %d\n%s\n%s", code, out, errOut)
	}
	if got := memdirtest.ReadFile(t, index); !strings.HasPrefix(got, "- [grafana](reference_grafana.md) — where the dashboards are\n") {
		t.Errorf("MEMORY.md = %q", got)
	}
	out, _, _ = edit("exit 0", "grafana")
	if !strings.HasSuffix(strings.SplitN(out, "\n", 2)[0], " is unchanged.") {
		t.Errorf("unchanged, index in step: %q", out)
	}

	// A private memory the editor deletes goes from the index too.
	out, errOut, code = edit(`rm "$f"`, "oncall")
	if code != 0 || !strings.Contains(out, "The editor removed "+filepath.Join(dir, "reference_oncall.md")+"; its MEMORY.md line is gone too.") {
		t.Errorf("removed: exit %d\n%s\n%s", code, out, errOut)
	}
	if got := memdirtest.ReadFile(t, index); strings.Contains(got, "oncall") {
		t.Errorf("MEMORY.md = %q", got)
	}

	// A file the editor turns into a directory cannot be read back.
	_, errOut, code = edit(`rm "$f"; mkdir "$f"`, "grafana")
	if code != cli.ExitFailure || !strings.Contains(errOut, "read "+filepath.Join(dir, "reference_grafana.md")+" after editing: ") {
		t.Errorf("unreadable after editing: exit %d, %q", code, errOut)
	}
	os.Remove(filepath.Join(dir, "reference_grafana.md"))

	// A failing editor on a new private memory: the template goes, unless
	// the editor wrote to it first.
	if _, errOut, code := edit("exit 3", "scratch"); code != cli.ExitFailure || !strings.Contains(errOut, "failed on "+filepath.Join(dir, "scratch.md")) {
		t.Errorf("failing editor: exit %d, %q", code, errOut)
	}
	if _, err := os.Stat(filepath.Join(dir, "scratch.md")); !os.IsNotExist(err) {
		t.Errorf("the template of a failed edit stayed: %v", err)
	}
	if _, _, code := edit(`echo half-written >> "$f"; exit 3`, "scratch"); code != cli.ExitFailure {
		t.Errorf("failing editor after writing: exit %d", code)
	}
	if got := memdirtest.ReadFile(t, filepath.Join(dir, "scratch.md")); !strings.HasSuffix(got, "half-written\n") {
		t.Errorf("what a failing editor wrote is gone: %q", got)
	}

	// A new team memory left as the template is not created.
	out, errOut, code = edit("exit 0", "--team", "runbooks")
	if code != 0 || !strings.Contains(out, "Nothing saved: "+filepath.Join(dir, "team", "runbooks.md")+" was left as the template") {
		t.Errorf("team template: exit %d\n%s\n%s", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(dir, "team", "runbooks.md")); !os.IsNotExist(err) {
		t.Errorf("an unfilled team template was created: %v", err)
	}

	// A new team memory someone else creates meanwhile is not overwritten;
	// the edited text is kept aside.
	theirs := "---\nname: runbooks\ndescription: theirs\ntype: reference\n---\n\nTheirs.\n"
	body := writeWith("---\nname: runbooks\ndescription: mine\ntype: reference\n---\n\nMine.\n") +
		"\nmkdir -p '" + filepath.Join(dir, "team") + "'\nprintf '%s' '" + theirs + "' > '" + filepath.Join(dir, "team", "runbooks.md") + "'"
	_, errOut, code = edit(body, "--team", "runbooks")
	if code != cli.ExitExists || !strings.Contains(errOut, "was created by someone else while you edited") || !strings.Contains(errOut, "your edited text is kept in ") {
		t.Fatalf("team memory created meanwhile: exit %d, %q", code, errOut)
	}
	kept := strings.TrimSpace(errOut[strings.LastIndex(errOut, " kept in ")+len(" kept in "):])
	if got := memdirtest.ReadFile(t, kept); !strings.Contains(got, "Mine.") {
		t.Errorf("the edited text kept at %s = %q", kept, got)
	}
	os.RemoveAll(filepath.Dir(kept))
	if got := memdirtest.ReadFile(t, filepath.Join(dir, "team", "runbooks.md")); got != theirs {
		t.Errorf("their team memory became %q", got)
	}
}
