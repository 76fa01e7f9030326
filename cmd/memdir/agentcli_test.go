package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/memdir/memdir/internal/cli"
)

// TestPathAgentCLI: every agent gets the directory Claude Code uses for
// the project, and --explain --agent-cli says how and where its hooks are.
func TestPathAgentCLI(t *testing.T) {
	w := newMemWorld(t)
	agentFiles(t, w, "codex")
	for _, agent := range []string{"claude", "codex", "gemini"} {
		if got, want := w.ok(t, "path", "--agent-cli", agent), w.memDir(t)+"/\n"; got != want {
			t.Errorf("path --agent-cli %s = %q, want %q", agent, got, want)
		}
	}
	out := w.ok(t, "path", "--explain", "--agent-cli", "codex")
	for _, want := range []string{
		"Codex CLI: gets this same directory through memdir's hooks: 'memdir hook --agent codex' locates it from each event's cwd",
		"hooks: none in " + w.vars["CODEX_HOME"] + "/hooks.json (memdir hooks install --agent codex adds them)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("path --explain --agent-cli codex lacks %q:\n%s", want, out)
		}
	}
	w.ok(t, "hooks", "install", "--agent", "gemini", "--binary", testBinary)
	if out := w.ok(t, "path", "--explain", "--agent-cli", "gemini"); !strings.Contains(out, "hooks: 5 memdir handlers in "+w.home+"/.gemini/settings.json") {
		t.Errorf("path --explain --agent-cli gemini:\n%s", out)
	}
	var js struct {
		Path     string `json:"path"`
		AgentCLI *struct {
			Name    string   `json:"name"`
			Explain []string `json:"explain"`
		} `json:"agent_cli"`
	}
	if err := json.Unmarshal([]byte(w.ok(t, "path", "--json", "--agent-cli", "gemini")), &js); err != nil {
		t.Fatal(err)
	}
	if js.AgentCLI == nil || js.AgentCLI.Name != "gemini" || len(js.AgentCLI.Explain) != 2 || !strings.Contains(js.AgentCLI.Explain[1], "5 memdir handlers") {
		t.Errorf("path --json --agent-cli gemini: %+v", js.AgentCLI)
	}
	if out := w.ok(t, "path", "--explain"); !strings.Contains(out, "Codex CLI and Gemini CLI get the same one through memdir's hooks") {
		t.Errorf("path --explain:\n%s", out)
	}
	if _, errOut, code := w.run(t, "path", "--agent-cli", "vim"); code != cli.ExitUsage || !strings.Contains(errOut, "want claude, codex or gemini") {
		t.Errorf("unknown agent: exit %d, %q", code, errOut)
	}
}
