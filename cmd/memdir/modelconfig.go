package main

// Configuration is resolved here, in cmd/ only: defaults, then the config
// file, then the environment, then flags, each later one winning. Every value
// remembers where it came from, so `memdir config` can say why it is what it
// is. Keys and tokens are read from the environment (and the team token
// also from the file) and are never printed.

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/anthropic"
	"github.com/memdir/memdir/openai"
)

// setting is one configuration value and where it came from.
type setting struct {
	Value string
	// Source is "default", "FILE:LINE" for the config file, the name of an
	// environment variable, or "--flag". Empty when the value is not set.
	Source string
}

// Set reports whether the setting has a value.
func (s setting) Set() bool { return s.Value != "" }

// config is memdir's effective configuration.
type config struct {
	// File is the configuration file consulted; FileFound says whether it
	// existed.
	File      string
	FileFound bool

	// Model is "provider:name", such as anthropic:claude-sonnet-4-5; empty
	// (or "none") means no model.
	Model      setting
	Timeout    setting // per attempt, a Go duration or a number of seconds
	MaxRetries setting
	Stream     setting

	Anthropic struct{ BaseURL, APIKey, AuthToken setting }
	OpenAI    struct{ BaseURL, APIKey setting }
	// Embed configures the optional embedding model. Its base URL and key,
	// when not set, are the openai ones (see embedBaseURL, embedAPIKey).
	Embed struct{ Model, BaseURL, APIKey, Dimensions, BatchSize setting }
	// Team is read by the team-sync commands.
	Team struct{ URL, Token, Repo setting }
	// Recall tunes recall: ManifestTokens is the selector manifest's
	// budget ("auto", "all" or a number of tokens).
	Recall struct{ ManifestTokens setting }
}

// configKey describes one key: its name in the file and in output, where else
// it can come from, and how to check it.
type configKey struct {
	name   string   // dotted file key, such as anthropic.base_url
	env    []string // environment variables, the first one set wins
	flag   string   // flag name, "" when there is none
	secret bool     // never printed
	inFile bool     // may appear in the config file
	def    string
	check  func(string) error
	usage  string
	field  func(*config) *setting
}

