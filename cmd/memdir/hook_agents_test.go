package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/memdir/memdir/internal/cli"
)

// The session ids of the recorded Codex and Gemini inputs in
// testdata/hooks (codex_*.json, gemini_*.json).
const (
	codexSession  = "01a23462-37b8-7150-8109-0132c768c250"
	codexTurn     = "01a23462-37d4-7112-826a-d2611e95f791"
	geminiSession = "3f0eca61-e891-4f34-8432-8350afa57646"
)

// TestHookAgentRecordedInputs feeds the recorded Codex and Gemini inputs
// through Main with --agent: exit 0, output or not, and the background
// runs started.
func TestHookAgentRecordedInputs(t *testing.T) {
	extract := func(session string) []string {
		return []string{"extract", "--transcript", "{{TRANSCRIPT}}", "--session", session, "--project", "{{CWD}}"}
	}
	tests := []struct {
		agent, input string
		model, dream bool
		wantSpawn    [][]string
	}{
		{agent: "codex", input: "codex_session_start"},
		{agent: "codex", input: "codex_user_prompt_submit"},
		{agent: "codex", input: "codex_pre_tool_use"},
		{agent: "codex", input: "codex_pre_tool_use_bash"},
		{agent: "codex", input: "codex_post_tool_use", model: true},
		{agent: "codex", input: "codex_stop"},
		{agent: "codex", input: "codex_stop", model: true, wantSpawn: [][]string{extract(codexSession)}},
		{agent: "codex", input: "codex_session_end", model: true, wantSpawn: [][]string{extract(codexSession)}},
		{agent: "codex", input: "codex_session_end", model: true, dream: true, wantSpawn: [][]string{extract(codexSession), {"dream", "--session", codexSession, "--project", "{{CWD}}"}}},
		{agent: "gemini", input: "gemini_session_start"},
		{agent: "gemini", input: "gemini_before_agent"},
		{agent: "gemini", input: "gemini_before_tool"},
		{agent: "gemini", input: "gemini_before_model", model: true},
		{agent: "gemini", input: "gemini_after_agent", model: true, wantSpawn: [][]string{extract(geminiSession)}},
		{agent: "gemini", input: "gemini_session_end"},
		{agent: "gemini", input: "gemini_session_end", model: true, wantSpawn: [][]string{extract(geminiSession)}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s/model=%t/dream=%t", tt.input, tt.model, tt.dream), func(t *testing.T) {
			w := newHookWorld(t)
			if tt.model {
				w.useFakeModel(t) // never called: the background runs are not started
			}
			if tt.dream {
				writeFile(t, filepath.Join(w.home, ".claude", "settings.json"), `{"autoDreamEnabled": true}`)
			}
			out, errOut, code := w.hook(t, w.input(t, tt.input, nil), "--agent", tt.agent)
			if code != 0 || out != "" {
				t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
			}
			var want []spawnCall
			session := codexSession
			if tt.agent == "gemini" {
				session = geminiSession
			}
			for _, args := range tt.wantSpawn {
				var a []string
				for _, s := range args {
					a = append(a, strings.NewReplacer("{{CWD}}", w.project, "{{TRANSCRIPT}}", w.transcript).Replace(s))
				}
				want = append(want, spawnCall{Args: a, Log: filepath.Join(w.state, "hooks", "logs", session+".log")})
			}
			if diff := cmp.Diff(want, w.spawns.take()); diff != "" {
				t.Errorf("background runs (-want +got):\n%s\nstderr: %s", diff, errOut)
			}
		})
	}
}

// TestHookAgentRecall: the same recall and injection text as Claude
// Code's hook, and the same index at session start, answered with the
// program's event name.
func TestHookAgentRecall(t *testing.T) {
	for _, tt := range []struct {
		agent, start, prompt, event string
	}{
		{"codex", "codex_session_start", "codex_user_prompt_submit", "UserPromptSubmit"},
		{"gemini", "gemini_session_start", "gemini_before_agent", "BeforeAgent"},
	} {
		t.Run(tt.agent, func(t *testing.T) {
			w := newHookWorld(t)
			w.ok(t, "save", "--name", "deploy-policy", "--type", "feedback", "--description", "dispatch deploys to production go through the blue/green script", "--body", "Never deploy by hand.")
			w.ok(t, "save", "--name", "grafana", "--type", "reference", "--description", "where the dashboards are", "--body", "Grafana at grafana.internal")

			o := w.hookOK(t, w.input(t, tt.start, nil), "--agent", tt.agent, "--inject-index")
			if o == nil || o.HookSpecificOutput == nil || o.HookSpecificOutput.HookEventName != "SessionStart" || !strings.Contains(hookContext(o), "feedback_deploy_policy.md") {
				t.Fatalf("session start output %+v, want the index", o)
			}
			o = w.hookOK(t, w.input(t, tt.prompt, nil), "--agent", tt.agent)
			if o == nil || o.HookSpecificOutput == nil || o.HookSpecificOutput.HookEventName != tt.event {
				t.Fatalf("output %+v, want hookSpecificOutput for %s", o, tt.event)
			}
			ctx := hookContext(o)
			policy := filepath.Join(w.memDir(t), "feedback_deploy_policy.md")
			for _, want := range []string{"recalled by memdir from " + w.memDir(t), "Memory (saved today): " + policy + ":", "Never deploy by hand."} {
				if !strings.Contains(ctx, want) {
					t.Errorf("context lacks %q:\n%s", want, ctx)
				}
			}
			if strings.Contains(ctx, "grafana") {
				t.Errorf("context holds the unrelated memory:\n%s", ctx)
			}
			// Once per session, as for Claude Code.
			if o := w.hookOK(t, w.input(t, tt.prompt, nil), "--agent", tt.agent); o != nil {
				t.Errorf("second prompt injected %q", hookContext(o))
			}
		})
	}
}

