package memdir

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"
	"unicode"

	"github.com/memdir/memdir/anchors"
	"github.com/memdir/memdir/internal/jsonx"
	"github.com/memdir/memdir/internal/mdtext"
	"github.com/memdir/memdir/lexical"
	"github.com/memdir/memdir/llm"
	"github.com/memdir/memdir/usage"
)

// Recall defaults, as Claude Code uses them where it has them.
const (
	// RecallMaxMemories is how many memories one recall surfaces.
	RecallMaxMemories = 5
	// RecallSessionBudget caps the bytes of memories surfaced in a session.
	RecallSessionBudget = 60 * 1024
	// RecallMaxLines and RecallMaxBytes cap each surfaced memory.
	RecallMaxLines = 200
	RecallMaxBytes = 4096
	// recallSelectorTokens caps the selector's reply.
	recallSelectorTokens = 256
)

// RecallMethod says how the memories were chosen.
type RecallMethod string

// Recall methods.
const (
	RecallByModel    RecallMethod = "model"    // the model selector chose
	RecallByLexical  RecallMethod = "lexical"  // no model configured: the lexical ranker chose
	RecallFallback   RecallMethod = "fallback" // the model call failed: the lexical ranker chose
	RecallSkipped    RecallMethod = "skipped"  // nothing was looked up (see Reason)
	RecallNoMemories RecallMethod = "empty"    // the directory holds no candidate memories
)

// RecallOptions adjust Recall. The zero value recalls lexically.
type RecallOptions struct {
	// Model chooses among the manifest; nil means the ranking alone.
	Model llm.Model
	// Embedder, when set, adds semantic similarity to the ranking: the
	// query and every memory are embedded (memory vectors come from
	// EmbedCache when set) and the cosine ranking is fused with the
	// lexical one. When it fails, recall ranks lexically and says so in
	// the result's Semantic field.
	Embedder llm.Embedder
	// EmbedCache keeps memory vectors between calls and processes; nil
	// embeds every memory on each call.
	EmbedCache *EmbedCache
	// EmbedOptions tune the embedding of memories (the batch size); nil
	// means the defaults.
	EmbedOptions *EmbedOptions
	// Index is a recall index to reuse (see NewRecallIndex); nil builds one
	// for this call, reading every memory.
	Index *RecallIndex
	// Surfaced are memories already shown in this session (paths relative
	// to the directory, or absolute); they are not surfaced again.
	Surfaced []string
	// RecentTools are tools the agent used successfully since the user's
	// last message; the selector skips plain usage docs for them but keeps
	// warnings about them.
	RecentTools []string
	// Max caps the memories surfaced (default RecallMaxMemories).
	Max int
	// ManifestTokens caps the manifest the model selector is shown, in
	// tokens estimated as bytes/4. Zero means what Claude Code's own
	// manifest costs for this directory (the lines of its 200 newest
	// memories), so the selector is never shown fewer memories than
	// Claude Code shows it; a negative value means no cap (every memory).
	// See [Dir.Recall] for how the manifest is filled.
	ManifestTokens int
	// ShowManifest fills RecallResult.Shortlist (what a selector would be
	// shown) even without a Model. Without a model and without it, recall
	// ranks only as deep as its own answer needs: the per-prompt path of a
	// hook with no model configured stays cheap however large the
	// directory.
	ShowManifest bool
	// AllowShortQueries looks up even empty or one-word queries, which
	// Claude Code skips.
	AllowShortQueries bool
	// Budget is the session's byte budget for surfaced memories (default
	// RecallSessionBudget); SessionBytes is how much of it is used already.
	Budget       int
	SessionBytes int
	// Lexical tunes the lexical answer (its threshold for "nothing relevant").
	Lexical *lexical.AnswerOptions
	// Now is the clock for freshness; nil means time.Now.
	Now func() time.Time
	// Logger receives debug logs; nil discards them.
	Logger *slog.Logger
	// Via says who surfaces the memories, for the use log (UseHook,
	// UseMCP, UseUI; "" means UseRecall).
	Via string
	// NoCount leaves the surfaced memories uncounted (a preview, an
	// evaluation). Otherwise each one is counted in the directory's use
	// log (see UseLog); a failure to count is logged, never returned.
	NoCount bool
}

