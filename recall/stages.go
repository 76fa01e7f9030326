package recall

import (
	"context"
	"fmt"
	"log/slog"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/anchors"
	"github.com/memdir/memdir/usage"
)

// Recall picks the memories relevant to a query, as Claude Code's recall
// does, and better where it falls short:
//
//  1. Candidates are every memory in the directory, not the newest 200,
//     minus those already surfaced.
//  2. They are ranked: BM25F over name, description and body (see package
//     lexical), fused with embedding similarity when an Embedder is set
//     (see [Options.Embedder]).
//  3. The selector's manifest is filled up to ManifestTokens: first the
//     ranked memories, best first, then the newest of the others, until
//     the next line would pass the budget. The default budget is what
//     Claude Code's manifest of this directory costs (its 200 newest
//     memories), so at the same cost the selector sees a superset of what
//     Claude Code shows it where the ranking is right, and every memory
//     when they all fit.
//  4. With a model, the selector sees that manifest and the query (and the
//     recently used tools) and answers with at most Max file names.
//     Without a model, or when the call fails, the ranking answers alone
//     with what passes a relevance rule that can answer nothing (see
//     [lexical.Answer]); the result says which happened.
//  5. Each chosen memory is read and cut to 200 lines / 4,096 bytes, with a
//     header carrying its age and, past a day, a staleness warning, within
//     the session's byte budget.
//
// Each step is a stage of its own below: candidates, rank, manifest,
// choose (the model's selection or the ranking's answer) and render.
func Recall(ctx context.Context, d *memdir.Dir, query string, opts *Options) (*Result, error) {
	r := newRun(d, query, opts)
	if r.skip() {
		return r.res, nil
	}
	if ok, err := r.candidates(ctx); err != nil || !ok {
		return r.res, err
	}
	if err := r.rank(ctx); err != nil {
		return nil, err
	}
	r.manifest()
	picks, err := r.choose(ctx)
	if err != nil {
		return nil, err
	}
	r.render(ctx, picks)
	r.count(ctx)
	return r.res, nil
}

// run is one recall, going through the stages.
type run struct {
	d     *memdir.Dir
	query string
	o     Options
	log   *slog.Logger
	res   *Result

	idx      *Index
	surfaced map[string]bool
	// newest are the 200 newest memories and, beyond, as many more as
	// surfaced ones are skipped; total counts the index's memories.
	newest []memdir.Header
	total  int
	// baseBytes and baseLines measure Claude Code's own manifest of the
	// directory; budgetBytes is the manifest's budget (-1: none).
	baseBytes, baseLines, budgetBytes int
	// withManifest is whether a manifest is built (a model, or asked to).
	withManifest bool
	// k is how many hits are ranked, fresh how many of them are re-read.
	k, fresh int
	ranked   []rankedMemory
	semantic *semanticRanking
	// fill are the memories that fill the manifest after the ranked ones.
	fill []memdir.Header
	// shown is the manifest: its headers, their bytes, how many are full.
	shown      []memdir.Header
	shownBytes int
	full       int
}

// pick is one memory chosen to be surfaced.
type pick struct {
	h      memdir.Header
	score  float64
	parts  *ScoreParts
	reason string
}

// scored returns the score m was ranked by, with its parts: the fused
// score when vectors were fused, else the lexical one re-scored.
func (r *run) scored(m rankedMemory) (float64, *ScoreParts) {
	parts := &ScoreParts{Lexical: m.lex.Score, AnswerType: m.factors.answerType, Date: m.factors.date, Day: m.factors.day}
	if r.semantic == nil {
		return m.score, parts
	}
	cos, trust, fused := m.cos, r.semantic.trust, m.fused
	parts.Cosine, parts.Trust, parts.Fused = &cos, &trust, &fused
	return fused, parts
}

func newRun(d *memdir.Dir, query string, opts *Options) *run {
	if opts == nil {
		opts = &Options{}
	}
	r := &run{d: d, query: query, o: *opts, res: &Result{Query: query, Memories: []Recalled{}}}
	if r.o.Max <= 0 {
		r.o.Max = MaxMemories
	}
	if r.o.Budget <= 0 {
		r.o.Budget = SessionBudget
	}
	if r.o.Now == nil {
		r.o.Now = time.Now
	}
	r.log = r.o.Logger
	if r.log == nil {
		r.log = slog.New(slog.DiscardHandler)
	}
	return r
}

