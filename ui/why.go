package ui

import (
	"slices"
	"strings"
	"unicode"

	"github.com/memdir/memdir/lexical"
	"github.com/memdir/memdir/recall"
)

// lexicalReason starts the part of a recalled memory's reason that lists
// its lexical hit's terms, as package recall writes it ("lexical match on
// deploi, freez"). The terms are the index's: stems and compounds.
const lexicalReason = "lexical match on "

// wordsForTerms rewrites each recalled memory's reason so that its lexical
// terms read as the words they stand for ("deploys, freeze"): recall gives
// the terms only inside the reason, so the page finds the words again.
func wordsForTerms(res *recall.Result) {
	for i := range res.Memories {
		m := &res.Memories[i]
		m.Reason = reasonInWords(m.Reason, m.Content, res.Query)
	}
}

// reasonInWords replaces the terms of reason's lexical part with words
// that tokenize to them: the memory's word that the query uses too, else
// the memory's first, else the query's. A term no word gives stays.
func reasonInWords(reason, memory, query string) string {
	parts := strings.Split(reason, "; ")
	for i, p := range parts {
		list, ok := strings.CutPrefix(p, lexicalReason)
		if !ok {
			continue
		}
		terms := strings.Split(list, ", ")
		inMemory, inQuery := surfaceWords(terms, memory), surfaceWords(terms, query)
		for j, t := range terms {
			if w, ok := pickWord(inMemory[t], inQuery[t]); ok {
				terms[j] = w
			}
		}
		parts[i] = lexicalReason + strings.Join(terms, ", ")
	}
	return strings.Join(parts, "; ")
}

func pickWord(memory, query []string) (string, bool) {
	for _, w := range memory {
		for _, q := range query {
			if strings.EqualFold(w, q) {
				return w, true
			}
		}
	}
	if len(memory) > 0 {
		return memory[0], true
	}
	if len(query) > 0 {
		return query[0], true
	}
	return "", false
}

// surfaceWords maps each of terms to the words of text that
// lexical.Tokenize turns into it, as the text writes them, each once, in
// order. A word is a run of letters and digits, or for a compound term
// ("docker-compose") the text between spaces, trimmed of punctuation.
func surfaceWords(terms []string, text string) map[string][]string {
	out := map[string][]string{}
	for _, t := range terms {
		out[t] = nil
	}
	for _, split := range []func(rune) bool{notWordRune, unicode.IsSpace} {
		for _, w := range strings.FieldsFunc(text, split) {
			w = strings.TrimFunc(w, notWordRune)
			for _, t := range lexical.Tokenize(w) {
				if words, ok := out[t]; ok && !slices.Contains(words, w) {
					out[t] = append(words, w)
				}
			}
		}
	}
	return out
}

// notWordRune reports whether r is outside a word: not a letter, digit or
// mark, nor an apostrophe inside one ("don't").
func notWordRune(r rune) bool {
	return !unicode.IsLetter(r) && !unicode.IsDigit(r) && !unicode.IsMark(r) && r != '\'' && r != '\u2019'
}
