package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/config"
	"github.com/memdir/memdir/config/provider"
	"github.com/memdir/memdir/internal/cli"
	"github.com/memdir/memdir/internal/evalset"
	"github.com/memdir/memdir/llm"
	"github.com/memdir/memdir/recall"
)

var evalCmd = &cli.Command{
	Name:  "eval",
	Args:  "recall FILE [--distractors N,...] [--model M] [--json]",
	Short: "measure recall quality on a labelled set",
	Long: `Eval measures how well recall finds the memories that matter. 'memdir eval
recall FILE' reads a labelled set (the format of testdata/eval/recall-dev.json:
memories with file, name, description, type, body and age_days; queries with
the files relevant to each), writes the memories into a temporary directory
with modification times from age_days, and runs every query through memdir's
recall, end to end, once per directory size (--distractors). Per method it
reports recall@5, precision@5, MRR, the share of queries with nothing relevant
answered with nothing, the share of relevant memories shown to the model
selector (pooled over queries), and the manifest tokens sent per query:

  lexical      recall without a model: the ranking and its relevance rule;
  hybrid       the same with embeddings fused in (only with an embedder);
  selector     what the model selector is shown: the manifest filled to the
               token budget (recall.manifest_tokens); with --model, the
               model's own picks are scored too (this calls the model once
               per query and reports its token usage);
  claude-code  Claude Code's manifest of the 200 newest files, the baseline.

--distractors N,... adds N synthetic memories, newer than every real one and
recombined from the set's own sentences, so each relevant memory competes
with many near-copies of its own text: a harder test than most real
directories. The default runs the set alone and under 1,880 distractors.

Examples:
  memdir eval recall testdata/eval/recall-dev.json
  memdir eval recall testdata/eval/recall-oss.json --distractors 0 --json
  memdir eval recall testdata/eval/recall-dev.json --model anthropic:claude-sonnet-4-5`,
	Setup: cli.Setup(runEval),
}

// evalOptions holds the flag values of memdir eval.
type evalOptions struct {
	distractors string
	asJSON      bool
	mf          *modelFlags
}

func (o *evalOptions) Declare(fs *flag.FlagSet) {
	fs.StringVar(&o.distractors, "distractors", "0,1880", "directory sizes to test: `N,...` synthetic memories added")
	fs.BoolVar(&o.asJSON, "json", false, "print the report as JSON, with per-query details")
	o.mf = addModelFlags(fs, "")
}

func runEval(ctx context.Context, env *cli.Env, o *evalOptions, args []string) error {
	if len(args) != 2 || args[0] != "recall" {
		return cli.Usagef("eval takes: recall FILE")
	}
	var sizes []int
	for f := range strings.SplitSeq(o.distractors, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 0 {
			return cli.Usagef("--distractors takes whole numbers separated by commas, not %q", o.distractors)
		}
		sizes = append(sizes, n)
	}
	p := args[1]
	if !filepath.IsAbs(p) {
		p = filepath.Join(env.Cwd, p)
	}
	set, err := evalset.Load(p)
	if err != nil {
		return fmt.Errorf("%w: %w", err, memdir.ErrInvalid)
	}
	cfg, err := o.mf.config(env)
	if err != nil {
		return err
	}
	ev := &recallEval{set: set, manifestTokens: cfg.ManifestTokens()}
	if ev.model, err = o.mf.model(cfg); err != nil {
		return err
	}
	if err := ev.configureEmbedder(ctx, env, cfg); err != nil {
		return err
	}
	rep := &recallEvalReport{File: p, Memories: len(set.Memories), Queries: len(set.Queries)}
	for _, n := range sizes {
		run, err := ev.run(ctx, n)
		if err != nil {
			return err
		}
		rep.Runs = append(rep.Runs, run)
	}
	return cli.Emit(env, o.asJSON, rep, func(w io.Writer) error {
		rep.print(w)
		return nil
	})
}

// evalRef is the reference date the dev set's ages count back from.
var evalRef = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

type recallEval struct {
	set            *evalset.Set
	model          llm.Model
	embedder       llm.Embedder
	embedOpts      *recall.EmbedOptions
	manifestTokens int
}