// skip reports whether nothing is to be looked up: a short query, or a
// session whose budget is spent.
func (r *run) skip() bool {
	switch {
	case !r.o.AllowShortQueries && IsShortQuery(r.query):
		r.res.Method, r.res.Reason = MethodSkipped, "the query is empty or a single word"
		return true
	case r.o.SessionBytes >= r.o.Budget:
		r.res.Method, r.res.Reason = MethodSkipped, fmt.Sprintf("this session has already surfaced %s of memories (budget %s)", memdir.FormatFileSize(r.o.SessionBytes), memdir.FormatFileSize(r.o.Budget))
		return true
	}
	return false
}

// candidates brings the index up to date and measures what there is to
// choose from; ok is false when there is nothing.
func (r *run) candidates(ctx context.Context) (ok bool, err error) {
	r.idx = r.o.Index
	if r.idx == nil {
		r.idx = NewIndex(r.d.Path(), nil)
	}
	if _, err := r.idx.Refresh(ctx); err != nil {
		return false, err
	}
	r.surfaced = map[string]bool{}
	for _, s := range r.o.Surfaced {
		if rel, ok := relPath(r.d, s); ok {
			r.surfaced[rel] = true
		}
	}
	// Claude Code's manifest: the 200 newest memories, then those already
	// surfaced left out. newest holds them and, beyond, enough newer
	// memories to fill memdir's manifest after the ranked ones. Without a
	// manifest to fill (no model, no ShowManifest) only their count is
	// needed: the pass over every record that finds the newest was a
	// fifteenth of a warm hook at 100,000 memories.
	r.withManifest = r.o.Model != nil || r.o.ShowManifest
	if r.withManifest {
		r.newest, r.total = r.idx.Newest(memdir.MaxScanFiles+len(r.surfaced), nil)
	} else {
		r.total = r.idx.Len()
	}
	r.res.Candidates = r.total
	for p := range r.surfaced {
		if r.idx.has(p) {
			r.res.Candidates--
		}
	}
	if r.res.Candidates <= 0 {
		r.res.Method, r.res.Reason = MethodEmpty, "no memories to choose from"
		return false, nil
	}
	r.budget()
	return true, nil
}

// budget sets the manifest's budget, and how deep the ranking goes.
func (r *run) budget() {
	for i, h := range r.newest {
		if i < memdir.MaxScanFiles && !r.surfaced[h.Path] {
			r.baseBytes += len(ManifestLine(h)) + 1
			r.baseLines++
		}
	}
	r.res.BaselineTokens = tokensOf(r.baseBytes)
	r.budgetBytes = 4 * r.o.ManifestTokens
	switch {
	case r.o.ManifestTokens == 0:
		r.budgetBytes = r.baseBytes
	case r.o.ManifestTokens < 0:
		r.budgetBytes = -1
	}
	r.res.ManifestBudget = tokensOf(r.budgetBytes)
	// Rank: the lexical hits, best first, without the surfaced ones; as
	// many as the shortest manifest lines could fill the budget with.
	// Without a manifest to fill, the answer needs only the leading hits.
	r.k, r.fresh = 0, -1
	switch {
	case !r.withManifest:
		r.k = len(r.surfaced) + max(30, 6*r.o.Max)
		r.fresh = r.k
	case r.budgetBytes >= 0:
		// As many hits as a tiered manifest of lines of the newest
		// memories' average length holds, and more if the budget is not
		// filled (see rank). Those that could be full lines are checked
		// against their files; the tail is listed as last indexed.
		avg, avgCompact := minManifestLine, len("- x.md")+1
		if r.baseLines > 0 {
			avg = max(avg, r.baseBytes/r.baseLines)
			compactBytes := 0
			for i, h := range r.newest {
				if i < memdir.MaxScanFiles && !r.surfaced[h.Path] {
					compactBytes += manifestLineCost(h, true)
				}
			}
			avgCompact = max(avgCompact, compactBytes/r.baseLines)
		}
		r.fresh = 2*(r.budgetBytes/avg) + len(r.surfaced) + r.o.Max
		r.k = r.fresh + (r.budgetBytes-r.budgetBytes/fullShare)/avgCompact
	}
}