// configKeys lists every key, in the order `memdir config` shows them.
var configKeys = []configKey{
	{name: "model", env: []string{"MEMDIR_MODEL"}, flag: "model", inFile: true, check: checkModel,
		usage: "model as `PROVIDER:NAME` (anthropic:..., openai:...), or none", field: func(c *config) *setting { return &c.Model }},
	{name: "timeout", env: []string{"MEMDIR_TIMEOUT"}, flag: "timeout", inFile: true, def: "2m", check: checkDuration,
		usage: "limit of one model call `attempt`, such as 30s or 2m", field: func(c *config) *setting { return &c.Timeout }},
	{name: "max_retries", env: []string{"MEMDIR_MAX_RETRIES"}, flag: "max-retries", inFile: true, def: "2", check: checkRetries,
		usage: "retries of a model call on 429, 5xx and timeouts (`N`)", field: func(c *config) *setting { return &c.MaxRetries }},
	{name: "stream", env: []string{"MEMDIR_STREAM"}, flag: "stream", inFile: true, def: "false", check: checkBool,
		usage: "use the streaming API for model calls (`true|false`)", field: func(c *config) *setting { return &c.Stream }},
	{name: "anthropic.base_url", env: []string{"ANTHROPIC_BASE_URL"}, flag: "anthropic-base-url", inFile: true, def: anthropic.DefaultBaseURL, check: checkURL,
		usage: "Anthropic API root `URL`, without /v1", field: func(c *config) *setting { return &c.Anthropic.BaseURL }},
	{name: "anthropic.api_key", env: []string{"ANTHROPIC_API_KEY"}, secret: true,
		field: func(c *config) *setting { return &c.Anthropic.APIKey }},
	{name: "anthropic.auth_token", env: []string{"ANTHROPIC_AUTH_TOKEN"}, secret: true,
		field: func(c *config) *setting { return &c.Anthropic.AuthToken }},
	{name: "openai.base_url", env: []string{"OPENAI_BASE_URL"}, flag: "openai-base-url", inFile: true, def: openai.DefaultBaseURL, check: checkURL,
		usage: "OpenAI-compatible API root `URL`, with /v1 (Ollama: http://localhost:11434/v1)", field: func(c *config) *setting { return &c.OpenAI.BaseURL }},
	{name: "openai.api_key", env: []string{"OPENAI_API_KEY"}, secret: true,
		field: func(c *config) *setting { return &c.OpenAI.APIKey }},
	{name: "embed.model", env: []string{"MEMDIR_EMBED_MODEL"}, flag: "embed-model", inFile: true, check: checkEmbedModel,
		usage: "embedding model for semantic recall as `PROVIDER:NAME` (openai:text-embedding-3-small, openai:nomic-embed-text), or none", field: func(c *config) *setting { return &c.Embed.Model }},
	{name: "embed.base_url", env: []string{"MEMDIR_EMBED_BASE_URL"}, flag: "embed-base-url", inFile: true, check: checkURL,
		usage: "OpenAI-compatible embeddings API root `URL`, with /v1 (default: openai.base_url)", field: func(c *config) *setting { return &c.Embed.BaseURL }},
	{name: "embed.api_key", env: []string{"MEMDIR_EMBED_API_KEY"}, secret: true,
		field: func(c *config) *setting { return &c.Embed.APIKey }},
	{name: "embed.dimensions", env: []string{"MEMDIR_EMBED_DIMENSIONS"}, flag: "embed-dimensions", inFile: true, check: checkDimensions,
		usage: "ask for embedding vectors of `N` dimensions (text-embedding-3 models; default: the model's)", field: func(c *config) *setting { return &c.Embed.Dimensions }},
	{name: "embed.batch_size", env: []string{"MEMDIR_EMBED_BATCH_SIZE"}, flag: "embed-batch-size", inFile: true, def: strconv.Itoa(memdir.DefaultEmbedBatchSize), check: checkBatchSize,
		usage: "texts per embeddings request (`N`)", field: func(c *config) *setting { return &c.Embed.BatchSize }},
	{name: "recall.manifest_tokens", env: []string{"MEMDIR_MANIFEST_TOKENS"}, flag: "manifest-tokens", inFile: true, def: "auto", check: checkManifestTokens,
		usage: "the recall selector's manifest budget: `auto` (what Claude Code's 200-newest manifest costs), all, or a number of tokens", field: func(c *config) *setting { return &c.Recall.ManifestTokens }},
	{name: "team.url", env: []string{"MEMDIR_TEAM_URL", "TEAM_MEMORY_SYNC_URL"}, flag: "team-url", inFile: true, check: checkURL,
		usage: "team memory server `URL`", field: func(c *config) *setting { return &c.Team.URL }},
	{name: "team.token", env: []string{"MEMDIR_TEAM_TOKEN"}, inFile: true, secret: true,
		field: func(c *config) *setting { return &c.Team.Token }},
	{name: "team.repo", env: []string{"MEMDIR_TEAM_REPO"}, flag: "team-repo", inFile: true,
		usage: "team memory `REPO` key on the server", field: func(c *config) *setting { return &c.Team.Repo }},
}

// loadConfig resolves defaults, the config file and the environment. Flags
// come on top through [config.applyFlags]. A malformed file, an unknown key or
// a bad value is an error wrapping memdir.ErrInvalid that names the key and
// where the value came from.
func loadConfig(env *Env) (*config, error) {
	c := &config{}
	for _, k := range configKeys {
		if k.def != "" {
			*k.field(c) = setting{Value: k.def, Source: "default"}
		}
	}
	if err := c.loadFile(env); err != nil {
		return nil, err
	}
	for _, k := range configKeys {
		for _, name := range k.env {
			if v, ok := env.LookupEnv(name); ok && strings.TrimSpace(v) != "" {
				*k.field(c) = setting{Value: strings.TrimSpace(v), Source: name}
				break
			}
		}
	}
	return c, c.check()
}

