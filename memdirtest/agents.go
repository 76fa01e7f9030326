package memdirtest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/memdir/memdir/internal/codextrust"
)

// RequireAgentsEnv, set to 1, turns the skip of a test whose agent program
// is not installed into a failure, for CI, which installs them with
// .ci/agents-install.
const RequireAgentsEnv = "MEMDIR_TEST_REQUIRE_AGENTS"

// AgentsDirEnv names the directory .ci/agents-install installed the agent
// programs into; by default FindAgent looks for .cache/agents in the test's
// directory and each one above it.
const AgentsDirEnv = "MEMDIR_AGENTS_DIR"

// FindAgent returns the path of an agent program (codex, gemini) installed
// by .ci/agents-install: $MEMDIR_AGENTS_DIR/node_modules/.bin/NAME, or
// .cache/agents/node_modules/.bin/NAME in the test's directory or the
// nearest one above it that has it. The test is skipped when it is not
// there, or under -short (a run takes seconds), unless
// MEMDIR_TEST_REQUIRE_AGENTS=1 makes it fail instead.
func FindAgent(tb testing.TB, name string) string {
	tb.Helper()
	require := os.Getenv(RequireAgentsEnv) == "1"
	if testing.Short() && !require {
		tb.Skip("runs the real", name, "program")
	}
	var tried []string
	if dir := os.Getenv(AgentsDirEnv); dir != "" {
		tried = append(tried, filepath.Join(dir, "node_modules", ".bin", name))
	} else if wd, err := os.Getwd(); err == nil {
		for dir := wd; ; dir = filepath.Dir(dir) {
			tried = append(tried, filepath.Join(dir, ".cache", "agents", "node_modules", ".bin", name))
			if filepath.Dir(dir) == dir {
				break
			}
		}
	}
	for _, p := range tried {
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p
		}
	}
	where := "$" + AgentsDirEnv + "/node_modules/.bin"
	if len(tried) > 0 {
		where = filepath.Dir(tried[0])
	}
	msg := fmt.Sprintf("%s is not installed in %s: run .ci/agents-install (%s=1 makes this a failure)", name, where, RequireAgentsEnv)
	if require {
		tb.Fatal(msg)
	}
	tb.Skip(msg)
	return ""
}

// AgentHook is one command hook of an agent program's configuration.
type AgentHook struct {
	// Event is the program's name for it: UserPromptSubmit (Codex),
	// BeforeAgent (Gemini), SessionStart (both), and so on.
	Event string
	// Matcher is the group's matcher, empty for none.
	Matcher string
	// Command is run by the program through a shell.
	Command string
	// Timeout defaults to 30 s.
	Timeout time.Duration
	// Untrusted leaves a Codex hook out of config.toml's trust records, so
	// that Codex skips it (silently, as it does for any hook nobody has
	// reviewed). Gemini has no such records.
	Untrusted bool
}

func (h AgentHook) timeout() time.Duration {
	if h.Timeout <= 0 {
		return 30 * time.Second
	}
	return h.Timeout
}

// AgentRun is what one run of an agent program printed.
type AgentRun struct {
	Stdout, Stderr string
}

// agentEnv is the environment of a run: none of the test process's own
// (so no real API key or user setting reaches the program), only PATH (the
// programs are node scripts), a home of the run's own, and extra.
func agentEnv(home string, extra ...string) []string {
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "LANG=C.UTF-8", "TERM=dumb", "NO_COLOR=1"}
	return append(env, extra...)
}

// runAgent runs bin with args in dir, with stdin empty, and fails the test
// when it does not exit 0 within timeout. The program runs in a process
// group of its own, which is killed when the run ends, so neither a hung
// program nor anything it started outlives the test.
func runAgent(tb testing.TB, timeout time.Duration, dir string, env []string, bin string, args ...string) AgentRun {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir, cmd.Env, cmd.Stdin = dir, env, nil
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	// A grandchild holding the output pipes open must not hold Wait up.
	cmd.WaitDelay = 5 * time.Second
	ownGroup(cmd)
	start := time.Now()
	err := cmd.Run()
	killGroup(cmd)
	run := AgentRun{Stdout: stdout.String(), Stderr: stderr.String()}
	switch {
	case ctx.Err() != nil:
		tb.Fatalf("%s %s: still running after %v, killed\nstdout:\n%s\nstderr:\n%s", filepath.Base(bin), strings.Join(args, " "), timeout, run.Stdout, run.Stderr)
	case err != nil:
		tb.Fatalf("%s %s: %v after %v\nstdout:\n%s\nstderr:\n%s", filepath.Base(bin), strings.Join(args, " "), err, time.Since(start).Round(time.Millisecond), run.Stdout, run.Stderr)
	}
	return run
}

// writeFile writes a configuration file, making its directory.
func writeFile(tb testing.TB, path string, data []byte) {
	tb.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		tb.Fatal(err)
	}
}

