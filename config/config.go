package config

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/recall"
)

// The providers' own API roots, the defaults of anthropic.base_url and
// openai.base_url. They equal anthropic.DefaultBaseURL and
// openai.DefaultBaseURL (a test in config/provider holds them together); they
// are repeated here so that resolving the configuration needs no SDK.
const (
	DefaultAnthropicBaseURL = "https://api.anthropic.com"
	DefaultOpenAIBaseURL    = "https://api.openai.com/v1"
)

// Setting is one configuration value and where it came from.
type Setting struct {
	Value string
	// Source is "default", "FILE:LINE" for the config file, the name of an
	// environment variable, or what an [Override] says (the CLI's are
	// "--flag"). Empty when the value is not set.
	Source string
}

// Set reports whether the setting has a value.
func (s Setting) Set() bool { return s.Value != "" }

// Config is memdir's effective configuration. Every value was checked by
// [Load]; the typed accessors ([Config.AttemptTimeout] and the others) read
// them.
type Config struct {
	// File is the configuration file consulted; FileFound says whether it
	// existed.
	File      string
	FileFound bool

	// Model is "provider:name", such as anthropic:claude-sonnet-4-5; empty
	// (or "none") means no model.
	Model      Setting
	Timeout    Setting // per attempt, a Go duration or a number of seconds
	MaxRetries Setting
	Stream     Setting

	Anthropic struct{ BaseURL, APIKey, AuthToken Setting }
	OpenAI    struct{ BaseURL, APIKey Setting }
	// Embed configures the optional embedding model. Its base URL and key,
	// when not set, are the openai ones: see [Config.EmbedBaseURL] and
	// [Config.EmbedAPIKey].
	Embed struct{ Model, BaseURL, APIKey, Dimensions, BatchSize Setting }
	// Team is what the team-sync client needs.
	Team struct{ URL, Token, Repo Setting }
	// Recall tunes recall: ManifestTokens is the selector manifest's
	// budget ("auto", "all" or a number of tokens).
	Recall struct{ ManifestTokens Setting }
}

// Key describes one configuration key: its name in the file and in
// `memdir config`, where else it can come from, and how it is shown.
type Key struct {
	// Name is the dotted file key, such as anthropic.base_url.
	Name string
	// Env lists the environment variables that set the key; the first one
	// set wins.
	Env []string
	// Flag is the command-line flag (without dashes) that memdir's commands
	// offer for the key, "" when there is none: keys and tokens have no
	// flag, since command lines show in ps.
	Flag string
	// Usage is the flag's help text, with the value's name in back quotes
	// as package flag wants it.
	Usage string
	// Secret keys are never printed, only whether they are set.
	Secret bool
	// InFile says whether the key may appear in the config file.
	InFile bool
	// Default is the value when no source sets one, "" for none.
	Default string

	check func(string) error
	field func(*Config) *Setting
}

