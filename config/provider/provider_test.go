package provider

import (
	"context"
	"errors"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/anthropic"
	"github.com/memdir/memdir/config"
	"github.com/memdir/memdir/llm"
	"github.com/memdir/memdir/memdirtest"
	"github.com/memdir/memdir/openai"
)

// load resolves the configuration of an environment holding only vars and a
// home of its own, with no config file, and fails the test on error.
func load(tb testing.TB, vars map[string]string) *config.Config {
	tb.Helper()
	env := map[string]string{"HOME": tb.TempDir()}
	maps.Copy(env, vars)
	cfg, err := config.Load(func(k string) (string, bool) { v, ok := env[k]; return v, ok }, nil)
	if err != nil {
		tb.Fatal(err)
	}
	return cfg
}

func hello() *llm.Request {
	return &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: []llm.Block{llm.TextBlock("hi")}}}}
}

// TestDefaultBaseURLs holds package config's copies of the adapters'
// default base URLs to the originals.
func TestDefaultBaseURLs(t *testing.T) {
	if config.DefaultAnthropicBaseURL != anthropic.DefaultBaseURL || config.DefaultOpenAIBaseURL != openai.DefaultBaseURL {
		t.Errorf("config has %q and %q; the adapters %q and %q", config.DefaultAnthropicBaseURL, config.DefaultOpenAIBaseURL, anthropic.DefaultBaseURL, openai.DefaultBaseURL)
	}
}

func TestNewModelNone(t *testing.T) {
	for _, model := range []string{"", "none"} {
		vars := map[string]string{}
		if model != "" {
			vars["MEMDIR_MODEL"] = model
		}
		m, err := NewModel(load(t, vars))
		if m != nil || err != nil {
			t.Errorf("MEMDIR_MODEL=%q: NewModel = %v, %v; want nil, nil so callers fall back", model, m, err)
		}
	}
}

func TestNewModelUnknownProvider(t *testing.T) {
	_, err := NewModel(load(t, map[string]string{"MEMDIR_MODEL": "gemini:pro"}))
	if !errors.Is(err, memdir.ErrInvalid) {
		t.Fatalf("error = %v, want ErrInvalid", err)
	}
	for _, s := range []string{`"gemini"`, "MEMDIR_MODEL", "anthropic:NAME", "openai:NAME"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q does not mention %s", err, s)
		}
	}
}

// TestNewModelEndToEnd builds each provider's client from environment
// configuration and calls the fake server through it.
func TestNewModelEndToEnd(t *testing.T) {
	tests := []struct {
		name   string
		vars   func(srv *memdirtest.ModelServer) map[string]string
		api    string
		auth   string
		stream bool
	}{
		{"anthropic", func(srv *memdirtest.ModelServer) map[string]string {
			return map[string]string{"MEMDIR_MODEL": "anthropic:claude-test", "ANTHROPIC_API_KEY": "sk-ant-test", "ANTHROPIC_BASE_URL": srv.AnthropicBaseURL()}
		}, "anthropic", "Bearer sk-ant-test", false},
		{"anthropic auth token, streaming", func(srv *memdirtest.ModelServer) map[string]string {
			return map[string]string{"MEMDIR_MODEL": "anthropic:claude-test", "ANTHROPIC_AUTH_TOKEN": "tok", "ANTHROPIC_BASE_URL": srv.AnthropicBaseURL(), "MEMDIR_STREAM": "1"}
		}, "anthropic", "Bearer tok", true},
		{"openai-compatible without a key", func(srv *memdirtest.ModelServer) map[string]string {
			return map[string]string{"MEMDIR_MODEL": "openai:llama3.2", "OPENAI_BASE_URL": srv.OpenAIBaseURL()}
		}, "openai", "", false},
		{"openai with a key, streaming", func(srv *memdirtest.ModelServer) map[string]string {
			return map[string]string{"MEMDIR_MODEL": "openai:gpt-test", "OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": srv.OpenAIBaseURL(), "MEMDIR_STREAM": "true"}
		}, "openai", "Bearer sk-test", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := memdirtest.NewModelServer(t)
			srv.Enqueue(memdirtest.TextReply("hello"))
			vars := tt.vars(srv)
			m, err := NewModel(load(t, vars))
			if err != nil {
				t.Fatal(err)
			}
			resp, err := m.Generate(context.Background(), hello())
			if err != nil {
				t.Fatal(err)
			}
			sent := srv.LastRequest()
			type call struct{ Text, API, Auth, Model string }
			want := call{"hello", tt.api, tt.auth, strings.SplitN(vars["MEMDIR_MODEL"], ":", 2)[1]}
			if diff := cmp.Diff(want, call{resp.Text(), sent.API, sent.Header.Get("Authorization"), sent.Model}); diff != "" {
				t.Errorf("call (-want +got):\n%s", diff)
			}
			if sent.Stream != tt.stream {
				t.Errorf("stream = %v, want %v", sent.Stream, tt.stream)
			}
		})
	}
}

