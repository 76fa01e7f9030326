package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/memdir/memdir/internal/cli"
	"github.com/memdir/memdir/recall"
)

var recallCmd = &cli.Command{
	Name:  "recall",
	Args:  "[flags] QUERY",
	Short: "find the memories relevant to a prompt",
	Long: `Recall picks the memories relevant to QUERY and prints them the way an agent
receives them: each inside a system reminder, with its age and, for memories
older than a day, a warning that it may be out of date; each cut to 200
lines and 4,096 bytes.

How memories are chosen:
  1. A lexical ranker (BM25 over name, description and body; English, code
     identifiers and Chinese/Japanese/Korean text) shortlists the best 30
     out of every memory in the directory, not only the newest 200 that
     Claude Code looks at.
  2. With a model configured (MEMDIR_MODEL or --model, see 'memdir config'),
     the model picks at most 5 from the shortlist's manifest, following
     Claude Code's rules: only memories that clearly help; no plain usage
     docs for tools listed with --tools, but warnings about them yes.
  3. Without a model, or if the call fails, the lexical ranker answers on its
     own with its best results above a relevance threshold. The summary on
     standard error says which happened, and the tokens the model used.

--json gives each memory's path, score, reason and freshness; with a model,
or with --manifest, also the manifest a selector is shown (shortlist,
ranked, manifest_tokens, full_lines, its budget and Claude Code's cost).
Without a model, building that manifest ranks far deeper than the answer
needs (over a thousand memories against thirty in a large directory), so it
is left out unless asked for.

Like Claude Code, recall skips empty and one-word queries (--all looks them
up anyway) and stops once a session has surfaced 60 KB of memories (--used
and --budget). Memories already shown (--surfaced) are not shown again.
The lexical index is cached outside the memory directory, keyed on each
file's path, size and modification time. Building it the first time in a
large directory takes a while.

` + progressHelp + `

When auto memory is turned off (autoMemoryEnabled=false in settings, or
CLAUDE_CODE_DISABLE_AUTO_MEMORY=1), recall refuses with exit 8, naming the
setting; --dir DIR recalls from a directory anyway.

` + locationHelp + `

Examples:
  memdir recall "why do the settlement tests fail on CI?"
  memdir recall --model anthropic:claude-sonnet-4-5 --tools Bash "deploy the hotfix"
  memdir recall --json "部署流程是什么" | jq '.memories[].path'`,
	Setup: cli.Setup(runRecall),
}

// recallOptions holds the flag values of memdir recall.
type recallOptions struct {
	lf       locationFlags
	mf       *modelFlags
	surfaced multiFlag
	tools    string
	maxN     int
	budget   int
	used     int
	all      bool
	noCache  bool
	asJSON   bool
	manifest bool
	quiet    bool
}

func (o *recallOptions) Declare(fs *flag.FlagSet) {
	o.lf.register(fs, false)
	o.mf = addModelFlags(fs, "rank lexically even when a model is configured")
	fs.Var(&o.surfaced, "surfaced", "a memory `PATH` already shown this session (repeatable)")
	fs.StringVar(&o.tools, "tools", "", "comma-separated `TOOLS` the agent used recently")
	fs.IntVar(&o.maxN, "max", recall.MaxMemories, "surface at most `N` memories")
	fs.IntVar(&o.budget, "budget", recall.SessionBudget, "the session's memory budget in `BYTES`")
	fs.IntVar(&o.used, "used", 0, "`BYTES` of memories already surfaced this session")
	fs.BoolVar(&o.all, "all", false, "look up empty and one-word queries too")
	fs.BoolVar(&o.noCache, "no-cache", false, "do not read or write the lexical index cache")
	fs.BoolVar(&o.asJSON, "json", false, "print the result as JSON: path, score, reason and freshness of each memory")
	fs.BoolVar(&o.manifest, "manifest", false, "list the selector's manifest (shortlist, ranked, tokens) even without a model")
	fs.BoolVar(&o.quiet, "quiet", false, "show no progress while the index is built")
}

func runRecall(ctx context.Context, env *cli.Env, o *recallOptions, args []string) error {
	query := strings.TrimSpace(strings.Join(args, " "))
	if query == "" && !o.all {
		return cli.Usagef("recall needs a query")
	}
	d, _, err := o.lf.openEnabled(env)
	if err != nil {
		return err
	}
	cfg, err := o.mf.config(env)
	if err != nil {
		return err
	}
	model, err := o.mf.model(cfg)
	if err != nil {
		return err
	}
	cache := ""
	if !o.noCache {
		if cache, err = recall.DefaultIndexPath(d.Path(), env.LookupEnv); err != nil {
			return err
		}
	}
	embedder, embedCache, err := recallEmbedder(env, cfg, d.Path())
	if err != nil {
		return err
	}
	// The index is refreshed once, by recall.Recall: a refresh here as
	// well stats a second share of a large directory's files (see
	// recall.Index.Refresh; 1,062 fstatat calls against 562 for a warm
	// recall at 20,000 memories). A first build's progress shows through
	// the index's Progress all the same.
	rep := env.Progress("recall", o.quiet || o.asJSON)
	idx := recall.NewIndex(d.Path(), &recall.IndexOptions{CachePath: cache, Progress: rep.Step})
	opts := &recall.Options{
		Model: model, Embedder: embedder, EmbedCache: embedCache, EmbedOptions: cfg.EmbedOptions(), Index: idx, Surfaced: o.surfaced,
		Max: o.maxN, ManifestTokens: cfg.ManifestTokens(), Budget: o.budget, SessionBytes: o.used,
		AllowShortQueries: o.all, Now: env.Now, ShowManifest: o.manifest,
	}
	if o.tools != "" {
		for t := range strings.SplitSeq(o.tools, ",") {
			if t = strings.TrimSpace(t); t != "" {
				opts.RecentTools = append(opts.RecentTools, t)
			}
		}
	}
	res, err := recall.Recall(ctx, d, query, opts)
	rep.Stop()
	if err != nil {
		return err
	}
	return cli.Emit(env, o.asJSON, res, func(w io.Writer) error {
		if len(res.Memories) > 0 {
			fmt.Fprint(w, res.Render())
		}
		printRecallSummary(env, res)
		return nil
	})
}

func printRecallSummary(env *cli.Env, res *recall.Result) {
	fmt.Fprint(env.Stderr, res.Summary())
}
