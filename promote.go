package memdir

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"math"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/memdir/memdir/internal/atomicfile"
	"github.com/memdir/memdir/internal/jsonx"
	"github.com/memdir/memdir/lexical"
	"github.com/memdir/memdir/secrets"
)

// The promotion review: Claude Code's /remember, which reads every memory
// layer, proposes what should move where and what should go, and changes
// nothing until asked.
//
// The layers, from the user's own to the project's shared ones:
//
//   - auto memory: the private memories of the memory directory;
//   - team memory: its team/ directory;
//   - the project's CLAUDE.md and .claude/CLAUDE.md (and .claude/rules/),
//     from the git root down to the project root;
//   - CLAUDE.local.md, the user's untracked instructions for the project;
//   - the user's CLAUDE.md (and rules/) in the configuration directory.
//
// Review reports four sections. Promotions: auto memories that belong in
// CLAUDE.md (conventions the whole team follows), in CLAUDE.local.md (how
// this user wants to work) or in team memory (project context everyone
// needs). Cleanup: duplicates (the same text, or nearly), outdated and
// superseded memories. Ambiguous: conflicts between entries and memories
// whose place is unclear. No action: the rest. Without a model the review
// is lexical and deterministic; with one, the model classifies and
// explains, and its answer is checked before it is used.

// ReviewSources names what a review reads.
type ReviewSources struct {
	// MemoryDir is the auto-memory directory; team memory is its team/.
	MemoryDir string `json:"memory_dir"`
	// ProjectRoot holds CLAUDE.md, .claude/CLAUDE.md and CLAUDE.local.md,
	// and is where promotions are written.
	ProjectRoot string `json:"project_root"`
	// GitRoot, when set, adds the instruction files of every directory from
	// it down to ProjectRoot, as Claude Code loads them.
	GitRoot string `json:"git_root,omitempty"`
	// ConfigHome holds the user's CLAUDE.md and rules/.
	ConfigHome string `json:"config_home"`
}

// SourcesFor returns the sources of a located project.
func SourcesFor(l *Location) ReviewSources {
	return ReviewSources{MemoryDir: filepath.Clean(l.Dir), ProjectRoot: l.ProjectRoot, GitRoot: l.GitRoot, ConfigHome: l.ConfigHome}
}

// Layer is one memory layer.
type Layer string

// The layers a review reads.
const (
	LayerAuto    Layer = "auto"
	LayerTeam    Layer = "team"
	LayerProject Layer = "project"
	LayerLocal   Layer = "local"
	LayerUser    Layer = "user"
)

// ReviewSection is one section of the report.
type ReviewSection string

// The sections, in report order.
const (
	SectionPromotions ReviewSection = "promotions"
	SectionCleanup    ReviewSection = "cleanup"
	SectionAmbiguous  ReviewSection = "ambiguous"
	SectionNoAction   ReviewSection = "no-action"
)

// ReviewSections lists the sections in report order.
var ReviewSections = []ReviewSection{SectionPromotions, SectionCleanup, SectionAmbiguous, SectionNoAction}

// ReviewKind says what an item proposes.
type ReviewKind string

// Item kinds and the section each belongs to.
const (
	KindToClaudeMD    ReviewKind = "to-claude-md"       // promotions: a team convention
	KindToLocal       ReviewKind = "to-claude-local-md" // promotions: a personal instruction
	KindToTeam        ReviewKind = "to-team"            // promotions: context the team needs
	KindDuplicate     ReviewKind = "duplicate"          // cleanup: the same text elsewhere
	KindNearDuplicate ReviewKind = "near-duplicate"     // cleanup: nearly the same text elsewhere
	KindOutdated      ReviewKind = "outdated"           // cleanup: every date it names is past
	KindSuperseded    ReviewKind = "superseded"         // cleanup: marked as replaced
	KindConflict      ReviewKind = "conflict"           // ambiguous: entries that contradict
	KindUnclear       ReviewKind = "unclear"            // ambiguous: no clear place
	KindKeep          ReviewKind = "keep"               // no action
)

var kindSection = map[ReviewKind]ReviewSection{
	KindToClaudeMD: SectionPromotions, KindToLocal: SectionPromotions, KindToTeam: SectionPromotions,
	KindDuplicate: SectionCleanup, KindNearDuplicate: SectionCleanup, KindOutdated: SectionCleanup, KindSuperseded: SectionCleanup,
	KindConflict: SectionAmbiguous, KindUnclear: SectionAmbiguous, KindKeep: SectionNoAction,
}

// ReviewSubject is a memory or an instruction-file entry an item is about.
type ReviewSubject struct {
	// Ref names the entry within one review ("M3", "R12").
	Ref   string `json:"ref"`
	Layer Layer  `json:"layer"`
	// File is the absolute path; Display is what the report shows: a
	// memory's path in the memory directory, or an instruction file's path
	// (relative to the project or configuration directory) and line.
	File    string `json:"file"`
	Display string `json:"display"`
	// Path is a memory's path relative to the memory directory ("" for
	// instruction files); Line an instruction entry's first line.
	Path string `json:"path,omitempty"`
	Line int    `json:"line,omitempty"`
	Name string `json:"name,omitempty"`
	Type Type   `json:"type,omitempty"`
	// Text is a memory's description, or an instruction entry's text.
	Text string `json:"text"`
	// Sum is a memory file's content sum when the review read it; applying
	// refuses to act on a memory that changed since.
	Sum string `json:"sum,omitempty"`
}

// ReviewItem is one proposal of the report.
type ReviewItem struct {
	// ID is how --apply names the item: P1 (promotions), C1 (cleanup),
	// A1 (ambiguous), N1 (no action).
	ID       string          `json:"id"`
	Section  ReviewSection   `json:"section"`
	Kind     ReviewKind      `json:"kind"`
	Subjects []ReviewSubject `json:"subjects"`
	// Target is the instruction file a promotion appends to, or the team
	// path a memory moves to.
	Target string `json:"target,omitempty"`
	// Rule is the line a promotion to CLAUDE.md or CLAUDE.local.md adds.
	Rule string `json:"rule,omitempty"`
	// Remove is the auto memory (path in the memory directory) that
	// applying removes.
	Remove     string  `json:"remove,omitempty"`
	Similarity float64 `json:"similarity,omitempty"`
	Reason     string  `json:"reason"`
	// Applicable is true when --apply can carry the item out.
	Applicable bool `json:"applicable"`
}

// ReviewMethod says who classified.
type ReviewMethod string

// Review methods.
const (
	ReviewLexical  ReviewMethod = "lexical"  // no model configured
	ReviewByModel  ReviewMethod = "model"    // the model classified
	ReviewFallback ReviewMethod = "fallback" // the model failed; lexical report
)

// ReviewFile is one instruction file the review read.
type ReviewFile struct {
	Layer   Layer  `json:"layer"`
	Path    string `json:"path"`
	Entries int    `json:"entries"`
}

// ReviewReport is the outcome of a review.
type ReviewReport struct {
	Generated time.Time    `json:"generated"`
	Method    ReviewMethod `json:"method"`
	// Fallback says why the model's answer was not used.
	Fallback string        `json:"fallback,omitempty"`
	Usage    Usage         `json:"usage"`
	Sources  ReviewSources `json:"sources"`
	Files    []ReviewFile  `json:"files"`
	// Memories and Rules count what was reviewed.
	Memories int          `json:"memories"`
	Rules    int          `json:"rules"`
	Items    []ReviewItem `json:"items"`
	// Warnings name files that could not be read.
	Warnings []string `json:"warnings,omitempty"`
}

// Item returns the item with the given id (case-insensitive).
func (r *ReviewReport) Item(id string) (*ReviewItem, bool) {
	for i := range r.Items {
		if strings.EqualFold(r.Items[i].ID, id) {
			return &r.Items[i], true
		}
	}
	return nil, false
}