// keys lists every key, in the order `memdir config` shows them.
var keys = []Key{
	{Name: "model", Env: []string{"MEMDIR_MODEL"}, Flag: "model", InFile: true, check: checkModel,
		Usage: "model as `PROVIDER:NAME` (anthropic:..., openai:...), or none", field: func(c *Config) *Setting { return &c.Model }},
	{Name: "timeout", Env: []string{"MEMDIR_TIMEOUT"}, Flag: "timeout", InFile: true, Default: "2m", check: checkDuration,
		Usage: "limit of one model call `attempt`, such as 30s or 2m", field: func(c *Config) *Setting { return &c.Timeout }},
	{Name: "max_retries", Env: []string{"MEMDIR_MAX_RETRIES"}, Flag: "max-retries", InFile: true, Default: "2", check: checkRetries,
		Usage: "retries of a model call on 429, 5xx and timeouts (`N`)", field: func(c *Config) *Setting { return &c.MaxRetries }},
	{Name: "stream", Env: []string{"MEMDIR_STREAM"}, Flag: "stream", InFile: true, Default: "false", check: checkBool,
		Usage: "use the streaming API for model calls (`true|false`)", field: func(c *Config) *Setting { return &c.Stream }},
	{Name: "anthropic.base_url", Env: []string{"ANTHROPIC_BASE_URL"}, Flag: "anthropic-base-url", InFile: true, Default: DefaultAnthropicBaseURL, check: checkURL,
		Usage: "Anthropic API root `URL`, without /v1", field: func(c *Config) *Setting { return &c.Anthropic.BaseURL }},
	{Name: "anthropic.api_key", Env: []string{"ANTHROPIC_API_KEY"}, Secret: true,
		field: func(c *Config) *Setting { return &c.Anthropic.APIKey }},
	{Name: "anthropic.auth_token", Env: []string{"ANTHROPIC_AUTH_TOKEN"}, Secret: true,
		field: func(c *Config) *Setting { return &c.Anthropic.AuthToken }},
	{Name: "openai.base_url", Env: []string{"OPENAI_BASE_URL"}, Flag: "openai-base-url", InFile: true, Default: DefaultOpenAIBaseURL, check: checkURL,
		Usage: "OpenAI-compatible API root `URL`, with /v1 (Ollama: http://localhost:11434/v1)", field: func(c *Config) *Setting { return &c.OpenAI.BaseURL }},
	{Name: "openai.api_key", Env: []string{"OPENAI_API_KEY"}, Secret: true,
		field: func(c *Config) *Setting { return &c.OpenAI.APIKey }},
	{Name: "embed.model", Env: []string{"MEMDIR_EMBED_MODEL"}, Flag: "embed-model", InFile: true, check: checkEmbedModel,
		Usage: "embedding model for semantic recall as `PROVIDER:NAME` (openai:text-embedding-3-small, openai:nomic-embed-text), or none", field: func(c *Config) *Setting { return &c.Embed.Model }},
	{Name: "embed.base_url", Env: []string{"MEMDIR_EMBED_BASE_URL"}, Flag: "embed-base-url", InFile: true, check: checkURL,
		Usage: "OpenAI-compatible embeddings API root `URL`, with /v1 (default: openai.base_url)", field: func(c *Config) *Setting { return &c.Embed.BaseURL }},
	{Name: "embed.api_key", Env: []string{"MEMDIR_EMBED_API_KEY"}, Secret: true,
		field: func(c *Config) *Setting { return &c.Embed.APIKey }},
	{Name: "embed.dimensions", Env: []string{"MEMDIR_EMBED_DIMENSIONS"}, Flag: "embed-dimensions", InFile: true, check: checkDimensions,
		Usage: "ask for embedding vectors of `N` dimensions (text-embedding-3 models; default: the model's)", field: func(c *Config) *Setting { return &c.Embed.Dimensions }},
	{Name: "embed.batch_size", Env: []string{"MEMDIR_EMBED_BATCH_SIZE"}, Flag: "embed-batch-size", InFile: true, Default: strconv.Itoa(recall.DefaultEmbedBatchSize), check: checkBatchSize,
		Usage: "texts per embeddings request (`N`)", field: func(c *Config) *Setting { return &c.Embed.BatchSize }},
	{Name: "recall.manifest_tokens", Env: []string{"MEMDIR_MANIFEST_TOKENS"}, Flag: "manifest-tokens", InFile: true, Default: "auto", check: checkManifestTokens,
		Usage: "the recall selector's manifest budget: `auto` (what Claude Code's 200-newest manifest costs), all, or a number of tokens", field: func(c *Config) *Setting { return &c.Recall.ManifestTokens }},
	{Name: "team.url", Env: []string{"MEMDIR_TEAM_URL", "TEAM_MEMORY_SYNC_URL"}, Flag: "team-url", InFile: true, check: checkURL,
		Usage: "team memory server `URL`", field: func(c *Config) *Setting { return &c.Team.URL }},
	{Name: "team.token", Env: []string{"MEMDIR_TEAM_TOKEN"}, InFile: true, Secret: true,
		field: func(c *Config) *Setting { return &c.Team.Token }},
	{Name: "team.repo", Env: []string{"MEMDIR_TEAM_REPO"}, Flag: "team-repo", InFile: true,
		Usage: "team memory `REPO` key on the server", field: func(c *Config) *Setting { return &c.Team.Repo }},
}

// Keys returns every configuration key, in the order `memdir config` shows
// them.
func Keys() []Key {
	out := slices.Clone(keys)
	for i := range out {
		out[i].Env = slices.Clone(out[i].Env)
	}
	return out
}

