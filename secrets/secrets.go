// Package secrets finds credentials in text, so that memdir can refuse to
// share them through team memory.
//
// Team memory is synced to a server and from there to every collaborator on a
// repository. A memory that quotes an API key or a private key would hand it
// to all of them, so the team client skips such files on push and the server
// rejects them on upload; a write-time guard (Claude Code refuses Write and
// Edit of such content on team paths) asks the same question.
//
// The scanner is a heuristic. It knows the public formats of the 36 kinds
// of credential Claude Code's team-memory scanner looks for (prefixes,
// lengths, alphabets) and four of memdir's own that need context: JSON Web
// Tokens, Slack webhook URLs, AWS secret access keys (after their name or
// near their key id) and passwords in URLs (postgres://user:pw@host…); see
// [Rules]. Anything else passes unseen, and an invented string shaped like a
// real token is reported. The patterns are tuned to stay quiet on prose and
// code: a token must stand on its own (not glued to a longer identifier),
// and obvious placeholders (AKIA…EXAMPLE, runs like "xxxxxxxx", all-lowercase
// slugs, ${VAR} or <password> in a URL, example.com hosts) are ignored. A
// test scans the system's Markdown documentation and the Go module cache
// and expects memdir's own rules to find nothing there.
//
// Results never carry the secret itself: a [Match] names the rule only, so it
// is safe to log, print or send back to a client. All functions are safe for
// concurrent use.
package secrets

import (
	"iter"
	"slices"
	"strings"
)

// Marker is what [Redact] puts in place of each secret.
const Marker = "[REDACTED]"

// Rule is one kind of credential the scanner knows.
type Rule struct {
	// ID is the rule's stable kebab-case name, e.g. "github-pat". The IDs are
	// the ones Claude Code's team-memory scanner reports.
	ID string
	// Label is the human-readable name, e.g. "GitHub PAT"; see [Label].
	Label string

	// keywords are literals every match contains, each at byte offset at from
	// the start of the match; each is at least two bytes long. The scanner
	// looks only where a keyword occurs, which keeps it fast on text without
	// secrets.
	keywords []string
	at       int
	// edge holds the bytes that may not touch a match on either side; nil
	// means no check. A token glued to such a byte is part of something
	// longer and is not reported.
	edge *byteSet
	// match tries to match at s[p:]. It returns the end of the whole match
	// and the secret's bounds [lo, hi) within s.
	match func(s string, p int) (end, lo, hi int, ok bool)
}

// Match reports that content holds a secret of one kind. It never carries
// the secret's value or position.
type Match struct {
	RuleID string
	Label  string
}

// Rules returns the rules in the fixed order Scan reports them.
func Rules() []Rule {
	return slices.Clone(rules[:])
}

// Scan reports which kinds of secret content holds: at most one Match per
// rule, in the order of [Rules]. It returns nil when it finds none.
func Scan(content string) []Match {
	var found [len(rules)]bool
	n := 0
	for ri := range find(content, found[:]) { // found doubles as the skip list
		found[ri] = true
		n++
	}
	if n == 0 {
		return nil
	}
	ms := make([]Match, 0, n)
	for ri, ok := range found {
		if ok {
			ms = append(ms, Match{RuleID: rules[ri].ID, Label: rules[ri].Label})
		}
	}
	return ms
}

// Redact returns content with the secret part of every match replaced by
// [Marker]. For tokens that is the whole token; for a PEM private key it is
// the body, so the BEGIN and END lines stay and show what was removed. Text
// around the secrets is kept byte for byte.
func Redact(content string) string {
	// Removing one secret can expose another: a token that was rejected
	// because it touched a longer run may stand alone once that run is
	// replaced. So repeat until a pass finds nothing. This ends because no
	// rule matches text holding Marker's brackets, so each pass that changes
	// the text replaces bytes outside markers, of which there are fewer
	// every time.
	for {
		var spans [][2]int
		for _, span := range find(content, nil) {
			spans = append(spans, span)
		}
		if spans == nil {
			return content
		}
		content = replace(content, spans)
	}
}

