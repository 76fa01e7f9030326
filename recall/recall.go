package recall

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"
	"unicode"

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/anchors"
	"github.com/memdir/memdir/internal/jsonx"
	"github.com/memdir/memdir/internal/mdtext"
	"github.com/memdir/memdir/internal/safeopen"
	"github.com/memdir/memdir/lexical"
	"github.com/memdir/memdir/llm"
)

// Recall defaults, as Claude Code uses them where it has them.
const (
	// MaxMemories is how many memories one recall surfaces.
	MaxMemories = 5
	// SessionBudget caps the bytes of memories surfaced in a session.
	SessionBudget = 60 * 1024
	// MaxLines and MaxBytes cap each surfaced memory.
	MaxLines = 200
	MaxBytes = 4096
	// recallSelectorTokens caps the selector's reply.
	recallSelectorTokens = 256
)

// Method says how the memories were chosen.
type Method string

// Recall methods.
const (
	MethodModel    Method = "model"    // the model selector chose
	MethodLexical  Method = "lexical"  // no model configured: the lexical ranker chose
	MethodHybrid   Method = "hybrid"   // no model configured: the lexical and cosine rankings fused chose
	MethodFallback Method = "fallback" // the model call failed: the lexical ranker chose
	MethodSkipped  Method = "skipped"  // nothing was looked up (see Reason)
	MethodEmpty    Method = "empty"    // the directory holds no candidate memories
)

// Options adjust Recall. The zero value recalls lexically.
type Options struct {
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
	// EmbedMissing embeds, during the recall, the memories EmbedCache has
	// no vector for (an evaluation wants every vector). Otherwise a recall
	// never waits for memory vectors: those missing rank lexically alone,
	// Result.VectorsMissing counts them, and filling them is left to
	// `memdir embed` (which the hook starts in the background) or to a
	// long-lived process. Without an EmbedCache every memory is embedded.
	EmbedMissing bool
	// QueryEmbedTimeout bounds the wait for the query's vector (default
	// DefaultQueryEmbedTimeout); past it recall ranks lexically and says
	// why in Result.Semantic.
	QueryEmbedTimeout time.Duration
	// Index is a recall index to reuse (see NewIndex); nil builds one
	// for this call, reading every memory.
	Index *Index
	// Surfaced are memories already shown in this session (paths relative
	// to the directory, or absolute); they are not surfaced again.
	Surfaced []string
	// RecentTools are tools the agent used successfully since the user's
	// last message; the selector skips plain usage docs for them but keeps
	// warnings about them.
	RecentTools []string
	// Max caps the memories surfaced (default MaxMemories).
	Max int
	// ManifestTokens caps the manifest the model selector is shown, in
	// tokens estimated as bytes/4. Zero means what Claude Code's own
	// manifest costs for this directory (the lines of its 200 newest
	// memories), so the selector is never shown fewer memories than
	// Claude Code shows it; a negative value means no cap (every memory).
	// See [Dir.Recall] for how the manifest is filled.
	ManifestTokens int
	// ShowManifest fills Result.Shortlist (what a selector would be
	// shown) even without a Model. Without a model and without it, recall
	// ranks only as deep as its own answer needs: the per-prompt path of a
	// hook with no model configured stays cheap however large the
	// directory.
	ShowManifest bool
	// AllowShortQueries looks up even empty or one-word queries, which
	// Claude Code skips.
	AllowShortQueries bool
	// Budget is the session's byte budget for surfaced memories (default
	// SessionBudget); SessionBytes is how much of it is used already.
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
	// Score is the score the memory was ranked by: the lexical one with
	// its re-scoring factors, or the fused one when vectors were fused (0
	// for a memory the model chose that no ranking reached).
	Score float64 `json:"score"`
	// ScoreParts are the parts Score is made of.
	ScoreParts *ScoreParts `json:"score_parts,omitempty"`
	// Reason says why it was chosen.
	Reason string `json:"reason"`
	// Header is the line that introduces the memory to the agent.
	Header string `json:"header"`
	// Content is the memory file, cut to MaxLines lines and
	// MaxBytes bytes at a line end, with a note when cut.
	Content   string `json:"content"`
	Truncated bool   `json:"truncated"`
	// StaleAnchors are the project files the memory names that changed or
	// went away since it was written (see docs/format.md, anchors).
	StaleAnchors []anchors.Stale `json:"stale_anchors,omitempty"`
}