// Section returns the items of one section, in order.
func (r *ReviewReport) Section(s ReviewSection) []ReviewItem {
	var out []ReviewItem
	for _, it := range r.Items {
		if it.Section == s {
			out = append(out, it)
		}
	}
	return out
}

// ReviewOptions adjust Review.
type ReviewOptions struct {
	// Model classifies; nil means the lexical review alone.
	Model Model
	// Context is the user's additional context, passed to the model.
	Context string
	// Now is the clock that decides which dates are past; nil means time.Now.
	Now func() time.Time
	// NearDuplicate is the similarity (0–1) from which two entries count as
	// near duplicates; 0 means DefaultNearDuplicate.
	NearDuplicate float64
	// Logger receives debug logs; nil discards them.
	Logger *slog.Logger
}

// Review thresholds.
const (
	// DefaultNearDuplicate is the cosine similarity of two entries' terms
	// (TF-IDF over lexical's terms) from which they are near duplicates.
	DefaultNearDuplicate = 0.6
	// conflictTopic is the similarity from which two entries are about the
	// same topic, so that one negating what the other asserts is a conflict.
	conflictTopic = 0.25
	// maxInstructionBytes bounds an instruction file the review reads.
	maxInstructionBytes = 1 << 20
	// reviewReplyTokens caps the model's answer.
	reviewReplyTokens = 8192
	// reviewExcerpt caps each memory's body in the model prompt.
	reviewExcerpt = 600
)

// reviewEntry is a memory or an instruction entry under review.
type reviewEntry struct {
	ReviewSubject
	body      string
	statement string // the memory's rule, or the instruction's text
	why       string
	mtime     time.Time
	meta      map[string]any
	secret    string // labels of credentials found, "" for none

	norm    string // normalised statement, for exact comparison
	bodySum string // normalised body, for exact comparison of memories
	vec     map[string]float64
	neg     map[string]bool // terms the entry negates
	pos     map[string]bool // terms it asserts
}

func (e *reviewEntry) isMemory() bool { return e.Layer == LayerAuto || e.Layer == LayerTeam }

// label is how prose names the entry.
func (e *reviewEntry) label() string { return e.Display }

// Review reads every layer of src and reports what should be promoted,
// cleaned up or decided, without changing anything. Files that cannot be
// read are named in Warnings; a missing memory directory or instruction file
// simply contributes nothing. With a model, a failed call or an answer that
// does not check out (unknown refs, kinds in the wrong section, a promotion
// without a rule) leaves the lexical report in place, with Method
// ReviewFallback and the reason in Fallback.
func Review(ctx context.Context, src ReviewSources, opts *ReviewOptions) (*ReviewReport, error) {
	if opts == nil {
		opts = &ReviewOptions{}
	}
	now := time.Now
	if opts.Now != nil {
		now = opts.Now
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	near := opts.NearDuplicate
	if near <= 0 {
		near = DefaultNearDuplicate
	}
	rep := &ReviewReport{Generated: now(), Method: ReviewLexical, Sources: src, Files: []ReviewFile{}}
	mems, teamInUse, err := gatherMemories(ctx, src.MemoryDir, rep)
	if err != nil {
		return nil, err
	}
	rules := gatherInstructions(src, rep)
	entries := append(append([]*reviewEntry{}, mems...), rules...)
	for i, e := range mems {
		e.Ref = "M" + strconv.Itoa(i+1)
	}
	for i, e := range rules {
		e.Ref = "R" + strconv.Itoa(i+1)
	}
	rep.Memories, rep.Rules = len(mems), len(rules)
	analyze(entries)
	rv := &reviewer{src: src, now: now(), near: near, entries: entries, teamInUse: teamInUse}
	rep.Items = rv.lexicalItems()
	if opts.Model != nil && len(mems) > 0 {
		items, usage, err := rv.modelItems(ctx, opts.Model, opts.Context, rep.Items)
		rep.Usage = usage
		if err != nil {
			rep.Method, rep.Fallback = ReviewFallback, err.Error()
			logger.Debug("promotion review: model answer not used", "err", err)
		} else {
			rep.Method, rep.Items = ReviewByModel, items
		}
	}
	numberItems(rep.Items)
	return rep, nil
}

// numberItems sorts items by section (keeping their order within one) and
// gives them ids.
func numberItems(items []ReviewItem) {
	order := map[ReviewSection]int{}
	for i, s := range ReviewSections {
		order[s] = i
	}
	sort.SliceStable(items, func(i, j int) bool { return order[items[i].Section] < order[items[j].Section] })
	prefix := map[ReviewSection]string{SectionPromotions: "P", SectionCleanup: "C", SectionAmbiguous: "A", SectionNoAction: "N"}
	count := map[ReviewSection]int{}
	for i := range items {
		count[items[i].Section]++
		items[i].ID = prefix[items[i].Section] + strconv.Itoa(count[items[i].Section])
	}
}

// gatherMemories reads every memory of the directory, daily logs excepted.
// teamInUse reports whether team/ holds anything.
func gatherMemories(ctx context.Context, dir string, rep *ReviewReport) ([]*reviewEntry, bool, error) {
	res, err := ScanDir(ctx, dir, &ScanOptions{Limit: -1})
	if err != nil {
		return nil, false, err
	}
	for _, p := range res.Problems {
		if p.Skipped {
			rep.Warnings = append(rep.Warnings, "memory "+p.String())
		}
	}
	hs := res.Memories
	sort.Slice(hs, func(i, j int) bool { return hs[i].Path < hs[j].Path })
	teamInUse := false
	if fi, err := os.Stat(filepath.Join(dir, TeamDirName, EntrypointName)); err == nil && fi.Mode().IsRegular() {
		teamInUse = true
	}
	var out []*reviewEntry
	if len(hs) == 0 {
		return nil, teamInUse, nil
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, false, fmt.Errorf("review %s: %w", dir, err)
	}
	defer root.Close()
	for _, h := range hs {
		if isDailyLog(h.Path) {
			continue
		}
		layer := LayerAuto
		if strings.HasPrefix(h.Path, TeamDirName+"/") {
			layer, teamInUse = LayerTeam, true
		}
		data, fi, err := readRooted(root, h.Path, MaxMemoryFileBytes)
		if err != nil {
			rep.Warnings = append(rep.Warnings, fmt.Sprintf("memory %s: %v", h.Path, err))
			continue
		}
		m, _ := ParseMemory(data)
		e := &reviewEntry{
			ReviewSubject: ReviewSubject{Layer: layer, File: h.AbsPath, Display: h.Path, Path: h.Path, Name: m.Name, Type: m.Type, Text: oneLine(m.Description), Sum: contentSum(data)},
			body:          m.Body, mtime: fi.ModTime(), meta: m.Metadata(),
		}
		if e.Text == "" {
			e.Text = cutRunes(oneLine(m.Body), 150)
		}
		e.statement, e.why = memoryStatement(m)
		if found := secrets.Scan(string(data)); len(found) > 0 {
			e.secret = secrets.Labels(found)
		}
		out = append(out, e)
	}
	return out, teamInUse, nil
}

// memoryStatement returns the rule a memory states (its first paragraph that
// is not a Why or How-to-apply line, or its description) and its Why.
func memoryStatement(m *Memory) (statement, why string) {
	for _, para := range strings.Split(strings.ReplaceAll(m.Body, "\r\n", "\n"), "\n\n") {
		var keep []string
		for _, line := range strings.Split(para, "\n") {
			t := strings.TrimSpace(line)
			low := strings.ToLower(strings.Trim(t, "*_ "))
			switch {
			case t == "":
			case strings.HasPrefix(low, "why:"):
				if why == "" {
					why = oneLine(strings.Trim(strings.TrimSpace(t[strings.Index(strings.ToLower(t), "why:")+4:]), "*_ "))
				}
			case strings.HasPrefix(low, "how to apply:"), strings.HasPrefix(t, "#"):
			default:
				keep = append(keep, strings.TrimLeft(t, "-*+ "))
			}
		}
		if len(keep) > 0 && statement == "" {
			statement = oneLine(strings.Join(keep, " "))
		}
	}
	if statement == "" || utf8.RuneCountInString(statement) > 300 {
		statement = oneLine(m.Description)
	}
	return statement, cutRunes(why, 200)
}

func cutRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return strings.TrimSpace(string([]rune(s)[:n-1])) + "…"
}

