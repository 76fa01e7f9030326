package recall

import (
	"cmp"
	"slices"
	"strings"

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/lexical"
)

// rankedMemory is one candidate in recall's ranking.
type rankedMemory struct {
	h       memdir.Header
	lex     lexical.Hit // zero when the memory is no lexical hit
	lexRank int         // 1-based rank among lexical hits, 0 when none
	cos     float64     // cosine similarity with the query, with embeddings
	semRank int         // 1-based rank by cosine, 0 without embeddings
	close   bool        // semantically close enough to be answered alone
}

// reason says why a memory was picked without a model.
func (r rankedMemory) reason() string {
	var parts []string
	if len(r.lex.Terms) > 0 {
		parts = append(parts, "lexical match on "+strings.Join(r.lex.Terms, ", "))
	}
	if r.close {
		parts = append(parts, "semantically close (cosine "+formatCos(r.cos)+")")
	}
	return strings.Join(parts, "; ")
}

// minManifestLine is the shortest manifest line, with its newline: a
// one-letter file name, no type, no description.
var minManifestLine = len(ManifestLine(memdir.Header{Path: "x.md"})) + 1

// compactManifestLine is a memory's line in the part of a tiered manifest
// that lists memories by file name alone.
func compactManifestLine(h memdir.Header) string { return "- " + h.Path }

// manifestLineCost is the bytes of h's manifest line with its newline, full
// or compact.
func manifestLineCost(h memdir.Header, compact bool) int {
	if compact {
		return len(compactManifestLine(h)) + 1
	}
	return len(ManifestLine(h)) + 1
}

// tokensOf estimates the tokens of n bytes of text as Claude Code's own
// rough estimate does: a token per four bytes, rounded up.
func tokensOf(n int) int {
	if n < 0 {
		return -1
	}
	return (n + 3) / 4
}

// answerRanked picks, without a model, what the ranking answers alone: the
// lexical answer (see [lexical.Answer]), and with embeddings also the
// memories semantically close enough to stand on their own, in ranking
// order, at most max.
func answerRanked(ranked []rankedMemory, sem *semanticRanking, opts *lexical.AnswerOptions, max int) []rankedMemory {
	// Lexical hits keep their lexical order for the answer rule, whatever
	// the fused order.
	var lex []rankedMemory
	for _, r := range ranked {
		if r.lexRank > 0 {
			lex = append(lex, r)
		}
	}
	slices.SortFunc(lex, func(a, b rankedMemory) int { return cmp.Compare(a.lexRank, b.lexRank) })
	hits := make([]lexical.Hit, len(lex))
	for i, r := range lex {
		hits[i] = r.lex
	}
	o := lexical.AnswerOptions{Max: max}
	if opts != nil {
		o = *opts
		if o.Max <= 0 {
			o.Max = max
		}
	}
	keep := map[string]bool{}
	for _, h := range lexical.Answer(hits, &o) {
		keep[h.ID] = true
	}
	var out []rankedMemory
	for _, r := range ranked {
		if len(out) == max {
			break
		}
		if keep[r.h.Path] || r.close {
			out = append(out, r)
		}
	}
	return out
}
