package promote

// The lexical review: term vectors, duplicates, contradictions, dates
// and the placement of each memory, without a model.

import (
	"fmt"
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

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/lexical"
)

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
		for w := range strings.FieldsSeq(s) {
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
	src       Sources
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

// lexicalItems is the deterministic review, in stages whose order matters:
// each memory gets at most one cleanup or conflict item, and the first
// stage to decide it wins: exact duplicates, then pairs on one topic, then
// superseded and outdated memories. Every memory left is placed.
func (rv *reviewer) lexicalItems() []Item {
	lr := &lexicalReview{reviewer: rv, decided: map[*reviewEntry]bool{}, paired: map[[2]*reviewEntry]bool{}}
	for _, e := range rv.entries {
		if e.isMemory() {
			lr.mems = append(lr.mems, e)
		}
	}
	lr.sameBodies()
	lr.alreadyStated()
	for _, p := range topicPairs(rv.entries, conflictTopic) {
		lr.topicPair(rv.entries[p.i], rv.entries[p.j], p.sim)
	}
	lr.stale()
	for _, e := range lr.mems {
		if !lr.decided[e] {
			lr.items = append(lr.items, rv.placement(e))
		}
	}
	return lr.items
}

// lexicalReview is the state of one lexical review as its stages run.
type lexicalReview struct {
	*reviewer
	mems  []*reviewEntry // the memories among the entries, in entry order
	items []Item
	// decided marks memories a cleanup or conflict item covers, so they are
	// not also proposed for promotion.
	decided map[*reviewEntry]bool
	// paired marks pairs an exact-duplicate item already relates.
	paired map[[2]*reviewEntry]bool
}

// sameBodies reports memories with the same body as another: each group
// (in the order of its first path) keeps one memory and drops the rest.
func (lr *lexicalReview) sameBodies() {
	byBody := map[string][]*reviewEntry{}
	for _, e := range lr.mems {
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
			lr.paired[pairKey(e, keep)] = true
			lr.items = append(lr.items, lr.removal(KindDuplicate, e, keep, 1, "holds the same text as "+keep.label()))
			lr.decided[e] = true
		}
	}
}

// alreadyStated reports memories whose statement is, normalised, the text
// of an instruction entry (the first such entry).
func (lr *lexicalReview) alreadyStated() {
	for _, e := range lr.mems {
		if lr.decided[e] || e.norm == "" {
			continue
		}
		for _, r := range lr.entries {
			if !r.isMemory() && r.norm == e.norm {
				lr.paired[pairKey(e, r)] = true
				lr.items = append(lr.items, lr.removal(KindDuplicate, e, r, 1, "already stated in "+r.label()))
				lr.decided[e] = true
				break
			}
		}
	}
}

// topicPair judges two entries on one topic (a before b in entry order):
// a conflict when one negates what the other asserts or one memory is
// saved with two types, else a near duplicate when they are similar
// enough. Entries of one instruction file, pairs already related, and
// pairs both of whose entries are decided are left alone.
func (lr *lexicalReview) topicPair(a, b *reviewEntry, sim float64) {
	if !a.isMemory() && !b.isMemory() && a.File == b.File {
		return // entries of one file are its author's business
	}
	if lr.paired[pairKey(a, b)] || lr.decided[a] && lr.decided[b] {
		return
	}
	if term, ok := contradiction(a, b); ok {
		lr.conflict(a, b, sim, fmt.Sprintf("on the same topic, one negates %q and the other asserts it", term))
		return
	}
	if a.isMemory() && b.isMemory() && a.Type != b.Type && (sim >= lr.near || a.Name != "" && strings.EqualFold(a.Name, b.Name)) {
		lr.conflict(a, b, sim, fmt.Sprintf("the same memory saved as %s in %s and as %s in %s", typeWord(a.Type), a.label(), typeWord(b.Type), b.label()))
		return
	}
	if sim >= lr.near {
		lr.nearDuplicate(a, b, sim)
	}
}

// conflict reports a and b as contradicting each other and decides both.
func (lr *lexicalReview) conflict(a, b *reviewEntry, sim float64, why string) {
	lr.items = append(lr.items, conflictItem(a, b, sim, why))
	lr.decided[a], lr.decided[b] = true, true
}

// nearDuplicate reports two entries that say nearly the same: of two
// memories the keeper stays, a memory gives way to an instruction, and
// two instruction files are only pointed out.
func (lr *lexicalReview) nearDuplicate(a, b *reviewEntry, sim float64) {
	switch {
	case a.isMemory() && b.isMemory():
		drop, keep := a, b
		if keeper([]*reviewEntry{a, b}) == a {
			drop, keep = b, a
		}
		lr.items = append(lr.items, lr.removal(KindNearDuplicate, drop, keep, sim, fmt.Sprintf("says nearly the same as %s (similarity %.2f); merge anything it adds, then drop it", keep.label(), sim)))
		lr.decided[drop] = true
	case a.isMemory() || b.isMemory():
		mem, rule := a, b
		if !a.isMemory() {
			mem, rule = b, a
		}
		lr.items = append(lr.items, lr.removal(KindNearDuplicate, mem, rule, sim, fmt.Sprintf("%s already says nearly the same (similarity %.2f)", rule.label(), sim)))
		lr.decided[mem] = true
	default:
		lr.items = append(lr.items, Item{Section: SectionCleanup, Kind: KindNearDuplicate, Subjects: subjects(a, b), Similarity: round2(sim),
			Reason: fmt.Sprintf("two instruction files say nearly the same (similarity %.2f); keep it in one (memdir does not edit instruction files for you)", sim)})
	}
}

