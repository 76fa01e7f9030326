package recall

import (
	"cmp"
	"path/filepath"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/lexical"
)

// rankedMemory is one candidate in recall's ranking.
type rankedMemory struct {
	h       memdir.Header
	lex     lexical.Hit // zero when the memory is no lexical hit
	lexRank int         // 1-based rank among lexical hits, 0 when none
	// score is the lexical score the memory is ranked by: lex.Score times
	// the re-scoring factors (see rerank).
	score   float64
	factors rerankFactors
	fused   float64 // the reciprocal-rank fusion score, with embeddings
	cos     float64 // cosine similarity with the query, with embeddings
	semRank int     // 1-based rank by cosine, 0 without embeddings
	close   bool    // semantically close enough to be answered alone
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
func answerRanked(ranked []rankedMemory, query string, sem *semanticRanking, opts *lexical.AnswerOptions, max int) []rankedMemory {
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
		hits[i].Score = r.score
	}
	o := lexical.AnswerOptions{Max: max}
	if opts != nil {
		o = *opts
		if o.Max <= 0 {
			o.Max = max
		}
	}
	o.Anchored = anchored(query, lex[:min(len(lex), o.Max)])
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

// anchored reports whether the query names, with a capital letter past its
// first word, a word of one of the leading memories' names ("What did
// Caroline find on her walk?" and a memory named caroline-found-…): the
// query is then about something the directory is known to record, and
// the answer rule does not go silent on low coverage (see
// [lexical.AnswerOptions.Anchored]). Capitalised words in coding prompts
// are mostly tools and languages that no memory is named for unless it is
// about them; docs/recall.md has the figures on both kinds of set.
func anchored(query string, lead []rankedMemory) bool {
	var names []string
	for i, w := range wordsOf(query) {
		first, _ := utf8.DecodeRuneInString(w)
		if i == 0 || !unicode.IsUpper(first) || strings.ToUpper(w) == w {
			continue // a sentence's first word, a common word, an acronym (CI, S3)
		}
		w, _, _ = strings.Cut(w, "'")
		w, _, _ = strings.Cut(w, "’")
		names = append(names, strings.ToLower(w))
	}
	if len(names) == 0 {
		return false
	}
	for _, r := range lead {
		words := nameWords(r.h.Name + " " + strings.TrimSuffix(filepath.Base(r.h.Path), ".md"))
		for _, n := range names {
			if slices.Contains(words, n) {
				return true
			}
		}
	}
	return false
}

// wordsOf returns the words of s: a letter, then letters, numbers,
// apostrophes and hyphens (what the regular expression
// \p{L}[\p{L}\p{N}'’-]* matches, TestWordsOfAsTheExpression; a scanner,
// as compiling the expression's Unicode classes was most of this
// package's start-up, paid by every process).
func wordsOf(s string) []string {
	var out []string
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if !unicode.IsLetter(r) {
			i += n
			continue
		}
		j := i + n
		for j < len(s) {
			r, m := utf8.DecodeRuneInString(s[j:])
			if !unicode.IsLetter(r) && !unicode.IsNumber(r) && r != '\'' && r != '’' && r != '-' {
				break
			}
			j += m
		}
		out = append(out, s[i:j])
		i = j
	}
	return out
}

// nameWords splits a memory's name or file name into its lower-case words.
func nameWords(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
}