// loadConfigFlags is loadConfig followed by the flags declared with
// addConfigFlags that were set on the command line.
func loadConfigFlags(env *Env, fs *flag.FlagSet) (*config, error) {
	c, err := loadConfig(env)
	if err != nil {
		return nil, err
	}
	return c, c.applyFlags(fs)
}

// addConfigFlags declares the flags that override configuration keys
// (--model, --timeout, --max-retries, --stream, --anthropic-base-url,
// --openai-base-url, --embed-model, --embed-base-url, --embed-dimensions,
// --embed-batch-size, --team-url, --team-repo). Keys and tokens have no flag:
// command lines show in ps.
func addConfigFlags(fs *flag.FlagSet) {
	for _, k := range configKeys {
		if k.flag == "" {
			continue
		}
		usage := k.usage + " (config key " + k.name + ")"
		if k.name != "stream" {
			fs.String(k.flag, "", usage)
			continue
		}
		fs.Var(&boolFlag{}, k.flag, usage)
	}
}

// boolFlag is a flag that may stand alone (--stream) or take a value
// (--stream=false), and keeps the text for checking with the other sources.
type boolFlag struct{ v string }

func (b *boolFlag) String() string     { return b.v }
func (b *boolFlag) Set(s string) error { b.v = s; return nil }
func (b *boolFlag) IsBoolFlag() bool   { return true }

// applyFlags overrides keys with the flags of fs that were set.
func (c *config) applyFlags(fs *flag.FlagSet) error {
	byFlag := map[string]configKey{}
	for _, k := range configKeys {
		if k.flag != "" {
			byFlag[k.flag] = k
		}
	}
	fs.Visit(func(f *flag.Flag) {
		if k, ok := byFlag[f.Name]; ok {
			*k.field(c) = setting{Value: strings.TrimSpace(f.Value.String()), Source: "--" + f.Name}
		}
	})
	return c.check()
}

// check validates every value, naming the key and its source on failure.
func (c *config) check() error {
	for _, k := range configKeys {
		s := k.field(c)
		if k.check == nil || !s.Set() {
			continue
		}
		if err := k.check(s.Value); err != nil {
			return fmt.Errorf("config key %s = %q (from %s): %v: %w", k.name, s.Value, s.Source, err, memdir.ErrInvalid)
		}
	}
	return nil
}

// configPath returns the config file to read and whether the user named it.
func configPath(env *Env) (string, bool, error) {
	if p, ok := env.LookupEnv("MEMDIR_CONFIG"); ok && p != "" {
		if !filepath.IsAbs(p) {
			p = filepath.Join(env.Cwd, p)
		}
		return p, true, nil
	}
	dir, err := memdir.ConfigDir(env.LookupEnv)
	if err != nil {
		return "", false, err
	}
	return filepath.Join(dir, "config.yaml"), false, nil
}

// maxConfigSize bounds the config file: anything larger is not a config file.
const maxConfigSize = 1 << 20

func (c *config) loadFile(env *Env) error {
	path, named, err := configPath(env)
	if err != nil {
		return err
	}
	c.File = path
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist) && !named:
		return nil
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("config file %s (from MEMDIR_CONFIG) does not exist: %w", path, memdir.ErrNotFound)
	case err != nil:
		return fmt.Errorf("config file: %w", err)
	case !fi.Mode().IsRegular():
		return fmt.Errorf("config file %s is not a regular file: %w", path, memdir.ErrInvalid)
	case fi.Size() > maxConfigSize:
		return fmt.Errorf("config file %s is %d bytes, more than a config file can be (%d): %w", path, fi.Size(), maxConfigSize, memdir.ErrInvalid)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("config file: %w", err)
	}
	c.FileFound = true
	return c.parseFile(path, data)
}

