package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/memdir/memdir/memdirtest"
	"github.com/memdir/memdir/team"
)

// everything is the state of every file the commands could write: the
// home (settings, memory), the project and the state directory.
func (w *memWorld) everything(tb testing.TB) []string {
	tb.Helper()
	var all []string
	for _, d := range []string{w.home, w.project, w.state} {
		for _, s := range treeState(tb, d, true) {
			all = append(all, d+"/"+s)
		}
	}
	return all
}

// The first run on a fresh machine: 'memdir' alone names the directory,
// says that no agent is wired and how to wire Claude Code, writes
// nothing, and says Claude Code is wired once the hooks are installed.
func TestStatusOnAFreshHome(t *testing.T) {
	w := newMemWorld(t)
	memdirtest.Git(t, w.project, "init", "-q")
	before := w.everything(t)
	out, errOut, code := w.run(t)
	if code != 0 {
		t.Fatalf("memdir: exit %d\n%s%s", code, out, errOut)
	}
	for _, want := range []string{
		"Memory directory: " + w.memDir(t) + "/",
		"git repository " + w.project,
		"No agent is wired to this directory yet. To wire Claude Code:",
		"    memdir hooks install\n",
		"claude mcp add --transport stdio memdir -- memdir mcp",
		"Claude Code hooks  not wired: memdir hooks install",
		"Codex CLI hooks    not wired: memdir hooks install --agent codex",
		"Memories: none yet",
		"Model:       none",
		"Last sync:   never",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("memdir lacks %q:\n%s", want, out)
		}
	}
	if diff := cmp.Diff(before, w.everything(t)); diff != "" {
		t.Errorf("memdir wrote something (-before +after):\n%s", diff)
	}
	if status := w.ok(t, "status"); status != out {
		t.Errorf("memdir status differs from memdir:\n%s\nvs\n%s", status, out)
	}

	w.ok(t, "hooks", "install", "--binary", "memdir")
	out = w.ok(t)
	settings := filepath.Join(w.home, ".claude", "settings.json")
	if !strings.Contains(out, "Claude Code hooks  wired ("+settings+")") || strings.Contains(out, "No agent is wired") {
		t.Errorf("after hooks install, memdir does not say Claude Code is wired:\n%s", out)
	}
	if strings.Contains(out, "\n  memdir hooks install\n") {
		t.Errorf("after hooks install, memdir still suggests it:\n%s", out)
	}
}

