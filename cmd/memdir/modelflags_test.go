package main

import (
	"context"
	"errors"
	"flag"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/config"
	"github.com/memdir/memdir/config/provider"
	"github.com/memdir/memdir/internal/cli"
	"github.com/memdir/memdir/memdirtest"
)

// memEnv is the Env of w for calling the helpers directly.
func memEnv(w *memWorld) *cli.Env {
	return &cli.Env{
		Stdout:    io.Discard,
		Stderr:    io.Discard,
		LookupEnv: func(k string) (string, bool) { v, ok := w.vars[k]; return v, ok },
		Cwd:       w.project,
		Now:       func() time.Time { return w.now },
	}
}

// parseModelFlags declares the model flags on a new flag set, with
// --no-model when noModelUsage is set, and parses args.
func parseModelFlags(tb testing.TB, noModelUsage string, args ...string) *modelFlags {
	tb.Helper()
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	mf := addModelFlags(fs, noModelUsage)
	if err := fs.Parse(args); err != nil {
		tb.Fatal(err)
	}
	return mf
}

// TestModelFlagsConfig checks the helper every command uses: the config
// flags declared on their own flag set override the rest.
func TestModelFlagsConfig(t *testing.T) {
	w := newMemWorld(t)
	w.vars["MEMDIR_MODEL"] = "anthropic:a"
	mf := parseModelFlags(t, "", "--model", "openai:b", "--stream")
	cfg, err := mf.config(memEnv(w))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Model != (config.Setting{Value: "openai:b", Source: "--model"}) || !cfg.Streaming() || cfg.AttemptTimeout() != 2*time.Minute || cfg.Retries() != 2 {
		t.Errorf("config = %+v", cfg)
	}
}

// TestModelFlagsEmbedder checks that the embedding flags reach the embedder
// built from the configuration.
func TestModelFlagsEmbedder(t *testing.T) {
	srv := memdirtest.NewEmbedServer(t)
	w := newMemWorld(t)
	w.vars["MEMDIR_EMBED_MODEL"] = "openai:from-env"
	w.vars["MEMDIR_EMBED_BASE_URL"] = "http://127.0.0.1:1/v1"
	mf := parseModelFlags(t, "", "--embed-model", "openai:from-flag", "--embed-base-url", srv.OpenAIBaseURL())
	cfg, err := mf.config(memEnv(w))
	if err != nil {
		t.Fatal(err)
	}
	e, err := provider.NewEmbedder(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if src := cfg.Embed.Model; src.Value != "openai:from-flag" || src.Source != "--embed-model" || e.EmbedderName() != "openai:from-flag" {
		t.Errorf("embedder %s from %+v, want openai:from-flag from --embed-model", e.EmbedderName(), src)
	}
	if _, err := e.Embed(context.Background(), []string{"x"}); err != nil {
		t.Errorf("the --embed-base-url server was not used: %v", err)
	}

	delete(w.vars, "MEMDIR_EMBED_MODEL")
	if cfg, err = parseModelFlags(t, "").config(memEnv(w)); err != nil {
		t.Fatal(err)
	}
	if e, err := provider.NewEmbedder(cfg); e != nil || cfg.Embed.Model.Set() || err != nil {
		t.Errorf("no embedding model: %v, %+v, %v; want nil, empty, nil", e, cfg.Embed.Model, err)
	}
}

// TestModelFlagsNoModel checks --no-model: no model, the rest of the
// configuration as without it, and nothing read by loadModel.
func TestModelFlagsNoModel(t *testing.T) {
	w := newMemWorld(t)
	w.vars["MEMDIR_MODEL"] = "openai:llama3.2"
	w.vars["OPENAI_BASE_URL"] = "http://127.0.0.1:1/v1"
	w.vars["MEMDIR_MANIFEST_TOKENS"] = "all"
	env := memEnv(w)

	mf := parseModelFlags(t, "rank lexically", "--no-model")
	cfg, err := mf.config(env)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Model.Value != "openai:llama3.2" || cfg.ManifestTokens() != -1 {
		t.Errorf("--no-model changed the configuration: model %+v, manifest tokens %d", cfg.Model, cfg.ManifestTokens())
	}
	if m, err := mf.model(cfg); m != nil || err != nil {
		t.Errorf("model with --no-model = %v, %v; want nil, nil", m, err)
	}
	if m, err := parseModelFlags(t, "rank lexically").model(cfg); m == nil || err != nil {
		t.Errorf("model without --no-model = %v, %v; want a model", m, err)
	}

	w.vars["MEMDIR_TIMEOUT"] = "soon" // a bad configuration is not read
	if m, err := mf.loadModel(env); m != nil || err != nil {
		t.Errorf("loadModel with --no-model = %v, %v; want nil, nil", m, err)
	}
	if _, err := parseModelFlags(t, "rank lexically").loadModel(env); !errors.Is(err, memdir.ErrInvalid) {
		t.Errorf("loadModel of a bad configuration: error = %v, want ErrInvalid", err)
	}

	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	addModelFlags(fs, "")
	if fs.Lookup("no-model") != nil || fs.Lookup("model") == nil {
		t.Errorf("addModelFlags without a --no-model usage: --no-model declared %v, --model %v", fs.Lookup("no-model") != nil, fs.Lookup("model") != nil)
	}
}

func TestModelFlagsRequireModel(t *testing.T) {
	w := newMemWorld(t)
	_, err := parseModelFlags(t, "").requireModel(memEnv(w), "dream")
	if !errors.Is(err, memdir.ErrInvalid) || !strings.HasPrefix(err.Error(), "dream needs a model: set MEMDIR_MODEL") {
		t.Errorf("error = %v, want ErrInvalid saying dream needs a model", err)
	}
}