// parseFile reads the YAML config. It walks the node tree rather than
// decoding into a struct so that an unknown or misplaced key is reported by
// its dotted name and line.
func (c *config) parseFile(path string, data []byte) error {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return fmt.Errorf("config file %s is not valid YAML: %v: %w", path, err, memdir.ErrInvalid)
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return nil // empty file
	}
	root := doc.Content[0]
	if root.Kind == yaml.ScalarNode && root.Tag == "!!null" {
		return nil // only comments
	}
	keys := map[string]configKey{}
	sections := map[string]bool{}
	for _, k := range configKeys {
		if k.inFile {
			keys[k.name] = k
			if sec, _, ok := strings.Cut(k.name, "."); ok {
				sections[sec] = true
			}
		}
	}
	var walk func(prefix string, n *yaml.Node) error
	walk = func(prefix string, n *yaml.Node) error {
		if n.Kind != yaml.MappingNode {
			what := "the file"
			if prefix != "" {
				what = "section " + strings.TrimSuffix(prefix, ".")
			}
			return fmt.Errorf("config file %s line %d: %s must be a mapping of keys to values: %w", path, n.Line, what, memdir.ErrInvalid)
		}
		seen := map[string]bool{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			kn, vn := n.Content[i], n.Content[i+1]
			name := prefix + kn.Value
			if seen[name] {
				return fmt.Errorf("config file %s line %d: key %s appears twice: %w", path, kn.Line, name, memdir.ErrInvalid)
			}
			seen[name] = true
			if prefix == "" && sections[kn.Value] {
				if vn.Kind == yaml.ScalarNode && vn.Tag == "!!null" {
					continue // an empty section
				}
				if err := walk(name+".", vn); err != nil {
					return err
				}
				continue
			}
			k, ok := keys[name]
			if !ok {
				return fmt.Errorf("config file %s line %d: unknown key %s (known keys: %s): %w", path, kn.Line, name, knownFileKeys(), memdir.ErrInvalid)
			}
			if vn.Kind != yaml.ScalarNode {
				return fmt.Errorf("config file %s line %d: key %s must have a single value: %w", path, vn.Line, name, memdir.ErrInvalid)
			}
			if vn.Tag == "!!null" {
				continue
			}
			*k.field(c) = setting{Value: strings.TrimSpace(vn.Value), Source: fmt.Sprintf("%s:%d", path, vn.Line)}
		}
		return nil
	}
	return walk("", root)
}

func knownFileKeys() string {
	var names []string
	for _, k := range configKeys {
		if k.inFile {
			names = append(names, k.name)
		}
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

func checkModel(v string) error {
	if v == "none" {
		return nil
	}
	provider, name, ok := strings.Cut(v, ":")
	if !ok || provider == "" || strings.TrimSpace(name) == "" {
		return errors.New("want PROVIDER:NAME, such as anthropic:claude-sonnet-4-5 or openai:gpt-4.1-mini, or none")
	}
	return nil
}

func checkEmbedModel(v string) error {
	if v == "none" {
		return nil
	}
	provider, name, ok := strings.Cut(v, ":")
	if !ok || provider == "" || strings.TrimSpace(name) == "" {
		return errors.New("want PROVIDER:NAME, such as openai:text-embedding-3-small or openai:nomic-embed-text, or none")
	}
	return nil
}

func checkDimensions(v string) error {
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > 1<<16 {
		return errors.New("not a whole number from 1 to 65536")
	}
	return nil
}

func checkBatchSize(v string) error {
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > 2048 {
		return errors.New("not a whole number from 1 to 2048")
	}
	return nil
}

func checkManifestTokens(v string) error {
	_, err := parseManifestTokens(v)
	return err
}

// parseManifestTokens reads recall.manifest_tokens as a
// memdir.RecallOptions.ManifestTokens value: "auto" (or empty) is 0,
// "all" is -1, else a positive number of tokens.
func parseManifestTokens(v string) (int, error) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "", "auto":
		return 0, nil
	case "all", "unlimited":
		return -1, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		return 0, errors.New("want auto, all, or a number of tokens above 0")
	}
	return n, nil
}

