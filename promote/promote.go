package promote

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/internal/mdtext"
	"github.com/memdir/memdir/internal/memfile"
	"github.com/memdir/memdir/lexical"
	"github.com/memdir/memdir/locate"
	"github.com/memdir/memdir/secrets"
)

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
	Subject
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
// MethodFallback and the reason in Fallback.
func Review(ctx context.Context, src Sources, opts *Options) (*Report, error) {
	if opts == nil {
		opts = &Options{}
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
	rep := &Report{Generated: now(), Method: MethodLexical, Sources: src, Files: []File{}}
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
			rep.Method, rep.Fallback = MethodFallback, err.Error()
			logger.Debug("promotion review: model answer not used", "err", err)
		} else {
			rep.Method, rep.Items = MethodByModel, items
		}
	}
	numberItems(rep.Items)
	return rep, nil
}

// numberItems sorts items by section (keeping their order within one) and
// gives them ids.
func numberItems(items []Item) {
	order := map[Section]int{}
	for i, s := range Sections {
		order[s] = i
	}
	sort.SliceStable(items, func(i, j int) bool { return order[items[i].Section] < order[items[j].Section] })
	prefix := map[Section]string{SectionPromotions: "P", SectionCleanup: "C", SectionAmbiguous: "A", SectionNoAction: "N"}
	count := map[Section]int{}
	for i := range items {
		count[items[i].Section]++
		items[i].ID = prefix[items[i].Section] + strconv.Itoa(count[items[i].Section])
	}
}

// gatherMemories reads every memory of the directory, daily logs excepted.
// teamInUse reports whether team/ holds anything.
func gatherMemories(ctx context.Context, dir string, rep *Report) ([]*reviewEntry, bool, error) {
	res, err := memdir.ScanDir(ctx, dir, &memdir.ScanOptions{Limit: -1})
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
	if fi, err := os.Stat(filepath.Join(dir, memdir.TeamDirName, memdir.EntrypointName)); err == nil && fi.Mode().IsRegular() {
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
		if strings.HasPrefix(h.Path, memdir.TeamDirName+"/") {
			layer, teamInUse = LayerTeam, true
		}
		data, fi, err := memfile.ReadRooted(root, h.Path, memdir.MaxMemoryFileBytes)
		if err != nil {
			rep.Warnings = append(rep.Warnings, fmt.Sprintf("memory %s: %v", h.Path, err))
			continue
		}
		m, _ := memdir.ParseMemory(data)
		e := &reviewEntry{
			Subject: Subject{Layer: layer, File: h.AbsPath, Display: h.Path, Path: h.Path, Name: m.Name, Type: m.Type, Text: mdtext.OneLine(m.Description), Sum: memfile.ContentSum(data)},
			body:    m.Body, mtime: fi.ModTime(), meta: m.Metadata(),
		}
		if e.Text == "" {
			e.Text = cutRunes(mdtext.OneLine(m.Body), 150)
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
func memoryStatement(m *memdir.Memory) (statement, why string) {
	for para := range strings.SplitSeq(strings.ReplaceAll(m.Body, "\r\n", "\n"), "\n\n") {
		var keep []string
		for line := range strings.SplitSeq(para, "\n") {
			t := strings.TrimSpace(line)
			low := strings.ToLower(strings.Trim(t, "*_ "))
			switch {
			case t == "":
			case strings.HasPrefix(low, "why:"):
				if why == "" {
					why = mdtext.OneLine(strings.Trim(strings.TrimSpace(t[strings.Index(strings.ToLower(t), "why:")+4:]), "*_ "))
				}
			case strings.HasPrefix(low, "how to apply:"), strings.HasPrefix(t, "#"):
			default:
				keep = append(keep, strings.TrimLeft(t, "-*+ "))
			}
		}
		if len(keep) > 0 && statement == "" {
			statement = mdtext.OneLine(strings.Join(keep, " "))
		}
	}
	if statement == "" || utf8.RuneCountInString(statement) > 300 {
		statement = mdtext.OneLine(m.Description)
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
func gatherInstructions(src Sources, rep *Report) []*reviewEntry {
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
	for _, dir := range (&locate.Location{ProjectRoot: src.ProjectRoot, GitRoot: src.GitRoot}).ProjectDirs() {
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
			rep.Warnings = append(rep.Warnings, fmt.Sprintf("%s: %s is too large to review; skipped", f.path, memdir.FormatFileSize(int(fi.Size()))))
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
		rep.Files = append(rep.Files, File{Layer: f.layer, Path: f.path, Entries: len(rules)})
		for _, r := range rules {
			out = append(out, &reviewEntry{
				Subject:   Subject{Layer: f.layer, File: f.path, Display: fmt.Sprintf("%s:%d", display, r.line), Line: r.line, Text: r.text},
				statement: r.text,
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
	text := mdtext.Normalize(content)
	startLine := 1
	if _, bodyStart, ok := mdtext.SplitFrontmatter(text); ok {
		startLine += strings.Count(text[:bodyStart], "\n")
		text = text[bodyStart:]
	}
	text = mdtext.HTMLComment().ReplaceAllStringFunc(text, func(c string) string { return strings.Repeat("\n", strings.Count(c, "\n")) })
	var out []instruction
	var cur []string
	curLine := 0
	flush := func() {
		if len(cur) > 0 {
			if t := mdtext.OneLine(strings.Join(cur, " ")); len(lexical.Tokenize(t)) >= 2 {
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