// Recalled is one memory chosen for the query.
type Recalled struct {
	Path    string    `json:"path"`
	AbsPath string    `json:"abs_path"`
	ModTime time.Time `json:"mtime"`
	Age     string    `json:"age"`
	// Freshness is the staleness warning, "" for memories a day old or less.
	Freshness string `json:"freshness,omitempty"`
	// Score is the lexical score (0 when the memory was not a lexical hit).
	Score float64 `json:"score"`
	// Reason says why it was chosen.
	Reason string `json:"reason"`
	// Header is the line that introduces the memory to the agent.
	Header string `json:"header"`
	// Content is the memory file, cut to RecallMaxLines lines and
	// RecallMaxBytes bytes at a line end, with a note when cut.
	Content   string `json:"content"`
	Truncated bool   `json:"truncated"`
	// StaleAnchors are the project files the memory names that changed or
	// went away since it was written (see docs/format.md, anchors).
	StaleAnchors []anchors.Stale `json:"stale_anchors,omitempty"`
}

// Render returns the memory as the agent sees it: header and content inside
// a system reminder, ending with a newline.
func (r Recalled) Render() string {
	return "<system-reminder>\n" + r.Header + "\n\n" + r.Content + "\n</system-reminder>\n"
}

// RecallResult is the outcome of a recall.
type RecallResult struct {
	Query    string       `json:"query"`
	Method   RecallMethod `json:"method"`
	Reason   string       `json:"reason,omitempty"`
	Memories []Recalled   `json:"memories"`
	// Candidates counts the memories considered (all but those surfaced).
	Candidates int `json:"candidates"`
	// Shortlist lists the paths of the selector's manifest, in its order:
	// the ranked memories first, then the newest of the others. It is
	// filled when a model is called, and without one when
	// RecallOptions.ShowManifest asks, so that a caller can see what a
	// selector would be shown.
	Shortlist []string `json:"shortlist,omitempty"`
	// Ranked is how many of Shortlist came from the ranking; the rest are
	// the newest memories not ranked.
	Ranked int `json:"ranked"`
	// FullLines is how many of Shortlist, from the first, the selector sees
	// in full (type, name, date and description); the others by file name
	// alone, when the candidates do not all fit the budget in full.
	FullLines int `json:"full_lines"`
	// ManifestTokens estimates the tokens of the manifest (bytes/4), and
	// BaselineTokens those of Claude Code's manifest of the same directory
	// (its 200 newest memories); ManifestBudget is the cap that applied.
	ManifestTokens int `json:"manifest_tokens"`
	BaselineTokens int `json:"baseline_tokens"`
	ManifestBudget int `json:"manifest_budget"`
	// Usage is the model's token usage (zero without a model call).
	Usage llm.Usage `json:"usage"`
	// Semantic says how embeddings took part: "" without an embedder, else
	// a summary, or why the ranking fell back to lexical alone.
	Semantic string `json:"semantic,omitempty"`
	// EmbedUsage is the embedder's token usage for this recall.
	EmbedUsage llm.Usage `json:"embed_usage"`
	// Bytes is the size of the surfaced content, to add to SessionBytes.
	Bytes int `json:"bytes"`
}

// Render returns every recalled memory as the agent sees it, one after the
// other (see Recalled.Render); no memories give "".
func (r *RecallResult) Render() string {
	var b strings.Builder
	for _, m := range r.Memories {
		b.WriteString(m.Render())
	}
	return b.String()
}

// IsShortQuery reports whether Claude Code would skip recall for query: it is
// empty or a single word. memdir does not count a sentence in a language
// written without spaces (Chinese, Japanese) as one word: four or more such
// characters make a query.
func IsShortQuery(query string) bool {
	q := strings.TrimSpace(query)
	if q == "" {
		return true
	}
	if strings.IndexFunc(q, unicode.IsSpace) >= 0 {
		return false
	}
	cjk := 0
	for _, r := range q {
		if unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul) {
			cjk++
		}
	}
	return cjk < 4
}

