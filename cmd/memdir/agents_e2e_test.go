package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/memdir/memdir/hooks"
	"github.com/memdir/memdir/llm"
	"github.com/memdir/memdir/memdirtest"
	"github.com/memdir/memdir/transcript"
)

// The end-to-end tests run the real Codex CLI and Gemini CLI (installed by
// .ci/agents-install; skipped when missing unless
// MEMDIR_TEST_REQUIRE_AGENTS=1) against memdirtest's fake model, with the
// hooks 'memdir hooks install --agent X' writes running a memdir binary
// built for the test. memdir's own model (the recall selector and the
// extraction agent) is a second fake server, speaking Anthropic's API.

// e2eMemory is the memory the prompt should recall.
const (
	e2ePrompt     = "How do we deploy the dispatch service to production?"
	e2eMemoryBody = "Never deploy the dispatch service by hand: run scripts/bluegreen.sh."
	e2eAnswer     = "Deploy it with scripts/bluegreen.sh, never by hand."
	// e2eExtracted is the memory the scripted extraction saves.
	e2eExtracted = "project_release_freeze.md"
)

// e2eBuilder builds memdir once into dir, for all the subtests.
func e2eBuilder(dir string) func() (string, error) {
	return sync.OnceValues(func() (string, error) {
		bin := filepath.Join(dir, "memdir")
		out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
		if err != nil {
			return "", fmt.Errorf("go build: %v\n%s", err, out)
		}
		return bin, nil
	})
}

// e2eModel is memdir's own fake model: it picks the deploy memory when
// asked to select memories, and, as the extraction agent, saves one
// memory with the memory tool on its first extraction and nothing on any
// later one. Every extraction request is kept, to check what it was
// shown.
type e2eModel struct {
	srv         *memdirtest.ModelServer
	extractions atomic.Int32
}

func newE2EModel(t *testing.T) *e2eModel {
	m := &e2eModel{srv: memdirtest.NewModelServer(t)}
	file := "---\nname: release freeze\ndescription: no dispatch deploys during the Friday release freeze\ntype: project\n---\nNo deploys of the dispatch service on Fridays.\n"
	create, _ := json.Marshal(map[string]string{"command": "create", "path": "/memories/" + e2eExtracted, "file_text": file})
	m.srv.Handle(func(r *memdirtest.ModelRequest) memdirtest.ModelReply {
		memoryTool := false
		for _, tl := range r.Tools {
			memoryTool = memoryTool || tl.Name == "memory"
		}
		if !memoryTool {
			return memdirtest.JSONReply(map[string]any{"selected_memories": []string{"feedback_deploy_policy.md"}})
		}
		last := r.Messages[len(r.Messages)-1]
		if len(last.Content) > 0 && last.Content[0].Type == llm.BlockToolResult {
			return memdirtest.TextReply("Saved the release freeze.")
		}
		if m.extractions.Add(1) > 1 {
			return memdirtest.TextReply("Nothing new to save.")
		}
		return memdirtest.ModelReply{Content: []llm.Block{{Type: llm.BlockToolUse, ToolUseID: "t1", ToolName: "memory", Input: create}}}
	})
	return m
}

// extractionRequests are the requests of the extraction agent.
func (m *e2eModel) extractionRequests() []*memdirtest.ModelRequest {
	var out []*memdirtest.ModelRequest
	for _, r := range m.srv.Requests() {
		for _, tl := range r.Tools {
			if tl.Name == "memory" {
				out = append(out, r)
				break
			}
		}
	}
	return out
}

// e2eWorld is memWorld with the agent program's home as HOME, memdir's
// model configured, and the project the program runs in.
func newE2EWorld(t *testing.T, home string, model *e2eModel) *memWorld {
	w := newMemWorld(t)
	w.home = home
	w.vars["HOME"] = home
	w.vars["MEMDIR_MODEL"] = "anthropic:claude-test"
	w.vars["ANTHROPIC_BASE_URL"] = model.srv.AnthropicBaseURL()
	w.vars["ANTHROPIC_API_KEY"] = "test-key"
	w.vars["MEMDIR_MAX_RETRIES"] = "0"
	w.ok(t, "save", "--name", "deploy-policy", "--type", "feedback", "--description", "dispatch deploys to production go through the blue/green script", "--body", e2eMemoryBody)
	return w
}