// gatherInstructions reads the CLAUDE.md layers and splits them into entries.
func gatherInstructions(src ReviewSources, rep *ReviewReport) []*reviewEntry {
	type file struct {
		layer      Layer
		path, base string
	}
	var files []file
	addRules := func(layer Layer, dir, base string) {
		var found []string
		filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
			if err == nil && !e.IsDir() && strings.HasSuffix(e.Name(), ".md") {
				found = append(found, p)
			}
			return nil
		})
		sort.Strings(found)
		for _, p := range found {
			files = append(files, file{layer, p, base})
		}
	}
	if src.ConfigHome != "" {
		files = append(files, file{LayerUser, filepath.Join(src.ConfigHome, "CLAUDE.md"), src.ConfigHome})
		addRules(LayerUser, filepath.Join(src.ConfigHome, "rules"), src.ConfigHome)
	}
	for _, dir := range projectDirsDown(&Location{ProjectRoot: src.ProjectRoot, GitRoot: src.GitRoot}) {
		files = append(files, file{LayerProject, filepath.Join(dir, "CLAUDE.md"), src.ProjectRoot}, file{LayerProject, filepath.Join(dir, ".claude", "CLAUDE.md"), src.ProjectRoot})
		addRules(LayerProject, filepath.Join(dir, ".claude", "rules"), src.ProjectRoot)
		files = append(files, file{LayerLocal, filepath.Join(dir, "CLAUDE.local.md"), src.ProjectRoot})
	}
	var out []*reviewEntry
	for _, f := range files {
		fi, err := os.Stat(f.path)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		switch {
		case err != nil:
			rep.Warnings = append(rep.Warnings, fmt.Sprintf("%s: %v", f.path, err))
			continue
		case !fi.Mode().IsRegular():
			continue
		case fi.Size() > maxInstructionBytes:
			rep.Warnings = append(rep.Warnings, fmt.Sprintf("%s: %s is too large to review; skipped", f.path, FormatFileSize(int(fi.Size()))))
			continue
		}
		data, err := os.ReadFile(f.path)
		if err != nil {
			rep.Warnings = append(rep.Warnings, fmt.Sprintf("%s: %v", f.path, err))
			continue
		}
		display, err := filepath.Rel(f.base, f.path)
		if err != nil {
			display = f.path
		}
		display = filepath.ToSlash(display)
		if f.layer == LayerUser {
			display = "~config/" + display
		}
		rules := splitInstructions(data)
		rep.Files = append(rep.Files, ReviewFile{Layer: f.layer, Path: f.path, Entries: len(rules)})
		for _, r := range rules {
			out = append(out, &reviewEntry{
				ReviewSubject: ReviewSubject{Layer: f.layer, File: f.path, Display: fmt.Sprintf("%s:%d", display, r.line), Line: r.line, Text: r.text},
				statement:     r.text,
			})
		}
	}
	return out
}

type instruction struct {
	line int
	text string
}

var listItemRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\s*(?:[-*+]|\d{1,3}[.)])\s+(.*)$`) })

// splitInstructions cuts an instruction file into its entries: each list
// item (with its continuation lines) and each paragraph. Frontmatter, HTML
// comments, headings, tables, code blocks and @include lines are skipped,
// and line numbers stay those of the file.
func splitInstructions(content []byte) []instruction {
	text := normalizeText(content)
	startLine := 1
	if _, bodyStart, ok := splitFrontmatter(text); ok {
		startLine += strings.Count(text[:bodyStart], "\n")
		text = text[bodyStart:]
	}
	text = htmlCommentRe().ReplaceAllStringFunc(text, func(c string) string { return strings.Repeat("\n", strings.Count(c, "\n")) })
	var out []instruction
	var cur []string
	curLine := 0
	flush := func() {
		if len(cur) > 0 {
			if t := oneLine(strings.Join(cur, " ")); len(lexical.Tokenize(t)) >= 2 {
				out = append(out, instruction{curLine, t})
			}
		}
		cur = nil
	}
	fence := ""
	for i, line := range strings.Split(text, "\n") {
		n := startLine + i
		t := strings.TrimSpace(line)
		if fence != "" {
			if strings.HasPrefix(t, fence) {
				fence = ""
			}
			continue
		}
		switch {
		case strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~"):
			flush()
			fence = t[:3]
		case t == "" || strings.HasPrefix(t, "#") || strings.HasPrefix(t, "|") || strings.HasPrefix(t, "---"):
			flush()
		case strings.HasPrefix(t, "@") && !strings.ContainsAny(t, " \t"):
			flush()
		default:
			if m := listItemRe().FindStringSubmatch(line); m != nil {
				flush()
				cur, curLine = []string{m[1]}, n
				continue
			}
			if len(cur) == 0 {
				curLine = n
			}
			cur = append(cur, t)
		}
	}
	flush()
	return out
}

// normalizeForCompare lowercases and strips Markdown and punctuation, so
// that the same text written twice compares equal.
func normalizeForCompare(s string) string {
	var b strings.Builder
	space := false
	for _, r := range strings.ToLower(s) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			if space && b.Len() > 0 {
				b.WriteByte(' ')
			}
			space = false
			b.WriteRune(r)
			continue
		}
		space = true
	}
	return b.String()
}

// analyze computes each entry's term vector, normalised text and the terms
// it negates and asserts.
func analyze(entries []*reviewEntry) {
	df := map[string]int{}
	tfs := make([]map[string]int, len(entries))
	for i, e := range entries {
		text := e.statement
		if e.isMemory() {
			text = e.Name + " " + e.Text + " " + e.statement
			e.bodySum = normalizeForCompare(e.body)
		}
		e.norm = normalizeForCompare(e.statement)
		tf := map[string]int{}
		for _, t := range lexical.Tokenize(text) {
			tf[t]++
		}
		tfs[i] = tf
		for t := range tf {
			df[t]++
		}
		e.neg, e.pos = polarity(e.statement)
	}
	n := float64(len(entries))
	for i, e := range entries {
		vec := map[string]float64{}
		var norm float64
		for t, c := range tfs[i] {
			w := (1 + math.Log(float64(c))) * math.Log(1+n/float64(df[t]))
			vec[t] = w
			norm += w * w
		}
		norm = math.Sqrt(norm)
		for t := range vec {
			vec[t] /= norm
		}
		e.vec = vec
	}
}

type entryPair struct {
	i, j int
	sim  float64
}

// topicPairs returns every pair of entries (i < j) whose similarity is at
// least min, ordered by i then j. Candidates come from an inverted index
// that leaves out terms found in more than a tenth of the entries (and at
// least 64): such terms weigh little, and pairing every entry that shares
// one would make the review quadratic. Each candidate's similarity is then
// computed over all its terms.
func topicPairs(entries []*reviewEntry, min float64) []entryPair {
	postings := map[string][]int{}
	for i, e := range entries {
		for t := range e.vec {
			postings[t] = append(postings[t], i)
		}
	}
	limit := max(64, len(entries)/10)
	var out []entryPair
	partial := map[int]float64{}
	for i, e := range entries {
		clear(partial)
		for t, w := range e.vec {
			ps := postings[t]
			if len(ps) > limit {
				continue
			}
			for _, j := range ps {
				if j > i {
					partial[j] += w * entries[j].vec[t]
				}
			}
		}
		var js []int
		for j := range partial {
			js = append(js, j)
		}
		sort.Ints(js)
		for _, j := range js {
			// The pruned terms only add to the similarity, so a candidate
			// that misses min without them may still reach it with them.
			if sim := similarity(e, entries[j]); sim >= min {
				out = append(out, entryPair{i, j, sim})
			}
		}
	}
	return out
}

// similarity is the cosine of two entries' term vectors.
func similarity(a, b *reviewEntry) float64 {
	if len(a.vec) > len(b.vec) {
		a, b = b, a
	}
	var s float64
	for t, w := range a.vec {
		s += w * b.vec[t]
	}
	return s
}

// English words that negate what follows them, and words skipped to find
// what is negated ("don't use the ORM" negates "orm").
var (
	negationWords = wordSet("never not no don't dont doesn't didn't shouldn't mustn't can't cannot won't avoid avoiding stop without neither nor forbid forbidden prohibit prohibited refrain instead")
	negationSkip  = wordSet("the a an to be ever use using used do doing run running add adding make making any anything rely relying on with of write writing call calling put your our my this that it its them in for ever allowed")
	cjkNegations  = []string{"切勿", "不要", "禁止", "不能", "不得", "避免", "不用", "从不", "不可", "不许", "不准", "而不是", "别", "勿"}
	cjkSkip       = []string{"使用", "再", "去", "用", "在", "把", "要"}
	clauseSplitRe = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`[.,;:!?()\[\]"。，；：！？、（）]+|\s+-\s+|\n`)
	})
	wordRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[\p{L}\p{N}_'’-]+`) })
)