// rank ranks the candidates lexically, deep enough to fill the manifest,
// and fuses the cosine ranking in when there is an embedder.
func (r *run) rank(ctx context.Context) error {
	for {
		hits, headers := r.idx.search(r.query, r.k, r.fresh)
		r.ranked = r.ranked[:0]
		var bytes int
		for i, h := range hits {
			if !r.surfaced[h.ID] {
				r.ranked = append(r.ranked, rankedMemory{h: headers[i], lex: h, lexRank: len(r.ranked) + 1, score: h.Score, factors: noFactors})
				// What the line costs in a tiered manifest (see manifest),
				// the fullest a budget could hold.
				bytes += manifestLineCost(headers[i], bytes >= r.budgetBytes/fullShare)
			}
		}
		// Stop when the hits fill the budget or there are no more.
		if !r.withManifest || r.k <= 0 || len(hits) < r.k || bytes >= r.budgetBytes {
			break
		}
		r.k *= 4
	}
	r.ranked = rerank(r.ranked, r.query, r.o.Now(), r.idx.countModified)
	// The memories to fill the rest of the manifest with, newest first:
	// the newest suffice for Claude Code's budget or less; a larger one
	// may take any memory.
	r.fill = r.newest
	var candidates []memdir.Header // every candidate, for a manifest past the newest
	if r.withManifest && (r.budgetBytes < 0 || r.budgetBytes > r.baseBytes) {
		for _, h := range r.idx.Headers() {
			if !r.surfaced[h.Path] {
				candidates = append(candidates, h)
			}
		}
		r.fill = candidates
	}
	if r.o.Embedder == nil {
		return nil
	}
	sem, err := rankSemantic(ctx, r.d, &r.o, r.idx, r.query, r.ranked, r.surfaced)
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case err != nil:
		r.log.Debug("recall: embeddings failed; ranking lexically", "err", err)
		r.res.Semantic = "lexical only: the embedder failed: " + err.Error()
		r.res.EmbedError = err.Error()
	case sem.n == 0:
		// Not one candidate has a vector yet: nothing to fuse.
		r.res.Semantic = fmt.Sprintf("lexical only: no memory has a vector yet (%d missing; 'memdir embed' fills them)", sem.missing)
		r.res.VectorsMissing = sem.missing
		r.res.EmbedUsage = sem.usage
	default:
		r.semantic = sem
		r.ranked = sem.fuse(r.ranked, candidates)
		r.res.Semantic = sem.summary()
		r.res.EmbedUsage = sem.usage
		r.res.VectorsMissing = sem.missing
	}
	return nil
}

// manifest fills the selector's manifest: every line in full when the
// candidates fit the budget; else tiered, full lines for the first third
// of the budget and then compact ones (the file name alone), so that the
// same tokens show the selector several times as many memories as full
// lines would. The full third holds the ranking's head, ten times the
// most a selector picks at Claude Code's budget; docs/recall.md says how
// it was chosen.
func (r *run) manifest() {
	if r.withManifest {
		r.fillManifest(false)
		if r.budgetBytes >= 0 && len(r.shown) < r.res.Candidates {
			if len(r.fill) == len(r.newest) && len(r.newest) < r.total {
				// Compact lines fit more of the newest than Claude Code's 200.
				r.fill, _ = r.idx.Newest(r.k, nil)
			}
			r.fillManifest(true)
		}
	}
	r.res.ManifestTokens = tokensOf(r.shownBytes)
	r.res.FullLines = r.full
	for _, h := range r.shown {
		r.res.Shortlist = append(r.res.Shortlist, h.Path)
	}
}

// fillManifest lists the ranked memories, then the fill, until the next
// line would pass the budget; tiered, lines past a third of the budget
// are compact.
func (r *run) fillManifest(tiered bool) {
	r.shown, r.shownBytes, r.full = r.shown[:0], 0, 0
	listed := map[string]bool{}
	add := func(h memdir.Header) bool {
		compact := tiered && r.shownBytes >= r.budgetBytes/fullShare
		n := manifestLineCost(h, compact)
		if compact && len(r.shown) == r.full {
			n += len(compactManifestIntro) + 2
		}
		if r.budgetBytes >= 0 && r.shownBytes+n > r.budgetBytes {
			return false
		}
		r.shown = append(r.shown, h)
		r.shownBytes += n
		listed[h.Path] = true
		if !compact {
			r.full++
		}
		return true
	}
	r.res.Ranked = 0
	for _, m := range r.ranked {
		if !add(m.h) {
			break
		}
		r.res.Ranked++
	}
	for _, h := range r.fill {
		if !r.surfaced[h.Path] && !listed[h.Path] && !add(h) {
			break
		}
	}
}