// manifestTokens returns the configured selector manifest budget; the
// value was checked when the configuration was loaded.
func (c *config) manifestTokens() int {
	n, _ := parseManifestTokens(c.Recall.ManifestTokens.Value)
	return n
}

func checkDuration(v string) error {
	_, err := parseTimeout(v)
	return err
}

// parseTimeout reads a Go duration ("90s", "2m") or a number of seconds.
func parseTimeout(v string) (time.Duration, error) {
	d, err := time.ParseDuration(v)
	if err != nil {
		secs, nerr := strconv.ParseFloat(v, 64)
		if nerr != nil {
			return 0, errors.New("not a duration such as 30s or 2m")
		}
		d = time.Duration(secs * float64(time.Second))
	}
	if d <= 0 {
		return 0, errors.New("must be more than zero")
	}
	return d, nil
}

func checkRetries(v string) error {
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 || n > 100 {
		return errors.New("not a whole number from 0 to 100")
	}
	return nil
}

func checkBool(v string) error {
	if _, err := strconv.ParseBool(v); err != nil {
		return errors.New("not true or false")
	}
	return nil
}

func checkURL(v string) error {
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return errors.New("not an http:// or https:// URL")
	}
	return nil
}

// The typed accessors below cannot fail: check accepted the values.

// timeout returns the per-attempt model call timeout.
func (c *config) timeout() time.Duration {
	d, _ := parseTimeout(c.Timeout.Value)
	return d
}

// maxRetries returns the number of retries of a model call.
func (c *config) maxRetries() int {
	n, _ := strconv.Atoi(c.MaxRetries.Value)
	return n
}

// stream says whether model calls use the streaming API.
func (c *config) stream() bool {
	b, _ := strconv.ParseBool(c.Stream.Value)
	return b
}

// modelName splits the model setting into provider and name; both are
// empty when no model is configured.
func (c *config) modelName() (provider, name string) {
	if !c.Model.Set() || c.Model.Value == "none" {
		return "", ""
	}
	provider, name, _ = strings.Cut(c.Model.Value, ":")
	return strings.ToLower(strings.TrimSpace(provider)), strings.TrimSpace(name)
}

// newModel returns the configured model, or nil and no error when none is
// configured, in which case callers fall back (recall ranks lexically). An
// unknown provider is an error wrapping memdir.ErrInvalid.
//
// A model on the provider's own API (the default base URL) with no key
// configured is refused before any call, with an error naming the variable
// to set; a server at another base URL (a gateway, Ollama) may need none.
func newModel(ctx context.Context, cfg *config) (memdir.Model, error) {
	_ = ctx // reserved: constructing a model does no I/O today
	provider, name := cfg.modelName()
	retries := cfg.maxRetries()
	if retries == 0 {
		retries = -1 // the adapters read 0 as "their default"
	}
	if err := cfg.checkCredentials(); err != nil {
		return nil, err
	}
	switch provider {
	case "":
		return nil, nil
	case "anthropic":
		return anthropic.New(&anthropic.Options{
			Model:      name,
			APIKey:     cfg.Anthropic.APIKey.Value,
			AuthToken:  cfg.Anthropic.AuthToken.Value,
			BaseURL:    cfg.Anthropic.BaseURL.Value,
			Timeout:    cfg.timeout(),
			MaxRetries: retries,
			Stream:     cfg.stream(),
		})
	case "openai":
		return openai.New(&openai.Options{
			Model:      name,
			APIKey:     cfg.OpenAI.APIKey.Value,
			BaseURL:    cfg.OpenAI.BaseURL.Value,
			Timeout:    cfg.timeout(),
			MaxRetries: retries,
			Stream:     cfg.stream(),
		})
	default:
		return nil, fmt.Errorf("model %q (from %s) has unknown provider %q: use anthropic:NAME, or openai:NAME for OpenAI and compatible servers (Ollama, vLLM, llama.cpp): %w",
			cfg.Model.Value, cfg.Model.Source, provider, memdir.ErrInvalid)
	}
}

