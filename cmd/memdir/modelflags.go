package main

// Configuration is resolved by package config (defaults, then the config
// file, then the environment, then flags, each later one winning, every
// value remembering its source); this file is the command line's part: the
// flags that override keys, and --no-model. Keys and tokens have no flag:
// command lines show in ps.

import (
	"flag"
	"fmt"
	"strings"

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/config"
	"github.com/memdir/memdir/config/provider"
	"github.com/memdir/memdir/internal/cli"
	"github.com/memdir/memdir/llm"
	"github.com/memdir/memdir/recall"
)

// modelFlags are the configuration flags of one command (--model,
// --timeout, --max-retries, --stream, --anthropic-base-url,
// --openai-base-url, --embed-model, --embed-base-url, --embed-dimensions,
// --embed-batch-size, --manifest-tokens, --team-url, --team-repo) and, for
// the commands that can do without a model, --no-model. Every command that
// reads the configuration declares them with addModelFlags and resolves it
// through them, so that they all read it alike.
//
// A nil *modelFlags is a command line that set none of them.
type modelFlags struct {
	fs      *flag.FlagSet
	noModel bool
}

// configKeys is a set of groups of configuration keys, so that a command
// declares the flags of only the keys it reads.
type configKeys int

const (
	keysModel  configKeys = 1 << iota // model, timeout, max_retries, stream, the API base URLs
	keysRecall                        // recall.manifest_tokens
	keysEmbed                         // embed.*
	keysTeam                          // team.*
	keysAll    = keysModel | keysRecall | keysEmbed | keysTeam
)

// keyGroups is the groups that read the configuration key named name:
// the embedder reads the attempt timeout, the retries and the OpenAI base
// URL as the model does.
func keyGroups(name string) configKeys {
	switch {
	case strings.HasPrefix(name, "embed."):
		return keysEmbed
	case strings.HasPrefix(name, "team."):
		return keysTeam
	case strings.HasPrefix(name, "recall."):
		return keysRecall
	case name == "timeout" || name == "max_retries" || name == "openai.base_url":
		return keysModel | keysEmbed
	}
	return keysModel
}

// addModelFlags declares the flags of the keys recall reads (the model,
// the selector's budget and the embedder) on fs, and --no-model with the
// help text noModelUsage unless that is empty.
func addModelFlags(fs *flag.FlagSet, noModelUsage string) *modelFlags {
	return addConfigFlags(fs, noModelUsage, keysModel|keysRecall|keysEmbed)
}

// addConfigFlags declares the flags of the configuration keys in the
// groups keys on fs, and --no-model with the help text noModelUsage
// unless that is empty. A command declares only the groups it reads: a
// flag it would ignore is worse than none.
func addConfigFlags(fs *flag.FlagSet, noModelUsage string, keys configKeys) *modelFlags {
	mf := &modelFlags{fs: fs}
	for _, k := range config.Keys() {
		if k.Flag == "" || keys&keyGroups(k.Name) == 0 {
			continue
		}
		usage := k.Usage + " (config key " + k.Name + ")"
		if k.Name != "stream" {
			fs.String(k.Flag, "", usage)
			continue
		}
		fs.Var(&boolFlag{}, k.Flag, usage)
	}
	if noModelUsage != "" {
		fs.BoolVar(&mf.noModel, "no-model", false, noModelUsage)
	}
	return mf
}

// boolFlag is a flag that may stand alone (--stream) or take a value
// (--stream=false), and keeps the text for checking with the other sources.
type boolFlag struct{ v string }

func (b *boolFlag) String() string     { return b.v }
func (b *boolFlag) Set(s string) error { b.v = s; return nil }
func (b *boolFlag) IsBoolFlag() bool   { return true }

// isConfigFlag reports whether the flag named name overrides a
// configuration key.
func isConfigFlag(name string) bool {
	for _, k := range config.Keys() {
		if k.Flag != "" && k.Flag == name {
			return true
		}
	}
	return false
}

// loadConfig resolves the configuration in env, with no flags.
func loadConfig(env *cli.Env) (*config.Config, error) {
	return config.Load(env.LookupEnv, &config.Options{Dir: env.Cwd})
}

// config resolves the configuration in env with the flags that were set on
// top. --no-model does not show in it: see model.
func (mf *modelFlags) config(env *cli.Env) (*config.Config, error) {
	var over []config.Override
	if mf != nil {
		byFlag := map[string]string{}
		for _, k := range config.Keys() {
			if k.Flag != "" {
				byFlag[k.Flag] = k.Name
			}
		}
		mf.fs.Visit(func(f *flag.Flag) {
			if name, ok := byFlag[f.Name]; ok {
				over = append(over, config.Override{Key: name, Value: f.Value.String(), Source: "--" + f.Name})
			}
		})
	}
	return config.Load(env.LookupEnv, &config.Options{Dir: env.Cwd, Overrides: over})
}

// model returns the model cfg configures, or nil and no error when none is
// or --no-model was given: callers fall back (recall ranks lexically).
func (mf *modelFlags) model(cfg *config.Config) (llm.Model, error) {
	if mf != nil && mf.noModel {
		return nil, nil
	}
	return provider.NewModel(cfg)
}

// loadModel is config followed by model, for the commands that need the
// configuration only for the model. With --no-model it reads nothing.
func (mf *modelFlags) loadModel(env *cli.Env) (llm.Model, error) {
	if mf != nil && mf.noModel {
		return nil, nil
	}
	cfg, err := mf.config(env)
	if err != nil {
		return nil, err
	}
	return mf.model(cfg)
}

// requireModel is loadModel for a command that cannot work without a model:
// none is an error saying how to configure one.
func (mf *modelFlags) requireModel(env *cli.Env, cmd string) (llm.Model, error) {
	m, err := mf.loadModel(env)
	if err != nil {
		return nil, err
	}
	if m == nil {
		return nil, fmt.Errorf("%s needs a model: set MEMDIR_MODEL (for example anthropic:claude-sonnet-4-5 or openai:gpt-4.1-mini) or model: in the config file; see 'memdir config': %w", cmd, memdir.ErrInvalid)
	}
	return m, nil
}

// recallEmbedder returns the configured embedder and the embedding cache of
// the memory directory dir, for recall; nil, nil when no embedder is
// configured.
func recallEmbedder(env *cli.Env, cfg *config.Config, dir string) (llm.Embedder, *recall.EmbedCache, error) {
	e, err := provider.NewEmbedder(cfg)
	if err != nil || e == nil {
		return nil, nil, err
	}
	path, err := recall.DefaultEmbedCachePath(dir, env.LookupEnv)
	if err != nil {
		return nil, nil, err
	}
	cache, err := recall.OpenEmbedCache(path)
	if err != nil {
		return nil, nil, err
	}
	return e, cache, nil
}
