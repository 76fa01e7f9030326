package screen

import (
	"regexp/syntax"
	"strings"
)

// Go's regexp has no fast path for a pattern that starts with an
// alternation, and the lexicon rules are long alternations: run over a
// whole 2 KB memory each costs a fraction of a millisecond. So every rule
// gets a prefilter: the literals one of which must start any match, found
// from the parsed pattern. The rule's regexp then runs only over the
// sentences that contain one of them, usually none.

const maxLits = 400

// lits returns strings one of which starts every match of re (exact when
// every match is exactly one of them); ok is false when no such list can
// be made. An empty string in the list means a match may start anywhere.
func lits(re *syntax.Regexp, collapsed bool) (set []string, exact, ok bool) {
	switch re.Op {
	case syntax.OpLiteral:
		if re.Flags&syntax.FoldCase != 0 {
			return nil, false, false
		}
		return []string{string(re.Rune)}, true, true
	case syntax.OpEmptyMatch, syntax.OpWordBoundary, syntax.OpNoWordBoundary, syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText:
		return []string{""}, true, true
	case syntax.OpCapture:
		return lits(re.Sub[0], collapsed)
	case syntax.OpPlus:
		if collapsed && isSpaceClass(re.Sub[0]) {
			// The prose and flat views collapse every run of white
			// space to one space, so "\\s+" is exactly " " there.
			return []string{" "}, true, true
		}
		l, _, ok := lits(re.Sub[0], collapsed)
		return l, false, ok
	case syntax.OpQuest, syntax.OpStar:
		l, e, ok := lits(re.Sub[0], collapsed)
		return append(l, ""), e && re.Op == syntax.OpQuest, ok
	case syntax.OpRepeat:
		l, _, ok := lits(re.Sub[0], collapsed)
		if re.Min == 0 {
			l = append(l, "")
		}
		return l, false, ok
	case syntax.OpCharClass:
		var out []string
		for i := 0; i+1 < len(re.Rune); i += 2 {
			if re.Rune[i+1]-re.Rune[i] > 8 {
				return nil, false, false
			}
			for r := re.Rune[i]; r <= re.Rune[i+1]; r++ {
				out = append(out, string(r))
			}
		}
		return out, true, len(out) > 0 && len(out) <= maxLits
	case syntax.OpAlternate:
		var out []string
		exact = true
		for _, s := range re.Sub {
			l, e, ok := lits(s, collapsed)
			if !ok {
				return nil, false, false
			}
			out = append(out, l...)
			exact = exact && e
		}
		return out, exact, len(out) <= maxLits
	case syntax.OpConcat:
		set = []string{""}
		for _, s := range re.Sub {
			if isClassy(s) && !(len(set) == 1 && set[0] == "") && !(collapsed && s.Op == syntax.OpPlus && isSpaceClass(s.Sub[0])) {
				// Stop before a class ("\\s+"): it would multiply the
				// list for no gain in selectivity.
				return set, false, true
			}
			l, e, ok := lits(s, collapsed)
			if !ok || len(set)*len(l) > maxLits {
				return set, false, true
			}
			var next []string
			for _, a := range set {
				for _, b := range l {
					next = append(next, a+b)
				}
			}
			set = next
			if !e {
				return set, false, true
			}
		}
		return set, true, true
	}
	return nil, false, false
}

func isSpaceClass(re *syntax.Regexp) bool {
	if re.Op != syntax.OpCharClass {
		return false
	}
	for i := 0; i+1 < len(re.Rune); i += 2 {
		for r := re.Rune[i]; r <= re.Rune[i+1]; r++ {
			if r != ' ' && r != '\t' && r != '\n' && r != '\r' && r != '\f' && r != '\v' {
				return false
			}
		}
	}
	return true
}

func isClassy(re *syntax.Regexp) bool {
	switch re.Op {
	case syntax.OpCharClass:
		return true
	case syntax.OpPlus, syntax.OpStar, syntax.OpQuest, syntax.OpRepeat, syntax.OpCapture:
		return isClassy(re.Sub[0])
	}
	return false
}

// prefilter returns the literals for pattern re, longer ones only where
// they are all at least two bytes, or nil when none can be listed.
func prefilter(p *syntax.Regexp, collapsed bool) []string {
	ls, _, ok := lits(p, collapsed)
	if !ok {
		return nil
	}
	seen := map[string]bool{}
	var out []string
	for _, l := range ls {
		if l == "" {
			return nil // a match may start anywhere
		}
		if !seen[l] {
			seen[l] = true
			out = append(out, l)
		}
	}
	return out
}

// A litIndex finds the literals of a list of rules in one pass over the
// text, keyed by their first one or two bytes, so the cost does not grow
// with the number of rules.
type litIndex struct {
	one  [256][]litRef
	two  map[uint16][]litRef // literals of two or three bytes
	four map[uint32][]litRef // literals of four bytes or more
	n    int                 // number of rules
}

type litRef struct {
	lit  string
	rule int32
}

func newLitIndex(rs []rule) *litIndex {
	ix := &litIndex{two: map[uint16][]litRef{}, four: map[uint32][]litRef{}, n: len(rs)}
	for i, r := range rs {
		for _, l := range r.lits {
			ref := litRef{l, int32(i)}
			switch {
			case len(l) == 1:
				ix.one[l[0]] = append(ix.one[l[0]], ref)
			case len(l) < 4:
				k := key2(l)
				ix.two[k] = append(ix.two[k], ref)
			default:
				k := key4(l)
				ix.four[k] = append(ix.four[k], ref)
			}
		}
	}
	return ix
}

// hits returns, for each rule, the offsets where one of its literals
// starts in s (nil for a rule whose regexp must run everywhere).
func (ix *litIndex) hits(s string) [][]int {
	out := make([][]int, ix.n)
	for i := 0; i < len(s); i++ {
		for _, ref := range ix.one[s[i]] {
			out[ref.rule] = append(out[ref.rule], i)
		}
		if i+1 < len(s) {
			for _, ref := range ix.two[key2(s[i:])] {
				if strings.HasPrefix(s[i:], ref.lit) {
					out[ref.rule] = append(out[ref.rule], i)
				}
			}
		}
		if i+3 < len(s) {
			for _, ref := range ix.four[key4(s[i:])] {
				if strings.HasPrefix(s[i:], ref.lit) {
					out[ref.rule] = append(out[ref.rule], i)
				}
			}
		}
	}
	return out
}

func key2(s string) uint16 { return uint16(s[0])<<8 | uint16(s[1]) }

func key4(s string) uint32 {
	return uint32(s[0])<<24 | uint32(s[1])<<16 | uint32(s[2])<<8 | uint32(s[3])
}

// windows returns the merged sentence spans of s around the offsets at.
func windows(s string, at []int) [][2]int {
	var out [][2]int
	for _, i := range at {
		if len(out) > 0 && i < out[len(out)-1][1] {
			continue // inside the last span
		}
		a, b := sentence(s, i, i+1)
		if len(out) > 0 && a <= out[len(out)-1][1] {
			out[len(out)-1][1] = max(out[len(out)-1][1], b)
			continue
		}
		out = append(out, [2]int{a, b})
	}
	return out
}
