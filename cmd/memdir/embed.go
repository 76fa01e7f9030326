package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/config/provider"
	"github.com/memdir/memdir/internal/cli"
	"github.com/memdir/memdir/recall"
)

var embedCmd = &cli.Command{
	Name:  "embed",
	Args:  "[--json] [flags]",
	Short: "embed every memory into the semantic search cache",
	Long: `Embed sends every memory of the directory (name, description and the start
of the body) to the configured embedding model and keeps the vectors in the
embedding cache, outside the memory directory, so that recall can rank by
meaning as well as by words. Only memories that are new or changed since
they were last embedded are sent, in batches; vectors of memories that no
longer exist are dropped. Recall embeds what is missing by itself, so this
command is optional: run it once after configuring a model, so that the
first recall in a large directory does not wait for thousands of vectors.

The summary counts memories found in the cache and embedded, the requests
made and the tokens the provider counted.

` + progressHelp + `

The embedding model is set like the chat model: MEMDIR_EMBED_MODEL (or
embed.model in the config file, or --embed-model) as openai:NAME, for
OpenAI and OpenAI-compatible servers (Ollama, llama.cpp, vLLM, LM Studio);
see 'memdir config --help'. The cache is
$MEMDIR_STATE_DIR/embed/<directory>.vec (see docs/format.md).

` + locationHelp + `

Examples:
  MEMDIR_EMBED_MODEL=openai:text-embedding-3-small memdir embed
  memdir embed --embed-model openai:nomic-embed-text --embed-base-url http://localhost:11434/v1
  memdir embed --json | jq .embedded`,
	Setup: cli.Setup(runEmbed),
}

// embedOptions holds the flag values of memdir embed.
type embedOptions struct {
	lf     locationFlags
	mf     *modelFlags
	asJSON bool
	quiet  bool
}

func (o *embedOptions) Declare(fs *flag.FlagSet) {
	o.lf.register(fs, false)
	o.mf = addConfigFlags(fs, "", keysEmbed)
	fs.BoolVar(&o.asJSON, "json", false, "print the counts as JSON")
	fs.BoolVar(&o.quiet, "quiet", false, "show no progress")
}

func runEmbed(ctx context.Context, env *cli.Env, o *embedOptions, args []string) error {
	if len(args) > 0 {
		return cli.Usagef("embed takes no arguments")
	}
	return embedAll(ctx, env, o.mf, &o.lf, o.asJSON, o.quiet)
}

// embedReport is what `memdir embed` reports.
type embedReport struct {
	Dir      string `json:"dir"`
	Cache    string `json:"cache"`
	Embedder string `json:"embedder"`
	// Source says where the embedding model setting came from.
	Source      string `json:"source"`
	Memories    int    `json:"memories"`
	Cached      int    `json:"cached"`
	Embedded    int    `json:"embedded"`
	Requests    int    `json:"requests"`
	InputTokens int    `json:"input_tokens"`
	Pruned      int    `json:"pruned"`
	// Skipped counts files that could not be read as memories.
	Skipped int `json:"skipped"`
}

// embedAll fills the embedding cache of the directory lf names: memories it
// lacks are embedded, vectors of changed or removed ones dropped.
func embedAll(ctx context.Context, env *cli.Env, mf *modelFlags, lf *locationFlags, asJSON, quiet bool) error {
	cfg, err := mf.config(env)
	if err != nil {
		return err
	}
	e, err := provider.NewEmbedder(cfg)
	if err != nil {
		return err
	}
	if e == nil {
		return fmt.Errorf("no embedding model is configured: set MEMDIR_EMBED_MODEL (such as openai:text-embedding-3-small, or openai:nomic-embed-text with MEMDIR_EMBED_BASE_URL=http://localhost:11434/v1), embed.model in the config file, or --embed-model: %w", memdir.ErrInvalid)
	}
	d, _, err := lf.open(env)
	if err != nil {
		return err
	}
	list, err := d.Scan(ctx, &memdir.ScanOptions{Limit: -1})
	if err != nil {
		return err
	}
	rep := &embedReport{Dir: d.Path(), Embedder: e.EmbedderName(), Source: cfg.Embed.Model.Source}
	for _, p := range list.Problems {
		if p.Skipped {
			rep.Skipped++
		}
	}
	in, unread, err := memoryEmbedInputs(d, list.Memories)
	if err != nil {
		return err
	}
	rep.Skipped += unread
	rep.Memories = len(in)
	if rep.Cache, err = recall.DefaultEmbedCachePath(d.Path(), env.LookupEnv); err != nil {
		return err
	}
	cache, err := recall.OpenEmbedCache(rep.Cache)
	if err != nil {
		return err
	}
	opts := cfg.EmbedOptions()
	opts.Prune = true
	prog := env.Progress("embed", quiet || asJSON)
	prog.Step("embedding memories", 0, 0)
	opts.Progress = prog.Update
	_, st, err := cache.Vectors(ctx, e, in, opts)
	prog.Stop()
	if err != nil {
		return err
	}
	rep.Cached, rep.Embedded, rep.Requests, rep.InputTokens, rep.Pruned = st.Cached, st.Embedded, st.Requests, st.Usage.InputTokens, st.Pruned
	return cli.Emit(env, asJSON, rep, func(w io.Writer) error {
		fmt.Fprintf(w, "%s: %d embedded with %s (%s, %s), %d already cached.\n",
			cli.Plural(rep.Memories, "memory", "memories"), rep.Embedded, rep.Embedder, cli.Plural(rep.Requests, "request", "requests"), cli.Plural(rep.InputTokens, "token", "tokens"), rep.Cached)
		if rep.Pruned > 0 {
			fmt.Fprintf(w, "Dropped %s of memories that changed or are gone.\n", cli.Plural(rep.Pruned, "vector", "vectors"))
		}
		if rep.Skipped > 0 {
			fmt.Fprintf(w, "Skipped %s that could not be read as memories (see 'memdir doctor').\n", cli.Plural(rep.Skipped, "file", "files"))
		}
		fmt.Fprintf(w, "Cache: %s\n", rep.Cache)
		return nil
	})
}

// memoryEmbedInputs reads each memory's body and returns the inputs recall
// embeds for them (recall.MemoryEmbedInput: keyed by the file's hash), in
// the order of hs, with the number of files that could not be read.
func memoryEmbedInputs(d *memdir.Dir, hs []memdir.Header) ([]recall.EmbedInput, int, error) {
	root, err := os.OpenRoot(d.Path())
	if err != nil {
		return nil, 0, fmt.Errorf("memory directory %s: %w", d.Path(), err)
	}
	defer root.Close()
	in := make([]recall.EmbedInput, 0, len(hs))
	unread := 0
	for _, h := range hs {
		f, err := root.Open(h.Path)
		if err != nil {
			unread++
			continue
		}
		data, err := io.ReadAll(io.LimitReader(f, memdir.MaxMemoryFileBytes))
		f.Close()
		if err != nil {
			unread++
			continue
		}
		in = append(in, recall.MemoryEmbedInput(h.Name, h.Description, data))
	}
	return in, unread, nil
}
