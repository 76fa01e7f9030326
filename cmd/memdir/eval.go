package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/config"
	"github.com/memdir/memdir/config/provider"
	"github.com/memdir/memdir/internal/cli"
	"github.com/memdir/memdir/internal/evalset"
	"github.com/memdir/memdir/internal/progress"
	"github.com/memdir/memdir/llm"
	"github.com/memdir/memdir/recall"
)

var evalCmd = &cli.Command{
	Name:  "eval",
	Args:  "recall FILE... [--distractors N,...] [--model M] [--by-tag] [--json] [--quiet]",
	Short: "measure recall quality on a labelled set",
	Long: `Eval measures how well recall finds the memories that matter. 'memdir eval
recall FILE' reads a labelled set (the format of testdata/eval/recall-dev.json:
memories with file, name, description, type, body and age_days; queries with
the files relevant to each), writes the memories into a temporary directory
with modification times from age_days, and runs every query through memdir's
recall, end to end, once per directory size (--distractors). A LoCoMo file
(the conversational benchmark's JSON) is read as one set per conversation,
each in a directory of its own: a memory per observation, dated by its
session; a question's relevant memories are those citing its evidence, and
its adversarial questions have none. Several files, or a LoCoMo file, are
scored per set and pooled (each query counts once).

Per method it reports recall@5, precision@5, MRR, the share of queries with
nothing relevant answered with nothing (none→empty) and of those with
something relevant answered with nothing (ans→empty: silence separates only
when none→empty is well above it), the share of relevant memories shown to
the model selector (pooled over queries), and the manifest tokens per query:

  ranking      the ranking's own top 5, before any rule decides to answer less;
  lexical      recall without a model: the ranking and its answer rule;
  hybrid       the same with embeddings fused in (only with an embedder),
               with its ranking's top 5 as "hybrid ranking";
  fts5-porter  SQLite FTS5 with the porter stemmer, BM25 over name,
               description and body, the query's words OR-ed: a baseline;
  selector     what the model selector is shown: the manifest filled to the
               token budget (recall.manifest_tokens); with --model, the
               model's own picks are scored too (this calls the model once
               per query and reports its token usage);
  claude-code  Claude Code's manifest of the 200 newest files, the baseline.

--by-tag adds recall@5, MRR and the empty-answer rates per query tag (the
bracketed tags that start a query's notes; LoCoMo's categories).

--distractors N,... adds N synthetic memories, newer than every real one and
recombined from the set's own sentences, so each relevant memory competes
with many near-copies of its own text: a harder test than most real
directories. The default runs the set alone and under 1,880 distractors.

Examples:
  memdir eval recall testdata/eval/recall-dev.json
  memdir eval recall ../shared/eval/locomo-dev/locomo-dev.json --distractors 0 --by-tag
  memdir eval recall testdata/eval/recall-oss.json --distractors 0 --json
  memdir eval recall testdata/eval/recall-dev.json --model anthropic:claude-sonnet-4-5`,
	Setup: cli.Setup(runEval),
}

// evalOptions holds the flag values of memdir eval.
type evalOptions struct {
	distractors string
	asJSON      bool
	byTag       bool
	quiet       bool
	mf          *modelFlags
}

func (o *evalOptions) Declare(fs *flag.FlagSet) {
	fs.StringVar(&o.distractors, "distractors", "0,1880", "directory sizes to test: `N,...` synthetic memories added")
	fs.BoolVar(&o.asJSON, "json", false, "print the report as JSON, with per-query details")
	fs.BoolVar(&o.byTag, "by-tag", false, "also report the figures per query tag")
	fs.BoolVar(&o.quiet, "quiet", false, "show no progress on standard error")
	o.mf = addModelFlags(fs, "")
}