// wordSet returns the set of the words of s, built on first use.
func wordSet(s string) func() map[string]bool {
	return sync.OnceValue(func() map[string]bool {
		m := map[string]bool{}
		for _, w := range strings.Fields(s) {
			m[w] = true
		}
		return m
	})
}

// polarity returns the terms text negates (the first content word after a
// negation, per clause) and the terms it asserts (all its other terms).
func polarity(text string) (neg, pos map[string]bool) {
	neg, pos = map[string]bool{}, map[string]bool{}
	negWords, skipWords := negationWords(), negationSkip()
	addNeg := func(word string) {
		if ts := lexical.Tokenize(word); len(ts) > 0 {
			neg[ts[0]] = true
		}
	}
	for _, clause := range clauseSplitRe().Split(strings.ToLower(text), -1) {
		words := wordRe().FindAllString(clause, -1)
		for i, w := range words {
			w = strings.ReplaceAll(w, "’", "'")
			if !negWords[w] {
				continue
			}
			for _, next := range words[i+1:] {
				if !skipWords[next] && !negWords[next] {
					addNeg(next)
					break
				}
			}
		}
		for _, cue := range cjkNegations {
			for rest := clause; ; {
				i := strings.Index(rest, cue)
				if i < 0 {
					break
				}
				rest = rest[i+len(cue):]
				after := strings.TrimSpace(rest)
				for _, s := range cjkSkip {
					after = strings.TrimSpace(strings.TrimPrefix(after, s))
				}
				if w := wordRe().FindString(after); w != "" && strings.HasPrefix(after, w) && w[0] < utf8.RuneSelf {
					addNeg(w)
				} else if r := []rune(after); len(r) >= 2 {
					addNeg(string(r[:2]))
				}
			}
		}
	}
	for _, t := range lexical.Tokenize(text) {
		if !neg[t] {
			pos[t] = true
		}
	}
	return neg, pos
}

// contradiction returns a term one entry negates and the other asserts.
func contradiction(a, b *reviewEntry) (string, bool) {
	for _, pair := range [][2]*reviewEntry{{a, b}, {b, a}} {
		var hits []string
		for t := range pair[0].neg {
			if pair[1].pos[t] {
				hits = append(hits, t)
			}
		}
		if len(hits) > 0 {
			sort.Strings(hits)
			return hits[0], true
		}
	}
	return "", false
}

var (
	isoDateRe = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`\b((?:19|20)\d\d)[-/.](0?[1-9]|1[0-2])[-/.](0?[1-9]|[12]\d|3[01])\b`)
	})
	cjkDateRe = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`((?:19|20)\d\d)\s*年\s*(\d{1,2})\s*月\s*(\d{1,2})\s*[日号]`)
	})
	monthNames = `(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)`
	mdyDateRe  = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)\b` + monthNames + `\.?\s+(\d{1,2})(?:st|nd|rd|th)?,?\s+((?:19|20)\d\d)\b`)
	})
	dmyDateRe = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)\b(\d{1,2})(?:st|nd|rd|th)?\s+` + monthNames + `\.?,?\s+((?:19|20)\d\d)\b`)
	})
)

// mentionedDates returns the calendar dates text names, as midnight UTC.
func mentionedDates(text string) []time.Time {
	var out []time.Time
	add := func(y, m, d string) {
		yi, _ := strconv.Atoi(y)
		mi, _ := strconv.Atoi(m)
		di, _ := strconv.Atoi(d)
		t := time.Date(yi, time.Month(mi), di, 0, 0, 0, 0, time.UTC)
		if t.Day() == di && int(t.Month()) == mi { // no 31 February
			out = append(out, t)
		}
	}
	for _, m := range isoDateRe().FindAllStringSubmatch(text, -1) {
		add(m[1], m[2], m[3])
	}
	for _, m := range cjkDateRe().FindAllStringSubmatch(text, -1) {
		add(m[1], m[2], m[3])
	}
	month := func(s string) string {
		s = strings.ToLower(s)[:3]
		for i, n := range []string{"jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"} {
			if s == n {
				return strconv.Itoa(i + 1)
			}
		}
		return "0"
	}
	for _, m := range mdyDateRe().FindAllStringSubmatch(text, -1) {
		add(m[3], month(m[1]), m[2])
	}
	for _, m := range dmyDateRe().FindAllStringSubmatch(text, -1) {
		add(m[3], month(m[2]), m[1])
	}
	return out
}

var supersededRe = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)\bsuperseded\b|\bobsolete\b|\[deprecated\]|\(deprecated\)|已废弃|已过时|已被取代|已作废`)
})

// supersededMark says why a memory counts as superseded, or "".
func supersededMark(e *reviewEntry) string {
	for _, k := range []string{"superseded_by", "supersededBy", "superseded", "replaced_by"} {
		if v, ok := e.meta[k]; ok && v != nil && v != false {
			return fmt.Sprintf("its frontmatter says %s: %v", k, v)
		}
	}
	if s, ok := e.meta["status"].(string); ok {
		switch strings.ToLower(s) {
		case "superseded", "obsolete", "deprecated", "outdated", "archived":
			return "its frontmatter says status: " + s
		}
	}
	if m := supersededRe().FindString(e.Text + "\n" + e.body); m != "" {
		return fmt.Sprintf("it is marked %q", m)
	}
	return ""
}

// Cues that a feedback memory is a team convention or a personal preference.
var (
	teamCueRe = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)\b(we|our|us|team|everyone|everybody|all (?:prs|pull requests|commits|tests|code|services|changes)|this (?:repo|repository|project|codebase|service|monorepo)|the (?:repo|repository|codebase|project)|ci|pull requests?|prs?|commits?|code review|conventions?|style guide|must)\b|团队|我们|项目|仓库|代码库|所有|提交|规范|必须`)
	})
	personalCueRe = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)\b(i|i'm|i’m|me|my|mine|personally|the user|user (?:prefers|likes|wants|asked)|prefers?|likes?|wants?)\b|我|用户|喜欢|偏好|希望`)
	})
	instructionRe = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)\b(prefers?|likes?|wants?|always|never|don't|do not|avoid|use|please|explain|keep|answer|reply|write)\b|喜欢|偏好|希望|总是|不要|请|用`)
	})
)

