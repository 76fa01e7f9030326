package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/memdir/memdir/hooks"
	"github.com/memdir/memdir/internal/benchcorpus"
	"github.com/memdir/memdir/internal/cli"
	"github.com/memdir/memdir/internal/evalset"
	"github.com/memdir/memdir/llm"
	"github.com/memdir/memdir/locate"
	"github.com/memdir/memdir/memdirtest"
	"github.com/memdir/memdir/prompt"
	"github.com/memdir/memdir/recall"
)

// hookSession is the session id of the recorded inputs in testdata/hooks.
const hookSession = "7d1c2a3e-5b6f-4a80-9c1d-2e3f4a5b6c7d"

// spawnCall is one background run a hook asked for.
type spawnCall struct {
	Args []string
	Log  string
}

// spawnRecorder stands in for Env.Spawn: it records what would have been
// started, and starts nothing.
type spawnRecorder struct {
	mu    sync.Mutex
	calls []spawnCall
	err   error
}

func (r *spawnRecorder) spawn(args []string, logPath string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, spawnCall{Args: append([]string(nil), args...), Log: logPath})
	return r.err
}

func (r *spawnRecorder) take() []spawnCall {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.calls
	r.calls = nil
	return c
}

// hookWorld is the memory commands' sandbox plus what hooks need: a
// transcript, a file to edit, and a recording spawner.
type hookWorld struct {
	*memWorld
	spawns     *spawnRecorder
	transcript string
	file       string
}

func newHookWorld(tb testing.TB) *hookWorld {
	tb.Helper()
	w := &hookWorld{memWorld: newMemWorld(tb), spawns: &spawnRecorder{}}
	// Memories are saved with the real clock's modification times; recall
	// measures their age with this one.
	w.now = time.Now()
	w.transcript = filepath.Join(w.home, ".claude", "projects", locate.SanitizePath(w.project, locate.HashBun), hookSession+".jsonl")
	w.file = filepath.Join(w.project, "src", "retry.go")
	writeFile(tb, w.transcript, jsonlUser+"\n"+jsonlBot+"\n")
	writeFile(tb, w.file, "retries = 3\n")
	return w
}

// input returns the recorded hook input testdata/hooks/NAME.json with the
// world's paths filled in, changed by set (keys to values; nil deletes).
func (w *hookWorld) input(tb testing.TB, name string, set map[string]any) string {
	tb.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "hooks", name+".json"))
	if err != nil {
		tb.Fatal(err)
	}
	s := strings.NewReplacer("{{CWD}}", w.project, "{{TRANSCRIPT}}", w.transcript, "{{FILE}}", w.file).Replace(string(data))
	if len(set) == 0 {
		return s
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		tb.Fatalf("%s: %v", name, err)
	}
	for k, v := range set {
		if v == nil {
			delete(m, k)
		} else {
			m[k] = v
		}
	}
	out, err := json.Marshal(m)
	if err != nil {
		tb.Fatal(err)
	}
	return string(out)
}

// hook runs `memdir hook args...` with input on standard input.
func (w *hookWorld) hook(tb testing.TB, input string, args ...string) (stdout, stderr string, code int) {
	tb.Helper()
	var out, errb bytes.Buffer
	env := &cli.Env{
		Stdin:     strings.NewReader(input),
		Stdout:    &out,
		Stderr:    &errb,
		LookupEnv: func(k string) (string, bool) { v, ok := w.vars[k]; return v, ok },
		Cwd:       w.home, // not the project: hooks locate from the input's cwd
		Now:       func() time.Time { return w.now },
		Spawn:     w.spawns.spawn,
	}
	code = Main(context.Background(), append([]string{"hook"}, args...), env)
	return out.String(), errb.String(), code
}

// hookOK runs the hook and fails unless it exits 0; it returns the decoded
// output, nil when there was none.
func (w *hookWorld) hookOK(tb testing.TB, input string, args ...string) *hooks.Output {
	tb.Helper()
	out, errOut, code := w.hook(tb, input, args...)
	if code != 0 {
		tb.Fatalf("memdir hook %v: exit %d\nstdout: %s\nstderr: %s", args, code, out, errOut)
	}
	return decodeHookOutput(tb, out)
}