func runEval(ctx context.Context, env *cli.Env, o *evalOptions, args []string) error {
	if len(args) < 2 || args[0] != "recall" {
		return cli.Usagef("eval takes: recall FILE...")
	}
	var sizes []int
	for f := range strings.SplitSeq(o.distractors, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 0 {
			return cli.Usagef("--distractors takes whole numbers separated by commas, not %q", o.distractors)
		}
		sizes = append(sizes, n)
	}
	rep := &recallEvalReport{}
	ev := &recallEval{}
	for _, p := range args[1:] {
		if !filepath.IsAbs(p) {
			p = filepath.Join(env.Cwd, p)
		}
		sets, dropped, err := evalset.LoadSets(p)
		if err != nil {
			return fmt.Errorf("%w: %w", err, memdir.ErrInvalid)
		}
		rep.Files = append(rep.Files, p)
		rep.Dropped += dropped
		ev.sets = append(ev.sets, sets...)
		for _, s := range sets {
			rep.Memories += len(s.Memories)
			rep.Queries += len(s.Queries)
		}
	}
	rep.File, rep.Sets = rep.Files[0], len(ev.sets)
	cfg, err := o.mf.config(env)
	if err != nil {
		return err
	}
	ev.manifestTokens = cfg.ManifestTokens()
	if ev.model, err = o.mf.model(cfg); err != nil {
		return err
	}
	if err := ev.configureEmbedder(ctx, env, cfg); err != nil {
		return err
	}
	ev.prog = env.Progress("eval recall", o.quiet || o.asJSON)
	ev.steps = len(sizes) * len(ev.sets)
	for _, n := range sizes {
		run, err := ev.run(ctx, n, o.byTag)
		if err != nil {
			ev.prog.Stop()
			return err
		}
		rep.Runs = append(rep.Runs, run)
	}
	ev.prog.Stop()
	return cli.Emit(env, o.asJSON, rep, func(w io.Writer) error {
		rep.print(w, tableWidth(env))
		return nil
	})
}

// evalRef is the reference date the dev set's ages count back from.
var evalRef = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

type recallEval struct {
	sets           []*evalset.Set
	model          llm.Model
	embedder       llm.Embedder
	embedOpts      *recall.EmbedOptions
	manifestTokens int
	// prog reports the sets evaluated, done of steps (sets × sizes).
	prog        *progress.Reporter
	done, steps int
}

type recallEvalReport struct {
	// File is the first of Files, the labelled sets read.
	File  string   `json:"file"`
	Files []string `json:"files"`
	// Sets counts the sets (a LoCoMo file holds one per conversation),
	// each evaluated in a directory of its own and pooled.
	Sets     int `json:"sets"`
	Memories int `json:"memories"`
	Queries  int `json:"queries"`
	// Dropped counts LoCoMo questions left out: no observation cites
	// their evidence.
	Dropped int              `json:"dropped_questions,omitempty"`
	Runs    []*recallEvalRun `json:"runs"`
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
	// AnswerableEmpty is the share of queries with a relevant memory
	// answered with nothing.
	AnswerableEmpty *float64 `json:"answerable_empty,omitempty"`
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
	// ByTag has the figures per query tag, with --by-tag.
	ByTag map[string]*evalTagStat `json:"by_tag,omitempty"`
}

// evalTagStat is one method's figures over the queries of one tag.
type evalTagStat struct {
	Queries         int     `json:"queries"`
	WithRelevant    int     `json:"with_relevant"`
	Recall5         float64 `json:"recall_at_5"`
	MRR             float64 `json:"mrr"`
	NoneEmpty       float64 `json:"none_empty"`
	AnswerableEmpty float64 `json:"answerable_empty"`
}

// setReport fills the figures of st from rep.
func (st *evalMethodStat) setReport(rep *evalset.Report, byTag bool) {
	st.Recall5, st.Precision, st.MRR = new(rep.Recall[5]), new(rep.Precision[5]), new(rep.MRR)
	st.NoneEmpty, st.AnswerableEmpty = new(rep.NoneEmpty), new(rep.AnswerableEmpty)
	st.Report = rep
	if byTag {
		st.ByTag = map[string]*evalTagStat{}
		for t, r := range rep.ByTag() {
			st.ByTag[t] = &evalTagStat{Queries: r.Queries, WithRelevant: r.WithRelevant, Recall5: r.Recall[5], MRR: r.MRR, NoneEmpty: r.NoneEmpty, AnswerableEmpty: r.AnswerableEmpty}
		}
	}
}

// run evaluates every method at one directory size, over every set: each
// set and distractors newer than all of it in a temporary directory of its
// own, with every query recalled through it; the figures are pooled over
// the sets. A recall error does not stop the run: the first one is
// returned with it.
func (ev *recallEval) run(ctx context.Context, distractors int, byTag bool) (*recallEvalRun, error) {
	run := &recallEvalRun{Distractors: distractors}
	var parts []*evalParts
	var firstErr error
	stage := fmt.Sprintf("sets evaluated (+%d distractors)", distractors)
	for _, set := range ev.sets {
		ev.prog.Step(stage, ev.done, ev.steps)
		p, size, err := ev.runSet(ctx, set, distractors)
		if err != nil {
			return nil, err
		}
		ev.done++
		ev.prog.Step(stage, ev.done, ev.steps)
		if firstErr == nil {
			firstErr = p.recallErr
		}
		run.Size += size
		parts = append(parts, p)
	}
	run.Methods = poolParts(parts, byTag)
	return run, firstErr
}

