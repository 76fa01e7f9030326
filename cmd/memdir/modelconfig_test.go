package main

import (
	"context"
	"errors"
	"flag"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/anthropic"
	"github.com/memdir/memdir/memdirtest"
	"github.com/memdir/memdir/openai"
)

// mustLoad runs loadConfig in w's environment and fails the test on error.
func mustLoad(tb testing.TB, w *memWorld) *config {
	tb.Helper()
	cfg, err := loadTestConfig(tb, w)
	if err != nil {
		tb.Fatal(err)
	}
	return cfg
}

func TestNewModelNone(t *testing.T) {
	for _, model := range []string{"", "none"} {
		w := newMemWorld(t)
		if model != "" {
			w.vars["MEMDIR_MODEL"] = model
		}
		m, err := newModel(context.Background(), mustLoad(t, w))
		if m != nil || err != nil {
			t.Errorf("MEMDIR_MODEL=%q: newModel = %v, %v; want nil, nil so callers fall back", model, m, err)
		}
	}
}

func TestNewModelUnknownProvider(t *testing.T) {
	w := newMemWorld(t)
	w.vars["MEMDIR_MODEL"] = "gemini:pro"
	_, err := newModel(context.Background(), mustLoad(t, w))
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
			w := newMemWorld(t)
			maps.Copy(w.vars, tt.vars(srv))
			m, err := newModel(context.Background(), mustLoad(t, w))
			if err != nil {
				t.Fatal(err)
			}
			resp, err := m.Generate(context.Background(), &memdir.Request{Messages: []memdir.Message{{Role: memdir.RoleUser, Content: []memdir.Block{memdir.TextBlock("hi")}}}})
			if err != nil {
				t.Fatal(err)
			}
			sent := srv.LastRequest()
			type call struct{ Text, API, Auth, Model string }
			want := call{"hello", tt.api, tt.auth, strings.SplitN(w.vars["MEMDIR_MODEL"], ":", 2)[1]}
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
		w := newMemWorld(t)
		w.vars["MEMDIR_MODEL"] = "openai:m"
		w.vars["OPENAI_BASE_URL"] = srv.OpenAIBaseURL()
		w.vars["MEMDIR_MAX_RETRIES"] = tt.retries
		m, err := newModel(context.Background(), mustLoad(t, w))
		if err != nil {
			t.Fatal(err)
		}
		_, err = m.Generate(context.Background(), &memdir.Request{Messages: []memdir.Message{{Role: memdir.RoleUser, Content: []memdir.Block{memdir.TextBlock("hi")}}}})
		var me *memdir.ModelError
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
	w := newMemWorld(t)
	w.vars["MEMDIR_MODEL"] = "anthropic:m"
	w.vars["ANTHROPIC_BASE_URL"] = srv.AnthropicBaseURL()
	w.vars["MEMDIR_TIMEOUT"] = "0.05"
	w.vars["MEMDIR_MAX_RETRIES"] = "0"
	m, err := newModel(context.Background(), mustLoad(t, w))
	if err != nil {
		t.Fatal(err)
	}
	_, err = m.Generate(context.Background(), &memdir.Request{Messages: []memdir.Message{{Role: memdir.RoleUser, Content: []memdir.Block{memdir.TextBlock("hi")}}}})
	var me *memdir.ModelError
	if !errors.As(err, &me) || me.Kind != "timeout" || !strings.Contains(err.Error(), "50ms") {
		t.Errorf("error = %v, want a timeout after 50ms", err)
	}
}

func TestNewModelTypes(t *testing.T) {
	for model, want := range map[string]string{"anthropic:a": "*anthropic.Client", "Anthropic:a": "*anthropic.Client", "openai:b": "*openai.Client"} {
		w := newMemWorld(t)
		w.vars["MEMDIR_MODEL"] = model
		w.vars["ANTHROPIC_API_KEY"], w.vars["OPENAI_API_KEY"] = "k", "k"
		m, err := newModel(context.Background(), mustLoad(t, w))
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
			t.Errorf("%s: newModel returned %T, want %s", model, m, want)
		}
	}
}

// TestLoadConfigFlags checks the helper other commands use: the config flags
// declared on their own flag set override the rest.
func TestLoadConfigFlags(t *testing.T) {
	w := newMemWorld(t)
	w.vars["MEMDIR_MODEL"] = "anthropic:a"
	fs := flag.NewFlagSet("recall", flag.ContinueOnError)
	addConfigFlags(fs)
	if err := fs.Parse([]string{"--model", "openai:b", "--stream"}); err != nil {
		t.Fatal(err)
	}
	cfg := mustLoad(t, w)
	if err := cfg.applyFlags(fs); err != nil {
		t.Fatal(err)
	}
	if cfg.Model != (setting{"openai:b", "--model"}) || !cfg.stream() || cfg.timeout() != 2*time.Minute || cfg.maxRetries() != 2 {
		t.Errorf("config = %+v", cfg)
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
		c := &config{}
		err := c.parseFile(path, []byte(text))
		if err != nil {
			if !errors.Is(err, memdir.ErrInvalid) || !strings.Contains(err.Error(), path) {
				t.Fatalf("error %q does not wrap ErrInvalid and name the file", err)
			}
			return
		}
		for _, k := range configKeys {
			if s := k.field(c); s.Set() && !strings.HasPrefix(s.Source, path+":") {
				t.Fatalf("key %s = %q has source %q", k.name, s.Value, s.Source)
			}
		}
	})
}

// TestNewModelNamesTheMissingKey configures a model on a provider's own API
// without its key: newModel (which does no I/O) must refuse, naming the
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
		w := newMemWorld(t)
		maps.Copy(w.vars, tc.vars)
		m, err := newModel(context.Background(), mustLoad(t, w))
		switch {
		case tc.wantErr == "" && (err != nil || m == nil):
			t.Errorf("%v: newModel = %v, %v; want a model", tc.vars, m, err)
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr) || !errors.Is(err, memdir.ErrInvalid)):
			t.Errorf("%v: newModel error = %v; want ErrInvalid naming %q", tc.vars, err, tc.wantErr)
		}
	}
}