// embedModelName splits the embed.model setting into provider and name;
// both are empty when no embedding model is configured.
func (c *config) embedModelName() (provider, name string) {
	if !c.Embed.Model.Set() || c.Embed.Model.Value == "none" {
		return "", ""
	}
	provider, name, _ = strings.Cut(c.Embed.Model.Value, ":")
	return strings.ToLower(strings.TrimSpace(provider)), strings.TrimSpace(name)
}

// embedBaseURL is embed.base_url, or else openai.base_url: one
// OpenAI-compatible server (Ollama, say) often serves both the chat model
// and the embedding model.
func (c *config) embedBaseURL() setting {
	if c.Embed.BaseURL.Set() {
		return c.Embed.BaseURL
	}
	return inherited(c.OpenAI.BaseURL, "openai.base_url")
}

// embedAPIKey is embed.api_key, or else openai.api_key, but the latter only
// while the embeddings go to the openai base URL: the OpenAI key is never
// sent to another server.
func (c *config) embedAPIKey() setting {
	if c.Embed.APIKey.Set() {
		return c.Embed.APIKey
	}
	if c.Embed.BaseURL.Set() && strings.TrimRight(c.Embed.BaseURL.Value, "/") != strings.TrimRight(c.OpenAI.BaseURL.Value, "/") {
		return setting{}
	}
	return inherited(c.OpenAI.APIKey, "openai.api_key")
}

// inherited is s as another key's value, its source saying so.
func inherited(s setting, key string) setting {
	if !s.Set() {
		return s
	}
	return setting{Value: s.Value, Source: key + " (" + s.Source + ")"}
}

// embedBatchSize returns how many texts go into one embeddings request.
func (c *config) embedBatchSize() int {
	n, _ := strconv.Atoi(c.Embed.BatchSize.Value)
	return n
}

// embedOptions returns the options for memdir.EmbedCache.Vectors that the
// configuration sets (the batch size).
func (c *config) embedOptions() *memdir.EmbedOptions {
	return &memdir.EmbedOptions{BatchSize: c.embedBatchSize()}
}

// newEmbedder returns the configured embedding model, or nil and no error
// when none is configured, in which case recall stays lexical. It makes no
// request. An unknown provider, or api.openai.com without a key, is an error
// wrapping memdir.ErrInvalid that names the variables to set; a server at
// another URL (Ollama, llama.cpp, vLLM, LM Studio) may go without a key.
func newEmbedder(cfg *config) (memdir.Embedder, error) {
	provider, name := cfg.embedModelName()
	switch provider {
	case "":
		return nil, nil
	case "openai":
	default:
		return nil, fmt.Errorf("embedding model %q (from %s) has unknown provider %q: use openai:NAME for OpenAI and compatible servers (Ollama, llama.cpp, vLLM, LM Studio): %w",
			cfg.Embed.Model.Value, cfg.Embed.Model.Source, provider, memdir.ErrInvalid)
	}
	base, key := cfg.embedBaseURL(), cfg.embedAPIKey()
	baseURL := base.Value
	if baseURL == "" {
		baseURL = openai.DefaultBaseURL
	}
	if u, err := url.Parse(baseURL); err == nil && u.Hostname() == "api.openai.com" && !key.Set() {
		return nil, fmt.Errorf("embedding model %s (from %s) calls %s but no API key is set: set MEMDIR_EMBED_API_KEY or OPENAI_API_KEY, or point MEMDIR_EMBED_BASE_URL at a local server (Ollama: http://localhost:11434/v1), which needs none: %w",
			cfg.Embed.Model.Value, cfg.Embed.Model.Source, baseURL, memdir.ErrInvalid)
	}
	dims := 0
	if cfg.Embed.Dimensions.Set() {
		dims, _ = strconv.Atoi(cfg.Embed.Dimensions.Value)
	}
	retries := cfg.maxRetries()
	if retries == 0 {
		retries = -1 // the adapters read 0 as "their default"
	}
	e, err := openai.NewEmbedder(&openai.EmbedderOptions{
		Model:      name,
		APIKey:     key.Value,
		BaseURL:    baseURL,
		Dimensions: dims,
		MaxBatch:   cfg.embedBatchSize(),
		Timeout:    cfg.timeout(),
		MaxRetries: retries,
	})
	if err != nil {
		return nil, err
	}
	if cfg.Embed.APIKey.Set() || !key.Set() {
		// Error messages name the variable to set: OPENAI_API_KEY only when
		// that is where the key came from.
		e.SetKeyEnv("MEMDIR_EMBED_API_KEY")
	}
	return e, nil
}