func decodeHookOutput(tb testing.TB, out string) *hooks.Output {
	tb.Helper()
	if out == "" {
		return nil
	}
	dec := json.NewDecoder(strings.NewReader(out))
	dec.DisallowUnknownFields()
	var o hooks.Output
	if err := dec.Decode(&o); err != nil {
		tb.Fatalf("hook output is not the expected JSON: %v\n%s", err, out)
	}
	return &o
}

func hookContext(o *hooks.Output) string {
	if o == nil || o.HookSpecificOutput == nil {
		return ""
	}
	return o.HookSpecificOutput.AdditionalContext
}

// TestHookRecordedInputs feeds every recorded input through Main and checks
// the exit code, whether anything was printed and what was started in the
// background, with and without a model.
func TestHookRecordedInputs(t *testing.T) {
	tests := []struct {
		input     string
		model     bool
		dream     bool
		wantOut   bool
		wantSpawn []string // the arguments before the forwarded flags; nil: nothing started
	}{
		{input: "session_start"},
		{input: "session_start_compact"},
		{input: "user_prompt_submit"}, // no memories yet: nothing to say
		{input: "pre_tool_use_edit"},
		{input: "pre_tool_use_notebook"},
		{input: "pre_tool_use_bash"},
		{input: "post_tool_use"},
		{input: "pre_compact"},
		{input: "subagent_stop", model: true},
		{input: "stop"},
		{input: "stop", model: true, wantSpawn: []string{"extract", "--transcript", "{{TRANSCRIPT}}", "--session", hookSession, "--project", "{{CWD}}"}},
		{input: "stop_active", model: true},
		{input: "session_end", model: true},
		{input: "session_end", dream: true},
		{input: "session_end", model: true, dream: true, wantSpawn: []string{"dream", "--session", hookSession, "--project", "{{CWD}}"}},
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
			out, errOut, code := w.hook(t, w.input(t, tt.input, nil))
			if code != 0 {
				t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
			}
			if got := out != ""; got != tt.wantOut {
				t.Errorf("printed %q, want output: %t", out, tt.wantOut)
			}
			var want []spawnCall
			if tt.wantSpawn != nil {
				args := make([]string, len(tt.wantSpawn))
				for i, a := range tt.wantSpawn {
					args[i] = strings.NewReplacer("{{CWD}}", w.project, "{{TRANSCRIPT}}", w.transcript).Replace(a)
				}
				want = []spawnCall{{Args: args, Log: filepath.Join(w.state, "hooks", "logs", hookSession+".log")}}
			}
			if diff := cmp.Diff(want, w.spawns.take()); diff != "" {
				t.Errorf("background runs (-want +got):\n%s\nstderr: %s", diff, errOut)
			}
		})
	}
}

func TestHookSessionStartCreatesDirectory(t *testing.T) {
	w := newHookWorld(t)
	if out := w.hookOK(t, w.input(t, "session_start", nil)); out != nil {
		t.Errorf("output %+v, want none", out)
	}
	fi, err := os.Stat(w.memDir(t))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o700 {
		t.Errorf("memory directory mode %v, want 0700", fi.Mode().Perm())
	}

	// --inject-index: MEMORY.md as Claude Code shows it.
	w.ok(t, "save", "--name", "deploy-policy", "--type", "feedback", "--description", "deploys go through the blue/green script", "--body", "Never by hand.")
	ctx := hookContext(w.hookOK(t, w.input(t, "session_start", nil), "--inject-index"))
	want := prompt.IndexContext(filepath.Join(w.memDir(t), "MEMORY.md"), "- [deploy-policy](feedback_deploy_policy.md) — deploys go through the blue/green script", false)
	if diff := cmp.Diff(want, ctx); diff != "" {
		t.Errorf("index context (-want +got):\n%s", diff)
	}
}

func TestHookSessionStartInjectsLongIndexWithinLimit(t *testing.T) {
	w := newHookWorld(t)
	var ix strings.Builder
	for i := range 190 {
		fmt.Fprintf(&ix, "- [note %d](project_note_%03d.md) — a one-line hook of a typical length, for entry %d\n", i, i, i)
	}
	writeFile(t, filepath.Join(w.memDir(t), "MEMORY.md"), ix.String())
	writeFile(t, filepath.Join(w.memDir(t), "team", "MEMORY.md"), "- [Build](build.md) — how to build\n")
	ctx := hookContext(w.hookOK(t, w.input(t, "session_start", nil), "--inject-index"))
	if n := hooks.Len(ctx); n > hooks.MaxContextChars || n < hooks.MaxContextChars-200 {
		t.Errorf("context is %d characters, want just under %d", n, hooks.MaxContextChars)
	}
	if !strings.Contains(ctx, "[The index continues in "+filepath.Join(w.memDir(t), "MEMORY.md")) {
		t.Errorf("the cut index does not say where the rest is:\n...%s", ctx[len(ctx)-300:])
	}
}