// findFiles returns the files under root whose names match pattern, sorted.
func findFiles(tb testing.TB, root, pattern string) []string {
	tb.Helper()
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if ok, _ := filepath.Match(pattern, d.Name()); ok && !d.IsDir() {
			out = append(out, p)
		}
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	slices.Sort(out)
	return out
}

// Codex is Codex CLI (npm @openai/codex) set up to run against a
// [ModelServer]: a home of its own whose config.toml points the model
// provider at the server and turns off what would reach the internet
// (update checks, analytics, plugins), with the hooks added by AddHook.
type Codex struct {
	// Bin is the codex program.
	Bin string
	// Home is $HOME of the runs; CodexHome is $CODEX_HOME, which holds
	// config.toml, hooks.json and the session files (sessions/).
	Home, CodexHome string
	// Env is added to the environment of the runs (and so of the hooks).
	Env []string
	// Timeout bounds each run; it defaults to 2 minutes.
	Timeout time.Duration

	config string // config.toml without the trust records
	hooks  []AgentHook
}

// CodexAPIKeyEnv is the variable the fake provider's API key is read from.
const CodexAPIKeyEnv = "MEMDIRTEST_API_KEY"

// NewCodex finds the installed codex (see [FindAgent]) and writes a
// config.toml whose model provider is srv, using model (the Responses API,
// with a model the program knows the tools of: gpt-5.5 when model is
// empty).
func NewCodex(tb testing.TB, srv *ModelServer, model string) *Codex {
	tb.Helper()
	if model == "" {
		model = "gpt-5.5"
	}
	home := tb.TempDir()
	c := &Codex{Bin: FindAgent(tb, "codex"), Home: home, CodexHome: filepath.Join(home, ".codex"), Timeout: 2 * time.Minute}
	// No retries: a request the fake refuses fails the run at once
	// instead of after Codex's backoff.
	c.config = fmt.Sprintf(`model = %s
model_provider = "memdirtest"
check_for_update_on_startup = false

[model_providers.memdirtest]
name = "memdirtest fake model server"
base_url = %s
wire_api = "responses"
env_key = %s
request_max_retries = 0
stream_max_retries = 0

[analytics]
enabled = false

[features]
hooks = true
plugins = false
`, strconv.Quote(model), strconv.Quote(srv.OpenAIBaseURL()), strconv.Quote(CodexAPIKeyEnv))
	writeFile(tb, filepath.Join(c.CodexHome, "config.toml"), []byte(c.config))
	return c
}

// HooksPath is the hooks.json AddHook writes.
func (c *Codex) HooksPath() string { return filepath.Join(c.CodexHome, "hooks.json") }

// AddHook adds h, in a matcher group of its own, to hooks.json and (unless
// h.Untrusted) records it as trusted in config.toml, with the hash Codex
// computes for it (see [CodexHookHash]). Both files are rewritten whole.
func (c *Codex) AddHook(tb testing.TB, h AgentHook) {
	tb.Helper()
	c.hooks = append(c.hooks, h)
	events := map[string][]any{}
	trust := []string{}
	for _, h := range c.hooks {
		secs := codextrust.Timeout(h.Event, max(1, int(h.timeout().Round(time.Second)/time.Second)))
		group := map[string]any{"hooks": []any{map[string]any{"type": "command", "command": h.Command, "timeout": secs}}}
		if h.Matcher != "" {
			group["matcher"] = h.Matcher
		}
		key := fmt.Sprintf("%s:%s:%d:0", c.HooksPath(), codextrust.EventKey(h.Event), len(events[h.Event]))
		events[h.Event] = append(events[h.Event], group)
		if !h.Untrusted {
			trust = append(trust, fmt.Sprintf("\n[hooks.state.%s]\ntrusted_hash = %s\n",
				strconv.Quote(key), strconv.Quote(CodexHookHash(h.Event, h.Matcher, h.Command, secs, ""))))
		}
	}
	b, err := json.MarshalIndent(map[string]any{"hooks": events}, "", "  ")
	if err != nil {
		tb.Fatal(err)
	}
	writeFile(tb, c.HooksPath(), append(b, '\n'))
	writeFile(tb, filepath.Join(c.CodexHome, "config.toml"), []byte(c.config+strings.Join(trust, "")))
}

// Exec runs codex exec non-interactively in dir with prompt (and args
// before it, such as --sandbox workspace-write), and fails the test unless
// it exits 0 within c.Timeout.
func (c *Codex) Exec(tb testing.TB, dir, prompt string, args ...string) AgentRun {
	tb.Helper()
	argv := append([]string{"exec", "--skip-git-repo-check", "--color", "never"}, args...)
	argv = append(argv, prompt)
	env := agentEnv(c.Home, append([]string{"CODEX_HOME=" + c.CodexHome, CodexAPIKeyEnv + "=memdirtest"}, c.Env...)...)
	return runAgent(tb, c.Timeout, dir, env, c.Bin, argv...)
}