// stale reports undecided memories marked superseded, and project
// memories every date of which is before today (the calendar date of now
// in its own zone).
func (lr *lexicalReview) stale() {
	today := time.Date(lr.now.Year(), lr.now.Month(), lr.now.Day(), 0, 0, 0, 0, time.UTC)
	for _, e := range lr.mems {
		if lr.decided[e] {
			continue
		}
		if why := supersededMark(e); why != "" {
			lr.items = append(lr.items, lr.removal(KindSuperseded, e, nil, 0, why))
			lr.decided[e] = true
			continue
		}
		if e.Type != memdir.TypeProject {
			continue
		}
		if latest, ok := latestDate(e.Text + "\n" + e.body); ok && latest.Before(today) {
			days := int(today.Sub(latest).Hours() / 24)
			lr.items = append(lr.items, lr.removal(KindOutdated, e, nil, 0, fmt.Sprintf("a project memory whose every date is past (the latest, %s, was %d %s ago); check whether it still holds", latest.Format("2006-01-02"), days, pluralWord(days, "day", "days"))))
			lr.decided[e] = true
		}
	}
}

// latestDate is the latest calendar date text names, if it names any.
func latestDate(text string) (time.Time, bool) {
	dates := mentionedDates(text)
	if len(dates) == 0 {
		return time.Time{}, false
	}
	latest := dates[0]
	for _, d := range dates[1:] {
		if d.After(latest) {
			latest = d
		}
	}
	return latest, true
}

func round2(f float64) float64 { return math.Round(f*100) / 100 }

func typeWord(t memdir.Type) string {
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

func subjects(es ...*reviewEntry) []Subject {
	out := make([]Subject, 0, len(es))
	for _, e := range es {
		if e != nil {
			out = append(out, e.Subject)
		}
	}
	return out
}

// removal is a cleanup item that removes drop (when it is a private memory).
func (rv *reviewer) removal(kind Kind, drop, other *reviewEntry, sim float64, reason string) Item {
	it := Item{Section: SectionCleanup, Kind: kind, Subjects: subjects(drop, other), Reason: reason}
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

func conflictItem(a, b *reviewEntry, sim float64, why string) Item {
	return Item{Section: SectionAmbiguous, Kind: KindConflict, Subjects: subjects(a, b), Similarity: round2(sim),
		Reason: why + "; decide which holds and edit or remove the other"}
}

// placement decides where a memory with no cleanup belongs.
func (rv *reviewer) placement(e *reviewEntry) Item {
	keep := func(reason string) Item {
		return Item{Section: SectionNoAction, Kind: KindKeep, Subjects: subjects(e), Reason: reason}
	}
	if e.Layer == LayerTeam {
		return keep("already shared in team memory")
	}
	text := e.Name + " " + e.Text + " " + e.body
	switch e.Type {
	case memdir.TypeFeedback:
		team, personal := cues(teamCueRe(), text), cues(personalCueRe(), text)
		switch {
		case len(team) > 0 && len(personal) == 0:
			return Item{Section: SectionPromotions, Kind: KindToClaudeMD, Subjects: subjects(e), Target: rv.claudeMDTarget(), Rule: promotionRule(e), Applicable: true,
				Reason: "reads as a rule for everyone working on the project (" + quoteAll(team) + "); CLAUDE.md is where the team's conventions live"}
		case len(personal) > 0 && len(team) == 0:
			return Item{Section: SectionPromotions, Kind: KindToLocal, Subjects: subjects(e), Target: rv.localTarget(), Rule: promotionRule(e), Applicable: true,
				Reason: "reads as how this user wants to work (" + quoteAll(personal) + "); CLAUDE.local.md holds personal instructions for the project"}
		case len(team) > 0:
			return Item{Section: SectionAmbiguous, Kind: KindUnclear, Subjects: subjects(e),
				Reason: "reads both as a team rule (" + quoteAll(team) + ") and as a personal preference (" + quoteAll(personal) + "); choose CLAUDE.md or CLAUDE.local.md"}
		default:
			return Item{Section: SectionAmbiguous, Kind: KindUnclear, Subjects: subjects(e),
				Reason: "feedback with no sign of whether it is a team convention or a personal preference"}
		}
	case memdir.TypeUser:
		if c := cues(instructionRe(), text); len(c) > 0 {
			return Item{Section: SectionPromotions, Kind: KindToLocal, Subjects: subjects(e), Target: rv.localTarget(), Rule: promotionRule(e), Applicable: true,
				Reason: "a personal instruction (" + quoteAll(c) + "); CLAUDE.local.md applies it in every session of this project"}
		}
		return keep("a fact about the user, not an instruction: auto memory is its place")
	case memdir.TypeProject, memdir.TypeReference:
		if !rv.teamInUse {
			return keep(string(e.Type) + " memory: auto memory is its place (team memory is not in use)")
		}
		if e.secret != "" {
			return keep("holds what looks like a credential (" + e.secret + "), so it must not go to team memory")
		}
		return Item{Section: SectionPromotions, Kind: KindToTeam, Subjects: subjects(e), Target: memdir.TeamDirName + "/" + path.Base(e.Path), Applicable: true,
			Reason: string(e.Type) + " context the whole team needs; team memory shares it"}
	}
	return Item{Section: SectionAmbiguous, Kind: KindUnclear, Subjects: subjects(e), Reason: "untyped: give it a type (user, feedback, project or reference) so its place is clear"}
}