func TestHookSessionStartPullsTeamMemory(t *testing.T) {
	alice := newTeamWorld(t)
	alice.server(t, false)
	writeFile(t, filepath.Join(alice.teamDir(), "MEMORY.md"), "- [Build](build.md) — how to build\n")
	writeFile(t, filepath.Join(alice.teamDir(), "build.md"), "---\nname: build\ndescription: how to build\ntype: reference\n---\nmake all\n")
	alice.ok(t, "sync", "push")

	w := newHookWorld(t)
	for _, k := range []string{"MEMDIR_TEAM_URL", "MEMDIR_TEAM_TOKEN"} {
		w.vars[k] = alice.vars[k]
	}
	w.vars["MEMDIR_TEAM_REPO"] = "acme/widgets"
	out, errOut, code := w.hook(t, w.input(t, "session_start", nil), "--inject-index")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	got, err := os.ReadFile(filepath.Join(w.memDir(t), "team", "build.md"))
	if err != nil || !strings.Contains(string(got), "make all") {
		t.Fatalf("team memory not pulled: %v %q\nstderr: %s", err, got, errOut)
	}
	if !strings.Contains(errOut, "Pulled acme/widgets") {
		t.Errorf("stderr does not report the pull: %s", errOut)
	}
	if ctx := hookContext(decodeHookOutput(t, out)); !strings.Contains(ctx, `<team-memory-content source="shared">`) || !strings.Contains(ctx, "[Build](build.md)") {
		t.Errorf("team index not injected: %q", ctx)
	}

	// A server that does not answer: the session starts, the user is told.
	w.vars["MEMDIR_TEAM_URL"] = "http://127.0.0.1:1"
	o := w.hookOK(t, w.input(t, "session_start", nil), "--pull-timeout", "2s")
	if o == nil || !strings.Contains(o.SystemMessage, "team memory pull for acme/widgets failed") {
		t.Errorf("output %+v, want a systemMessage about the failed pull", o)
	}

	// Not configured (no token): nothing is tried, nothing is said.
	delete(w.vars, "MEMDIR_TEAM_TOKEN")
	if o := w.hookOK(t, w.input(t, "session_start", nil)); o != nil {
		t.Errorf("output %+v, want none", o)
	}
}

// saveNotes saves n memories with bodies of about size bytes (whole lines)
// about deploying the dispatch service.
func saveNotes(tb testing.TB, w *hookWorld, n, size int) {
	tb.Helper()
	line := "The dispatch service deploys to production through the blue/green script.\n"
	body := strings.Repeat(line, max(1, size/len(line)))
	for i := range n {
		w.ok(tb, "save", "--name", fmt.Sprintf("deploy-note-%02d", i), "--type", "project",
			"--description", fmt.Sprintf("how the dispatch service deploys to production, note %d", i), "--body", body)
	}
}

func TestHookUserPromptSubmitLexical(t *testing.T) {
	w := newHookWorld(t)
	w.ok(t, "save", "--name", "deploy-policy", "--type", "feedback", "--description", "dispatch deploys to production go through the blue/green script", "--body", "Never deploy by hand.\n\n**Why:** a manual apply took production down.")
	w.ok(t, "save", "--name", "grafana", "--type", "reference", "--description", "where the dashboards are", "--body", "Grafana at grafana.internal")

	in := w.input(t, "user_prompt_submit", nil)
	o := w.hookOK(t, in)
	if o == nil || o.HookSpecificOutput == nil || o.HookSpecificOutput.HookEventName != "UserPromptSubmit" || o.SystemMessage != "" {
		t.Fatalf("output %+v, want hookSpecificOutput for UserPromptSubmit and no systemMessage", o)
	}
	ctx := hookContext(o)
	policy := filepath.Join(w.memDir(t), "feedback_deploy_policy.md")
	for _, want := range []string{"recalled by memdir from " + w.memDir(t), "Memory (saved today): " + policy + ":", "Never deploy by hand."} {
		if !strings.Contains(ctx, want) {
			t.Errorf("context lacks %q:\n%s", want, ctx)
		}
	}
	if strings.Contains(ctx, "grafana") || strings.Contains(ctx, "<system-reminder>") {
		t.Errorf("context holds an unrelated memory or nested system reminders:\n%s", ctx)
	}

	// The same prompt again: the memory is not injected twice.
	if o := w.hookOK(t, w.input(t, "user_prompt_submit", map[string]any{"prompt_id": "p2"})); o != nil {
		t.Errorf("second prompt injected %q", hookContext(o))
	}
	sess, err := hooks.NewSessionStore(filepath.Join(w.state, "hooks", "sessions")).Load(hookSession)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{policy}, sess.Surfaced); diff != "" || sess.Bytes == 0 || sess.Prompts != 1 {
		t.Errorf("session state: surfaced (-want +got):\n%s bytes %d, prompts %d", diff, sess.Bytes, sess.Prompts)
	}

	// A one-word prompt is not looked up.
	if o := w.hookOK(t, w.input(t, "user_prompt_submit", map[string]any{"prompt": "thanks", "session_id": "other"})); o != nil {
		t.Errorf("one-word prompt injected %q", hookContext(o))
	}
}