// TestHookAgentCheckpoints: Codex's apply_patch and Gemini's write_file
// back up the files they name, in the snapshot the prompt started, named
// after Codex's turn id and Gemini's prompt timestamp.
func TestHookAgentCheckpoints(t *testing.T) {
	for _, tt := range []struct {
		agent, session, prompt, tool, snapshot string
		tracked                                []string
	}{
		{"codex", codexSession, "codex_user_prompt_submit", "codex_pre_tool_use", codexTurn, []string{"notes.txt", "src/retry.go"}},
		{"gemini", geminiSession, "gemini_before_agent", "gemini_before_tool", "gemini-2026-12-02T01:32:54.992Z", []string{"src/retry.go"}},
	} {
		t.Run(tt.agent, func(t *testing.T) {
			w := newHookWorld(t)
			w.hookOK(t, w.input(t, tt.prompt, nil), "--agent", tt.agent)
			w.hookOK(t, w.input(t, tt.tool, nil), "--agent", tt.agent)
			writeFile(t, w.file, "retries = 5\n")
			var snaps []struct {
				MessageID string         `json:"messageId"`
				Files     map[string]any `json:"trackedFileBackups"`
			}
			if err := json.Unmarshal([]byte(w.ok(t, "checkpoint", "list", "--session", tt.session, "--json")), &snaps); err != nil {
				t.Fatal(err)
			}
			if len(snaps) != 1 || snaps[0].MessageID != tt.snapshot {
				t.Fatalf("snapshots %+v, want one named %s", snaps, tt.snapshot)
			}
			for _, p := range tt.tracked {
				if _, ok := snaps[0].Files[p]; !ok {
					t.Errorf("%s not tracked: %v", p, snaps[0].Files)
				}
			}
			w.ok(t, "checkpoint", "rewind", "--session", tt.session, "--message", tt.snapshot)
			if data, _ := os.ReadFile(w.file); string(data) != "retries = 3\n" {
				t.Errorf("after rewind the file holds %q", data)
			}
		})
	}
}

// TestHookAgentBadInput: malformed input from Codex or Gemini exits 1
// with a message naming the field, never 2.
func TestHookAgentBadInput(t *testing.T) {
	w := newHookWorld(t)
	tests := []struct {
		agent, input, want string
	}{
		{"codex", "", "the JSON object Codex CLI writes"},
		{"gemini", `{"hook_event_name":"BeforeAgent",`, "not valid JSON"},
		{"gemini", `{"hook_event_name":"UserPromptSubmit","session_id":"s","cwd":"/"}`, "which is not a Gemini CLI hook event"},
		{"codex", w.input(t, "codex_user_prompt_submit", map[string]any{"prompt": 7}), "field prompt is a JSON number, want a string"},
		{"codex", w.input(t, "codex_pre_tool_use", map[string]any{"tool_input": map[string]any{"patch": "x"}}), "field tool_input.command of the apply_patch call is missing"},
		{"codex", w.input(t, "codex_pre_tool_use", map[string]any{"turn_id": nil}), "field turn_id is missing, so src/retry.go, notes.txt cannot be checkpointed"},
		{"gemini", w.input(t, "gemini_before_tool", map[string]any{"tool_input": map[string]any{"content": "x"}}), "field tool_input.file_path of the write_file call is missing"},
		{"gemini", w.input(t, "gemini_after_agent", map[string]any{"transcript_path": "chats/s.jsonl"}), `field transcript_path is "chats/s.jsonl", not an absolute path`},
		{"gemini", w.input(t, "gemini_session_start", map[string]any{"session_id": "a/b"}), `field session_id is "a/b"`},
		{"cursor", w.input(t, "codex_stop", nil), "want claude, codex or gemini"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			out, errOut, code := w.hook(t, tt.input, "--agent", tt.agent)
			if code != cli.ExitFailure || out != "" || !strings.Contains(errOut, tt.want) {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit 1 and %q", code, out, errOut, tt.want)
			}
		})
	}
}