// Recall picks the memories relevant to a query, as Claude Code's recall
// does, and better where it falls short:
//
//  1. Candidates are every memory in the directory, not the newest 200,
//     minus those already surfaced.
//  2. They are ranked: BM25F over name, description and body (see package
//     lexical), fused with embedding similarity when an Embedder is set
//     (see [RecallOptions.Embedder]).
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
func (d *Dir) Recall(ctx context.Context, query string, opts *RecallOptions) (*RecallResult, error) {
	if opts == nil {
		opts = &RecallOptions{}
	}
	o := *opts
	if o.Max <= 0 {
		o.Max = RecallMaxMemories
	}
	if o.Budget <= 0 {
		o.Budget = RecallSessionBudget
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	res := &RecallResult{Query: query, Memories: []Recalled{}}
	switch {
	case !o.AllowShortQueries && IsShortQuery(query):
		res.Method, res.Reason = RecallSkipped, "the query is empty or a single word"
		return res, nil
	case o.SessionBytes >= o.Budget:
		res.Method, res.Reason = RecallSkipped, fmt.Sprintf("this session has already surfaced %s of memories (budget %s)", FormatFileSize(o.SessionBytes), FormatFileSize(o.Budget))
		return res, nil
	}

	idx := o.Index
	if idx == nil {
		idx = NewRecallIndex(d.path, "")
	}
	if _, err := idx.Refresh(ctx); err != nil {
		return nil, err
	}
	surfaced := map[string]bool{}
	for _, s := range o.Surfaced {
		if rel, ok := d.relPath(s); ok {
			surfaced[rel] = true
		}
	}
	// Claude Code's manifest: the 200 newest memories, then those already
	// surfaced left out. newest holds them and, beyond, enough newer
	// memories to fill memdir's manifest after the ranked ones.
	newest, total := idx.Newest(MaxScanFiles+len(surfaced), nil)
	res.Candidates = total
	for p := range surfaced {
		if idx.has(p) {
			res.Candidates--
		}
	}
	if res.Candidates <= 0 {
		res.Method, res.Reason = RecallNoMemories, "no memories to choose from"
		return res, nil
	}

	// The manifest's budget.
	var baseBytes, baseLines int
	for i, h := range newest {
		if i < MaxScanFiles && !surfaced[h.Path] {
			baseBytes += len(ManifestLine(h)) + 1
			baseLines++
		}
	}
	res.BaselineTokens = tokensOf(baseBytes)
	budgetBytes := 4 * o.ManifestTokens
	switch {
	case o.ManifestTokens == 0:
		budgetBytes = baseBytes
	case o.ManifestTokens < 0:
		budgetBytes = -1
	}
	res.ManifestBudget = tokensOf(budgetBytes)
	// Rank: the lexical hits, best first, without the surfaced ones; as
	// many as the shortest manifest lines could fill the budget with.
	// Without a manifest to fill, the answer needs only the leading hits.
	manifest := o.Model != nil || o.ShowManifest
	k, fresh := 0, -1
	switch {
	case !manifest:
		k = len(surfaced) + max(30, 6*o.Max)
		fresh = k
	case budgetBytes >= 0:
		// As many hits as a tiered manifest of lines of the newest
		// memories' average length holds, and more if the budget is not
		// filled (see below). Those that could be full lines are checked
		// against their files; the tail is listed as last indexed.
		avg, avgCompact := minManifestLine, len("- x.md")+1
		if baseLines > 0 {
			avg = max(avg, baseBytes/baseLines)
			compactBytes := 0
			for i, h := range newest {
				if i < MaxScanFiles && !surfaced[h.Path] {
					compactBytes += manifestLineCost(h, true)
				}
			}
			avgCompact = max(avgCompact, compactBytes/baseLines)
		}
		fresh = 2*(budgetBytes/avg) + len(surfaced) + o.Max
		k = fresh + (budgetBytes-budgetBytes/fullShare)/avgCompact
	}
	var ranked []rankedMemory
	for {
		hits, headers := idx.search(query, k, fresh)
		ranked = ranked[:0]
		var bytes int
		for i, h := range hits {
			if !surfaced[h.ID] {
				ranked = append(ranked, rankedMemory{h: headers[i], lex: h, lexRank: len(ranked) + 1})
				// What the line costs in a tiered manifest (see below),
				// the fullest a budget could hold.
				bytes += manifestLineCost(headers[i], bytes >= budgetBytes/fullShare)
			}
		}
		// Stop when the hits fill the budget or there are no more.
		if !manifest || k <= 0 || len(hits) < k || bytes >= budgetBytes {
			break
		}
		k *= 4
	}
	// The memories to fill the rest of the manifest with, newest first:
	// the newest suffice for Claude Code's budget or less; a larger one
	// may take any memory.
	fill := newest
	var candidates []Header // every candidate, for the semantic ranking
	if o.Embedder != nil || manifest && (budgetBytes < 0 || budgetBytes > baseBytes) {
		for _, h := range idx.Headers() {
			if !surfaced[h.Path] {
				candidates = append(candidates, h)
			}
		}
		fill = candidates
	}
	var semantic *semanticRanking
	if o.Embedder != nil {
		var err error
		semantic, err = d.rankSemantic(ctx, &o, idx, query, candidates)
		switch {
		case ctx.Err() != nil:
			return nil, ctx.Err()
		case err != nil:
			log.Debug("recall: embeddings failed; ranking lexically", "err", err)
			res.Semantic = "lexical only: the embedder failed: " + err.Error()
		default:
			ranked = semantic.fuse(ranked, candidates)
			res.Semantic = semantic.summary()
			res.EmbedUsage = semantic.usage
		}
	}

	// The manifest: every line in full when the candidates fit the budget;
	// else tiered, full lines for the first third of the budget and then
	// compact ones (the file name alone), so that the same tokens show the
	// selector several times as many memories as full lines would. The
	// full third holds the ranking's head, ten times the most a selector
	// picks at Claude Code's budget; docs/recall.md says how it was chosen.
	var shown []Header
	var shownBytes, full int
	listed := map[string]bool{}
	fillManifest := func(tiered bool) {
		shown, shownBytes, full = shown[:0], 0, 0
		clear(listed)
		add := func(h Header) bool {
			compact := tiered && shownBytes >= budgetBytes/fullShare
			n := manifestLineCost(h, compact)
			if compact && len(shown) == full {
				n += len(compactManifestIntro) + 2
			}
			if budgetBytes >= 0 && shownBytes+n > budgetBytes {
				return false
			}
			shown = append(shown, h)
			shownBytes += n
			listed[h.Path] = true
			if !compact {
				full++
			}
			return true
		}
		res.Ranked = 0
		for _, r := range ranked {
			if !add(r.h) {
				break
			}
			res.Ranked++
		}
		for _, h := range fill {
			if !surfaced[h.Path] && !listed[h.Path] && !add(h) {
				break
			}
		}
	}
	if manifest {
		fillManifest(false)
	}
	if manifest && budgetBytes >= 0 && len(shown) < res.Candidates {
		if len(fill) == len(newest) && len(newest) < total {
			// Compact lines fit more of the newest than Claude Code's 200.
			fill, _ = idx.Newest(k, nil)
		}
		fillManifest(true)
	}
	res.ManifestTokens = tokensOf(shownBytes)
	res.FullLines = full
	for _, h := range shown {
		res.Shortlist = append(res.Shortlist, h.Path)
	}

	type pick struct {
		h      Header
		score  float64
		reason string
	}
	var picks []pick
	rankedPicks := func() {
		for _, r := range answerRanked(ranked, semantic, o.Lexical, o.Max) {
			picks = append(picks, pick{r.h, r.lex.Score, r.reason()})
		}
	}
	switch {
	case o.Model == nil:
		res.Method = RecallByLexical
		rankedPicks()
	case len(shown) == 0:
		// Not one manifest line fits the budget: there is no call to make.
		res.Method, res.Reason = RecallByModel, fmt.Sprintf("the manifest budget of %d tokens holds no memory", res.ManifestBudget)
	default:
		selected, usage, err := selectMemories(ctx, o.Model, query, shown, full, o.RecentTools)
		res.Usage.Add(usage)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			log.Debug("recall selector failed; falling back to lexical", "err", err)
			res.Method, res.Reason = RecallFallback, "the model selector failed: "+err.Error()
			rankedPicks()
			break
		}
		res.Method = RecallByModel
		score := map[string]float64{}
		for _, r := range ranked {
			score[r.h.Path] = r.lex.Score
		}
		for _, p := range selected {
			for _, h := range shown {
				if h.Path == p {
					picks = append(picks, pick{h, score[p], "selected by the model"})
				}
			}
		}
	}
	if len(picks) > o.Max {
		picks = picks[:o.Max]
	}

	now := o.Now()
	used := o.SessionBytes
	memo := &anchors.Checker{Root: d.project}
	for _, p := range picks {
		content, truncated, err := readForSurfacing(d.Abs(p.h.Path))
		if err != nil {
			log.Debug("recall: cannot read memory", "path", p.h.Path, "err", err)
			continue
		}
		if used+len(content) > o.Budget {
			res.Reason = strings.TrimPrefix(res.Reason+"; ", "; ") + "the session's memory budget is reached; further memories were left out"
			break
		}
		used += len(content)
		r := Recalled{
			Path: p.h.Path, AbsPath: d.Abs(p.h.Path), ModTime: p.h.ModTime,
			Age: MemoryAge(p.h.ModTime, now), Freshness: FreshnessText(p.h.ModTime, now),
			Score: p.score, Reason: p.reason, Content: content, Truncated: truncated,
			StaleAnchors: d.staleOf(ctx, content, memo),
		}
		r.Header = recallHeader(r)
		res.Memories = append(res.Memories, r)
		res.Bytes += len(content)
	}
	if !o.NoCount && len(res.Memories) > 0 {
		via := o.Via
		if via == "" {
			via = usage.Recall
		}
		paths := make([]string, len(res.Memories))
		for i, m := range res.Memories {
			paths[i] = m.Path
		}
		if err := d.Uses().Record(ctx, via, paths...); err != nil {
			log.Warn("recall: cannot count the surfaced memories", "err", err)
		}
	}
	return res, nil
}