type recallEvalReport struct {
	File     string           `json:"file"`
	Memories int              `json:"memories"`
	Queries  int              `json:"queries"`
	Runs     []*recallEvalRun `json:"runs"`
}

// recallEvalRun is the evaluation at one directory size.
type recallEvalRun struct {
	Distractors int               `json:"distractors"`
	Size        int               `json:"directory_size"`
	Methods     []*evalMethodStat `json:"methods"`
}

// evalMethodStat is one method's figures. The pointers are nil where a
// figure does not apply (the baseline never answers a query on its own).
type evalMethodStat struct {
	Method    string   `json:"method"`
	Recall5   *float64 `json:"recall_at_5,omitempty"`
	Precision *float64 `json:"precision_at_5,omitempty"`
	MRR       *float64 `json:"mrr,omitempty"`
	NoneEmpty *float64 `json:"none_empty,omitempty"`
	// Shown is the share of all relevant memories (pooled over queries)
	// that the model selector is shown; nil for methods without a selector.
	Shown *float64 `json:"shown_to_selector,omitempty"`
	// Tokens is the mean manifest tokens per query sent to a selector.
	Tokens float64 `json:"manifest_tokens_per_query"`
	// Lines and FullLines are the mean manifest lines per query, and those
	// of them in full (the rest list a file name alone).
	Lines     float64         `json:"manifest_lines_per_query,omitempty"`
	FullLines float64         `json:"full_lines_per_query,omitempty"`
	Usage     *llm.Usage      `json:"usage,omitempty"`
	Report    *evalset.Report `json:"report,omitempty"`
}