// evalParts is one set's evaluation: a report per answering method, and
// the sums the selector rows average.
type evalParts struct {
	names   []string
	reports map[string]*evalset.Report
	stats   map[string]*evalMethodStat // the rows without a report of their own
	// Pooled sums: relevant memories shown, manifest tokens, lines and
	// full lines, per row; relevant memories and queries of the set.
	shown, tokens, lines, full map[string]float64
	usage                      map[string]*llm.Usage
	relevant, queries          float64
	recallErr                  error
}

func (ev *recallEval) runSet(ctx context.Context, set *evalset.Set, distractors int) (*evalParts, int, error) {
	tmp, err := os.MkdirTemp("", "memdir-eval-")
	if err != nil {
		return nil, 0, err
	}
	defer os.RemoveAll(tmp)
	ed, err := ev.openDir(ctx, set, tmp, distractors)
	if err != nil {
		return nil, 0, err
	}
	p := &evalParts{reports: map[string]*evalset.Report{}, stats: map[string]*evalMethodStat{},
		shown: map[string]float64{}, tokens: map[string]float64{}, lines: map[string]float64{}, full: map[string]float64{},
		usage: map[string]*llm.Usage{}, relevant: float64(ed.totalRelevant), queries: float64(len(set.Queries))}
	ed.answered(ctx, p, "lexical", nil, nil)
	if ev.embedder != nil {
		ed.answered(ctx, p, "hybrid", nil, ev.embedder)
	}
	if err := ed.fts5(p); err != nil {
		return nil, 0, err
	}
	ed.selectorShown(ctx, p)
	if ev.model != nil {
		ed.answered(ctx, p, "selector (model)", ev.model, ev.embedder)
	}
	ed.newestBaseline(p)
	p.recallErr = ed.recallErr
	return p, ed.idx.Len(), nil
}

// poolParts pools the sets' figures into one row per method, in the order
// the methods were run.
func poolParts(parts []*evalParts, byTag bool) []*evalMethodStat {
	var out []*evalMethodStat
	for _, name := range parts[0].names {
		st := &evalMethodStat{Method: name}
		var reps []*evalset.Report
		var shown, tokens, lines, full, relevant, queries float64
		var usage llm.Usage
		withShown := false
		for _, p := range parts {
			if r := p.reports[name]; r != nil {
				reps = append(reps, r)
			}
			if s, ok := p.shown[name]; ok {
				shown += s
				withShown = true
			}
			tokens, lines, full = tokens+p.tokens[name], lines+p.lines[name], full+p.full[name]
			relevant, queries = relevant+p.relevant, queries+p.queries
			if u := p.usage[name]; u != nil {
				usage.Add(*u)
			}
		}
		if len(reps) > 0 {
			st.setReport(evalset.Pool(reps...), byTag)
		}
		if withShown {
			st.Shown = new(shown / max(relevant, 1))
		}
		queries = max(queries, 1)
		st.Tokens, st.Lines, st.FullLines = tokens/queries, lines/queries, full/queries
		if usage != (llm.Usage{}) {
			st.Usage = &usage
		}
		out = append(out, st)
	}
	return out
}

// add registers a row of p.
func (p *evalParts) add(name string) {
	if !slices.Contains(p.names, name) {
		p.names = append(p.names, name)
	}
}

// evalDir is the memory directory of one set, indexed, with what the
// methods share.
type evalDir struct {
	*recallEval
	set           *evalset.Set
	ref           time.Time
	d             *memdir.Dir
	idx           *recall.Index
	cache         *recall.EmbedCache // nil without an embedder
	totalRelevant int                // relevant memories, summed over queries
	recallErr     error              // the first recall error
}