func cues(re *regexp.Regexp, text string) []string {
	var out []string
	seen := map[string]bool{}
	for _, m := range re.FindAllString(text, -1) {
		m = strings.ToLower(m)
		if !seen[m] {
			seen[m] = true
			out = append(out, m)
		}
	}
	return out
}

func quoteAll(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = strconv.Quote(s)
	}
	return strings.Join(q, ", ")
}

// reviewer holds one review's entries and settings.
type reviewer struct {
	src       ReviewSources
	now       time.Time
	near      float64
	entries   []*reviewEntry
	teamInUse bool
}

// claudeMDTarget is the project CLAUDE.md a promotion appends to: the
// existing one (CLAUDE.md, else .claude/CLAUDE.md), or a new CLAUDE.md.
func (rv *reviewer) claudeMDTarget() string {
	p := filepath.Join(rv.src.ProjectRoot, "CLAUDE.md")
	if _, err := os.Stat(p); err != nil {
		if alt := filepath.Join(rv.src.ProjectRoot, ".claude", "CLAUDE.md"); fileExists(alt) {
			return alt
		}
	}
	return p
}

func (rv *reviewer) localTarget() string { return filepath.Join(rv.src.ProjectRoot, "CLAUDE.local.md") }

func fileExists(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}

// promotionRule is the line a promoted memory becomes.
func promotionRule(e *reviewEntry) string {
	rule := strings.TrimSpace(e.statement)
	if rule == "" {
		rule = strings.TrimSpace(e.Text)
	}
	cjk := strings.IndexFunc(rule, func(r rune) bool { return unicode.Is(unicode.Han, r) }) >= 0
	if !endsSentence(rule) {
		rule += map[bool]string{false: ".", true: "。"}[cjk]
	}
	if why := strings.TrimSpace(e.why); why != "" {
		if !endsSentence(why) {
			why += map[bool]string{false: ".", true: "。"}[cjk]
		}
		if cjk {
			rule += "（原因：" + why + "）"
		} else {
			rule += " (Why: " + why + ")"
		}
	}
	return rule
}

func endsSentence(s string) bool {
	r, _ := utf8.DecodeLastRuneInString(s)
	return strings.ContainsRune(".!?。！？", r)
}

// lexicalItems is the deterministic review.
func (rv *reviewer) lexicalItems() []ReviewItem {
	var items []ReviewItem
	// decided marks memories a cleanup or conflict item covers, so they are
	// not also proposed for promotion.
	decided := map[*reviewEntry]bool{}
	paired := map[[2]*reviewEntry]bool{}
	var mems []*reviewEntry
	for _, e := range rv.entries {
		if e.isMemory() {
			mems = append(mems, e)
		}
	}

	// Exact duplicates: memories with the same body, and memories whose
	// statement is already an instruction.
	byBody := map[string][]*reviewEntry{}
	for _, e := range mems {
		if e.bodySum != "" {
			byBody[e.bodySum] = append(byBody[e.bodySum], e)
		}
	}
	var bodies []string
	for k, g := range byBody {
		if len(g) > 1 {
			bodies = append(bodies, k)
		}
	}
	sort.Slice(bodies, func(i, j int) bool { return byBody[bodies[i]][0].Path < byBody[bodies[j]][0].Path })
	for _, k := range bodies {
		g := byBody[k]
		keep := keeper(g)
		for _, e := range g {
			if e == keep {
				continue
			}
			paired[pairKey(e, keep)] = true
			items = append(items, rv.removal(KindDuplicate, e, keep, 1, "holds the same text as "+keep.label()))
			decided[e] = true
		}
	}
	for _, e := range mems {
		if decided[e] || e.norm == "" {
			continue
		}
		for _, r := range rv.entries {
			if !r.isMemory() && r.norm == e.norm {
				paired[pairKey(e, r)] = true
				items = append(items, rv.removal(KindDuplicate, e, r, 1, "already stated in "+r.label()))
				decided[e] = true
				break
			}
		}
	}

	// Pairs on one topic: near duplicates and conflicts.
	for _, p := range topicPairs(rv.entries, conflictTopic) {
		a, b, sim := rv.entries[p.i], rv.entries[p.j], p.sim
		if !a.isMemory() && !b.isMemory() && a.File == b.File {
			continue // entries of one file are its author's business
		}
		if paired[pairKey(a, b)] || decided[a] && decided[b] {
			continue
		}
		if term, ok := contradiction(a, b); ok {
			items = append(items, conflictItem(a, b, sim, fmt.Sprintf("on the same topic, one negates %q and the other asserts it", term)))
			decided[a], decided[b] = true, true
			continue
		}
		if a.isMemory() && b.isMemory() && a.Type != b.Type && (sim >= rv.near || a.Name != "" && strings.EqualFold(a.Name, b.Name)) {
			items = append(items, conflictItem(a, b, sim, fmt.Sprintf("the same memory saved as %s in %s and as %s in %s", typeWord(a.Type), a.label(), typeWord(b.Type), b.label())))
			decided[a], decided[b] = true, true
			continue
		}
		if sim < rv.near {
			continue
		}
		switch {
		case a.isMemory() && b.isMemory():
			drop, keep := a, b
			if keeper([]*reviewEntry{a, b}) == a {
				drop, keep = b, a
			}
			items = append(items, rv.removal(KindNearDuplicate, drop, keep, sim, fmt.Sprintf("says nearly the same as %s (similarity %.2f); merge anything it adds, then drop it", keep.label(), sim)))
			decided[drop] = true
		case a.isMemory() || b.isMemory():
			mem, rule := a, b
			if !a.isMemory() {
				mem, rule = b, a
			}
			items = append(items, rv.removal(KindNearDuplicate, mem, rule, sim, fmt.Sprintf("%s already says nearly the same (similarity %.2f)", rule.label(), sim)))
			decided[mem] = true
		default:
			items = append(items, ReviewItem{Section: SectionCleanup, Kind: KindNearDuplicate, Subjects: subjects(a, b), Similarity: round2(sim),
				Reason: fmt.Sprintf("two instruction files say nearly the same (similarity %.2f); keep it in one (memdir does not edit instruction files for you)", sim)})
		}
	}

	// Superseded and outdated memories.
	today := time.Date(rv.now.Year(), rv.now.Month(), rv.now.Day(), 0, 0, 0, 0, time.UTC)
	for _, e := range mems {
		if decided[e] {
			continue
		}
		if why := supersededMark(e); why != "" {
			items = append(items, rv.removal(KindSuperseded, e, nil, 0, why))
			decided[e] = true
			continue
		}
		if e.Type != TypeProject {
			continue
		}
		dates := mentionedDates(e.Text + "\n" + e.body)
		if len(dates) == 0 {
			continue
		}
		latest := dates[0]
		for _, d := range dates[1:] {
			if d.After(latest) {
				latest = d
			}
		}
		if latest.Before(today) {
			days := int(today.Sub(latest).Hours() / 24)
			items = append(items, rv.removal(KindOutdated, e, nil, 0, fmt.Sprintf("a project memory whose every date is past (the latest, %s, was %d %s ago); check whether it still holds", latest.Format("2006-01-02"), days, pluralWord(days, "day", "days"))))
			decided[e] = true
		}
	}

	// Promotions, and what stays.
	for _, e := range mems {
		if decided[e] {
			continue
		}
		items = append(items, rv.placement(e))
	}
	return items
}

func round2(f float64) float64 { return math.Round(f*100) / 100 }

func typeWord(t Type) string {
	if t == "" {
		return "untyped"
	}
	return string(t)
}

func pairKey(a, b *reviewEntry) [2]*reviewEntry {
	if a.Ref > b.Ref {
		a, b = b, a
	}
	return [2]*reviewEntry{a, b}
}