// relPath turns a path given by a caller, absolute or relative to the
// directory, into the directory-relative slash path.
func (d *Dir) relPath(p string) (string, bool) {
	if filepath.IsAbs(p) {
		rel, err := filepath.Rel(d.path, p)
		if err != nil || !filepath.IsLocal(rel) {
			return "", false
		}
		p = rel
	}
	p = path.Clean(filepath.ToSlash(p))
	return p, p != "." && !strings.HasPrefix(p, "../")
}

// recallHeader introduces a memory: its age, and the staleness warning for one
// older than a day.
func recallHeader(r Recalled) string {
	stale := anchors.Text(r.StaleAnchors)
	if stale != "" {
		stale += "\n\n"
	}
	if r.Freshness == "" {
		return fmt.Sprintf("%sMemory (saved %s): %s:", stale, r.Age, r.AbsPath)
	}
	return fmt.Sprintf("%s\n\n%sMemory: %s:", r.Freshness, stale, r.AbsPath)
}

// readForSurfacing reads a memory cut to RecallMaxLines lines and
// RecallMaxBytes bytes, ending at a line break, with a note when cut.
func readForSurfacing(abs string) (string, bool, error) {
	f, err := os.Open(abs)
	if err != nil {
		return "", false, err
	}
	defer f.Close()
	buf := make([]byte, RecallMaxBytes+1)
	n, _ := f.Read(buf)
	for n < len(buf) {
		k, err := f.Read(buf[n:])
		n += k
		if err != nil || k == 0 {
			break
		}
	}
	data := buf[:n]
	if bytes.IndexByte(data, 0) >= 0 {
		return "", false, fmt.Errorf("%s is binary", abs)
	}
	text := mdtext.Normalize(data)
	var why string
	if len(text) > RecallMaxBytes {
		cut := strings.LastIndexByte(text[:RecallMaxBytes], '\n')
		if cut <= 0 {
			cut = RecallMaxBytes
		}
		text = strings.ToValidUTF8(text[:cut], "")
		why = fmt.Sprintf("the first %d bytes", RecallMaxBytes)
	}
	if lines := strings.Split(text, "\n"); len(lines) > RecallMaxLines {
		text = strings.Join(lines[:RecallMaxLines], "\n")
		why = fmt.Sprintf("the first %d lines", RecallMaxLines)
	}
	text = strings.TrimRight(text, "\n")
	if why == "" {
		return text, false, nil
	}
	return text + fmt.Sprintf("\n\n> Only %s of this memory are shown. Read %s for the rest.", why, abs), true, nil
}