// ScoreParts break a recalled memory's score down. Lexical is the BM25F
// score (with coordination, see package lexical); AnswerType, Date and Day
// are the re-scoring factors (1 when they do not apply); Cosine is the
// similarity with the query and Trust the weight the cosine ranking had in
// the fusion, Fused the reciprocal-rank score, when vectors were fused.
type ScoreParts struct {
	Lexical    float64  `json:"lexical"`
	AnswerType float64  `json:"answer_type"`
	Date       float64  `json:"date"`
	Day        float64  `json:"day"`
	Cosine     *float64 `json:"cosine,omitempty"`
	Trust      *float64 `json:"trust,omitempty"`
	Fused      *float64 `json:"fused,omitempty"`
}

// Render returns the memory as the agent sees it: header and content inside
// a system reminder, ending with a newline.
func (r Recalled) Render() string {
	return "<system-reminder>\n" + r.Header + "\n\n" + r.Content + "\n</system-reminder>\n"
}

// Result is the outcome of a recall.
type Result struct {
	Query    string     `json:"query"`
	Method   Method     `json:"method"`
	Reason   string     `json:"reason,omitempty"`
	Memories []Recalled `json:"memories"`
	// Candidates counts the memories considered (all but those surfaced).
	Candidates int `json:"candidates"`
	// Shortlist lists the paths of the selector's manifest, in its order:
	// the ranked memories first, then the newest of the others. It is
	// filled when a model is called, and without one when
	// Options.ShowManifest asks, so that a caller can see what a
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
	// VectorsMissing counts the candidates ranked without a vector because
	// the cache lacked one (see Options.EmbedMissing).
	VectorsMissing int `json:"vectors_missing,omitempty"`
	// EmbedError is why embeddings took no part although an embedder is
	// configured ("" when they did): the embedder's name and the error.
	EmbedError string `json:"embed_error,omitempty"`
	// Bytes is the size of the surfaced content, to add to SessionBytes.
	Bytes int `json:"bytes"`
}

// Render returns every recalled memory as the agent sees it, one after the
// other (see Recalled.Render); no memories give "".
func (r *Result) Render() string {
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

// readForSurfacing reads a memory cut to MaxLines lines and
// MaxBytes bytes, ending at a line break, with a note when cut.
func readForSurfacing(abs string) (string, bool, error) {
	f, _, err := safeopen.Open(abs)
	if err != nil {
		return "", false, err
	}
	defer f.Close()
	buf := make([]byte, MaxBytes+1)
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
	if len(text) > MaxBytes {
		cut := strings.LastIndexByte(text[:MaxBytes], '\n')
		if cut <= 0 {
			cut = MaxBytes
		}
		text = strings.ToValidUTF8(text[:cut], "")
		why = fmt.Sprintf("the first %d bytes", MaxBytes)
	}
	if lines := strings.Split(text, "\n"); len(lines) > MaxLines {
		text = strings.Join(lines[:MaxLines], "\n")
		why = fmt.Sprintf("the first %d lines", MaxLines)
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
func SelectorRequest(query string, headers []memdir.Header, recentTools []string) *llm.Request {
	return TieredSelectorRequest(query, headers, len(headers), recentTools)
}

// TieredSelectorRequest builds the model request that chooses among
// headers, the first full of them as full manifest lines and the rest by
// file name alone, as [Dir.Recall] does when the candidates do not all fit
// its manifest budget in full.
func TieredSelectorRequest(query string, headers []memdir.Header, full int, recentTools []string) *llm.Request {
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

func selectMemories(ctx context.Context, m llm.Model, query string, headers []memdir.Header, full int, tools []string) ([]string, llm.Usage, error) {
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
