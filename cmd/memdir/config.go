package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/config"
	"github.com/memdir/memdir/config/provider"
	"github.com/memdir/memdir/internal/cli"
	"github.com/memdir/memdir/openai"
)

var configCmd = &cli.Command{
	Name:  "config",
	Args:  "[--json] [flags]",
	Short: "show the effective configuration and where each value comes from",
	Long: `Config prints memdir's effective configuration: every key, its value, and
where the value came from: "default", the config file and line, the
environment variable, or the flag. API keys and tokens are never printed,
only whether they are set and from where.

Precedence, lowest to highest: defaults, the config file, the environment,
flags. The config file is $MEMDIR_CONFIG when set, else config.yaml in
memdir's config directory ($MEMDIR_CONFIG_DIR, else $XDG_CONFIG_HOME/memdir,
else ~/.config/memdir). It is YAML; an unknown key is an error naming the key
and the line:

  model: anthropic:claude-sonnet-4-5   # or openai:gpt-4.1-mini, or none
  timeout: 2m                          # per attempt of a model call
  max_retries: 2                       # on 429, 5xx and timeouts
  stream: false                        # use the streaming APIs
  anthropic:
    base_url: https://api.anthropic.com
  openai:
    base_url: http://localhost:11434/v1  # Ollama, vLLM, llama.cpp: their /v1
  embed:                                 # optional: semantic search
    model: openai:text-embedding-3-small # or openai:nomic-embed-text, or none
    base_url: http://localhost:11434/v1  # default: openai.base_url
    dimensions: 512                      # default: the model's
    batch_size: 64                       # texts per request
  team:
    url: https://memdir.example.com
    repo: github.com/acme/app
    token: mdt_...                       # better in MEMDIR_TEAM_TOKEN

Environment variables:
  MEMDIR_MODEL, MEMDIR_TIMEOUT, MEMDIR_MAX_RETRIES, MEMDIR_STREAM
  ANTHROPIC_API_KEY, ANTHROPIC_AUTH_TOKEN, ANTHROPIC_BASE_URL
  OPENAI_API_KEY, OPENAI_BASE_URL
  MEMDIR_EMBED_MODEL, MEMDIR_EMBED_BASE_URL, MEMDIR_EMBED_API_KEY,
  MEMDIR_EMBED_DIMENSIONS, MEMDIR_EMBED_BATCH_SIZE
  MEMDIR_TEAM_URL (or TEAM_MEMORY_SYNC_URL), MEMDIR_TEAM_TOKEN, MEMDIR_TEAM_REPO

API keys come only from the environment. With no model configured, commands
that can use one (recall) work without it and say so.

The embedding model's base URL defaults to openai.base_url, and its key to
OPENAI_API_KEY while both go to that same server; MEMDIR_EMBED_API_KEY is
the key for any other. api.openai.com without a key is an error before any
call; a local server (Ollama, llama.cpp, vLLM, LM Studio) needs no key.

The flags below override the file and the environment for this run; every
command that calls a model accepts them too.

Examples:
  memdir config
  MEMDIR_MODEL=openai:llama3.2 OPENAI_BASE_URL=http://localhost:11434/v1 memdir config
  memdir config --model anthropic:claude-haiku-4-5 --json`,
	Setup: cli.Setup(runConfig),
}

// configOptions holds the flag values of memdir config.
type configOptions struct {
	asJSON bool
	mf     *modelFlags
}

func (o *configOptions) Declare(fs *flag.FlagSet) {
	fs.BoolVar(&o.asJSON, "json", false, "print JSON")
	o.mf = addConfigFlags(fs, "", keysAll)
}

func runConfig(ctx context.Context, env *cli.Env, o *configOptions, args []string) error {
	if len(args) > 0 {
		return cli.Usagef("config takes no arguments")
	}
	cfg, err := o.mf.config(env)
	if err != nil {
		return err
	}
	view := newConfigView(cfg)
	return cli.Emit(env, o.asJSON, view, view.print)
}