// agentEnv is what the hooks need from the environment of the program.
func (w *memWorld) agentEnv() []string {
	var env []string
	for _, k := range []string{"MEMDIR_STATE_DIR", "MEMDIR_MODEL", "ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY", "MEMDIR_MAX_RETRIES"} {
		env = append(env, k+"="+w.vars[k])
	}
	return env
}

// waitBackground waits for the memory the extraction saves, then for
// every background run the hooks started for the session to finish (each
// run's output in the log starts with a "== " line and ends with one of
// extract's or dream's closing lines), and returns the log.
func waitBackground(t *testing.T, w *memWorld, session string) string {
	t.Helper()
	logPath := filepath.Join(w.state, "hooks", "logs", session+".log")
	done := regexp.MustCompile(`(?m)^(Saved |No extraction:|memdir extract:|memdir dream:|Not consolidating|Improved )`)
	deadline := time.Now().Add(2 * time.Minute)
	for {
		b, _ := os.ReadFile(logPath)
		log := string(b)
		started := strings.Count("\n"+log, "\n== ")
		_, err := os.Stat(filepath.Join(w.memDir(t), e2eExtracted))
		if err == nil && started > 0 && len(done.FindAllString(log, -1)) >= started {
			return log
		}
		if time.Now().After(deadline) {
			t.Fatalf("the background runs did not finish (%d started, memory saved: %v); log %s:\n%s", started, err == nil, logPath, log)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// e2eCase is how one program is driven.
type e2eCase struct {
	agent string
	// setup makes the program's home; run runs the prompt in dir and
	// returns the session file it wrote.
	setup func(t *testing.T, srv *memdirtest.ModelServer) (home string, env func([]string), files []string)
	run   func(t *testing.T, dir string) string
	// edit is the model's call that creates notes.txt.
	edit memdirtest.ModelReply
}

func TestAgentCLIEndToEnd(t *testing.T) {
	build := e2eBuilder(t.TempDir())
	var cx *memdirtest.Codex
	var g *memdirtest.Gemini
	cases := []e2eCase{
		{
			agent: "codex",
			setup: func(t *testing.T, srv *memdirtest.ModelServer) (string, func([]string), []string) {
				cx = memdirtest.NewCodex(t, srv, "")
				return cx.Home, func(env []string) { cx.Env = append(env, "CODEX_HOME="+cx.CodexHome) },
					[]string{cx.HooksPath(), filepath.Join(cx.CodexHome, "config.toml")}
			},
			run: func(t *testing.T, dir string) string {
				cx.Exec(t, dir, e2ePrompt, "--sandbox", "workspace-write")
				s := cx.Sessions(t)
				if len(s) != 1 {
					t.Fatalf("session files %v", s)
				}
				return s[0]
			},
			edit: memdirtest.ToolCallReply("call_1", "apply_patch", `"*** Begin Patch\n*** Add File: notes.txt\n+deploy notes\n*** End Patch\n"`),
		},
		{
			agent: "gemini",
			setup: func(t *testing.T, srv *memdirtest.ModelServer) (string, func([]string), []string) {
				g = memdirtest.NewGemini(t, srv, "")
				return g.Home, func(env []string) { g.Env = env }, []string{g.SettingsPath()}
			},
			run: func(t *testing.T, dir string) string {
				g.Run(t, dir, e2ePrompt, "--approval-mode", "auto_edit")
				s := g.Chats(t)
				if len(s) != 1 {
					t.Fatalf("session files %v", s)
				}
				return s[0]
			},
			edit: memdirtest.ToolCallReply("", "write_file", `{"file_path":"notes.txt","content":"deploy notes\n"}`),
		},
	}
	for _, tt := range cases {
		t.Run(tt.agent, func(t *testing.T) {
			srv := memdirtest.NewModelServer(t)
			srv.Enqueue(tt.edit, memdirtest.TextReply(e2eAnswer))
			home, setEnv, files := tt.setup(t, srv) // skips when the program is missing
			bin, err := build()
			if err != nil {
				t.Fatal(err)
			}
			model := newE2EModel(t)
			w := newE2EWorld(t, home, model)
			if tt.agent == "codex" {
				w.vars["CODEX_HOME"] = cx.CodexHome
			}
			setEnv(w.agentEnv())
			before := snapshotFiles(files)
			w.ok(t, "hooks", "install", "--agent", tt.agent, "--binary", bin)

			sessionFile := tt.run(t, w.project)
			tr, err := transcript.ReadFile(sessionFile)
			if err != nil || tr.SessionID == "" {
				t.Fatalf("session file %s: %v (session %q)", sessionFile, err, tr.SessionID)
			}

			// Recall and the index reached the program's model.
			reqs := srv.Requests()
			if len(reqs) != 2 {
				t.Fatalf("the program's model got %d requests, want 2", len(reqs))
			}
			for _, want := range []string{e2eMemoryBody, "recalled by memdir from " + w.memDir(t), "Contents of " + filepath.Join(w.memDir(t), "MEMORY.md"), "[deploy-policy](feedback_deploy_policy.md)"} {
				if !reqs[0].Contains(want) {
					t.Errorf("the model's first request lacks %q:\n%s", want, reqs[0].Body)
				}
			}

			// The edit was checkpointed in the prompt's snapshot.
			var snaps []struct {
				Files map[string]any `json:"trackedFileBackups"`
			}
			if err := json.Unmarshal([]byte(w.ok(t, "checkpoint", "list", "--session", tr.SessionID, "--json")), &snaps); err != nil {
				t.Fatal(err)
			}
			if len(snaps) == 0 || snaps[len(snaps)-1].Files["notes.txt"] == nil {
				t.Errorf("notes.txt is not checkpointed: %+v", snaps)
			}

			// The end of the turn and of the session extracted a memory
			// from the program's own transcript.
			log := waitBackground(t, w, tr.SessionID)
			if !strings.Contains(log, "Saved 1 memory from") {
				t.Errorf("no extraction saved the memory; log:\n%s", log)
			}
			ex := model.extractionRequests()
			if len(ex) == 0 {
				t.Fatal("no extraction request")
			}
			for _, want := range []string{e2ePrompt, e2eAnswer} {
				if !ex[0].Contains(want) {
					t.Errorf("the extraction was not shown %q:\n%s", want, ex[0].Messages[0].Content[0].Text)
				}
			}
			for _, injected := range []string{"<hook_context>", "<environment_context>", "recalled by memdir"} {
				if ex[0].Contains(injected) {
					t.Errorf("the extraction was shown what the program injected (%s):\n%s", injected, ex[0].Messages[0].Content[0].Text)
				}
			}
			if data, err := os.ReadFile(filepath.Join(w.memDir(t), e2eExtracted)); err != nil || !strings.Contains(string(data), "No deploys of the dispatch service on Fridays.") {
				t.Errorf("extracted memory: %q, %v", data, err)
			}

			// Uninstall gives back the configuration as it was.
			w.ok(t, "hooks", "uninstall", "--agent", tt.agent)
			after := snapshotFiles(files)
			for i := range files {
				if after[i] != before[i] {
					t.Errorf("%s after install, a run and uninstall:\n%s\nwant\n%s", files[i], after[i], before[i])
				}
			}
			if tt.agent == "codex" {
				if es, _ := hooks.Installed([]byte(after[0])); len(es) != 0 {
					t.Errorf("memdir hooks left: %v", es)
				}
			}
		})
	}
}