// Sessions returns the session files ("rollouts") Codex wrote, oldest
// first: JSON lines under $CODEX_HOME/sessions/YYYY/MM/DD/.
func (c *Codex) Sessions(tb testing.TB) []string {
	tb.Helper()
	return findFiles(tb, filepath.Join(c.CodexHome, "sessions"), "rollout-*.jsonl")
}

// CodexHookHash is the trusted_hash Codex CLI (0.169.0) records for a
// command hook it has been told to trust, under
// [hooks.state."<hooks.json path>:<event_key>:<group>:<handler>"] in
// config.toml. It is the hash memdir's installer writes (package hooks);
// this package's tests check it against hashes Codex itself reported.
func CodexHookHash(event, matcher, command string, timeoutSec int, statusMessage string) string {
	return codextrust.Hash(event, matcher, command, timeoutSec, statusMessage)
}

// Gemini is Gemini CLI (npm @google/gemini-cli) set up to run against a
// [ModelServer]: a home of its own whose ~/.gemini/settings.json selects
// API-key auth and a model, turns on hooks and turns off auto-update,
// usage statistics and telemetry, with the hooks added by AddHook; the
// runs point GOOGLE_GEMINI_BASE_URL at the server.
type Gemini struct {
	// Bin is the gemini program; Home is $HOME of the runs.
	Bin, Home string
	// Env is added to the environment of the runs (and so of the hooks).
	Env []string
	// Timeout bounds each run; it defaults to 3 minutes (a run takes
	// several seconds on an idle machine).
	Timeout time.Duration

	srv      *ModelServer
	settings map[string]any
	hooks    []AgentHook
}

// NewGemini finds the installed gemini (see [FindAgent]) and writes its
// user settings for srv and model (gemini-2.5-flash when empty).
func NewGemini(tb testing.TB, srv *ModelServer, model string) *Gemini {
	tb.Helper()
	if model == "" {
		model = "gemini-2.5-flash"
	}
	g := &Gemini{Bin: FindAgent(tb, "gemini"), Home: tb.TempDir(), Timeout: 3 * time.Minute, srv: srv}
	g.settings = map[string]any{
		"security": map[string]any{"auth": map[string]any{"selectedType": "gemini-api-key"}},
		"model":    map[string]any{"name": model},
		// The names 0.61.0 uses; it rewrites the file to migrate older ones.
		"general":     map[string]any{"enableAutoUpdate": false, "enableAutoUpdateNotification": false},
		"privacy":     map[string]any{"usageStatisticsEnabled": false},
		"telemetry":   map[string]any{"enabled": false},
		"hooksConfig": map[string]any{"enabled": true},
	}
	g.write(tb)
	return g
}

// SettingsPath is the user settings file NewGemini and AddHook write.
func (g *Gemini) SettingsPath() string { return filepath.Join(g.Home, ".gemini", "settings.json") }

func (g *Gemini) write(tb testing.TB) {
	tb.Helper()
	b, err := json.MarshalIndent(g.settings, "", "  ")
	if err != nil {
		tb.Fatal(err)
	}
	writeFile(tb, g.SettingsPath(), append(b, '\n'))
}

// AddHook adds h, in a matcher group of its own, to the settings' hooks
// and rewrites the settings file.
func (g *Gemini) AddHook(tb testing.TB, h AgentHook) {
	tb.Helper()
	g.hooks = append(g.hooks, h)
	events := map[string][]any{}
	for i, h := range g.hooks {
		group := map[string]any{"hooks": []any{map[string]any{
			"name": fmt.Sprintf("memdirtest-%d", i), "type": "command", "command": h.Command,
			"timeout": h.timeout().Milliseconds(),
		}}}
		if h.Matcher != "" {
			group["matcher"] = h.Matcher
		}
		events[h.Event] = append(events[h.Event], group)
	}
	g.settings["hooks"] = events
	g.write(tb)
}

// Run runs gemini non-interactively in dir with prompt (and args before
// it, such as --approval-mode auto_edit), trusting dir for the run, and
// fails the test unless it exits 0 within g.Timeout.
func (g *Gemini) Run(tb testing.TB, dir, prompt string, args ...string) AgentRun {
	tb.Helper()
	argv := append([]string{"--skip-trust", "--output-format", "text"}, args...)
	argv = append(argv, "-p", prompt)
	env := agentEnv(g.Home, append([]string{
		"GEMINI_API_KEY=memdirtest",
		"GOOGLE_GEMINI_BASE_URL=" + g.srv.GeminiBaseURL(),
		// One process: no relaunch of itself with a larger heap.
		"GEMINI_CLI_NO_RELAUNCH=true",
	}, g.Env...)...)
	return runAgent(tb, g.Timeout, dir, env, g.Bin, argv...)
}

// Chats returns the session files Gemini wrote, oldest first: JSON lines
// under ~/.gemini/tmp/<project>/chats/.
func (g *Gemini) Chats(tb testing.TB) []string {
	tb.Helper()
	return findFiles(tb, filepath.Join(g.Home, ".gemini", "tmp"), "session-*.jsonl")
}