// keeper picks which of identical memories stays: a team memory over a
// private one, then the oldest (it has been in use longest), then the first
// path.
func keeper(g []*reviewEntry) *reviewEntry {
	best := g[0]
	for _, e := range g[1:] {
		switch {
		case (e.Layer == LayerTeam) != (best.Layer == LayerTeam):
			if e.Layer == LayerTeam {
				best = e
			}
		case !e.mtime.Equal(best.mtime):
			if e.mtime.Before(best.mtime) {
				best = e
			}
		case e.Path < best.Path:
			best = e
		}
	}
	return best
}

func subjects(es ...*reviewEntry) []ReviewSubject {
	out := make([]ReviewSubject, 0, len(es))
	for _, e := range es {
		if e != nil {
			out = append(out, e.ReviewSubject)
		}
	}
	return out
}

// removal is a cleanup item that removes drop (when it is a private memory).
func (rv *reviewer) removal(kind ReviewKind, drop, other *reviewEntry, sim float64, reason string) ReviewItem {
	it := ReviewItem{Section: SectionCleanup, Kind: kind, Subjects: subjects(drop, other), Reason: reason}
	if sim > 0 && sim < 1 {
		it.Similarity = round2(sim)
	}
	if drop.Layer == LayerAuto {
		it.Remove, it.Applicable = drop.Path, true
	} else {
		it.Reason += "; it is a team memory, so change it where the team edits it"
	}
	return it
}

func conflictItem(a, b *reviewEntry, sim float64, why string) ReviewItem {
	return ReviewItem{Section: SectionAmbiguous, Kind: KindConflict, Subjects: subjects(a, b), Similarity: round2(sim),
		Reason: why + "; decide which holds and edit or remove the other"}
}

// placement decides where a memory with no cleanup belongs.
func (rv *reviewer) placement(e *reviewEntry) ReviewItem {
	keep := func(reason string) ReviewItem {
		return ReviewItem{Section: SectionNoAction, Kind: KindKeep, Subjects: subjects(e), Reason: reason}
	}
	if e.Layer == LayerTeam {
		return keep("already shared in team memory")
	}
	text := e.Name + " " + e.Text + " " + e.body
	switch e.Type {
	case TypeFeedback:
		team, personal := cues(teamCueRe(), text), cues(personalCueRe(), text)
		switch {
		case len(team) > 0 && len(personal) == 0:
			return ReviewItem{Section: SectionPromotions, Kind: KindToClaudeMD, Subjects: subjects(e), Target: rv.claudeMDTarget(), Rule: promotionRule(e), Applicable: true,
				Reason: "reads as a rule for everyone working on the project (" + quoteAll(team) + "); CLAUDE.md is where the team's conventions live"}
		case len(personal) > 0 && len(team) == 0:
			return ReviewItem{Section: SectionPromotions, Kind: KindToLocal, Subjects: subjects(e), Target: rv.localTarget(), Rule: promotionRule(e), Applicable: true,
				Reason: "reads as how this user wants to work (" + quoteAll(personal) + "); CLAUDE.local.md holds personal instructions for the project"}
		case len(team) > 0:
			return ReviewItem{Section: SectionAmbiguous, Kind: KindUnclear, Subjects: subjects(e),
				Reason: "reads both as a team rule (" + quoteAll(team) + ") and as a personal preference (" + quoteAll(personal) + "); choose CLAUDE.md or CLAUDE.local.md"}
		default:
			return ReviewItem{Section: SectionAmbiguous, Kind: KindUnclear, Subjects: subjects(e),
				Reason: "feedback with no sign of whether it is a team convention or a personal preference"}
		}
	case TypeUser:
		if c := cues(instructionRe(), text); len(c) > 0 {
			return ReviewItem{Section: SectionPromotions, Kind: KindToLocal, Subjects: subjects(e), Target: rv.localTarget(), Rule: promotionRule(e), Applicable: true,
				Reason: "a personal instruction (" + quoteAll(c) + "); CLAUDE.local.md applies it in every session of this project"}
		}
		return keep("a fact about the user, not an instruction: auto memory is its place")
	case TypeProject, TypeReference:
		if !rv.teamInUse {
			return keep(string(e.Type) + " memory: auto memory is its place (team memory is not in use)")
		}
		if e.secret != "" {
			return keep("holds what looks like a credential (" + e.secret + "), so it must not go to team memory")
		}
		return ReviewItem{Section: SectionPromotions, Kind: KindToTeam, Subjects: subjects(e), Target: TeamDirName + "/" + path.Base(e.Path), Applicable: true,
			Reason: string(e.Type) + " context the whole team needs; team memory shares it"}
	}
	return ReviewItem{Section: SectionAmbiguous, Kind: KindUnclear, Subjects: subjects(e), Reason: "untyped: give it a type (user, feedback, project or reference) so its place is clear"}
}

const reviewSystem = `You review the memory layers of a coding agent and propose where each memory belongs. Nothing you propose is applied without the user's approval.

Layers:
- auto: private memories the agent saved for this user and project (refs M…)
- team: memories shared with everyone on the project (refs M…)
- project: CLAUDE.md instructions checked into the repository (refs R…)
- local: CLAUDE.local.md, this user's untracked instructions for the project (refs R…)
- user: the user's own CLAUDE.md, for every project (refs R…)

Sections and kinds:
- promotions: "to-claude-md" (an auto memory that is a convention the whole team follows), "to-claude-local-md" (an auto memory about how this user wants to work), "to-team" (an auto project or reference memory everyone on the project needs; only when team memory is in use). Give "rule": the one-line instruction to add, in the memory's language.
- cleanup: "duplicate" or "near-duplicate" (the same fact stated elsewhere), "outdated" (a project memory about work that is over), "superseded" (marked as replaced). Set "remove" to the ref of the auto memory to drop, or "" when nothing should be removed automatically.
- ambiguous: "conflict" (entries that contradict each other) or "unclear" (no clear place). Explain what the user must decide.
- no_action: "keep" (the memory is where it belongs).

Only auto memories can be promoted or removed. Use only the refs listed. Every auto memory should appear in exactly one item. The lexical findings are hints from word overlap: confirm or reject them. Keep reasons to one sentence.

Answer with JSON only: {"items": [{"section": "...", "kind": "...", "refs": ["M1", ...], "rule": "", "remove": "", "reason": "..."}]}`

var reviewSchema = json.RawMessage(`{"type":"object","properties":{"items":{"type":"array","items":{"type":"object","properties":{` +
	`"section":{"type":"string","enum":["promotions","cleanup","ambiguous","no_action"]},` +
	`"kind":{"type":"string","enum":["to-claude-md","to-claude-local-md","to-team","duplicate","near-duplicate","outdated","superseded","conflict","unclear","keep"]},` +
	`"refs":{"type":"array","items":{"type":"string"}},"rule":{"type":"string"},"remove":{"type":"string"},"reason":{"type":"string"}},` +
	`"required":["section","kind","refs","rule","remove","reason"],"additionalProperties":false}}},"required":["items"],"additionalProperties":false}`)