// fullShare: a tiered manifest spends 1/fullShare of its budget on full
// lines.
const fullShare = 3

// compactManifestIntro introduces the part of a tiered manifest that lists
// memories by file name alone.
const compactManifestIntro = "More memories, by file name only:"

// selectorSystem is the instruction to the model that chooses memories.
const selectorSystem = `You choose which saved memories will help an AI coding assistant with the user's latest message.

You get the message and a list of memory files, one per line: the memory's type, its file name, when it was last changed, and a one-line description. A long list may end with more memories given by file name only; pick from those too when the name alone makes clear that the memory fits. Reply with the file names of the memories that will clearly help with this message, at most 5, the most useful first. Judge by the name and description. Pick a memory only when you are confident it is relevant; when unsure, leave it out. An empty list is a good answer when nothing clearly fits.

If recently used tools are listed, the assistant already knows how to call them: do not pick memories that only document how to use those tools, but do pick memories that warn about problems, pitfalls or known issues with them.

Answer with JSON only: {"selected_memories": ["file-name.md", ...]}`

var selectorSchema = json.RawMessage(`{"type":"object","properties":{"selected_memories":{"type":"array","items":{"type":"string"}}},"required":["selected_memories"],"additionalProperties":false}`)

// SelectorRequest builds the model request that chooses among headers.
//
// The selector sees every header in full. See [TieredSelectorRequest] for a
// manifest that lists the later ones by file name alone.
func SelectorRequest(query string, headers []Header, recentTools []string) *llm.Request {
	return TieredSelectorRequest(query, headers, len(headers), recentTools)
}

