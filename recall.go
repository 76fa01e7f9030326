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

	"github.com/memdir/memdir/internal/jsonx"
	"github.com/memdir/memdir/lexical"
)

// Recall defaults, as Claude Code uses them where it has them.
const (
	// RecallMaxMemories is how many memories one recall surfaces.
	RecallMaxMemories = 5
	// RecallShortlist is how many lexical candidates the model selector sees.
	RecallShortlist = 30
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
	// Model chooses among the shortlist; nil means the lexical ranker alone.
	Model Model
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
	// Shortlist is how many lexical candidates the selector sees (default
	// RecallShortlist).
	Shortlist int
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
}

// Render returns the memory as the agent sees it: header and content inside
// a system reminder.
func (r Recalled) Render() string {
	return "<system-reminder>\n" + r.Header + "\n\n" + r.Content + "\n</system-reminder>"
}

// RecallResult is the outcome of a recall.
type RecallResult struct {
	Query    string       `json:"query"`
	Method   RecallMethod `json:"method"`
	Reason   string       `json:"reason,omitempty"`
	Memories []Recalled   `json:"memories"`
	// Candidates counts the memories considered (all but those surfaced).
	Candidates int `json:"candidates"`
	// Shortlist lists the paths the selector was shown.
	Shortlist []string `json:"shortlist,omitempty"`
	// Usage is the model's token usage (zero without a model call).
	Usage Usage `json:"usage"`
	// Bytes is the size of the surfaced content, to add to SessionBytes.
	Bytes int `json:"bytes"`
}

// Render returns every recalled memory as the agent sees it.
func (r *RecallResult) Render() string {
	parts := make([]string, len(r.Memories))
	for i, m := range r.Memories {
		parts[i] = m.Render()
	}
	return strings.Join(parts, "\n")
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
//  2. A lexical ranker (BM25F over name, description and body) shortlists the
//     best Shortlist candidates.
//  3. With a model, the selector sees the shortlist's manifest and the query
//     (and the recently used tools) and answers with at most Max file names.
//     Without a model, or when the call fails, the lexical ranker answers
//     alone with its best results above a relevance threshold; the result
//     says which happened.
//  4. Each chosen memory is read and cut to 200 lines / 4,096 bytes, with a
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
	if o.Shortlist <= 0 {
		o.Shortlist = RecallShortlist
	}
	if o.Shortlist < o.Max {
		o.Shortlist = o.Max
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
	hits, headers := idx.Search(query, o.Shortlist+len(surfaced))
	var shortHits []lexical.Hit
	var shortHeaders []Header
	for i, h := range hits {
		if surfaced[h.ID] || len(shortHits) == o.Shortlist {
			continue
		}
		shortHits = append(shortHits, h)
		shortHeaders = append(shortHeaders, headers[i])
	}
	res.Candidates = idx.Len() - countPresent(idx, surfaced)
	if res.Candidates <= 0 {
		res.Method, res.Reason = RecallNoMemories, "no memories to choose from"
		return res, nil
	}
	for _, h := range shortHeaders {
		res.Shortlist = append(res.Shortlist, h.Path)
	}

	type pick struct {
		h      Header
		score  float64
		reason string
	}
	var picks []pick
	lexicalPicks := func() {
		for _, h := range lexical.Answer(shortHits, o.Lexical) {
			for i, sh := range shortHits {
				if sh.ID == h.ID {
					picks = append(picks, pick{shortHeaders[i], h.Score, "lexical match on " + strings.Join(h.Terms, ", ")})
				}
			}
		}
	}
	switch {
	case o.Model == nil:
		res.Method = RecallByLexical
		lexicalPicks()
	case len(shortHeaders) == 0:
		// Nothing shares a term with the query: the selector would see an
		// empty list, so there is no call to make.
		res.Method, res.Reason = RecallByModel, "no memory shares a term with the query"
	default:
		selected, usage, err := selectMemories(ctx, o.Model, query, shortHeaders, o.RecentTools)
		res.Usage = usage
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			log.Debug("recall selector failed; falling back to lexical", "err", err)
			res.Method, res.Reason = RecallFallback, "the model selector failed: "+err.Error()
			lexicalPicks()
			break
		}
		res.Method = RecallByModel
		for _, p := range selected {
			for i, h := range shortHeaders {
				if h.Path == p {
					picks = append(picks, pick{h, shortHits[i].Score, "selected by the model"})
				}
			}
		}
	}
	if len(picks) > o.Max {
		picks = picks[:o.Max]
	}

	now := o.Now()
	used := o.SessionBytes
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
		}
		r.Header = recallHeader(r)
		res.Memories = append(res.Memories, r)
		res.Bytes += len(content)
	}
	return res, nil
}

func countPresent(idx *RecallIndex, set map[string]bool) int {
	idx.mu.Lock()
	defer idx.mu.Unlock()
	n := 0
	for p := range set {
		if idx.has(p) {
			n++
		}
	}
	return n
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
	if r.Freshness == "" {
		return fmt.Sprintf("Memory (saved %s): %s:", r.Age, r.AbsPath)
	}
	return fmt.Sprintf("%s\n\nMemory: %s:", r.Freshness, r.AbsPath)
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
	text := normalizeText(data)
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

// selectorSystem is the instruction to the model that chooses memories.
const selectorSystem = `You choose which saved memories will help an AI coding assistant with the user's latest message.

You get the message and a list of memory files, one per line: the memory's type, its file name, when it was last changed, and a one-line description. Reply with the file names of the memories that will clearly help with this message, at most 5, the most useful first. Judge by the name and description. Pick a memory only when you are confident it is relevant; when unsure, leave it out. An empty list is a good answer when nothing clearly fits.

If recently used tools are listed, the assistant already knows how to call them: do not pick memories that only document how to use those tools, but do pick memories that warn about problems, pitfalls or known issues with them.

Answer with JSON only: {"selected_memories": ["file-name.md", ...]}`

var selectorSchema = json.RawMessage(`{"type":"object","properties":{"selected_memories":{"type":"array","items":{"type":"string"}}},"required":["selected_memories"],"additionalProperties":false}`)

// SelectorRequest builds the model request that chooses among headers.
func SelectorRequest(query string, headers []Header, recentTools []string) *Request {
	var msg strings.Builder
	fmt.Fprintf(&msg, "Query: %s\n\nAvailable memories:\n%s", query, Manifest(headers))
	if len(recentTools) > 0 {
		fmt.Fprintf(&msg, "\n\nRecently used tools: %s", strings.Join(recentTools, ", "))
	}
	return &Request{
		System:     selectorSystem,
		Messages:   []Message{{Role: RoleUser, Content: []Block{TextBlock(msg.String())}}},
		Schema:     selectorSchema,
		SchemaName: "selected_memories",
		MaxTokens:  recallSelectorTokens,
	}
}

func selectMemories(ctx context.Context, m Model, query string, headers []Header, tools []string) ([]string, Usage, error) {
	resp, err := m.Generate(ctx, SelectorRequest(query, headers, tools))
	if err != nil {
		return nil, Usage{}, err
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