// openDir writes the set, and distractors memories newer than all of it,
// into tmp/memory, opens and indexes that directory, and opens an
// embedding cache when there is an embedder.
func (ev *recallEval) openDir(ctx context.Context, set *evalset.Set, tmp string, distractors int) (*evalDir, error) {
	ref := evalRef
	if set.Reference != nil {
		ref = *set.Reference
	}
	dir := filepath.Join(tmp, "memory")
	if err := os.Mkdir(dir, 0o700); err != nil {
		return nil, err
	}
	if err := set.WriteDir(dir, ref); err != nil {
		return nil, err
	}
	if distractors > 0 {
		if err := writeDistractors(dir, set, distractors, ref); err != nil {
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
	ed := &evalDir{recallEval: ev, set: set, ref: ref, d: d, idx: idx}
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
		Index: ed.idx, Model: model, Embedder: emb, EmbedCache: ed.cache, EmbedOptions: ed.embedOpts, EmbedMissing: true,
		ManifestTokens: ed.manifestTokens, Now: func() time.Time { return ed.ref }, NoCount: true, ShowManifest: true,
	})
	if err != nil && ed.recallErr == nil {
		ed.recallErr = err
	}
	if res == nil {
		return &recall.Result{}
	}
	return res
}

// answered scores a method that answers queries itself, and, without a
// model, its ranking's own top 5 (row "<name> ranking"; "ranking" for the
// lexical one). With a model, it also reports the selector's view of each
// query: the relevant memories it was shown and the manifest tokens.
func (ed *evalDir) answered(ctx context.Context, p *evalParts, name string, model llm.Model, emb llm.Embedder) {
	set := ed.set
	rankName := name + " ranking"
	if name == "lexical" {
		rankName = "ranking"
	}
	var usage llm.Usage
	top := map[string][]string{}
	next := 0 // Evaluate asks the set's queries in order
	rep := evalset.Evaluate(set, func(q string) []string {
		query := relevantQuery(set, &next, q)
		res := ed.recallQuery(ctx, q, model, emb)
		usage.Add(res.Usage)
		usage.Add(res.EmbedUsage)
		if model != nil {
			p.tokens[name] += float64(res.ManifestTokens)
			p.shown[name] += float64(countRelevant(query.Relevant, res.Shortlist))
		}
		top[q] = res.Shortlist[:min(recall.MaxMemories, res.Ranked, len(res.Shortlist))]
		var out []string
		for _, m := range res.Memories {
			out = append(out, m.Path)
		}
		return out
	}, &evalset.Options{Ks: []int{5}})
	if model == nil {
		p.add(rankName)
		p.reports[rankName] = evalset.Evaluate(set, func(q string) []string { return top[q] }, &evalset.Options{Ks: []int{5}})
	}
	p.add(name)
	p.reports[name] = rep
	if usage != (llm.Usage{}) {
		p.usage[name] = &usage
	}
}

// selectorShown is the selector's view, without calling a model: what an
// oracle selector could pick from.
func (ed *evalDir) selectorShown(ctx context.Context, p *evalParts) {
	const name = "selector (shown)"
	p.add(name)
	p.shown[name] += 0
	for _, q := range ed.set.Queries {
		res := ed.recallQuery(ctx, q.Query, nil, ed.embedder)
		p.shown[name] += float64(countRelevant(q.Relevant, res.Shortlist))
		p.tokens[name] += float64(res.ManifestTokens)
		p.lines[name] += float64(len(res.Shortlist))
		p.full[name] += float64(res.FullLines)
	}
}

// newestBaseline is Claude Code's view: the manifest of the 200 newest
// files, whatever the query.
func (ed *evalDir) newestBaseline(p *evalParts) {
	const name = "claude-code newest 200"
	newest := ed.idx.Headers()
	if len(newest) > memdir.MaxScanFiles {
		newest = newest[:memdir.MaxScanFiles]
	}
	var newestPaths []string
	for _, h := range newest {
		newestPaths = append(newestPaths, h.Path)
	}
	p.add(name)
	p.shown[name] += 0
	for _, q := range ed.set.Queries {
		p.shown[name] += float64(countRelevant(q.Relevant, newestPaths))
	}
	nq := float64(len(ed.set.Queries))
	p.tokens[name] += nq * float64((len(recall.Manifest(newest))+3)/4) // every line with its newline, as BaselineTokens
	p.lines[name] += nq * float64(len(newest))
	p.full[name] += nq * float64(len(newest))
}

// countRelevant counts the relevant files of query q among paths.
func countRelevant(relevant, paths []string) int {
	n := 0
	for _, r := range relevant {
		if slices.Contains(paths, r) {
			n++
		}
	}
	return n
}