// Status counts what is there and what doctor would say, and finds
// memdir's MCP server and the other agents' hooks.
func TestStatusCounts(t *testing.T) {
	w := newMemWorld(t)
	w.ok(t, "save", "--name", "a", "--type", "user", "--description", "first", "--body", "one")
	w.ok(t, "save", "--name", "b", "--type", "user", "--description", "second", "--body", "two")
	w.ok(t, "save", "--team", "--name", "c", "--type", "reference", "--description", "third", "--body", "three")
	ix := filepath.Join(w.memDir(t), "MEMORY.md")
	data, _ := os.ReadFile(ix)
	os.WriteFile(ix, append(data, "- [Gone](gone.md) — nothing\n"...), 0o600)
	os.WriteFile(filepath.Join(w.project, ".mcp.json"), []byte(`{"mcpServers": {"mem": {"command": "/usr/local/bin/memdir", "args": ["mcp", "--team"]}}}`), 0o600)
	w.ok(t, "hooks", "install", "--agent", "gemini", "--binary", "memdir")
	w.vars["MEMDIR_EMBED_MODEL"] = "openai:nomic-embed-text"

	before := w.everything(t)
	var st statusJSON
	if err := json.Unmarshal([]byte(w.ok(t, "status", "--json")), &st); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(before, w.everything(t)); diff != "" {
		t.Errorf("status wrote something (-before +after):\n%s", diff)
	}
	wired := map[string]bool{}
	for _, a := range st.Agents {
		wired[a.Agent+" "+a.Via] = a.Wired
	}
	got := map[string]any{
		"memories": st.Memories, "team": st.TeamMemories, "findings": st.Findings, "fixable": st.Fixable,
		"index lines": st.Index.Lines, "team index lines": st.TeamIndex.Lines, "wired": wired,
		"model": st.Model.Configured, "embedder": st.Embedder.Value, "team server": st.TeamServer.Configured,
		"next": st.Next,
	}
	want := map[string]any{
		"memories": 3, "team": 1, "findings": 1, "fixable": 1,
		"index lines": 3, "team index lines": 1,
		"wired": map[string]bool{"claude hooks": false, "claude mcp": true, "codex hooks": false, "gemini hooks": true},
		"model": false, "embedder": "openai:nomic-embed-text", "team server": false,
		"next": []string{"memdir doctor --fix"}, // Claude Code is wired through MCP
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("status --json (-want +got):\n%s", diff)
	}
	out := w.ok(t)
	for _, want := range []string{"Memories: 3, of which 1 in team/", "MEMORY.md: 3 of 200 lines", "Doctor: 1 problem (1 dangling-index-line): memdir doctor; memdir doctor --fix repairs 1", "Claude Code MCP    wired", "Gemini CLI hooks   wired", "Embedder:    openai:nomic-embed-text (from MEMDIR_EMBED_MODEL)"} {
		if !strings.Contains(out, want) {
			t.Errorf("memdir lacks %q:\n%s", want, out)
		}
	}
}

var snakeKey = regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)

// badJSONKeys walks a decoded JSON value and returns the path of every
// object key that is not snake_case.
func badJSONKeys(v any, at string) []string {
	var bad []string
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if !snakeKey.MatchString(k) {
				bad = append(bad, at+"."+k)
			}
			bad = append(bad, badJSONKeys(e, at+"."+k)...)
		}
	case []any:
		for _, e := range x {
			bad = append(bad, badJSONKeys(e, at+"[]")...)
		}
	}
	return bad
}

// Every key of status --json, at every depth, is snake_case: checked on
// a status with every list filled (memories, findings, agents wired and
// not, a model, a team server, a sync).
func TestStatusJSONKeysAreSnakeCase(t *testing.T) {
	w := newMemWorld(t)
	w.ok(t, "save", "--name", "a", "--type", "user", "--description", "first", "--body", "one")
	os.WriteFile(filepath.Join(w.memDir(t), "loose.md"), []byte("no frontmatter\n"), 0o644)
	w.ok(t, "hooks", "install", "--binary", "memdir")
	w.vars["MEMDIR_MODEL"] = "anthropic:claude-haiku-4-5"
	w.vars["MEMDIR_TEAM_URL"] = "https://memdir.example.com"
	lookup := func(k string) (string, bool) { v, ok := w.vars[k]; return v, ok }
	dir, err := team.SyncStateDir(filepath.Join(w.memDir(t), "team"), lookup)
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(dir, "acme", "app"), 0o700)
	os.WriteFile(filepath.Join(dir, "acme", "app", "state.json"), []byte(`{"format": 1, "repo": "acme/app", "bases": {"x.md": "sha256:00"}}`), 0o600)

	out := w.ok(t, "status", "--json")
	var v map[string]any
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("status --json: %v\n%s", err, out)
	}
	for _, list := range []string{"finding_kinds", "agents", "syncs", "next"} {
		if l, _ := v[list].([]any); len(l) == 0 {
			t.Errorf("status --json: %s is empty, so its keys go unchecked:\n%s", list, out)
		}
	}
	if bad := badJSONKeys(v, ""); len(bad) > 0 {
		t.Errorf("status --json has keys that are not snake_case: %v", bad)
	}
	if !strings.Contains(w.ok(t), "Last sync:   acme/app") {
		t.Errorf("memdir does not show the last sync")
	}
}