// TestHookUserPromptSubmitLimits fills a session: every answer stays within
// 10,000 characters, holds whole memories only, never repeats one, and the
// session stops at its 60 KB budget.
func TestHookUserPromptSubmitLimits(t *testing.T) {
	w := newHookWorld(t)
	saveNotes(t, w, 24, 3800)
	seen := map[string]bool{}
	total, answers := 0, 0
	for i := range 30 {
		o := w.hookOK(t, w.input(t, "user_prompt_submit", map[string]any{"prompt_id": fmt.Sprintf("p%d", i)}))
		ctx := hookContext(o)
		if ctx == "" {
			break
		}
		answers++
		if n := hooks.Len(ctx); n > hooks.MaxContextChars {
			t.Fatalf("prompt %d: context is %d characters", i, n)
		}
		parts := strings.Split(ctx, "Memory (saved today): ")[1:]
		if len(parts) == 0 {
			t.Fatalf("prompt %d: no memory in %q", i, ctx)
		}
		for _, p := range parts {
			path, _, _ := strings.Cut(p, ":\n")
			if seen[path] {
				t.Errorf("prompt %d: %s injected again", i, path)
			}
			seen[path] = true
			if !strings.Contains(p, "---\nname: deploy-note-") || !strings.HasSuffix(strings.TrimSpace(p), "blue/green script.") || strings.Contains(p, "Only the first") {
				t.Errorf("prompt %d: %s is not whole", i, path)
			}
		}
	}
	sess, err := hooks.NewSessionStore(filepath.Join(w.state, "hooks", "sessions")).Load(hookSession)
	if err != nil {
		t.Fatal(err)
	}
	total = sess.Bytes
	if total > recall.SessionBudget || total < recall.SessionBudget-2*4096 {
		t.Errorf("session surfaced %d bytes, want just under the %d budget", total, recall.SessionBudget)
	}
	if len(seen) >= 24 || len(seen) != len(sess.Surfaced) || answers < 2 {
		t.Errorf("%d memories in %d answers, %d recorded; want fewer than 24 (the budget stops it)", len(seen), answers, len(sess.Surfaced))
	}
}

