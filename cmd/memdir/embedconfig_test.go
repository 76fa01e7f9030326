package main

import (
	"context"
	"errors"
	"flag"
	"maps"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/memdirtest"
)

func TestNewEmbedderNone(t *testing.T) {
	for _, model := range []string{"", "none"} {
		w := newMemWorld(t)
		if model != "" {
			w.vars["MEMDIR_EMBED_MODEL"] = model
		}
		e, err := newEmbedder(mustLoad(t, w))
		if e != nil || err != nil {
			t.Errorf("MEMDIR_EMBED_MODEL=%q: newEmbedder = %v, %v; want nil, nil so recall stays lexical", model, e, err)
		}
	}
}

func TestNewEmbedderErrors(t *testing.T) {
	tests := []struct {
		name    string
		vars    map[string]string
		mention []string
	}{
		{"unknown provider", map[string]string{"MEMDIR_EMBED_MODEL": "voyage:v3"}, []string{`"voyage"`, "MEMDIR_EMBED_MODEL", "openai:NAME"}},
		{"api.openai.com without a key", map[string]string{"MEMDIR_EMBED_MODEL": "openai:text-embedding-3-small"},
			[]string{"MEMDIR_EMBED_API_KEY", "OPENAI_API_KEY", "MEMDIR_EMBED_BASE_URL", "api.openai.com"}},
		{"the OpenAI key is not sent elsewhere, nor to OpenAI when embed.base_url is it", map[string]string{
			"MEMDIR_EMBED_MODEL": "openai:text-embedding-3-small", "OPENAI_API_KEY": "sk", "OPENAI_BASE_URL": "http://localhost:11434/v1",
			"MEMDIR_EMBED_BASE_URL": "https://api.openai.com/v1"}, []string{"MEMDIR_EMBED_API_KEY"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newMemWorld(t)
			maps.Copy(w.vars, tt.vars)
			_, err := newEmbedder(mustLoad(t, w))
			if !errors.Is(err, memdir.ErrInvalid) {
				t.Fatalf("error = %v, want ErrInvalid", err)
			}
			for _, s := range tt.mention {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not mention %s", err, s)
				}
			}
		})
	}
	w := newMemWorld(t)
	w.vars["MEMDIR_EMBED_DIMENSIONS"] = "0"
	if _, err := loadTestConfig(t, w); !errors.Is(err, memdir.ErrInvalid) || !strings.Contains(err.Error(), "embed.dimensions") {
		t.Errorf("dimensions 0: error = %v, want ErrInvalid naming embed.dimensions", err)
	}
}

// TestNewEmbedderEndToEnd builds the embedder from configuration and calls
// the fake server through it, checking which key goes where.
func TestNewEmbedderEndToEnd(t *testing.T) {
	tests := []struct {
		name string
		vars func(url string) map[string]string
		auth string
		dims int
	}{
		{"local server without a key", func(url string) map[string]string {
			return map[string]string{"MEMDIR_EMBED_MODEL": "openai:nomic-embed-text", "MEMDIR_EMBED_BASE_URL": url}
		}, "", 0},
		{"the openai server and key", func(url string) map[string]string {
			return map[string]string{"MEMDIR_EMBED_MODEL": "openai:nomic-embed-text", "OPENAI_BASE_URL": url, "OPENAI_API_KEY": "sk-openai"}
		}, "Bearer sk-openai", 0},
		{"another server: the OpenAI key stays home", func(url string) map[string]string {
			return map[string]string{"MEMDIR_EMBED_MODEL": "openai:nomic-embed-text", "MEMDIR_EMBED_BASE_URL": url, "OPENAI_API_KEY": "sk-openai"}
		}, "", 0},
		{"its own key and dimensions", func(url string) map[string]string {
			return map[string]string{"MEMDIR_EMBED_MODEL": "openai:nomic-embed-text", "MEMDIR_EMBED_BASE_URL": url, "OPENAI_API_KEY": "sk-openai",
				"MEMDIR_EMBED_API_KEY": "sk-embed", "MEMDIR_EMBED_DIMENSIONS": "32"}
		}, "Bearer sk-embed", 32},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := memdirtest.NewEmbedServer(t)
			w := newMemWorld(t)
			maps.Copy(w.vars, tt.vars(srv.OpenAIBaseURL()))
			e, err := newEmbedder(mustLoad(t, w))
			if err != nil {
				t.Fatal(err)
			}
			got, err := e.Embed(context.Background(), []string{"hello"})
			if err != nil {
				t.Fatal(err)
			}
			r := srv.Requests()[0]
			type call struct {
				Auth, Model string
				Dims, Len   int
			}
			wantLen := memdirtest.DefaultEmbedDim
			if tt.dims > 0 {
				wantLen = tt.dims
			}
			want := call{tt.auth, "nomic-embed-text", tt.dims, wantLen}
			if diff := cmp.Diff(want, call{r.Header.Get("Authorization"), r.Model, r.Dimensions, len(got.Vectors[0])}); diff != "" {
				t.Errorf("call (-want +got):\n%s", diff)
			}
		})
	}
}

