package config_test

import (
	"context"
	"fmt"
	"os"

	"github.com/memdir/memdir/config"
	"github.com/memdir/memdir/config/provider"
	"github.com/memdir/memdir/llm"
	"github.com/memdir/memdir/memdirtest"
)

// A Go host builds the model memdir's configuration names. A real host
// passes os.LookupEnv; this example passes a fixed environment that points
// an OpenAI-compatible model at a fake server on loopback.
func Example() {
	srv := memdirtest.StartModelServer()
	defer srv.Close()
	srv.Enqueue(memdirtest.TextReply("Run the tests with make check."))

	cfgDir, err := os.MkdirTemp("", "memdir-config")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(cfgDir)
	env := map[string]string{
		"MEMDIR_CONFIG_DIR": cfgDir, // no config file there
		"MEMDIR_MODEL":      "openai:llama3.2",
		"OPENAI_BASE_URL":   srv.OpenAIBaseURL(),
		"MEMDIR_TIMEOUT":    "30s",
	}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }

	cfg, err := config.Load(lookup, nil)
	if err != nil {
		panic(err)
	}
	fmt.Printf("model %s from %s, %v per attempt from %s, %d retries from %s\n",
		cfg.Model.Value, cfg.Model.Source, cfg.AttemptTimeout(), cfg.Timeout.Source, cfg.Retries(), cfg.MaxRetries.Source)

	model, err := provider.NewModel(cfg)
	if err != nil {
		panic(err)
	}
	resp, err := model.Generate(context.Background(), &llm.Request{
		Messages: []llm.Message{{Role: llm.RoleUser, Content: []llm.Block{llm.TextBlock("How do we run the tests?")}}},
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(resp.Text())
	fmt.Println("sent to", srv.LastRequest().API, srv.LastRequest().Model)
	// Output:
	// model openai:llama3.2 from MEMDIR_MODEL, 30s per attempt from MEMDIR_TIMEOUT, 2 retries from default
	// Run the tests with make check.
	// sent to openai llama3.2
}

// Overrides come last, as the memdir command's flags do, and say their own
// source.
func ExampleLoad() {
	cfgDir, err := os.MkdirTemp("", "memdir-config")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(cfgDir)
	env := map[string]string{"MEMDIR_CONFIG_DIR": cfgDir, "MEMDIR_MODEL": "anthropic:claude-sonnet-4-5", "MEMDIR_TEAM_REPO": "github.com/acme/app"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }

	cfg, err := config.Load(lookup, &config.Options{Overrides: []config.Override{
		{Key: "model", Value: "none", Source: "the host"},
	}})
	if err != nil {
		panic(err)
	}
	for _, key := range []string{"model", "team.repo", "timeout"} {
		s, _ := cfg.Get(key)
		fmt.Printf("%s = %s (from %s)\n", key, s.Value, s.Source)
	}
	p, _ := cfg.ModelName()
	fmt.Printf("provider %q\n", p)
	// Output:
	// model = none (from the host)
	// team.repo = github.com/acme/app (from MEMDIR_TEAM_REPO)
	// timeout = 2m (from default)
	// provider ""
}