// Get returns the setting of the key named name (a [Key.Name]) as resolved,
// and false when there is no such key. For embed.base_url and embed.api_key
// it is the key's own setting; [Config.EmbedBaseURL] and
// [Config.EmbedAPIKey] say what the embedder uses.
func (c *Config) Get(name string) (Setting, bool) {
	k, ok := keyNamed(name)
	if !ok {
		return Setting{}, false
	}
	return *k.field(c), true
}

func keyNamed(name string) (Key, bool) {
	i := slices.IndexFunc(keys, func(k Key) bool { return k.Name == name })
	if i < 0 {
		return Key{}, false
	}
	return keys[i], true
}

// Override sets a key on top of every other source, as a command-line flag
// does.
type Override struct {
	// Key is a [Key.Name], such as model or embed.base_url. Any key may be
	// overridden, secrets too.
	Key string
	// Value replaces the key's value; surrounding space is trimmed, and an
	// empty value unsets the key.
	Value string
	// Source is what [Setting.Source] will say, such as "--model".
	Source string
}

// Options tunes [Load]. The zero value (or nil) reads the config file the
// environment names and applies no overrides.
type Options struct {
	// Dir is the directory a relative MEMDIR_CONFIG is taken from; "" is the
	// process's working directory.
	Dir string
	// Overrides are applied last, in order, over the environment.
	Overrides []Override
}

// Load resolves memdir's configuration the way the memdir command does:
// defaults, then the config file, then the environment read through
// lookupEnv, then opts.Overrides, each later one winning, every value
// remembering its source. Pass os.LookupEnv for the process's environment;
// a nil lookupEnv is an empty one (the config file is then looked for under
// os.UserHomeDir, as with HOME unset).
//
// The config file is $MEMDIR_CONFIG when set (an error wrapping
// memdir.ErrNotFound when that file does not exist), else config.yaml in
// memdir's config directory ([locate.ConfigDir]), which may be missing. A
// malformed file, an unknown key, an unknown override or a bad value is an
// error wrapping memdir.ErrInvalid that names the key and where the value
// came from. The values are checked once the environment is applied and
// again after the overrides, so a bad environment value is reported even
// when an override replaces it, as the memdir command does.
//
// Load reads one file and makes no network request.
func Load(lookupEnv memdir.LookupEnvFunc, opts *Options) (*Config, error) {
	if lookupEnv == nil {
		lookupEnv = func(string) (string, bool) { return "", false }
	}
	if opts == nil {
		opts = &Options{}
	}
	c := &Config{}
	for _, k := range keys {
		if k.Default != "" {
			*k.field(c) = Setting{Value: k.Default, Source: "default"}
		}
	}
	if err := c.loadFile(lookupEnv, opts.Dir); err != nil {
		return nil, err
	}
	for _, k := range keys {
		for _, name := range k.Env {
			if v, ok := lookupEnv(name); ok && strings.TrimSpace(v) != "" {
				*k.field(c) = Setting{Value: strings.TrimSpace(v), Source: name}
				break
			}
		}
	}
	if err := c.check(); err != nil {
		return nil, err
	}
	if len(opts.Overrides) == 0 {
		return c, nil
	}
	for _, o := range opts.Overrides {
		k, ok := keyNamed(o.Key)
		if !ok {
			return nil, fmt.Errorf("configuration override from %s: unknown key %q (known keys: %s): %w", o.Source, o.Key, strings.Join(keyNames(func(Key) bool { return true }), ", "), memdir.ErrInvalid)
		}
		*k.field(c) = Setting{Value: strings.TrimSpace(o.Value), Source: o.Source}
	}
	if err := c.check(); err != nil {
		return nil, err
	}
	return c, nil
}

// check validates every value, naming the key and its source on failure.
func (c *Config) check() error {
	for _, k := range keys {
		s := k.field(c)
		if k.check == nil || !s.Set() {
			continue
		}
		if err := k.check(s.Value); err != nil {
			return fmt.Errorf("config key %s = %q (from %s): %v: %w", k.Name, s.Value, s.Source, err, memdir.ErrInvalid)
		}
	}
	return nil
}

// keyNames returns the names of the keys that keep says, sorted.
func keyNames(keep func(Key) bool) []string {
	var names []string
	for _, k := range keys {
		if keep(k) {
			names = append(names, k.Name)
		}
	}
	slices.Sort(names)
	return names
}