func TestEmbedderFromFlags(t *testing.T) {
	srv := memdirtest.NewEmbedServer(t)
	w := newMemWorld(t)
	w.vars["MEMDIR_EMBED_MODEL"] = "openai:from-env"
	w.vars["MEMDIR_EMBED_BASE_URL"] = "http://127.0.0.1:1/v1"
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	addConfigFlags(fs)
	if err := fs.Parse([]string{"--embed-model", "openai:from-flag", "--embed-base-url", srv.OpenAIBaseURL()}); err != nil {
		t.Fatal(err)
	}
	env := &Env{LookupEnv: func(k string) (string, bool) { v, ok := w.vars[k]; return v, ok }, Cwd: w.project}
	e, src, err := embedderFromFlags(env, fs)
	if err != nil {
		t.Fatal(err)
	}
	if src.Value != "openai:from-flag" || src.Source != "--embed-model" || e.EmbedderName() != "openai:from-flag" {
		t.Errorf("embedder %s from %+v, want openai:from-flag from --embed-model", e.EmbedderName(), src)
	}
	if _, err := e.Embed(context.Background(), []string{"x"}); err != nil {
		t.Errorf("the --embed-base-url server was not used: %v", err)
	}

	delete(w.vars, "MEMDIR_EMBED_MODEL")
	fs = flag.NewFlagSet("x", flag.ContinueOnError)
	addConfigFlags(fs)
	if e, src, err := embedderFromFlags(env, fs); e != nil || src.Set() || err != nil {
		t.Errorf("no embedding model: %v, %+v, %v; want nil, empty, nil", e, src, err)
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

// TestEmbedderKeyNamedInErrors checks that a refused key names the variable
// the user should set.
func TestEmbedderKeyNamedInErrors(t *testing.T) {
	for _, tt := range []struct {
		name, want string
		vars       func(url string) map[string]string
	}{
		{"keyless local server", "MEMDIR_EMBED_API_KEY", func(url string) map[string]string {
			return map[string]string{"MEMDIR_EMBED_BASE_URL": url}
		}},
		{"key from OPENAI_API_KEY", "OPENAI_API_KEY", func(url string) map[string]string {
			return map[string]string{"OPENAI_BASE_URL": url, "OPENAI_API_KEY": "sk-old"}
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := memdirtest.NewEmbedServer(t)
			srv.Enqueue(memdirtest.EmbedReply{Status: 401, Message: "unauthorized"})
			w := newMemWorld(t)
			w.vars["MEMDIR_EMBED_MODEL"] = "openai:m"
			w.vars["MEMDIR_MAX_RETRIES"] = "0"
			maps.Copy(w.vars, tt.vars(srv.OpenAIBaseURL()))
			e, err := newEmbedder(mustLoad(t, w))
			if err != nil {
				t.Fatal(err)
			}
			_, err = e.Embed(context.Background(), []string{"x"})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error = %v, want it to name %s", err, tt.want)
			}
		})
	}
}
