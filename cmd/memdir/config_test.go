package main

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/memdir/memdir/internal/cli"
)

// The configuration tests run in the memory commands' sandbox (memWorld):
// a temporary home and an environment holding nothing from the real one.

func configFile(w *memWorld) string { return filepath.Join(w.home, ".config", "memdir", "config.yaml") }

func writeConfig(tb testing.TB, w *memWorld, text string) {
	tb.Helper()
	p := configFile(w)
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		tb.Fatal(err)
	}
}

// configJSON runs `memdir config --json` and returns key -> "value @ source".
func configJSON(tb testing.TB, w *memWorld, flags ...string) map[string]string {
	tb.Helper()
	out := w.ok(tb, append([]string{"config", "--json"}, flags...)...)
	var v configView
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		tb.Fatalf("config --json output is not JSON: %v\n%s", err, out)
	}
	got := map[string]string{}
	for _, s := range v.Settings {
		val := s.Value
		if s.Secret {
			val = map[bool]string{true: "(set)", false: "(not set)"}[s.Set]
		}
		got[s.Key] = val + " @ " + s.Source
	}
	return got
}

func TestConfigPrecedence(t *testing.T) {
	defaults := map[string]string{
		"model":                  " @ ",
		"timeout":                "2m @ default",
		"max_retries":            "2 @ default",
		"stream":                 "false @ default",
		"anthropic.base_url":     "https://api.anthropic.com @ default",
		"anthropic.api_key":      "(not set) @ ",
		"anthropic.auth_token":   "(not set) @ ",
		"openai.base_url":        "https://api.openai.com/v1 @ default",
		"openai.api_key":         "(not set) @ ",
		"embed.model":            " @ ",
		"embed.base_url":         "https://api.openai.com/v1 @ openai.base_url (default)",
		"embed.api_key":          "(not set) @ ",
		"embed.dimensions":       " @ ",
		"embed.batch_size":       "64 @ default",
		"team.url":               " @ ",
		"team.token":             "(not set) @ ",
		"team.repo":              " @ ",
		"recall.manifest_tokens": "auto @ default",
	}
	with := func(changes map[string]string) map[string]string {
		m := map[string]string{}
		maps.Copy(m, defaults)
		maps.Copy(m, changes)
		return m
	}
	const file = `# memdir settings
model: openai:gpt-4.1-mini
timeout: 45s
anthropic:
  base_url: https://gateway.example/anthropic
team:
  url: https://team.example
  token: mdt_file_token
  repo: acme/app
`
	tests := []struct {
		name  string
		file  string
		vars  map[string]string
		flags []string
		want  map[string]string
	}{
		{"defaults", "", nil, nil, defaults},
		{"file", file, nil, nil, with(map[string]string{
			"model":              "openai:gpt-4.1-mini @ FILE:2",
			"timeout":            "45s @ FILE:3",
			"anthropic.base_url": "https://gateway.example/anthropic @ FILE:5",
			"team.url":           "https://team.example @ FILE:7",
			"team.token":         "(set) @ FILE:8",
			"team.repo":          "acme/app @ FILE:9",
		})},
		{"environment over file", file, map[string]string{
			"MEMDIR_MODEL": "anthropic:claude-sonnet-4-5", "ANTHROPIC_API_KEY": "sk-ant-secret", "MEMDIR_TIMEOUT": "10s",
			"MEMDIR_TEAM_TOKEN": "mdt_env", "TEAM_MEMORY_SYNC_URL": "https://legacy.example", "OPENAI_BASE_URL": "http://localhost:11434/v1",
			"MEMDIR_STREAM": "true", "MEMDIR_MAX_RETRIES": "0",
		}, nil, with(map[string]string{
			"model":              "anthropic:claude-sonnet-4-5 @ MEMDIR_MODEL",
			"timeout":            "10s @ MEMDIR_TIMEOUT",
			"max_retries":        "0 @ MEMDIR_MAX_RETRIES",
			"stream":             "true @ MEMDIR_STREAM",
			"anthropic.base_url": "https://gateway.example/anthropic @ FILE:5",
			"anthropic.api_key":  "(set) @ ANTHROPIC_API_KEY",
			"openai.base_url":    "http://localhost:11434/v1 @ OPENAI_BASE_URL",
			"embed.base_url":     "http://localhost:11434/v1 @ openai.base_url (OPENAI_BASE_URL)",
			"team.url":           "https://legacy.example @ TEAM_MEMORY_SYNC_URL",
			"team.token":         "(set) @ MEMDIR_TEAM_TOKEN",
			"team.repo":          "acme/app @ FILE:9",
		})},
		{"MEMDIR_TEAM_URL wins over the legacy name", "", map[string]string{
			"MEMDIR_TEAM_URL": "https://new.example", "TEAM_MEMORY_SYNC_URL": "https://legacy.example",
		}, nil, with(map[string]string{"team.url": "https://new.example @ MEMDIR_TEAM_URL"})},
		{"empty variables are unset", file, map[string]string{"MEMDIR_MODEL": " ", "ANTHROPIC_API_KEY": ""}, nil, with(map[string]string{
			"model":              "openai:gpt-4.1-mini @ FILE:2",
			"timeout":            "45s @ FILE:3",
			"anthropic.base_url": "https://gateway.example/anthropic @ FILE:5",
			"team.url":           "https://team.example @ FILE:7",
			"team.token":         "(set) @ FILE:8",
			"team.repo":          "acme/app @ FILE:9",
		})},
		{"flags over environment", file, map[string]string{"MEMDIR_MODEL": "anthropic:a", "MEMDIR_TIMEOUT": "10s"},
			[]string{"--model", "openai:b", "--timeout=90", "--stream", "--max-retries", "5", "--openai-base-url", "http://127.0.0.1:8080/v1", "--team-repo", "r", "--manifest-tokens", "all"},
			with(map[string]string{
				"model":                  "openai:b @ --model",
				"timeout":                "90 @ --timeout",
				"stream":                 "true @ --stream",
				"max_retries":            "5 @ --max-retries",
				"openai.base_url":        "http://127.0.0.1:8080/v1 @ --openai-base-url",
				"embed.base_url":         "http://127.0.0.1:8080/v1 @ openai.base_url (--openai-base-url)",
				"anthropic.base_url":     "https://gateway.example/anthropic @ FILE:5",
				"team.url":               "https://team.example @ FILE:7",
				"team.token":             "(set) @ FILE:8",
				"team.repo":              "r @ --team-repo",
				"recall.manifest_tokens": "all @ --manifest-tokens",
			})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newMemWorld(t)
			maps.Copy(w.vars, tt.vars)
			want := map[string]string{}
			for k, v := range tt.want {
				want[k] = strings.ReplaceAll(v, "FILE", configFile(w))
			}
			if tt.file != "" {
				writeConfig(t, w, tt.file)
			}
			if diff := cmp.Diff(want, configJSON(t, w, tt.flags...)); diff != "" {
				t.Errorf("settings (-want +got):\n%s", diff)
			}
		})
	}
}

