package main

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/doctor"
	"github.com/memdir/memdir/internal/cli"
)

func backdate(tb testing.TB, p string, t time.Time) {
	tb.Helper()
	if err := os.Chtimes(p, t, t); err != nil {
		tb.Fatal(err)
	}
}

// TestUsageListAndDoctor: recalls are counted; list sorts and reports the
// counts; doctor suggests the long-unused memories, and only those, without
// failing or changing anything.
func TestUsageListAndDoctor(t *testing.T) {
	w := newMemWorld(t)
	t0 := w.now
	for _, m := range [][2]string{
		{"deploy", "how the dispatch service deploys to production"},
		{"oncall", "the pager rotation for weekend incidents"},
		{"grafana", "where the grafana dashboards live"},
		{"fresh", "a note about the billing export"},
	} {
		w.ok(t, "save", "--name", m[0], "--type", "project", "--description", m[1], "--body", m[1]+".")
	}
	dir := w.memDir(t)
	for _, n := range []string{"deploy", "oncall", "grafana", "fresh"} {
		backdate(t, filepath.Join(dir, "project_"+n+".md"), t0.AddDate(0, 0, -200))
	}
	// Counted: deploy twice at t0, oncall at t0 and t0+95 days.
	w.ok(t, "recall", "how does the dispatch service deploy to production")
	w.ok(t, "recall", "dispatch service deploys to production and the pager rotation")
	w.now = t0.AddDate(0, 0, 95)
	w.ok(t, "recall", "who holds the pager rotation for weekend incidents")
	w.now = t0.AddDate(0, 0, 100)
	backdate(t, filepath.Join(dir, "project_fresh.md"), w.now.AddDate(0, 0, -10))

	var list struct {
		Memories []struct {
			Path     string    `json:"path"`
			Uses     int       `json:"uses"`
			LastUsed time.Time `json:"last_used"`
		} `json:"memories"`
		Since time.Time `json:"uses_since"`
	}
	if err := json.Unmarshal([]byte(w.ok(t, "list", "--json", "--sort", "used")), &list); err != nil {
		t.Fatal(err)
	}
	uses := map[string]int{}
	var order []string
	for _, m := range list.Memories {
		uses[m.Path] = m.Uses
		order = append(order, m.Path)
	}
	if want := map[string]int{"project_deploy.md": 2, "project_oncall.md": 2, "project_grafana.md": 0, "project_fresh.md": 0}; !maps.Equal(uses, want) {
		t.Fatalf("uses %v, want %v", uses, want)
	}
	if got := list.Memories[1].LastUsed; order[1] != "project_deploy.md" || !got.Equal(t0) {
		t.Errorf("--sort used: %v, deploy last used %v; want oncall (used later) first, deploy at %v", order, got, t0)
	}
	if !list.Since.Equal(t0) {
		t.Errorf("uses_since = %v, want %v", list.Since, t0)
	}
	for i := 1; i < len(list.Memories); i++ {
		if list.Memories[i].Uses > list.Memories[i-1].Uses {
			t.Errorf("--sort used: %v not most used first", order)
		}
	}
	out := w.ok(t, "list", "--sort", "unused")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if !strings.Contains(lines[0], "USES") || !strings.Contains(lines[1], " 0 ") || !strings.Contains(lines[1], "never") {
		t.Errorf("--sort unused table:\n%s", out)
	}
	if last := lines[len(lines)-1]; !strings.Contains(last, "project_oncall.md") {
		t.Errorf("--sort unused: the most used memory is not last:\n%s", out)
	}
	if _, errOut, code := w.run(t, "list", "--sort", "popular"); code != cli.ExitUsage || !strings.Contains(errOut, "--sort") {
		t.Errorf("bad --sort: exit %d, %s", code, errOut)
	}

	mtimes := map[string]time.Time{}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		fi, _ := e.Info()
		mtimes[e.Name()] = fi.ModTime()
	}
	var doc struct {
		Findings    []doctor.Finding `json:"findings"`
		Suggestions []doctor.Finding `json:"suggestions"`
	}
	if err := json.Unmarshal([]byte(w.ok(t, "doctor", "--json")), &doc); err != nil {
		t.Fatal(err)
	}
	var flagged []string
	for _, f := range doc.Suggestions {
		if f.Kind != doctor.FindUnused {
			t.Errorf("suggestion kind %q", f.Kind)
		}
		flagged = append(flagged, f.Path)
	}
	slices.Sort(flagged)
	// deploy: last surfaced 100 days ago; grafana: never; oncall: 5 days
	// ago; fresh: never, but changed 10 days ago.
	if want := []string{"project_deploy.md", "project_grafana.md"}; !slices.Equal(flagged, want) {
		t.Errorf("doctor suggests %v, want %v", flagged, want)
	}
	// A threshold longer than counting has run flags nothing; 0 turns it off.
	for _, n := range []string{"150", "0"} {
		if err := json.Unmarshal([]byte(w.ok(t, "doctor", "--json", "--unused-days", n)), &doc); err != nil || len(doc.Suggestions) != 0 {
			t.Errorf("--unused-days %s: %v %v", n, doc.Suggestions, err)
		}
	}
	if out := w.ok(t, "doctor"); !strings.Contains(out, "suggestion: unused") || !strings.Contains(out, "project_grafana.md: never surfaced in the 100 days") {
		t.Errorf("doctor output:\n%s", out)
	}
	if _, errOut, code := w.run(t, "doctor", "--unused-days", "-1"); code != cli.ExitUsage || !strings.Contains(errOut, "--unused-days") {
		t.Errorf("bad --unused-days: exit %d, %s", code, errOut)
	}
	entries, _ = os.ReadDir(dir)
	if len(entries) != len(mtimes) {
		t.Errorf("doctor changed the directory: %d entries, had %d", len(entries), len(mtimes))
	}
	for _, e := range entries {
		if fi, _ := e.Info(); !fi.ModTime().Equal(mtimes[e.Name()]) {
			t.Errorf("%s changed", e.Name())
		}
	}
}

// TestHookCountsOnlyInjectedMemories: the UserPromptSubmit hook counts each
// memory it injects, and not those it recalled but left out to stay within
// the context limit.
func TestHookCountsOnlyInjectedMemories(t *testing.T) {
	w := newHookWorld(t)
	saveNotes(t, w, 24, 3800)
	injected := map[string]int{}
	for i := range 30 {
		ctx := hookContext(w.hookOK(t, w.input(t, "user_prompt_submit", map[string]any{"prompt_id": "p" + string(rune('a'+i))})))
		if ctx == "" {
			break
		}
		for _, p := range strings.Split(ctx, "Memory (saved today): ")[1:] {
			path, _, _ := strings.Cut(p, ":\n")
			injected[filepath.Base(path)]++
		}
	}
	if len(injected) == 0 {
		t.Fatal("nothing injected")
	}
	d, err := memdir.Open(w.memDir(t), &memdir.Options{LookupEnv: func(k string) (string, bool) { v, ok := w.vars[k]; return v, ok }})
	if err != nil {
		t.Fatal(err)
	}
	st, err := d.Uses().Stats(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	for rel, u := range st.Memories {
		got[rel] = u.Uses
	}
	if !maps.Equal(got, injected) {
		t.Errorf("counted %v, injected %v", got, injected)
	}
}
