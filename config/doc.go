// Package config resolves memdir's configuration as the memdir command
// does: which model and embedding model to use and how to reach them, the
// team memory server, and recall's tuning, each value with where it came
// from.
//
// The sources, lowest to highest: defaults, the config file (YAML: $MEMDIR_CONFIG,
// else config.yaml in [locate.ConfigDir]), the environment (MEMDIR_MODEL,
// ANTHROPIC_API_KEY, OPENAI_BASE_URL, MEMDIR_EMBED_MODEL, MEMDIR_TEAM_URL
// and the others [Keys] lists), and overrides such as command-line flags.
// [Load] reads the environment only through a function the caller passes
// (os.LookupEnv, or a map in tests; only when HOME is missing from it does
// it fall back to os.UserHomeDir) and makes no network request. Every [Setting] says its source ("default",
// "FILE:LINE", the variable's name, or the override's), which is what
// `memdir config` prints.
//
// Keys and tokens come only from the environment (the team token also from
// the file) or from an override; nothing here prints them.
//
// Building the model and the embedder the configuration names is package
// [github.com/memdir/memdir/config/provider]'s work: it links the provider
// SDKs, which a host that only reads the configuration does without. The
// memdir command builds its models there too, so a Go host that calls
// provider.NewModel on the configuration [Load] returns gets the model
// `memdir config` describes.
//
// A Go host that builds its model as memdir does:
//
//	cfg, err := config.Load(os.LookupEnv, nil)
//	if err != nil {
//		return err // names the key, the bad value and its source
//	}
//	model, err := provider.NewModel(cfg) // nil, nil: no model configured
//	if err != nil {
//		return err // such as a model on api.openai.com with no OPENAI_API_KEY
//	}
//	opts := &recall.Options{Model: model, ManifestTokens: cfg.ManifestTokens()}
//
// The package example runs this against a fake server.
package config
