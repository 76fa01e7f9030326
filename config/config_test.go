package config

import (
	"errors"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/memdir/memdir"
)

// world is an environment of its own: a temporary home, the variables in
// vars and nothing from the real environment.
type world struct {
	home, dir string
	vars      map[string]string
}

func newWorld(tb testing.TB) *world {
	tb.Helper()
	base := tb.TempDir()
	w := &world{home: filepath.Join(base, "home"), dir: filepath.Join(base, "work")}
	for _, d := range []string{w.home, w.dir} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			tb.Fatal(err)
		}
	}
	w.vars = map[string]string{"HOME": w.home}
	return w
}

func (w *world) lookup(k string) (string, bool) { v, ok := w.vars[k]; return v, ok }

func (w *world) file() string { return filepath.Join(w.home, ".config", "memdir", "config.yaml") }

func (w *world) write(tb testing.TB, text string) {
	tb.Helper()
	if err := os.MkdirAll(filepath.Dir(w.file()), 0o700); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(w.file(), []byte(text), 0o600); err != nil {
		tb.Fatal(err)
	}
}

func (w *world) load(opts *Options) (*Config, error) {
	if opts == nil {
		opts = &Options{}
	}
	if opts.Dir == "" {
		opts.Dir = w.dir
	}
	return Load(w.lookup, opts)
}

// settings returns every key as "value @ source".
func settings(c *Config) map[string]string {
	got := map[string]string{}
	for _, k := range Keys() {
		s, ok := c.Get(k.Name)
		if !ok {
			panic(k.Name)
		}
		got[k.Name] = s.Value + " @ " + s.Source
	}
	return got
}