func TestHookUserPromptSubmitWithModel(t *testing.T) {
	w := newHookWorld(t)
	srv := w.useFakeModel(t)
	w.ok(t, "save", "--name", "deploy-policy", "--type", "feedback", "--description", "dispatch deploys to production go through the blue/green script", "--body", "Never deploy by hand.")
	w.ok(t, "save", "--name", "deploy-dashboards", "--type", "reference", "--description", "the production deploy dashboards of the dispatch service", "--body", "Grafana board 'dispatch-deploys'.")

	// The model picks one of the shortlist.
	srv.Enqueue(memdirtest.JSONReply(map[string]any{"selected_memories": []string{"reference_deploy_dashboards.md"}}))
	out, errOut, code := w.hook(t, w.input(t, "user_prompt_submit", nil))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	ctx := hookContext(decodeHookOutput(t, out))
	if !strings.Contains(ctx, "reference_deploy_dashboards.md") || strings.Contains(ctx, "feedback_deploy_policy.md") {
		t.Errorf("context is not the model's choice:\n%s", ctx)
	}
	if !strings.Contains(errOut, "the model chose 1 memory") {
		t.Errorf("stderr does not say the model chose: %s", errOut)
	}
	if req := srv.LastRequest(); req == nil || !strings.Contains(req.Messages[0].Content[0].Text, "how do we deploy the dispatch service") {
		t.Errorf("the selector was not asked about the prompt: %+v", req)
	}

	// A model slower than --model-timeout: recall falls back to lexical
	// ranking and says so, and the hook still answers.
	srv.Enqueue(memdirtest.ModelReply{Delay: time.Minute, Content: []llm.Block{llm.TextBlock(`{"selected_memories":[]}`)}})
	out, errOut, code = w.hook(t, w.input(t, "user_prompt_submit", map[string]any{"prompt_id": "p2"}), "--model-timeout", "100ms")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if ctx := hookContext(decodeHookOutput(t, out)); !strings.Contains(ctx, "feedback_deploy_policy.md") {
		t.Errorf("fallback context lacks the lexical match:\n%s", ctx)
	}
	for _, want := range []string{"lexical ranking found 1 memory", "the model selector failed: no answer within 100ms"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
}

// TestHookUserPromptSubmitRecallConfig: the hook recalls on the same path
// as 'memdir recall', with the configured manifest budget and embedder.
func TestHookUserPromptSubmitRecallConfig(t *testing.T) {
	w := newHookWorld(t)
	srv := w.useFakeModel(t)
	emb := memdirtest.NewEmbedServer(t)
	w.vars["MEMDIR_EMBED_MODEL"] = "openai:text-embedding-3-small"
	w.vars["MEMDIR_EMBED_BASE_URL"] = emb.OpenAIBaseURL()
	w.vars["MEMDIR_MANIFEST_TOKENS"] = "40"
	w.ok(t, "save", "--name", "deploy-policy", "--type", "feedback", "--description", "dispatch deploys to production go through the blue/green script", "--body", "Never deploy by hand.")
	w.ok(t, "save", "--name", "deploy-dashboards", "--type", "reference", "--description", "the production deploy dashboards of the dispatch service", "--body", "Grafana board 'dispatch-deploys'.")
	w.ok(t, "save", "--name", "review-style", "--type", "user", "--description", "small pull requests, one concern each", "--body", "Say why.")

	srv.Enqueue(memdirtest.JSONReply(map[string]any{"selected_memories": []string{}}))
	_, errOut, code := w.hook(t, w.input(t, "user_prompt_submit", nil))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	msg := srv.LastRequest().Messages[0].Content[0].Text
	if n := strings.Count(msg, "\n- ["); n != 1 {
		t.Errorf("a 40-token budget showed the selector %d memories, want 1:\n%s", n, msg)
	}
	if len(emb.Requests()) == 0 {
		t.Errorf("the hook did not use the configured embedder")
	}
}

// TestHookColdVectorCacheDoesNotWait: on the first prompt with an embedder
// and no vectors cached (430 memories, an embedder at 50 ms a text, 21 s
// of embedding on main), the hook sends the embedder only the query,
// ranks lexically, says so, and starts 'memdir embed' in the background;
// the next prompt does not start another.
func TestHookColdVectorCacheDoesNotWait(t *testing.T) {
	w := newHookWorld(t)
	emb := memdirtest.NewEmbedServer(t)
	emb.Handle(func(req *memdirtest.EmbedRequest) memdirtest.EmbedReply {
		return memdirtest.EmbedReply{Delay: time.Duration(len(req.Input)) * 50 * time.Millisecond}
	})
	w.vars["MEMDIR_EMBED_MODEL"] = "openai:text-embedding-3-small"
	w.vars["MEMDIR_EMBED_BASE_URL"] = emb.OpenAIBaseURL()
	c, err := benchcorpus.Load("../../testdata/eval/recall-dev.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Write(w.memDir(t), 430); err != nil {
		t.Fatal(err)
	}
	_, errOut, code := w.hook(t, w.input(t, "user_prompt_submit", nil))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	texts := 0
	for _, r := range emb.Requests() {
		texts += len(r.Input)
	}
	if texts != 1 {
		t.Errorf("the hook sent %d texts to the embedder, want the query alone", texts)
	}
	if !strings.Contains(errOut, "without a vector") && !strings.Contains(errOut, "no memory has a vector") {
		t.Errorf("stderr does not say the vectors are missing:\n%s", errOut)
	}
	calls := w.spawns.take()
	if len(calls) != 1 || calls[0].Args[0] != "embed" || !slices.Contains(calls[0].Args, w.memDir(t)) {
		t.Fatalf("background runs %+v, want one 'memdir embed --dir %s'", calls, w.memDir(t))
	}
	w.hook(t, w.input(t, "user_prompt_submit", nil))
	if calls := w.spawns.take(); len(calls) != 0 {
		t.Errorf("a second prompt started %+v while the first fill runs", calls)
	}
}

func TestHookStopAndSessionEndForwardConfigFlags(t *testing.T) {
	w := newHookWorld(t)
	w.useFakeModel(t)
	w.hookOK(t, w.input(t, "stop", nil), "--model", "openai:gpt-test", "--timeout", "30s", "--no-model")
	calls := w.spawns.take()
	if len(calls) != 1 {
		t.Fatalf("%d background runs, want 1", len(calls))
	}
	want := []string{"extract", "--transcript", w.transcript, "--session", hookSession, "--project", w.project, "--model=openai:gpt-test", "--timeout=30s"}
	if diff := cmp.Diff(want, calls[0].Args); diff != "" {
		t.Errorf("extract arguments (-want +got):\n%s", diff)
	}

	// A failed start is a non-blocking error.
	w.spawns.err = fmt.Errorf("fork: resource temporarily unavailable")
	if _, errOut, code := w.hook(t, w.input(t, "stop", nil)); code != cli.ExitFailure || !strings.Contains(errOut, "fork: resource temporarily unavailable") {
		t.Errorf("failed start: exit %d, %q", code, errOut)
	}
}

func TestHookDisabledMemory(t *testing.T) {
	w := newHookWorld(t)
	w.useFakeModel(t)
	saveNotes(t, w, 1, 200)
	writeFile(t, filepath.Join(w.home, ".claude", "settings.json"), `{"autoDreamEnabled": true}`)
	w.vars["CLAUDE_CODE_DISABLE_AUTO_MEMORY"] = "1"
	for _, in := range []string{"session_start", "user_prompt_submit", "stop", "session_end"} {
		if o := w.hookOK(t, w.input(t, in, nil), "--inject-index"); o != nil {
			t.Errorf("%s: output %+v, want none", in, o)
		}
	}
	if calls := w.spawns.take(); len(calls) != 0 {
		t.Errorf("background runs with auto memory disabled: %v", calls)
	}
	// Checkpoints do not depend on auto memory.
	w.hookOK(t, w.input(t, "pre_tool_use_edit", nil))
	if out := w.ok(t, "checkpoint", "list", "--session", hookSession); !strings.Contains(out, "0b7f3c52") {
		t.Errorf("no checkpoint with auto memory disabled:\n%s", out)
	}
}

// TestHookCheckpointTrackThenSnapshot follows a turn: the prompt starts a
// snapshot, the edit tool's PreToolUse backs the file up, the next prompt
// records the change, and rewinding to the first prompt restores the file.
func TestHookCheckpointTrackThenSnapshot(t *testing.T) {
	w := newHookWorld(t)
	w.hookOK(t, w.input(t, "user_prompt_submit", map[string]any{"prompt_id": "turn-1"}))
	w.hookOK(t, w.input(t, "pre_tool_use_edit", map[string]any{"prompt_id": "turn-1"}))
	writeFile(t, w.file, "retries = 5\n")
	w.hookOK(t, w.input(t, "user_prompt_submit", map[string]any{"prompt_id": "turn-2"}))

	var snaps []struct {
		MessageID string `json:"messageId"`
		Files     map[string]struct {
			Version int `json:"version"`
		} `json:"trackedFileBackups"`
	}
	if err := json.Unmarshal([]byte(w.ok(t, "checkpoint", "list", "--session", hookSession, "--json")), &snaps); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range snaps {
		got = append(got, fmt.Sprintf("%s:%v", s.MessageID, s.Files["src/retry.go"].Version))
	}
	if diff := cmp.Diff([]string{"turn-1:1", "turn-2:2"}, got); diff != "" {
		t.Errorf("snapshots (-want +got):\n%s", diff)
	}
	w.ok(t, "checkpoint", "rewind", "--session", hookSession, "--message", "turn-1")
	if data, _ := os.ReadFile(w.file); string(data) != "retries = 3\n" {
		t.Errorf("after rewind the file holds %q", data)
	}

	// --no-checkpoint: nothing tracked, no snapshot.
	before := w.ok(t, "checkpoint", "list", "--session", hookSession)
	w.hookOK(t, w.input(t, "pre_tool_use_edit", map[string]any{"prompt_id": "turn-3"}), "--no-checkpoint")
	w.hookOK(t, w.input(t, "user_prompt_submit", map[string]any{"prompt_id": "turn-3"}), "--no-checkpoint")
	if after := w.ok(t, "checkpoint", "list", "--session", hookSession); after != before {
		t.Errorf("--no-checkpoint changed the checkpoints:\n%s\n->\n%s", before, after)
	}
}

func TestHookCheckpointFailures(t *testing.T) {
	w := newHookWorld(t)
	link := filepath.Join(w.project, "link.go")
	if err := os.Symlink(w.file, link); err != nil {
		t.Skip(err)
	}
	// A file checkpoint refuses: a non-blocking error naming it.
	out, errOut, code := w.hook(t, w.input(t, "pre_tool_use_edit", map[string]any{"tool_input": map[string]any{"file_path": link}}))
	if code != cli.ExitFailure || out != "" || !strings.Contains(errOut, "checkpoint of "+link+" before Edit failed (the edit goes ahead") {
		t.Errorf("symlink: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	// No prompt_id: the edit goes ahead, the user is told why.
	_, errOut, code = w.hook(t, w.input(t, "pre_tool_use_edit", map[string]any{"prompt_id": nil}))
	if code != cli.ExitFailure || !strings.Contains(errOut, "field prompt_id is missing") {
		t.Errorf("no prompt_id: exit %d, %q", code, errOut)
	}
	// On UserPromptSubmit a missing prompt_id costs the snapshot, not the
	// recall: a warning in systemMessage.
	o := w.hookOK(t, w.input(t, "user_prompt_submit", map[string]any{"prompt_id": nil}))
	if o == nil || !strings.Contains(o.SystemMessage, "no checkpoint snapshot: the hook input has no prompt_id") {
		t.Errorf("output %+v, want a systemMessage", o)
	}
}

// TestHookBadInput: malformed input exits 1 with a message naming the
// field, never 2 (which would block the prompt or the edit).
func TestHookBadInput(t *testing.T) {
	w := newHookWorld(t)
	tests := []struct {
		name, input, want string
	}{
		{"empty", "", "hook input is empty"},
		{"not JSON", "hello", "not a JSON object"},
		{"array", "[]", "not a JSON object"},
		{"broken", `{"hook_event_name": "Stop",`, "not valid JSON"},
		{"two objects", `{"hook_event_name":"Notification"} {}`, "more than one JSON value"},
		{"no event", `{"session_id":"s"}`, "field hook_event_name is missing"},
		{"event not a string", `{"hook_event_name":3}`, "field hook_event_name is a JSON number, want a string"},
		{"unknown event", `{"hook_event_name":"BeforeLunch","session_id":"s","cwd":"/"}`, `field hook_event_name is "BeforeLunch"`},
		{"no session", w.input(t, "stop", map[string]any{"session_id": nil}), "field session_id is missing"},
		{"hostile session", w.input(t, "stop", map[string]any{"session_id": "../../etc"}), `field session_id is "../../etc"`},
		{"no cwd", w.input(t, "session_start", map[string]any{"cwd": nil}), "field cwd is missing"},
		{"relative cwd", w.input(t, "session_start", map[string]any{"cwd": "project"}), `field cwd is "project", not an absolute path`},
		{"no prompt", w.input(t, "user_prompt_submit", map[string]any{"prompt": nil}), "field prompt is missing"},
		{"no tool input", w.input(t, "pre_tool_use_edit", map[string]any{"tool_input": nil}), "field tool_input is missing"},
		{"no file path", w.input(t, "pre_tool_use_edit", map[string]any{"tool_input": map[string]any{"old_string": "a"}}), "field tool_input.file_path of the Edit call is missing"},
		{"no notebook path", w.input(t, "pre_tool_use_notebook", map[string]any{"tool_input": map[string]any{}}), "field tool_input.notebook_path of the NotebookEdit call is missing"},
		{"active not a bool", w.input(t, "stop", map[string]any{"stop_hook_active": "yes"}), "field stop_hook_active is a JSON string, want true or false"},
		{"no transcript", w.input(t, "stop", map[string]any{"transcript_path": nil}), "field transcript_path is missing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, code := w.hook(t, tt.input)
			if code != cli.ExitFailure || out != "" || !strings.Contains(errOut, tt.want) {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit 1 and %q", code, out, errOut, tt.want)
			}
		})
	}
	if _, errOut, code := w.hook(t, w.input(t, "stop", nil), "extra"); code != cli.ExitFailure || !strings.Contains(errOut, "hook takes no arguments") {
		t.Errorf("positional argument: exit %d, %q", code, errOut)
	}
}

// BenchmarkHookUserPromptSubmit runs the UserPromptSubmit hook in-process
// over 2,000 and 20,000 memories without a model, the persisted index warm,
// as in a session after its first prompt. The memories come from the
// corpus generator (varied bodies recombined from the recall set's
// sentences, a long-tailed vocabulary), and the prompts from the recall
// set's queries. Every iteration is a new session, so recall is never cut
// short by the surfaced set or the budget. bench/run measures the same
// hook as a new process, the user's real case.
func BenchmarkHookUserPromptSubmit(b *testing.B) {
	withoutJSONHook(b)
	set, err := evalset.Load("../../testdata/eval/recall-dev.json")
	if err != nil {
		b.Fatal(err)
	}
	corpus := benchcorpus.New(set)
	for _, n := range []int{2000, 20000} {
		b.Run(fmt.Sprintf("files=%d", n), func(b *testing.B) {
			w := newHookWorld(b)
			if err := corpus.Write(w.memDir(b), n); err != nil {
				b.Fatal(err)
			}
			run := func(i int) {
				q := set.Queries[(i+len(set.Queries))%len(set.Queries)].Query
				in := w.input(b, "user_prompt_submit", map[string]any{"session_id": fmt.Sprintf("bench-%d", i), "prompt": q})
				if _, errOut, code := w.hook(b, in, "--no-checkpoint"); code != 0 {
					b.Fatalf("exit %d, stderr %q", code, errOut)
				}
			}
			// Files changed in the last two seconds are re-read by every
			// refresh (see docs/performance.md); a user's memories are older.
			time.Sleep(2100 * time.Millisecond)
			run(-1) // builds the persisted index
			i := 0
			for b.Loop() {
				run(i)
				i++
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/prompt")
		})
	}
}

// TestHookBadFlagNeverBlocks checks that even a mistyped flag in the hook
// command exits 1, a non-blocking error, never 2, which Claude Code reads as
// "block this prompt or edit".
func TestHookBadFlagNeverBlocks(t *testing.T) {
	w := newMemWorld(t)
	w.stdin = `{"hook_event_name":"UserPromptSubmit","session_id":"s1","cwd":"/tmp","prompt":"hi"}`
	if _, errOut, code := w.run(t, "hook", "--no-such-flag"); code != cli.ExitFailure || !strings.Contains(errOut, "no-such-flag") {
		t.Errorf("bad flag: exit %d, stderr %q; want exit 1 naming the flag", code, errOut)
	}
}

// TestHookPreToolUseHintsMemoryEdit: an edit tool about to write a memory
// file in place leaves a hint for the recall index (so that the next
// prompt's recall reads it whatever the directory's size); an edit of a
// project file does not, and neither blocks the edit.
func TestHookPreToolUseHintsMemoryEdit(t *testing.T) {
	w := newHookWorld(t)
	mem := w.memDir(t)
	cache, err := recall.DefaultIndexPath(mem, func(k string) (string, bool) { v, ok := w.vars[k]; return v, ok })
	if err != nil {
		t.Fatal(err)
	}
	w.hookOK(t, w.input(t, "pre_tool_use_edit", map[string]any{"prompt_id": "turn-1"}))
	if _, err := os.Stat(cache + ".hint"); !os.IsNotExist(err) {
		t.Fatalf("an edit of a project file left a recall hint: %v", err)
	}
	target := filepath.Join(mem, "feedback_tests.md")
	w.hookOK(t, w.input(t, "pre_tool_use_edit", map[string]any{"prompt_id": "turn-1", "tool_input": map[string]any{"file_path": target, "old_string": "a", "new_string": "b"}}), "--no-checkpoint")
	data, err := os.ReadFile(cache + ".hint")
	if err != nil || !strings.HasSuffix(string(data), "\tfeedback_tests.md\n") {
		t.Fatalf("hint file after an edit of %s: %q, %v", target, data, err)
	}
}