// reviewRequest builds the model request: every entry with its ref, and the
// lexical findings as hints.
func (rv *reviewer) reviewRequest(userContext string, lexicalItems []ReviewItem) *Request {
	var b strings.Builder
	fmt.Fprintf(&b, "Today is %s. Team memory is %s.\n\n## Memories\n", rv.now.Format("2006-01-02"), map[bool]string{true: "in use", false: "not in use"}[rv.teamInUse])
	for _, e := range rv.entries {
		if !e.isMemory() {
			continue
		}
		fmt.Fprintf(&b, "[%s] %s · %s · %s\nname: %s\ndescription: %s\n%s\n\n", e.Ref, e.Layer, typeWord(e.Type), e.Path, e.Name, e.Text, cutRunes(strings.TrimSpace(e.body), reviewExcerpt))
	}
	b.WriteString("## Instructions\n")
	for _, e := range rv.entries {
		if !e.isMemory() {
			fmt.Fprintf(&b, "[%s] %s · %s: %s\n", e.Ref, e.Layer, e.Display, cutRunes(e.Text, reviewExcerpt))
		}
	}
	b.WriteString("\n## Lexical findings\n")
	hints := 0
	for _, it := range lexicalItems {
		if it.Kind == KindKeep {
			continue
		}
		var refs []string
		for _, s := range it.Subjects {
			refs = append(refs, s.Ref)
		}
		fmt.Fprintf(&b, "- %s %s: %s\n", it.Kind, strings.Join(refs, ", "), it.Reason)
		hints++
	}
	if hints == 0 {
		b.WriteString("(none)\n")
	}
	if c := strings.TrimSpace(userContext); c != "" {
		fmt.Fprintf(&b, "\n## Additional context from the user\n%s\n", c)
	}
	return &Request{
		System:     reviewSystem,
		Messages:   []Message{{Role: RoleUser, Content: []Block{TextBlock(b.String())}}},
		Schema:     reviewSchema,
		SchemaName: "memory_review",
		MaxTokens:  reviewReplyTokens,
	}
}

// modelItems asks the model and checks its answer. Any item that names an
// unknown ref, puts a kind in the wrong section, promotes or removes
// something other than an auto memory, or promotes without a rule makes
// the whole answer unusable: a model that invents paths is not trusted
// with the rest.
func (rv *reviewer) modelItems(ctx context.Context, m Model, userContext string, lexicalItems []ReviewItem) ([]ReviewItem, Usage, error) {
	resp, err := m.Generate(ctx, rv.reviewRequest(userContext, lexicalItems))
	if err != nil {
		return nil, Usage{}, fmt.Errorf("the model call failed: %w", err)
	}
	usage := resp.Usage
	if usage.Calls == 0 {
		usage.Calls = 1
	}
	raw, err := jsonx.Extract(resp.Text())
	if err != nil {
		return nil, usage, fmt.Errorf("the model's answer is not JSON: %v", err)
	}
	var reply struct {
		Items []struct {
			Section string   `json:"section"`
			Kind    string   `json:"kind"`
			Refs    []string `json:"refs"`
			Rule    string   `json:"rule"`
			Remove  string   `json:"remove"`
			Reason  string   `json:"reason"`
		} `json:"items"`
	}
	if err := json.Unmarshal(raw, &reply); err != nil {
		return nil, usage, fmt.Errorf("the model's answer does not match the schema: %v", err)
	}
	if reply.Items == nil {
		return nil, usage, errors.New(`the model's answer has no "items" list`)
	}
	byRef := map[string]*reviewEntry{}
	for _, e := range rv.entries {
		byRef[e.Ref] = e
	}
	covered := map[*reviewEntry]bool{}
	var items []ReviewItem
	for n, r := range reply.Items {
		bad := func(format string, args ...any) error {
			return fmt.Errorf("the model's item %d is unusable: %s", n+1, fmt.Sprintf(format, args...))
		}
		kind := ReviewKind(r.Kind)
		section, ok := kindSection[kind]
		if !ok {
			return nil, usage, bad("unknown kind %q", r.Kind)
		}
		if want := strings.ReplaceAll(string(section), "-", "_"); r.Section != want {
			return nil, usage, bad("kind %q belongs in %s, not %q", r.Kind, want, r.Section)
		}
		if len(r.Refs) == 0 {
			return nil, usage, bad("it names no entry")
		}
		var es []*reviewEntry
		for _, ref := range r.Refs {
			e, ok := byRef[strings.TrimSpace(ref)]
			if !ok {
				return nil, usage, bad("unknown ref %q", ref)
			}
			es = append(es, e)
			covered[e] = true
		}
		reason := oneLine(r.Reason)
		if reason == "" {
			reason = "(the model gave no reason)"
		}
		it := ReviewItem{Section: section, Kind: kind, Subjects: subjects(es...), Reason: reason}
		first := es[0]
		switch kind {
		case KindToClaudeMD, KindToLocal, KindToTeam:
			if first.Layer != LayerAuto {
				return nil, usage, bad("%s promotes %s, which is not an auto memory", r.Kind, first.Ref)
			}
			if kind == KindToTeam {
				if first.secret != "" {
					it = ReviewItem{Section: SectionNoAction, Kind: KindKeep, Subjects: subjects(first), Reason: "the model proposed team memory, but it holds what looks like a credential (" + first.secret + "), so it must not be shared"}
					break
				}
				it.Target, it.Applicable = TeamDirName+"/"+path.Base(first.Path), true
				break
			}
			rule := oneLine(r.Rule)
			if rule == "" || utf8.RuneCountInString(rule) > 500 {
				return nil, usage, bad("%s needs a one-line rule of at most 500 characters", r.Kind)
			}
			it.Rule, it.Applicable = rule, true
			it.Target = rv.claudeMDTarget()
			if kind == KindToLocal {
				it.Target = rv.localTarget()
			}
		case KindDuplicate, KindNearDuplicate, KindOutdated, KindSuperseded:
			if rm := strings.TrimSpace(r.Remove); rm != "" {
				e, ok := byRef[rm]
				if !ok || !containsEntry(es, e) {
					return nil, usage, bad("remove %q is not one of its refs", rm)
				}
				if e.Layer != LayerAuto {
					return nil, usage, bad("remove %q is not an auto memory", rm)
				}
				it.Remove, it.Applicable = e.Path, true
			}
		}
		items = append(items, it)
	}
	for _, e := range rv.entries {
		if e.isMemory() && !covered[e] {
			items = append(items, ReviewItem{Section: SectionNoAction, Kind: KindKeep, Subjects: subjects(e), Reason: "the model proposed nothing for it"})
		}
	}
	return items, usage, nil
}

func containsEntry(es []*reviewEntry, e *reviewEntry) bool {
	for _, x := range es {
		if x == e {
			return true
		}
	}
	return false
}

// ApplyReviewOptions adjust ApplyReview.
type ApplyReviewOptions struct {
	// KeepMemory keeps a memory promoted to CLAUDE.md or CLAUDE.local.md
	// instead of removing it once its rule is written.
	KeepMemory bool
}

// AppliedItem says what applying one item did.
type AppliedItem struct {
	ID   string     `json:"id"`
	Kind ReviewKind `json:"kind"`
	// Done describes the change for a person.
	Done string `json:"done"`
	// RunIDs holds the one journal run of the whole apply, which undoes
	// every item of it (empty when nothing changed).
	RunIDs []string `json:"run_ids"`
}

