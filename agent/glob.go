package agent

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Glob patterns, as the glob tool and grep's filter take them. They are
// matched against slash-separated relative paths, one path segment at a time:
//
//   - "*" matches any run of characters within a segment, "?" one character;
//   - "[abc]", "[a-z]" match one character of a class, "[!a-z]" or "[^a-z]"
//     one character outside it;
//   - "**" as a whole segment matches zero or more segments, so "**/*.go"
//     matches "main.go" and "cmd/x/main.go";
//   - "{a,b}" matches either alternative (nesting allowed), as in
//     "**/*.{go,mod}";
//   - a backslash makes the next character literal.
//
// A leading "*" matches names starting with "." too: the walk already skips
// .git, and hiding other dot files would only surprise a model looking for
// .github or .env.example.
//
// The matcher is written here rather than taken from path.Match because
// path.Match has neither "**" nor braces, and patterns come from a model, so
// matching must stay polynomial: segment matching backtracks to the last star
// only, and "**" is resolved by dynamic programming over segments.

// Limits that keep a hostile pattern cheap.
const (
	maxPatternBytes = 1024
	maxAlternatives = 256 // brace expansions
)

// globPattern is a compiled pattern: the brace-expanded alternatives, each a
// list of segments.
type globPattern struct {
	src  string
	alts [][]globSegment
}

// globSegment is one "/"-separated part of a pattern.
type globSegment struct {
	any  bool        // "**": zero or more whole segments
	toks []globToken // otherwise, the tokens of the segment
}

type tokenKind uint8

const (
	tokLiteral tokenKind = iota
	tokAnyChar           // ?
	tokStar              // *
	tokClass             // [...]
)

type globToken struct {
	kind   tokenKind
	r      rune        // tokLiteral
	negate bool        // tokClass
	ranges []runeRange // tokClass
}

type runeRange struct{ lo, hi rune }

// compileGlob parses pattern. Errors say what is wrong with it, for the
// caller to put after the pattern.
func compileGlob(pattern string) (*globPattern, error) {
	if pattern == "" {
		return nil, fmt.Errorf("it is empty")
	}
	if len(pattern) > maxPatternBytes {
		return nil, fmt.Errorf("it is longer than %d bytes", maxPatternBytes)
	}
	if !utf8.ValidString(pattern) {
		return nil, fmt.Errorf("it is not valid UTF-8")
	}
	alts, err := expandBraces(pattern)
	if err != nil {
		return nil, err
	}
	g := &globPattern{src: pattern}
	for _, alt := range alts {
		segs, err := compileSegments(alt)
		if err != nil {
			return nil, err
		}
		g.alts = append(g.alts, segs)
	}
	return g, nil
}

// expandBraces turns "a{b,c{d,e}}f" into "abf", "acdf", "acef". Escaped
// braces and commas stay literal (with their backslash, for the segment
// parser).
func expandBraces(p string) ([]string, error) {
	open := -1
	depth := 0
	var commas []int
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '\\':
			i++ // skip the escaped byte (a multi-byte rune's tail bytes are never special)
		case '{':
			if depth == 0 {
				open = i
				commas = commas[:0]
			}
			depth++
		case ',':
			if depth == 1 {
				commas = append(commas, i)
			}
		case '}':
			if depth == 0 {
				return nil, fmt.Errorf("there is a \"}\" without a matching \"{\"")
			}
			depth--
			if depth > 0 {
				continue
			}
			prefix, suffix := p[:open], p[i+1:]
			var out []string
			start := open + 1
			for _, c := range append(commas, i) {
				rest, err := expandBraces(prefix + p[start:c] + suffix)
				if err != nil {
					return nil, err
				}
				out = append(out, rest...)
				if len(out) > maxAlternatives {
					return nil, fmt.Errorf("the braces expand to more than %d alternatives", maxAlternatives)
				}
				start = c + 1
			}
			return out, nil
		}
	}
	if depth > 0 {
		return nil, fmt.Errorf("there is a \"{\" without a matching \"}\"")
	}
	return []string{p}, nil
}

func compileSegments(p string) ([]globSegment, error) {
	var segs []globSegment
	for s := range strings.SplitSeq(p, "/") {
		switch s {
		case "", ".":
			continue // "a//b" and "./a" mean what they would as paths
		case "**":
			if n := len(segs); n > 0 && segs[n-1].any {
				continue // "**/**" is the same as "**"
			}
			segs = append(segs, globSegment{any: true})
			continue
		case "..":
			return nil, fmt.Errorf("\"..\" segments are not allowed; give the directory to search as the path instead")
		}
		toks, err := compileTokens(s)
		if err != nil {
			return nil, err
		}
		segs = append(segs, globSegment{toks: toks})
	}
	if len(segs) == 0 {
		return nil, fmt.Errorf("it has no segment to match")
	}
	return segs, nil
}

func compileTokens(s string) ([]globToken, error) {
	var toks []globToken
	rs := []rune(s)
	for i := 0; i < len(rs); i++ {
		switch rs[i] {
		case '*':
			if n := len(toks); n > 0 && toks[n-1].kind == tokStar {
				continue // "**" inside a segment is one star
			}
			toks = append(toks, globToken{kind: tokStar})
		case '?':
			toks = append(toks, globToken{kind: tokAnyChar})
		case '\\':
			if i+1 == len(rs) {
				return nil, fmt.Errorf("it ends with a backslash that escapes nothing")
			}
			i++
			toks = append(toks, globToken{kind: tokLiteral, r: rs[i]})
		case '[':
			tok, next, err := compileClass(rs, i)
			if err != nil {
				return nil, err
			}
			toks = append(toks, tok)
			i = next
		default:
			toks = append(toks, globToken{kind: tokLiteral, r: rs[i]})
		}
	}
	return toks, nil
}