// TestLoadPrecedence checks each source over the one before it: defaults,
// the file, the environment, the overrides.
func TestLoadPrecedence(t *testing.T) {
	w := newWorld(t)
	w.write(t, "model: openai:gpt-4.1-mini\ntimeout: 45s\nteam:\n  url: https://team.example\n  token: mdt_file\n  repo: acme/app\n")
	w.vars["MEMDIR_MODEL"] = "anthropic:claude-sonnet-4-5"
	w.vars["ANTHROPIC_API_KEY"] = " sk-ant "
	w.vars["TEAM_MEMORY_SYNC_URL"] = "https://legacy.example"
	w.vars["MEMDIR_TIMEOUT"] = " "
	c, err := w.load(&Options{Overrides: []Override{
		{Key: "model", Value: "openai:b", Source: "--model"},
		{Key: "team.repo", Value: " r ", Source: "host"},
		{Key: "anthropic.api_key", Value: "sk-host", Source: "host"},
		{Key: "recall.manifest_tokens", Value: "", Source: "host"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	file := w.file()
	want := map[string]string{
		"model":                  "openai:b @ --model",
		"timeout":                "45s @ " + file + ":2",
		"max_retries":            "2 @ default",
		"stream":                 "false @ default",
		"anthropic.base_url":     "https://api.anthropic.com @ default",
		"anthropic.api_key":      "sk-host @ host",
		"anthropic.auth_token":   " @ ",
		"openai.base_url":        "https://api.openai.com/v1 @ default",
		"openai.api_key":         " @ ",
		"embed.model":            " @ ",
		"embed.base_url":         " @ ",
		"embed.api_key":          " @ ",
		"embed.dimensions":       " @ ",
		"embed.batch_size":       "64 @ default",
		"recall.manifest_tokens": " @ host",
		"team.url":               "https://legacy.example @ TEAM_MEMORY_SYNC_URL",
		"team.token":             "mdt_file @ " + file + ":5",
		"team.repo":              "r @ host",
	}
	if diff := cmp.Diff(want, settings(c)); diff != "" {
		t.Errorf("settings (-want +got):\n%s", diff)
	}
	if !c.FileFound || c.File != file {
		t.Errorf("file %s found %v, want %s found", c.File, c.FileFound, file)
	}
	if p, n := c.ModelName(); p != "openai" || n != "b" {
		t.Errorf("ModelName = %q, %q", p, n)
	}
	if c.AttemptTimeout() != 45*time.Second || c.Retries() != 2 || c.Streaming() || c.ManifestTokens() != 0 {
		t.Errorf("typed values: %v %v %v %v", c.AttemptTimeout(), c.Retries(), c.Streaming(), c.ManifestTokens())
	}
}

func TestLoadErrors(t *testing.T) {
	tests := []struct {
		name     string
		vars     map[string]string
		over     []Override
		want     error
		contains []string
	}{
		{"bad environment value", map[string]string{"MEMDIR_EMBED_DIMENSIONS": "0"}, nil, memdir.ErrInvalid, []string{"embed.dimensions", "MEMDIR_EMBED_DIMENSIONS"}},
		{"bad environment value under a good override", map[string]string{"MEMDIR_TIMEOUT": "soon"}, []Override{{Key: "timeout", Value: "1m", Source: "--timeout"}},
			memdir.ErrInvalid, []string{"timeout", "MEMDIR_TIMEOUT"}},
		{"bad override", nil, []Override{{Key: "stream", Value: "maybe", Source: "--stream"}}, memdir.ErrInvalid, []string{`stream = "maybe"`, "--stream"}},
		{"unknown override", nil, []Override{{Key: "colour", Value: "blue", Source: "host"}}, memdir.ErrInvalid, []string{`unknown key "colour"`, "host", "team.url"}},
		{"missing MEMDIR_CONFIG file", map[string]string{"MEMDIR_CONFIG": "nowhere.yaml"}, nil, memdir.ErrNotFound, []string{"nowhere.yaml", "MEMDIR_CONFIG"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t)
			maps.Copy(w.vars, tt.vars)
			_, err := w.load(&Options{Overrides: tt.over})
			if !errors.Is(err, tt.want) {
				t.Fatalf("error = %v, want %v", err, tt.want)
			}
			for _, s := range tt.contains {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not mention %s", err, s)
				}
			}
		})
	}
}

// TestLoadFileLocation checks where the file comes from: MEMDIR_CONFIG,
// relative to Options.Dir, else the config directory.
func TestLoadFileLocation(t *testing.T) {
	w := newWorld(t)
	if err := os.WriteFile(filepath.Join(w.dir, "elsewhere.yaml"), []byte("model: none\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	w.vars["MEMDIR_CONFIG"] = "elsewhere.yaml"
	c, err := w.load(nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(w.dir, "elsewhere.yaml"); c.File != want || !c.FileFound || c.Model != (Setting{"none", want + ":1"}) {
		t.Errorf("file %s (found %v), model %+v; want the model from %s", c.File, c.FileFound, c.Model, want)
	}

	delete(w.vars, "MEMDIR_CONFIG")
	w.vars["MEMDIR_CONFIG_DIR"] = filepath.Join(w.home, "cfg")
	if c, err = w.load(nil); err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(w.home, "cfg", "config.yaml"); c.File != want || c.FileFound {
		t.Errorf("file %s (found %v), want %s, not found", c.File, c.FileFound, want)
	}
}

// TestLoadNilEnvironment checks that a nil lookup reads nothing from the
// process's environment.
func TestLoadNilEnvironment(t *testing.T) {
	t.Setenv("MEMDIR_MODEL", "openai:from-the-process")
	t.Setenv("HOME", t.TempDir()) // os.UserHomeDir, where the file is looked for
	c, err := Load(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.Model.Set() {
		t.Errorf("model %+v came from the process's environment", c.Model)
	}
}

// TestEmbedInheritance checks what the embedder gets when embed.base_url
// and embed.api_key are not set: the openai ones, the key only while the
// embeddings go to the openai base URL.
func TestEmbedInheritance(t *testing.T) {
	tests := []struct {
		name      string
		vars      map[string]string
		base, key Setting
	}{
		{"defaults", nil, Setting{"https://api.openai.com/v1", "openai.base_url (default)"}, Setting{}},
		{"the openai server and key", map[string]string{"OPENAI_BASE_URL": "http://h/v1", "OPENAI_API_KEY": "k"},
			Setting{"http://h/v1", "openai.base_url (OPENAI_BASE_URL)"}, Setting{"k", "openai.api_key (OPENAI_API_KEY)"}},
		{"the same server named again", map[string]string{"OPENAI_BASE_URL": "http://h/v1", "MEMDIR_EMBED_BASE_URL": "http://h/v1/", "OPENAI_API_KEY": "k"},
			Setting{"http://h/v1/", "MEMDIR_EMBED_BASE_URL"}, Setting{"k", "openai.api_key (OPENAI_API_KEY)"}},
		{"another server", map[string]string{"MEMDIR_EMBED_BASE_URL": "http://other/v1", "OPENAI_API_KEY": "k"},
			Setting{"http://other/v1", "MEMDIR_EMBED_BASE_URL"}, Setting{}},
		{"its own key", map[string]string{"MEMDIR_EMBED_BASE_URL": "http://other/v1", "OPENAI_API_KEY": "k", "MEMDIR_EMBED_API_KEY": "e"},
			Setting{"http://other/v1", "MEMDIR_EMBED_BASE_URL"}, Setting{"e", "MEMDIR_EMBED_API_KEY"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t)
			maps.Copy(w.vars, tt.vars)
			c, err := w.load(nil)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]Setting{tt.base, tt.key}, []Setting{c.EmbedBaseURL(), c.EmbedAPIKey()}); diff != "" {
				t.Errorf("embed base URL and key (-want +got):\n%s", diff)
			}
		})
	}
}

func TestManifestTokens(t *testing.T) {
	for v, want := range map[string]int{"auto": 0, "ALL": -1, "unlimited": -1, "1500": 1500} {
		w := newWorld(t)
		w.vars["MEMDIR_MANIFEST_TOKENS"] = v
		c, err := w.load(nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := c.ManifestTokens(); got != want {
			t.Errorf("%s: ManifestTokens = %d, want %d", v, got, want)
		}
	}
}

// TestKeysAreCopies checks that a caller cannot change the key table
// through Keys.
func TestKeysAreCopies(t *testing.T) {
	ks := Keys()
	ks[0].Name, ks[0].Env[0] = "x", "X"
	if k := Keys()[0]; k.Name != "model" || k.Env[0] != "MEMDIR_MODEL" {
		t.Errorf("Keys()[0] = %+v after a caller changed its copy", k)
	}
}

// FuzzConfigFile checks that any file content either loads or fails with an
// ErrInvalid error naming the file, and that every value it sets is traced to
// the file.
func FuzzConfigFile(f *testing.F) {
	for _, s := range []string{
		"model: anthropic:claude-sonnet-4-5\ntimeout: 30s\n",
		"openai:\n  base_url: http://localhost:11434/v1\nteam:\n  url: https://t\n  token: x\n  repo: r\n",
		"model: [1]\n",
		"anthropic: {base_url: &a x, api_key: *a}\n",
		"stream: !!binary aGk=\n",
		"---\nmodel: a\n---\nmodel: b\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		const path = "/cfg/config.yaml"
		c := &Config{}
		err := c.parseFile(path, []byte(text))
		if err != nil {
			if !errors.Is(err, memdir.ErrInvalid) || !strings.Contains(err.Error(), path) {
				t.Fatalf("error %q does not wrap ErrInvalid and name the file", err)
			}
			return
		}
		for _, k := range keys {
			if s := k.field(c); s.Set() && !strings.HasPrefix(s.Source, path+":") {
				t.Fatalf("key %s = %q has source %q", k.Name, s.Value, s.Source)
			}
		}
	})
}