func TestConfigFileLocation(t *testing.T) {
	w := newMemWorld(t)
	other := filepath.Join(w.project, "elsewhere.yaml")
	if err := os.WriteFile(other, []byte("model: none\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	w.vars["MEMDIR_CONFIG"] = "elsewhere.yaml" // relative to the working directory
	if got := configJSON(t, w)["model"]; got != "none @ "+other+":1" {
		t.Errorf("model = %q, want it from MEMDIR_CONFIG", got)
	}

	w.vars["MEMDIR_CONFIG"] = filepath.Join(w.home, "missing.yaml")
	_, errOut, code := w.run(t, "config")
	if code != cli.ExitNotFound || !strings.Contains(errOut, "missing.yaml") || !strings.Contains(errOut, "MEMDIR_CONFIG") {
		t.Errorf("missing MEMDIR_CONFIG file: exit %d, stderr %q", code, errOut)
	}

	delete(w.vars, "MEMDIR_CONFIG")
	w.vars["XDG_CONFIG_HOME"] = filepath.Join(w.home, "xdg")
	out, _, code := w.run(t, "config")
	want := filepath.Join(w.home, "xdg", "memdir", "config.yaml") + " (not found, using defaults)"
	if code != 0 || !strings.Contains(out, want) {
		t.Errorf("exit %d, output does not name %s:\n%s", code, want, out)
	}
}

func TestConfigErrors(t *testing.T) {
	tests := []struct {
		name     string
		file     string
		vars     map[string]string
		flags    []string
		contains []string
	}{
		{"unknown key", "model: none\ncolour: blue\n", nil, nil, []string{"unknown key colour", "config.yaml line 2"}},
		{"unknown nested key", "openai:\n  base_url: http://x/v1\n  api_base: http://y\n", nil, nil, []string{"unknown key openai.api_base", "line 3"}},
		{"keys are not read from the file", "anthropic:\n  api_key: sk-ant-xyz\n", nil, nil, []string{"unknown key anthropic.api_key"}},
		{"section that is not a mapping", "team: yes\n", nil, nil, []string{"section team must be a mapping"}},
		{"list value", "model: [a, b]\n", nil, nil, []string{"key model must have a single value"}},
		{"duplicate key", "model: none\nmodel: openai:x\n", nil, nil, []string{"key model appears twice"}},
		{"not YAML", "model: \"unterminated\n", nil, nil, []string{"not valid YAML"}},
		{"not a mapping", "- a\n- b\n", nil, nil, []string{"the file must be a mapping"}},
		{"bad timeout in the file", "timeout: soon\n", nil, nil, []string{`timeout = "soon"`, "config.yaml:1", "30s"}},
		{"bad timeout in the environment", "", map[string]string{"MEMDIR_TIMEOUT": "-5s"}, nil, []string{"from MEMDIR_TIMEOUT", "more than zero"}},
		{"bad retries", "", map[string]string{"MEMDIR_MAX_RETRIES": "many"}, nil, []string{"max_retries", "MEMDIR_MAX_RETRIES"}},
		{"bad stream flag", "", nil, []string{"--stream=maybe"}, []string{"stream", "--stream"}},
		{"bad base URL", "", map[string]string{"OPENAI_BASE_URL": "localhost:11434"}, nil, []string{"openai.base_url", "OPENAI_BASE_URL", "http://"}},
		{"model without provider", "", map[string]string{"MEMDIR_MODEL": "claude-sonnet-4-5"}, nil, []string{"PROVIDER:NAME", "MEMDIR_MODEL"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newMemWorld(t)
			maps.Copy(w.vars, tt.vars)
			if tt.file != "" {
				writeConfig(t, w, tt.file)
			}
			_, errOut, code := w.run(t, append([]string{"config"}, tt.flags...)...)
			if code != cli.ExitInvalid {
				t.Errorf("exit code %d, want %d (invalid); stderr: %s", code, cli.ExitInvalid, errOut)
			}
			for _, s := range tt.contains {
				if !strings.Contains(errOut, s) {
					t.Errorf("stderr %q does not contain %q", errOut, s)
				}
			}
		})
	}
}

func TestConfigEmptyFile(t *testing.T) {
	for _, text := range []string{"", "# nothing yet\n", "anthropic:\nteam:\n"} {
		w := newMemWorld(t)
		writeConfig(t, w, text)
		if got := configJSON(t, w)["timeout"]; got != "2m @ default" {
			t.Errorf("file %q: timeout = %q", text, got)
		}
	}
}

// TestConfigHidesSecrets checks that no key or token reaches the output, in
// text or JSON, even when a base URL carries a password.
func TestConfigHidesSecrets(t *testing.T) {
	w := newMemWorld(t)
	writeConfig(t, w, "team:\n  token: mdt_FILE_SECRET\n")
	w.vars["ANTHROPIC_API_KEY"] = "sk-ant-ENV-SECRET"
	w.vars["ANTHROPIC_AUTH_TOKEN"] = "AUTH-SECRET"
	w.vars["OPENAI_API_KEY"] = "sk-OPENAI-SECRET"
	w.vars["OPENAI_BASE_URL"] = "https://user:URL-SECRET@proxy.example/v1"
	w.vars["MEMDIR_MODEL"] = "openai:gpt-4.1-mini"
	for _, args := range [][]string{{"config"}, {"config", "--json"}} {
		out, errOut, code := w.run(t, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errOut)
		}
		for _, secret := range []string{"SECRET"} {
			if strings.Contains(out+errOut, secret) {
				t.Errorf("%v printed a secret:\n%s", args, out)
			}
		}
		if args[len(args)-1] == "config" {
			for _, s := range []string{"set (from ANTHROPIC_API_KEY)", "set (from OPENAI_API_KEY)", "set (from " + configFile(w) + ":2)", "@proxy.example/v1"} {
				if !strings.Contains(out, s) {
					t.Errorf("text output lacks %q:\n%s", s, out)
				}
			}
		}
	}
}

func TestConfigNotes(t *testing.T) {
	tests := []struct {
		vars map[string]string
		want string
	}{
		{nil, "No model is configured"},
		{map[string]string{"MEMDIR_MODEL": "anthropic:claude-sonnet-4-5"}, "ANTHROPIC_API_KEY is not set"},
		{map[string]string{"MEMDIR_MODEL": "openai:gpt-4.1-mini"}, "OPENAI_API_KEY is not set"},
		{map[string]string{"MEMDIR_MODEL": "gemini:pro"}, `provider "gemini" is unknown`},
	}
	for _, tt := range tests {
		w := newMemWorld(t)
		maps.Copy(w.vars, tt.vars)
		out, _, code := w.run(t, "config")
		if code != 0 || !strings.Contains(out, tt.want) {
			t.Errorf("vars %v: exit %d, output lacks %q:\n%s", tt.vars, code, tt.want, out)
		}
	}
	w := newMemWorld(t)
	w.vars["MEMDIR_MODEL"] = "openai:llama3.2"
	w.vars["OPENAI_BASE_URL"] = "http://localhost:11434/v1"
	if out, _, _ := w.run(t, "config"); strings.Contains(out, "not set (") || strings.Contains(out, "OPENAI_API_KEY is not set") {
		t.Errorf("a local server without a key got a warning:\n%s", out)
	}
}

func TestConfigUsage(t *testing.T) {
	w := newMemWorld(t)
	if _, _, code := w.run(t, "config", "extra"); code != cli.ExitUsage {
		t.Errorf("config with an argument: exit %d, want %d", code, cli.ExitUsage)
	}
	out, _, code := w.run(t, "help", "config")
	if code != 0 {
		t.Fatalf("help config: exit %d", code)
	}
	for _, s := range []string{"-model", "-timeout", "-stream", "MEMDIR_MODEL", "ANTHROPIC_API_KEY", "Precedence"} {
		if !strings.Contains(out, s) {
			t.Errorf("help lacks %q", s)
		}
	}
}

func TestConfigShowsEmbeddings(t *testing.T) {
	w := newMemWorld(t)
	writeConfig(t, w, "embed:\n  model: openai:nomic-embed-text\n  base_url: http://localhost:11434/v1\n  dimensions: 256\n")
	w.vars["MEMDIR_EMBED_BATCH_SIZE"] = "16"
	got := configJSON(t, w)
	file := configFile(w)
	want := map[string]string{
		"embed.model":      "openai:nomic-embed-text @ " + file + ":2",
		"embed.base_url":   "http://localhost:11434/v1 @ " + file + ":3",
		"embed.api_key":    "(not set) @ ",
		"embed.dimensions": "256 @ " + file + ":4",
		"embed.batch_size": "16 @ MEMDIR_EMBED_BATCH_SIZE",
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	out := w.ok(t, "config")
	if !strings.Contains(out, "Semantic search: embeddings from openai:nomic-embed-text at http://localhost:11434/v1.") {
		t.Errorf("config output has no line on semantic search:\n%s", out)
	}

	w = newMemWorld(t)
	w.vars["MEMDIR_EMBED_MODEL"] = "openai:text-embedding-3-small"
	if out := w.ok(t, "config"); !strings.Contains(out, "no API key is set: set MEMDIR_EMBED_API_KEY") {
		t.Errorf("config does not warn of the missing key:\n%s", out)
	}
}