// compileClass parses the class starting at rs[start] == '[' and returns the
// index of its closing ']'. A ']' right after the opening (or after the
// negation) is a member, as in shells.
func compileClass(rs []rune, start int) (globToken, int, error) {
	tok := globToken{kind: tokClass}
	i := start + 1
	if i < len(rs) && (rs[i] == '!' || rs[i] == '^') {
		tok.negate = true
		i++
	}
	first := true
	for ; i < len(rs); i++ {
		c := rs[i]
		if c == ']' && !first {
			return tok, i, nil
		}
		first = false
		if c == '\\' {
			if i+1 == len(rs) {
				break
			}
			i++
			c = rs[i]
		}
		lo, hi := c, c
		if i+2 < len(rs) && rs[i+1] == '-' && rs[i+2] != ']' {
			hi = rs[i+2]
			if hi == '\\' && i+3 < len(rs) {
				hi = rs[i+3]
				i++
			}
			i += 2
			if hi < lo {
				return tok, 0, fmt.Errorf("the range %c-%c in a [...] class runs backwards", lo, hi)
			}
		}
		tok.ranges = append(tok.ranges, runeRange{lo, hi})
	}
	return tok, 0, fmt.Errorf("a \"[\" class is not closed with \"]\"")
}

// match reports whether the slash-separated relative path name matches.
func (g *globPattern) match(name string) bool {
	segs := splitPath(name)
	for _, alt := range g.alts {
		if matchSegments(alt, segs, false) {
			return true
		}
	}
	return false
}

// mayMatchBelow reports whether some path inside directory dir could match,
// so a walk can skip directories that cannot.
func (g *globPattern) mayMatchBelow(dir string) bool {
	segs := splitPath(dir)
	for _, alt := range g.alts {
		if matchSegments(alt, segs, true) {
			return true
		}
	}
	return false
}

func splitPath(name string) []string {
	if name == "" || name == "." {
		return nil
	}
	return strings.Split(name, "/")
}

// matchSegments matches pattern segments against path segments. With
// prefix set, it reports whether segs could be the leading part of a path
// that matches (the path running out early counts as a possible match).
// Results are memoised per (pattern, path) position pair, so "**" costs
// O(len(pat)·len(segs)) whatever the pattern.
func matchSegments(pat []globSegment, segs []string, prefix bool) bool {
	var buf [128]uint8
	n := (len(pat) + 1) * (len(segs) + 1)
	m := segMatcher{pat: pat, segs: segs, prefix: prefix, memo: buf[:0]}
	if n <= len(buf) {
		m.memo = buf[:n]
	} else {
		m.memo = make([]uint8, n)
	}
	return m.at(0, 0)
}

type segMatcher struct {
	pat    []globSegment
	segs   []string
	prefix bool
	memo   []uint8 // 0 unknown, 1 no, 2 yes
}

func (m *segMatcher) at(i, j int) bool {
	k := i*(len(m.segs)+1) + j
	if m.memo[k] != 0 {
		return m.memo[k] == 2
	}
	var ok bool
	switch {
	case i == len(m.pat):
		ok = j == len(m.segs)
	case j == len(m.segs):
		// The path ran out: a match only if all that is left is "**"
		// (or, for a prefix, always: deeper paths may still match).
		ok = m.prefix || (m.pat[i].any && m.at(i+1, j))
	case m.pat[i].any:
		ok = m.at(i+1, j) || m.at(i, j+1)
	default:
		ok = matchTokens(m.pat[i].toks, m.segs[j]) && m.at(i+1, j+1)
	}
	m.memo[k] = 1
	if ok {
		m.memo[k] = 2
	}
	return ok
}

// matchTokens matches one segment. Every token but the star consumes exactly
// one rune, so backtracking to the most recent star is enough and the cost
// is O(len(toks)·len(s)).
func matchTokens(toks []globToken, s string) bool {
	ti, si := 0, 0
	star, starSi := -1, 0
	for si < len(s) {
		if ti < len(toks) {
			t := toks[ti]
			if t.kind == tokStar {
				star, starSi = ti, si
				ti++
				continue
			}
			if r, size := utf8.DecodeRuneInString(s[si:]); t.matches(r) {
				ti++
				si += size
				continue
			}
		}
		if star < 0 {
			return false
		}
		// Let the star swallow one more rune and retry from there.
		_, size := utf8.DecodeRuneInString(s[starSi:])
		starSi += size
		ti, si = star+1, starSi
	}
	for ti < len(toks) && toks[ti].kind == tokStar {
		ti++
	}
	return ti == len(toks)
}

func (t globToken) matches(r rune) bool {
	switch t.kind {
	case tokLiteral:
		return t.r == r
	case tokAnyChar:
		return true
	case tokClass:
		in := false
		for _, rg := range t.ranges {
			if rg.lo <= r && r <= rg.hi {
				in = true
				break
			}
		}
		return in != t.negate
	}
	return false
}