// choose picks the memories to surface: the model's selection from the
// manifest, or the ranking's own answer without a model or when the call
// fails.
func (r *run) choose(ctx context.Context) ([]pick, error) {
	var picks []pick
	switch {
	case r.o.Model == nil:
		r.res.Method = MethodLexical
		if r.semantic != nil {
			r.res.Method = MethodHybrid
		}
		picks = r.answer()
	case len(r.shown) == 0:
		// Not one manifest line fits the budget: there is no call to make.
		r.res.Method, r.res.Reason = MethodModel, fmt.Sprintf("the manifest budget of %d tokens holds no memory", r.res.ManifestBudget)
	default:
		selected, usage, err := selectMemories(ctx, r.o.Model, r.query, r.shown, r.full, r.o.RecentTools)
		r.res.Usage.Add(usage)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			r.log.Debug("recall selector failed; falling back to lexical", "err", err)
			r.res.Method, r.res.Reason = MethodFallback, "the model selector failed: "+err.Error()
			picks = r.answer()
			break
		}
		r.res.Method = MethodModel
		picks = r.selected(selected)
	}
	if len(picks) > r.o.Max {
		picks = picks[:r.o.Max]
	}
	return picks, nil
}

// answer is what the ranking answers alone (see answerRanked).
func (r *run) answer() []pick {
	var picks []pick
	for _, m := range answerRanked(r.ranked, r.query, r.semantic, r.o.Lexical, r.o.Max) {
		score, parts := r.scored(m)
		picks = append(picks, pick{m.h, score, parts, m.reason()})
	}
	return picks
}

// selected turns the model's choice into picks, in its order.
func (r *run) selected(paths []string) []pick {
	ranked := map[string]rankedMemory{}
	for _, m := range r.ranked {
		ranked[m.h.Path] = m
	}
	var picks []pick
	for _, p := range paths {
		for _, h := range r.shown {
			if h.Path == p {
				var score float64
				var parts *ScoreParts
				if m, ok := ranked[p]; ok {
					score, parts = r.scored(m)
				}
				picks = append(picks, pick{h, score, parts, "selected by the model"})
			}
		}
	}
	return picks
}

// render reads each chosen memory, cut to 200 lines and 4,096 bytes, with
// its header (age, staleness warning, changed anchors), within the
// session's byte budget.
func (r *run) render(ctx context.Context, picks []pick) {
	now := r.o.Now()
	used := r.o.SessionBytes
	memo := &anchors.Checker{Root: r.d.ProjectRoot()}
	for _, p := range picks {
		content, truncated, err := readForSurfacing(r.d.Abs(p.h.Path))
		if err != nil {
			r.log.Debug("recall: cannot read memory", "path", p.h.Path, "err", err)
			continue
		}
		if used+len(content) > r.o.Budget {
			r.res.Reason = strings.TrimPrefix(r.res.Reason+"; ", "; ") + "the session's memory budget is reached; further memories were left out"
			break
		}
		used += len(content)
		m := Recalled{
			Path: p.h.Path, AbsPath: r.d.Abs(p.h.Path), ModTime: p.h.ModTime,
			Age: memdir.MemoryAge(p.h.ModTime, now), Freshness: FreshnessText(p.h.ModTime, now),
			Score: p.score, ScoreParts: p.parts, Reason: p.reason, Content: content, Truncated: truncated,
			StaleAnchors: memdir.StaleAnchors(ctx, []byte(content), memo),
		}
		m.Header = recallHeader(m)
		r.res.Memories = append(r.res.Memories, m)
		r.res.Bytes += len(content)
	}
}

// count records the surfaced memories in the directory's use log, unless
// asked not to; a failure is logged, never returned.
func (r *run) count(ctx context.Context) {
	if r.o.NoCount || len(r.res.Memories) == 0 {
		return
	}
	via := r.o.Via
	if via == "" {
		via = usage.Recall
	}
	paths := make([]string, len(r.res.Memories))
	for i, m := range r.res.Memories {
		paths[i] = m.Path
	}
	if err := r.d.Uses().Record(ctx, via, paths...); err != nil {
		r.log.Warn("recall: cannot count the surfaced memories", "err", err)
	}
}

// relPath turns a path given by a caller, absolute or relative to the
// directory, into the directory-relative slash path.
func relPath(d *memdir.Dir, p string) (string, bool) {
	if filepath.IsAbs(p) {
		rel, err := filepath.Rel(d.Path(), p)
		if err != nil || !filepath.IsLocal(rel) {
			return "", false
		}
		p = rel
	}
	p = path.Clean(filepath.ToSlash(p))
	return p, p != "." && !strings.HasPrefix(p, "../")
}