// embedderFromFlags resolves the configuration with the flags of fs (declared
// by addConfigFlags) and returns the embedding model and the setting that
// chose it (value and source, for messages such as "embeddings: openai:x
// from MEMDIR_EMBED_MODEL"). With no embedding model configured it returns
// nil, an empty setting and no error.
func embedderFromFlags(env *Env, fs *flag.FlagSet) (memdir.Embedder, setting, error) {
	cfg, err := loadConfigFlags(env, fs)
	if err != nil {
		return nil, setting{}, err
	}
	e, err := newEmbedder(cfg)
	if err != nil || e == nil {
		return nil, setting{}, err
	}
	return e, cfg.Embed.Model, nil
}

// recallEmbedder returns the configured embedder and the embedding cache of
// the memory directory dir, for recall; nil, nil when no embedder is
// configured.
func recallEmbedder(env *Env, cfg *config, dir string) (memdir.Embedder, *memdir.EmbedCache, error) {
	e, err := newEmbedder(cfg)
	if err != nil || e == nil {
		return nil, nil, err
	}
	path, err := memdir.DefaultEmbedCachePath(dir, env.LookupEnv)
	if err != nil {
		return nil, nil, err
	}
	cache, err := memdir.OpenEmbedCache(path)
	if err != nil {
		return nil, nil, err
	}
	return e, cache, nil
}

// checkCredentials names the missing environment variable when the model is
// on Anthropic's or OpenAI's own API and no key for it is set, so that the
// user learns it before a request fails with a less telling error.
func (c *config) checkCredentials() error {
	provider, _ := c.modelName()
	switch provider {
	case "anthropic":
		if !c.Anthropic.APIKey.Set() && !c.Anthropic.AuthToken.Set() && c.Anthropic.BaseURL.Value == c.defaultOf("anthropic.base_url") {
			return fmt.Errorf("model %s (from %s) needs an Anthropic API key, and ANTHROPIC_API_KEY is not set (nor ANTHROPIC_AUTH_TOKEN); set it, or choose another model (see 'memdir config'): %w",
				c.Model.Value, c.Model.Source, memdir.ErrInvalid)
		}
	case "openai":
		if !c.OpenAI.APIKey.Set() && c.OpenAI.BaseURL.Value == c.defaultOf("openai.base_url") {
			return fmt.Errorf("model %s (from %s) is served by api.openai.com, which needs a key, and OPENAI_API_KEY is not set; set it, or set OPENAI_BASE_URL for a local server that needs none (see 'memdir config'): %w",
				c.Model.Value, c.Model.Source, memdir.ErrInvalid)
		}
	}
	return nil
}