// TieredSelectorRequest builds the model request that chooses among
// headers, the first full of them as full manifest lines and the rest by
// file name alone, as [Dir.Recall] does when the candidates do not all fit
// its manifest budget in full.
func TieredSelectorRequest(query string, headers []Header, full int, recentTools []string) *llm.Request {
	full = min(max(full, 0), len(headers))
	var msg strings.Builder
	// Claude Code joins the manifest lines without a final newline: the
	// prompt keeps that shape.
	fmt.Fprintf(&msg, "Query: %s\n\nAvailable memories:\n%s", query, strings.TrimSuffix(Manifest(headers[:full]), "\n"))
	if full < len(headers) {
		if full > 0 {
			msg.WriteString("\n\n")
		}
		msg.WriteString(compactManifestIntro + "\n")
		for i, h := range headers[full:] {
			if i > 0 {
				msg.WriteByte('\n')
			}
			msg.WriteString(compactManifestLine(h))
		}
	}
	if len(recentTools) > 0 {
		fmt.Fprintf(&msg, "\n\nRecently used tools: %s", strings.Join(recentTools, ", "))
	}
	return &llm.Request{
		System:     selectorSystem,
		Messages:   []llm.Message{{Role: llm.RoleUser, Content: []llm.Block{llm.TextBlock(msg.String())}}},
		Schema:     selectorSchema,
		SchemaName: "selected_memories",
		MaxTokens:  recallSelectorTokens,
	}
}

func selectMemories(ctx context.Context, m llm.Model, query string, headers []Header, full int, tools []string) ([]string, llm.Usage, error) {
	resp, err := m.Generate(ctx, TieredSelectorRequest(query, headers, full, tools))
	if err != nil {
		return nil, llm.Usage{}, err
	}
	usage := resp.Usage
	raw, err := jsonx.Extract(resp.Text())
	if err != nil {
		return nil, usage, fmt.Errorf("the selector's reply is not JSON: %w", err)
	}
	var reply struct {
		Selected []string `json:"selected_memories"`
	}
	if err := json.Unmarshal(raw, &reply); err != nil {
		return nil, usage, fmt.Errorf("the selector's reply does not match the schema: %v", err)
	}
	if reply.Selected == nil {
		return nil, usage, errors.New(`the selector's reply has no "selected_memories" list`)
	}
	known := map[string]bool{}
	for _, h := range headers {
		known[h.Path] = true
	}
	var out []string
	seen := map[string]bool{}
	for _, s := range reply.Selected {
		s = strings.TrimPrefix(strings.TrimSpace(s), "./")
		if known[s] && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out, usage, nil
}