// run evaluates every method at one directory size: the set, and
// distractors newer than all of it, in a temporary directory, with every
// query recalled through it. A recall error does not stop the run: the
// first one is returned with it.
func (ev *recallEval) run(ctx context.Context, distractors int) (*recallEvalRun, error) {
	tmp, err := os.MkdirTemp("", "memdir-eval-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	ed, err := ev.openDir(ctx, tmp, distractors)
	if err != nil {
		return nil, err
	}
	run := &recallEvalRun{Distractors: distractors, Size: ed.idx.Len()}
	run.Methods = append(run.Methods, ed.answered(ctx, "lexical", nil, nil))
	if ev.embedder != nil {
		run.Methods = append(run.Methods, ed.answered(ctx, "hybrid", nil, ev.embedder))
	}
	run.Methods = append(run.Methods, ed.selectorShown(ctx))
	if ev.model != nil {
		run.Methods = append(run.Methods, ed.answered(ctx, "selector (model)", ev.model, ev.embedder))
	}
	run.Methods = append(run.Methods, ed.newestBaseline())
	return run, ed.recallErr
}

// evalDir is the memory directory of one run, indexed, with what the
// methods share.
type evalDir struct {
	*recallEval
	d             *memdir.Dir
	idx           *recall.Index
	cache         *recall.EmbedCache // nil without an embedder
	totalRelevant int                // relevant memories, summed over queries
	recallErr     error              // the first recall error
}

// openDir writes the set, and distractors memories newer than all of it,
// into tmp/memory, opens and indexes that directory, and opens an
// embedding cache when there is an embedder.
func (ev *recallEval) openDir(ctx context.Context, tmp string, distractors int) (*evalDir, error) {
	set := ev.set
	dir := filepath.Join(tmp, "memory")
	if err := os.Mkdir(dir, 0o700); err != nil {
		return nil, err
	}
	if err := set.WriteDir(dir, evalRef); err != nil {
		return nil, err
	}
	if distractors > 0 {
		if err := writeDistractors(dir, set, distractors); err != nil {
			return nil, err
		}
	}
	d, err := memdir.Open(dir, &memdir.Options{Journal: memdir.NewJournal(filepath.Join(tmp, "journal"), nil)})
	if err != nil {
		return nil, err
	}
	idx := recall.NewIndex(dir, nil)
	if _, err := idx.Refresh(ctx); err != nil {
		return nil, err
	}
	ed := &evalDir{recallEval: ev, d: d, idx: idx}
	if ev.embedder != nil {
		if ed.cache, err = recall.OpenEmbedCache(filepath.Join(tmp, "vectors")); err != nil {
			return nil, err
		}
	}
	for _, q := range set.Queries {
		ed.totalRelevant += len(q.Relevant)
	}
	return ed, nil
}

// recallQuery runs query q through recall with the model and embedder given
// (either may be nil). On an error it keeps the first and returns what
// recall returned, or an empty result.
func (ed *evalDir) recallQuery(ctx context.Context, q string, model llm.Model, emb llm.Embedder) *recall.Result {
	res, err := recall.Recall(ctx, ed.d, q, &recall.Options{
		Index: ed.idx, Model: model, Embedder: emb, EmbedCache: ed.cache, EmbedOptions: ed.embedOpts,
		ManifestTokens: ed.manifestTokens, Now: evalNow, NoCount: true, ShowManifest: true,
	})
	if err != nil && ed.recallErr == nil {
		ed.recallErr = err
	}
	if res == nil {
		return &recall.Result{}
	}
	return res
}

// evalNow is the clock of every recall an evaluation runs.
func evalNow() time.Time { return evalRef }

// answered scores a method that answers queries itself. With a model, it
// also reports the selector's view of each query: the relevant memories it
// was shown and the manifest tokens.
func (ed *evalDir) answered(ctx context.Context, name string, model llm.Model, emb llm.Embedder) *evalMethodStat {
	set := ed.set
	st := &evalMethodStat{Method: name}
	var usage llm.Usage
	var shown, tokens float64
	rep := evalset.Evaluate(set, func(q string) []string {
		res := ed.recallQuery(ctx, q, model, emb)
		usage.Add(res.Usage)
		usage.Add(res.EmbedUsage)
		if model != nil {
			tokens += float64(res.ManifestTokens)
			shown += float64(countRelevant(set, q, res.Shortlist))
		}
		var out []string
		for _, m := range res.Memories {
			out = append(out, m.Path)
		}
		return out
	}, &evalset.Options{Ks: []int{5}})
	st.Recall5, st.Precision, st.MRR, st.NoneEmpty = new(rep.Recall[5]), new(rep.Precision[5]), new(rep.MRR), new(rep.NoneEmpty)
	if model != nil {
		st.Shown = ed.shownShare(shown)
		st.Tokens = tokens / ed.queries()
	}
	if usage != (llm.Usage{}) {
		st.Usage = &usage
	}
	st.Report = rep
	return st
}

// selectorShown is the selector's view, without calling a model: what an
// oracle selector could pick from.
func (ed *evalDir) selectorShown(ctx context.Context) *evalMethodStat {
	sel := &evalMethodStat{Method: "selector (shown)"}
	var shown, tokens, lines, full float64
	for _, q := range ed.set.Queries {
		res := ed.recallQuery(ctx, q.Query, nil, ed.embedder)
		shown += float64(countRelevant(ed.set, q.Query, res.Shortlist))
		tokens += float64(res.ManifestTokens)
		lines += float64(len(res.Shortlist))
		full += float64(res.FullLines)
	}
	nq := ed.queries()
	sel.Shown = ed.shownShare(shown)
	sel.Tokens, sel.Lines, sel.FullLines = tokens/nq, lines/nq, full/nq
	return sel
}

// newestBaseline is Claude Code's view: the manifest of the 200 newest
// files, whatever the query.
func (ed *evalDir) newestBaseline() *evalMethodStat {
	newest := ed.idx.Headers()
	if len(newest) > memdir.MaxScanFiles {
		newest = newest[:memdir.MaxScanFiles]
	}
	var newestPaths []string
	for _, h := range newest {
		newestPaths = append(newestPaths, h.Path)
	}
	base := &evalMethodStat{Method: "claude-code newest 200"}
	var shown float64
	for _, q := range ed.set.Queries {
		shown += float64(countRelevant(ed.set, q.Query, newestPaths))
	}
	base.Shown = ed.shownShare(shown)
	base.Tokens = float64((len(recall.Manifest(newest)) + 3) / 4) // every line with its newline, as BaselineTokens
	base.Lines, base.FullLines = float64(len(newest)), float64(len(newest))
	return base
}

// shownShare is shown as a share of all relevant memories.
func (ed *evalDir) shownShare(shown float64) *float64 {
	return new(shown / float64(max(ed.totalRelevant, 1)))
}

// queries is the number of queries to average over (at least 1).
func (ed *evalDir) queries() float64 { return float64(max(len(ed.set.Queries), 1)) }

// countRelevant counts the relevant files of query q among paths.
func countRelevant(set *evalset.Set, q string, paths []string) int {
	in := map[string]bool{}
	for _, p := range paths {
		in[p] = true
	}
	n := 0
	for _, qq := range set.Queries {
		if qq.Query != q {
			continue
		}
		for _, r := range qq.Relevant {
			if in[r] {
				n++
			}
		}
		break
	}
	return n
}

// writeDistractors adds n memories, newer than every real one, whose text is
// recombined from the set's own sentences: realistic competition for the
// ranker, and for the newest-200 baseline.
func writeDistractors(dir string, set *evalset.Set, n int) error {
	rng := rand.New(rand.NewPCG(1, 2))
	var sentences, descs []string
	for _, m := range set.Memories {
		for s := range strings.SplitSeq(m.Body, "\n") {
			if s = strings.TrimSpace(s); len(s) > 20 {
				sentences = append(sentences, s)
			}
		}
		descs = append(descs, m.Description)
	}
	types := []string{"user", "feedback", "project", "reference"}
	for i := range n {
		a, b := descs[rng.IntN(len(descs))], descs[rng.IntN(len(descs))]
		desc := firstHalf(a) + " " + secondHalf(b)
		var body []string
		for range 3 {
			body = append(body, sentences[rng.IntN(len(sentences))])
		}
		m := evalset.Memory{
			File: fmt.Sprintf("zz_distractor_%05d.md", i), Name: fmt.Sprintf("distractor-%d", i),
			Description: desc, Type: types[i%4], Body: strings.Join(body, "\n"),
		}
		data, err := m.Markdown()
		if err != nil {
			return err
		}
		p := filepath.Join(dir, m.File)
		if err := os.WriteFile(p, data, 0o600); err != nil {
			return err
		}
		// Newer than every real memory (the newest real one is age 0).
		mt := evalRef.Add(time.Duration(i+1) * time.Minute)
		if err := os.Chtimes(p, mt, mt); err != nil {
			return err
		}
	}
	return nil
}

func firstHalf(s string) string {
	w := strings.Fields(s)
	return strings.Join(w[:len(w)/2], " ")
}

func secondHalf(s string) string {
	w := strings.Fields(s)
	return strings.Join(w[len(w)/2:], " ")
}

func (r *recallEvalReport) print(w io.Writer) {
	fmt.Fprintf(w, "Recall evaluation of %s: %s, %s\n", filepath.Base(r.File), cli.Plural(r.Memories, "memory", "memories"), cli.Plural(r.Queries, "query", "queries"))
	for _, run := range r.Runs {
		fmt.Fprintf(w, "\n%s", cli.Plural(run.Size, "memory", "memories"))
		if run.Distractors > 0 {
			fmt.Fprintf(w, " (the set + %d newer distractors)", run.Distractors)
		}
		fmt.Fprintln(w, ":")
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "method\trecall@5\tprecision@5\tMRR\tnone→empty\tshown to selector\ttokens/query\tlines (full)\t")
		for _, m := range run.Methods {
			lines := "-"
			if m.Lines > 0 {
				lines = fmt.Sprintf("%.0f (%.0f)", m.Lines, m.FullLines)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%.0f\t%s\t\n", m.Method, fmtOpt(m.Recall5), fmtOpt(m.Precision), fmtOpt(m.MRR), fmtOpt(m.NoneEmpty), fmtOpt(m.Shown), m.Tokens, lines)
		}
		tw.Flush()
	}
}

func fmtOpt(f *float64) string {
	if f == nil {
		return "-"
	}
	return strconv.FormatFloat(*f, 'f', 3, 64)
}

// configureEmbedder sets the embedder the configuration names, if any.
func (ev *recallEval) configureEmbedder(ctx context.Context, env *cli.Env, cfg *config.Config) error {
	e, err := provider.NewEmbedder(cfg)
	ev.embedder, ev.embedOpts = e, cfg.EmbedOptions()
	return err
}