// configView is what `memdir config` shows, secrets reduced to set/not set.
type configView struct {
	File      string        `json:"file"`
	FileFound bool          `json:"file_found"`
	Settings  []settingView `json:"settings"`
	Notes     []string      `json:"notes,omitempty"`
}

type settingView struct {
	Key    string `json:"key"`
	Value  string `json:"value,omitempty"` // absent for secrets
	Set    bool   `json:"set"`
	Secret bool   `json:"secret,omitempty"`
	Source string `json:"source,omitempty"`
	// Env lists the environment variables that set the key.
	Env  []string `json:"env,omitempty"`
	Flag string   `json:"flag,omitempty"`
}

func newConfigView(c *config.Config) *configView {
	v := &configView{File: c.File, FileFound: c.FileFound}
	for _, k := range config.Keys() {
		s, _ := c.Get(k.Name)
		switch k.Name { // shown as what the embedder will use
		case "embed.base_url":
			s = c.EmbedBaseURL()
		case "embed.api_key":
			s = c.EmbedAPIKey()
		}
		sv := settingView{Key: k.Name, Set: s.Set(), Secret: k.Secret, Source: s.Source, Env: k.Env}
		if k.Flag != "" {
			sv.Flag = "--" + k.Flag
		}
		if !k.Secret {
			sv.Value = redactURL(s.Value)
		}
		v.Settings = append(v.Settings, sv)
	}
	prov, name := c.ModelName()
	switch prov {
	case "":
		v.Notes = append(v.Notes, "No model is configured: recall ranks memories lexically. Set MEMDIR_MODEL or model: in the config file to use one.")
	case "anthropic":
		if !c.Anthropic.APIKey.Set() && !c.Anthropic.AuthToken.Set() && c.Anthropic.BaseURL.Value == config.DefaultAnthropicBaseURL {
			v.Notes = append(v.Notes, fmt.Sprintf("Model %s is an Anthropic model but ANTHROPIC_API_KEY is not set.", name))
		}
	case "openai":
		if !c.OpenAI.APIKey.Set() && c.OpenAI.BaseURL.Value == config.DefaultOpenAIBaseURL {
			v.Notes = append(v.Notes, fmt.Sprintf("Model %s uses api.openai.com but OPENAI_API_KEY is not set (local servers need none: set OPENAI_BASE_URL).", name))
		}
	default:
		v.Notes = append(v.Notes, fmt.Sprintf("Model provider %q is unknown: use anthropic:NAME or openai:NAME.", prov))
	}
	if p, _ := c.EmbedModelName(); p == "" {
		v.Notes = append(v.Notes, "No embedding model is configured: recall does not use semantic search. Set MEMDIR_EMBED_MODEL (such as openai:text-embedding-3-small) to use one.")
	} else if _, err := provider.NewEmbedder(c); err != nil {
		v.Notes = append(v.Notes, strings.TrimSuffix(err.Error(), ": "+memdir.ErrInvalid.Error())+".")
	} else {
		v.Notes = append(v.Notes, fmt.Sprintf("Semantic search: embeddings from %s at %s.", c.Embed.Model.Value, redactURL(cmp.Or(c.EmbedBaseURL().Value, openai.DefaultBaseURL))))
	}
	return v
}

func (v *configView) print(w io.Writer) error {
	state := "not found, using defaults"
	if v.FileFound {
		state = "loaded"
	}
	fmt.Fprintf(w, "Config file: %s (%s)\n\n", v.File, state)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "KEY\tVALUE\tSOURCE")
	for _, s := range v.Settings {
		value := s.Value
		switch {
		case !s.Set:
			value = "not set"
		case s.Secret:
			value = "set (from " + s.Source + ")"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", s.Key, value, s.Source)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, n := range v.Notes {
		fmt.Fprintf(w, "\n%s\n", n)
	}
	return nil
}