// Labels joins the labels of ms for a message, e.g. "GitHub PAT, AWS Access
// Token".
func Labels(ms []Match) string {
	labels := make([]string, len(ms))
	for i, m := range ms {
		labels[i] = m.Label
	}
	return strings.Join(labels, ", ")
}

// find yields the index in rules and the bounds of every secret in s, in the
// order their keywords occur. Bounds may repeat or overlap. Rules with
// skip[i] set are not tried, which lets Scan stop looking for a kind it has
// already found.
//
// It reads s once, looking up each pair of adjacent bytes in keywordIndex;
// only where a keyword starts does it run a rule's pattern. Most text has
// few such places, which is what keeps scanning fast.
func find(s string, skip []bool) iter.Seq2[int, [2]int] {
	return func(yield func(int, [2]int) bool) {
		for j := 0; j+1 < len(s); j++ {
			g := keywordIndex[uint16(s[j])<<8|uint16(s[j+1])]
			if g == 0 {
				continue
			}
			for _, kw := range keywordGroups[g] {
				if skip != nil && skip[kw.rule] || !strings.HasPrefix(s[j:], kw.text) {
					continue
				}
				r := &rules[kw.rule]
				p := j - r.at
				// Checking the byte before first is cheap, and it skips
				// keywords inside a run an earlier candidate already
				// covered, which keeps adversarial input linear.
				if p < 0 || p > 0 && r.edge.has(s[p-1]) {
					continue
				}
				end, lo, hi, ok := r.match(s, p)
				if !ok || end < len(s) && r.edge.has(s[end]) {
					continue
				}
				if !yield(kw.rule, [2]int{lo, hi}) {
					return
				}
			}
		}
	}
}

// keyword is one literal of a rule, for find.
type keyword struct {
	rule int // index in rules
	text string
}

// keywordIndex maps the first two bytes of every keyword to its group in
// keywordGroups; 0 means no keyword starts with those bytes.
var (
	keywordIndex  [1 << 16]uint8
	keywordGroups = [][]keyword{nil}
)

func init() {
	for ri := range rules {
		for _, kw := range rules[ri].keywords {
			pair := uint16(kw[0])<<8 | uint16(kw[1])
			if keywordIndex[pair] == 0 {
				keywordIndex[pair] = uint8(len(keywordGroups))
				keywordGroups = append(keywordGroups, nil)
			}
			g := keywordIndex[pair]
			keywordGroups[g] = append(keywordGroups[g], keyword{rule: ri, text: kw})
		}
	}
}

// replace puts Marker in place of each span of s. Overlapping spans are
// merged so no byte of a secret survives between two markers.
func replace(s string, spans [][2]int) string {
	slices.SortFunc(spans, func(a, b [2]int) int { return a[0] - b[0] })
	var b strings.Builder
	b.Grow(len(s))
	done := 0 // bytes of s already copied or replaced
	for i := 0; i < len(spans); {
		lo, hi := spans[i][0], spans[i][1]
		for i++; i < len(spans) && spans[i][0] < hi; i++ {
			hi = max(hi, spans[i][1])
		}
		b.WriteString(s[done:lo])
		b.WriteString(Marker)
		done = hi
	}
	b.WriteString(s[done:])
	return b.String()
}

// byteSet is a set of bytes, for boundary checks.
type byteSet [256]bool

// newByteSet parses ranges like "A-Za-z0-9_-": a '-' that is first or last
// stands for itself.
func newByteSet(ranges string) *byteSet {
	var set byteSet
	for i := 0; i < len(ranges); i++ {
		lo, hi := ranges[i], ranges[i]
		if i+2 < len(ranges) && ranges[i+1] == '-' {
			hi = ranges[i+2]
			i += 2
		}
		for c := int(lo); c <= int(hi); c++ {
			set[c] = true
		}
	}
	return &set
}

func (s *byteSet) has(c byte) bool { return s != nil && s[c] }