// ApplyReview carries out the report's items named by ids, in the order
// given, on d, the review's memory directory:
//
//   - to-claude-md / to-claude-local-md: the rule is appended to the file as
//     a list item (the file is created if missing), then the memory is
//     removed (unless KeepMemory);
//   - to-team: the memory moves to team/ with its index line (Dir.Rename);
//   - cleanup items: the memory named by Remove is removed (Dir.Remove).
//
// Before anything changes, every id must name an applicable item and every
// memory involved must still hold what the review read; otherwise nothing
// is applied. All the items are one run of d's journal (instruction files
// recorded where they are, outside the directory), so one Dir.Undo reverts
// the whole apply. A failure part-way returns what was applied so far with
// the error; the run records it too.
func ApplyReview(ctx context.Context, d *Dir, rep *ReviewReport, ids []string, opts *ApplyReviewOptions) ([]AppliedItem, error) {
	if opts == nil {
		opts = &ApplyReviewOptions{}
	}
	if len(ids) == 0 {
		return nil, fmt.Errorf("apply: no item ids given: %w", ErrInvalid)
	}
	if filepath.Clean(rep.Sources.MemoryDir) != d.Path() {
		return nil, fmt.Errorf("apply: the review is of %s, not %s: %w", rep.Sources.MemoryDir, d.Path(), ErrInvalid)
	}
	var todo []*ReviewItem
	seen := map[string]bool{}
	for _, id := range ids {
		it, ok := rep.Item(id)
		if !ok {
			return nil, fmt.Errorf("apply: the review has no item %q (see 'memdir promote'): %w", id, ErrNotFound)
		}
		if !it.Applicable {
			return nil, fmt.Errorf("apply %s: a %s item is for you to decide; memdir cannot carry it out: %w", it.ID, it.Kind, ErrInvalid)
		}
		if seen[it.ID] {
			continue
		}
		seen[it.ID] = true
		if err := checkApplicable(rep.Sources, it); err != nil {
			return nil, fmt.Errorf("apply %s: %w", it.ID, err)
		}
		for _, s := range it.Subjects {
			if s.Path == "" || s.Sum == "" {
				continue
			}
			cur, err := hashFile(d.Abs(s.Path))
			if err != nil {
				return nil, fmt.Errorf("apply %s: %w", it.ID, err)
			}
			if cur != s.Sum {
				return nil, fmt.Errorf("apply %s: %s changed (or went) since the review; run the review again: %w", it.ID, s.Path, ErrExists)
			}
		}
		todo = append(todo, it)
	}
	// All the items are one journal run, which records the instruction
	// files outside the directory beside the memories, so one undo
	// reverts the whole apply.
	rec, err := d.journal.Begin("promote", d.path)
	if err != nil {
		return nil, fmt.Errorf("apply: journal: %w", err)
	}
	// The indexes are journaled whole, so the undo puts every line back
	// where it was rather than appending the removed ones.
	for _, ix := range []string{EntrypointName, TeamDirName + "/" + EntrypointName} {
		if err := rec.Before(ix, overflowFor(ix)); err != nil {
			rec.Finish(err)
			return nil, fmt.Errorf("apply: %w", err)
		}
	}
	var done []AppliedItem
	var summary []string
	for _, it := range todo {
		a, aerr := applyItem(ctx, d, rec, it, opts)
		if aerr != nil {
			err = fmt.Errorf("apply %s: %w", it.ID, aerr)
			break
		}
		done = append(done, a)
		summary = append(summary, it.ID+": "+a.Done)
	}
	rec.SetSummary("promote " + strings.Join(summary, "; "))
	run, ferr := rec.Finish(err)
	if err == nil {
		err = ferr
	}
	if run != nil && run.HasChanges() {
		for i := range done {
			done[i].RunIDs = []string{run.ID}
		}
	}
	return done, err
}

// checkApplicable makes sure a saved item can only do what a review
// proposes: append to the project's CLAUDE.md, .claude/CLAUDE.md or
// CLAUDE.local.md, move a private memory into team/, or remove a private
// memory. A report file edited by hand cannot point it anywhere else.
func checkApplicable(src ReviewSources, it *ReviewItem) error {
	bad := func(what string) error {
		return fmt.Errorf("the saved review names %s; run the review again: %w", what, ErrInvalid)
	}
	if len(it.Subjects) == 0 {
		return bad("no memory")
	}
	switch it.Kind {
	case KindToClaudeMD, KindToLocal:
		root := filepath.Clean(src.ProjectRoot)
		allowed := map[string]bool{filepath.Join(root, "CLAUDE.md"): true, filepath.Join(root, ".claude", "CLAUDE.md"): true}
		if it.Kind == KindToLocal {
			allowed = map[string]bool{filepath.Join(root, "CLAUDE.local.md"): true}
		}
		if !allowed[filepath.Clean(it.Target)] {
			return bad(fmt.Sprintf("%q as the file to add a rule to", it.Target))
		}
		if p, err := CleanMemoryFilePath(it.Subjects[0].Path); err != nil || strings.HasPrefix(p, TeamDirName+"/") {
			return bad(fmt.Sprintf("%q as the memory to promote", it.Subjects[0].Path))
		}
	case KindToTeam:
		if p, err := CleanMemoryFilePath(it.Target); err != nil || !strings.HasPrefix(p, TeamDirName+"/") {
			return bad(fmt.Sprintf("%q as the team path", it.Target))
		}
	default:
		if p, err := CleanMemoryFilePath(it.Remove); err != nil || strings.HasPrefix(p, TeamDirName+"/") {
			return bad(fmt.Sprintf("%q as the memory to remove", it.Remove))
		}
	}
	return nil
}

func applyItem(ctx context.Context, d *Dir, rec *Recorder, it *ReviewItem, opts *ApplyReviewOptions) (AppliedItem, error) {
	a := AppliedItem{ID: it.ID, Kind: it.Kind, RunIDs: []string{}}
	subject := it.Subjects[0]
	switch it.Kind {
	case KindToClaudeMD, KindToLocal:
		rule := oneLine(it.Rule)
		if _, err := editExternal(ctx, d.Journal(), rec, "promote", "", it.Target, func(old []byte, exists bool) ([]byte, error) {
			return appendRule(old, rule), nil
		}); err != nil {
			return a, err
		}
		a.Done = "added the rule to " + it.Target
		if opts.KeepMemory {
			return a, nil
		}
		if _, err := d.Remove(ctx, subject.Path, &RemoveOptions{Recorder: rec}); err != nil {
			return a, err
		}
		a.Done += " and removed " + subject.Path
	case KindToTeam:
		res, err := d.rename(ctx, subject.Path, it.Target, rec)
		if err != nil {
			return a, err
		}
		a.Done = "moved " + res.From + " to " + res.To
	default:
		if it.Remove == "" {
			return a, fmt.Errorf("nothing to remove: %w", ErrInvalid)
		}
		if _, err := d.Remove(ctx, it.Remove, &RemoveOptions{Recorder: rec}); err != nil {
			return a, err
		}
		a.Done = "removed " + it.Remove
	}
	return a, nil
}

// appendRule adds "- rule" as the last line of an instruction file, leaving
// one blank line after prose and none inside a list.
func appendRule(old []byte, rule string) []byte {
	text := string(old)
	var b strings.Builder
	b.WriteString(text)
	if text != "" && !strings.HasSuffix(text, "\n") {
		b.WriteByte('\n')
	}
	trimmed := strings.TrimRight(text, "\n")
	last := trimmed[strings.LastIndexByte(trimmed, '\n')+1:]
	if trimmed != "" && !listItemRe().MatchString(last) && !strings.HasSuffix(text, "\n\n") {
		b.WriteByte('\n')
	}
	b.WriteString("- " + rule + "\n")
	return []byte(b.String())
}

// DefaultReviewPath returns where the last review of a memory directory is
// kept for --apply: <StateDir>/promote/<SanitizePath(dir)>.json.
func DefaultReviewPath(memoryDir string, lookup LookupEnvFunc) (string, error) {
	return statePath(lookup, "promote", memoryDir, ".json")
}

// SaveReview writes a report atomically (0600, folders 0700).
func SaveReview(file string, rep *ReviewReport) error {
	data, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	if err := atomicfile.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		return fmt.Errorf("save review: %w", err)
	}
	return atomicfile.WriteFile(file, append(data, '\n'), 0o600)
}

// LoadReview reads a report written by SaveReview. A missing file is
// ErrNotFound; a damaged one ErrInvalid, naming the file.
func LoadReview(file string) (*ReviewReport, error) {
	data, err := os.ReadFile(file)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("no saved review at %s: %w", file, ErrNotFound)
	}
	if err != nil {
		return nil, err
	}
	var rep ReviewReport
	if err := json.Unmarshal(data, &rep); err != nil {
		return nil, fmt.Errorf("saved review %s is damaged (%v); run the review again: %w", file, err, ErrInvalid)
	}
	return &rep, nil
}