// TestNewModelRetriesAndTimeout checks that max_retries and timeout reach the
// client: max_retries 0 means one attempt, not the adapter's default.
func TestNewModelRetriesAndTimeout(t *testing.T) {
	for _, tt := range []struct {
		retries  string
		requests int
	}{{"0", 1}, {"1", 2}} {
		srv := memdirtest.NewModelServer(t)
		fail := memdirtest.ModelReply{Status: 500, Message: "down", RetryAfter: time.Millisecond}
		for range tt.requests {
			srv.Enqueue(fail)
		}
		m, err := NewModel(load(t, map[string]string{"MEMDIR_MODEL": "openai:m", "OPENAI_BASE_URL": srv.OpenAIBaseURL(), "MEMDIR_MAX_RETRIES": tt.retries}))
		if err != nil {
			t.Fatal(err)
		}
		_, err = m.Generate(context.Background(), hello())
		var me *llm.ModelError
		if !errors.As(err, &me) || me.Kind != "server" {
			t.Errorf("max_retries %s: error = %v, want a server ModelError", tt.retries, err)
		}
		if n := len(srv.Requests()); n != tt.requests {
			t.Errorf("max_retries %s: %d requests, want %d", tt.retries, n, tt.requests)
		}
	}

	srv := memdirtest.NewModelServer(t)
	slow := memdirtest.TextReply("late")
	slow.Delay = time.Minute
	srv.Enqueue(slow)
	m, err := NewModel(load(t, map[string]string{"MEMDIR_MODEL": "anthropic:m", "ANTHROPIC_BASE_URL": srv.AnthropicBaseURL(), "MEMDIR_TIMEOUT": "0.05", "MEMDIR_MAX_RETRIES": "0"}))
	if err != nil {
		t.Fatal(err)
	}
	_, err = m.Generate(context.Background(), hello())
	var me *llm.ModelError
	if !errors.As(err, &me) || me.Kind != "timeout" || !strings.Contains(err.Error(), "50ms") {
		t.Errorf("error = %v, want a timeout after 50ms", err)
	}
}

func TestNewModelTypes(t *testing.T) {
	for model, want := range map[string]string{"anthropic:a": "*anthropic.Client", "Anthropic:a": "*anthropic.Client", "openai:b": "*openai.Client"} {
		m, err := NewModel(load(t, map[string]string{"MEMDIR_MODEL": model, "ANTHROPIC_API_KEY": "k", "OPENAI_API_KEY": "k"}))
		if err != nil {
			t.Fatal(err)
		}
		var got string
		switch m.(type) {
		case *anthropic.Client:
			got = "*anthropic.Client"
		case *openai.Client:
			got = "*openai.Client"
		}
		if got != want {
			t.Errorf("%s: NewModel returned %T, want %s", model, m, want)
		}
	}
}

// TestNewModelNamesTheMissingKey configures a model on a provider's own API
// without its key: NewModel (which does no I/O) must refuse, naming the
// variable, so no request is ever sent. Servers at another base URL may need
// no key.
func TestNewModelNamesTheMissingKey(t *testing.T) {
	tests := []struct {
		vars    map[string]string
		wantErr string // "" means a model is built
	}{
		{map[string]string{"MEMDIR_MODEL": "anthropic:claude-haiku-4-5"}, "ANTHROPIC_API_KEY is not set"},
		{map[string]string{"MEMDIR_MODEL": "openai:gpt-4.1-mini"}, "OPENAI_API_KEY is not set"},
		{map[string]string{"MEMDIR_MODEL": "anthropic:claude-haiku-4-5", "ANTHROPIC_AUTH_TOKEN": "tok"}, ""},
		{map[string]string{"MEMDIR_MODEL": "anthropic:claude-haiku-4-5", "ANTHROPIC_API_KEY": "k"}, ""},
		{map[string]string{"MEMDIR_MODEL": "openai:llama3.2", "OPENAI_BASE_URL": "http://127.0.0.1:11434/v1"}, ""},
	}
	for _, tc := range tests {
		m, err := NewModel(load(t, tc.vars))
		switch {
		case tc.wantErr == "" && (err != nil || m == nil):
			t.Errorf("%v: NewModel = %v, %v; want a model", tc.vars, m, err)
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr) || !errors.Is(err, memdir.ErrInvalid)):
			t.Errorf("%v: NewModel error = %v; want ErrInvalid naming %q", tc.vars, err, tc.wantErr)
		}
	}
}

func TestNewEmbedderNone(t *testing.T) {
	for _, model := range []string{"", "none"} {
		vars := map[string]string{}
		if model != "" {
			vars["MEMDIR_EMBED_MODEL"] = model
		}
		e, err := NewEmbedder(load(t, vars))
		if e != nil || err != nil {
			t.Errorf("MEMDIR_EMBED_MODEL=%q: NewEmbedder = %v, %v; want nil, nil so recall stays lexical", model, e, err)
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
			_, err := NewEmbedder(load(t, tt.vars))
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
			e, err := NewEmbedder(load(t, tt.vars(srv.OpenAIBaseURL())))
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
			vars := tt.vars(srv.OpenAIBaseURL())
			vars["MEMDIR_EMBED_MODEL"] = "openai:m"
			vars["MEMDIR_MAX_RETRIES"] = "0"
			e, err := NewEmbedder(load(t, vars))
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