// relevantQuery returns the query of set that Evaluate is asking about:
// the one at *next when its text is q (as it is, queries being asked in
// order), else the first with that text; *next moves past it. Two
// questions of a set may share a text and not their relevant memories.
func relevantQuery(set *evalset.Set, next *int, q string) evalset.Query {
	i := *next
	if i >= len(set.Queries) || set.Queries[i].Query != q {
		i = slices.IndexFunc(set.Queries, func(x evalset.Query) bool { return x.Query == q })
	}
	if i < 0 {
		return evalset.Query{}
	}
	*next = i + 1
	return set.Queries[i]
}

// writeDistractors adds n memories, newer than every real one, whose text is
// recombined from the set's own sentences: realistic competition for the
// ranker, and for the newest-200 baseline.
func writeDistractors(dir string, set *evalset.Set, n int, ref time.Time) error {
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
		mt := ref.Add(time.Duration(i+1) * time.Minute)
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

// evalColumns are the eval table's headers, each on two lines so that the
// table fits 80 columns, and which of them hold figures (aligned right).
var (
	evalColumns  = []string{"method", "recall\n@5", "prec.\n@5", "MRR", "none→\nempty", "ans→\nempty", "shown", "tokens", "lines\n(full)"}
	evalFigures  = []bool{false, true, true, true, true, true, true, true, true}
	evalTagCols  = []string{"tag", "queries", "recall\n@5", "MRR", "none→\nempty", "ans→\nempty"}
	evalTagRight = []bool{false, true, true, true, true, true}
)

// print writes the report as tables fitted to width terminal cells (0:
// never cut).
func (r *recallEvalReport) print(w io.Writer, width int) {
	sets := ""
	if r.Sets > 1 {
		sets = fmt.Sprintf(" in %d sets, each in a directory of its own, pooled", r.Sets)
	}
	names := make([]string, len(r.Files))
	for i, f := range r.Files {
		names[i] = filepath.Base(f)
	}
	fmt.Fprintf(w, "Recall evaluation of %s: %s, %s%s\n", strings.Join(names, ", "), cli.Plural(r.Memories, "memory", "memories"), cli.Plural(r.Queries, "query", "queries"), sets)
	if r.Dropped > 0 {
		fmt.Fprintf(w, "(%s left out: no observation cites their evidence)\n", cli.Plural(r.Dropped, "question", "questions"))
	}
	for _, run := range r.Runs {
		fmt.Fprintf(w, "\n%s", cli.Plural(run.Size, "memory", "memories"))
		if run.Distractors > 0 {
			fmt.Fprintf(w, " (the sets + %d newer distractors each)", run.Distractors)
		}
		fmt.Fprintln(w, ":")
		rows := [][]string{evalColumns}
		for _, m := range run.Methods {
			lines := "-"
			if m.Lines > 0 {
				lines = fmt.Sprintf("%.0f (%.0f)", m.Lines, m.FullLines)
			}
			rows = append(rows, []string{evalLabel(m.Method), fmtOpt(m.Recall5), fmtOpt(m.Precision), fmtOpt(m.MRR), fmtOpt(m.NoneEmpty), fmtOpt(m.AnswerableEmpty), fmtOpt(m.Shown), fmt.Sprintf("%.0f", m.Tokens), lines})
		}
		writeTable(w, rows, &tableOptions{Width: width, Right: evalFigures})
		for _, m := range run.Methods {
			if len(m.ByTag) == 0 {
				continue
			}
			fmt.Fprintf(w, "\n%s by tag:\n", m.Method)
			rows := [][]string{evalTagCols}
			for _, t := range slices.Sorted(maps.Keys(m.ByTag)) {
				s := m.ByTag[t]
				rec, mrr, ans := "-", "-", "-"
				if s.WithRelevant > 0 {
					rec, mrr, ans = fmtOpt(&s.Recall5), fmtOpt(&s.MRR), fmtOpt(&s.AnswerableEmpty)
				}
				none := "-"
				if s.Queries > s.WithRelevant {
					none = fmtOpt(&s.NoneEmpty)
				}
				rows = append(rows, []string{t, strconv.Itoa(s.Queries), rec, mrr, none, ans})
			}
			writeTable(w, rows, &tableOptions{Width: width, Right: evalTagRight})
		}
	}
}

// evalLabel is a method's name in the table: the baseline's is shortened
// so that the table fits 80 columns (--json has the full name).
func evalLabel(method string) string {
	return strings.Replace(method, "claude-code newest 200", "claude-code 200", 1)
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
