package lexical

import (
	"slices"
	"strings"
	"testing"
)

// TestStopwordTable: the packed table answers as the list does, for every
// stopword, for words one letter off each of them, and for every word of
// up to maxStopword+1 letters in the labelled sets.
func TestStopwordTable(t *testing.T) {
	words := map[string]bool{"": true}
	for _, w := range stopwords {
		words[w] = true
		for i := range len(w) + 1 {
			words[w[:i]] = true
			words[w[:i]+"s"+w[i:]] = true
			if i < len(w) {
				words[w[:i]+w[i+1:]] = true
				words[w[:i]+string(w[i]^1)+w[i+1:]] = true
			}
		}
	}
	docs, _ := labelledDocs(t, "recall-dev.json", "recall-oss.json", "recall-app.json")
	for _, d := range docs {
		for _, w := range strings.FieldsFunc(strings.ToLower(d.Body+" "+d.Description), func(r rune) bool { return r < 'a' || r > 'z' }) {
			if len(w) <= maxStopword+1 {
				words[w] = true
			}
		}
	}
	stop := 0
	for w := range words {
		want := slices.Contains(stopwords, w)
		if got := isStopword([]byte(w)); got != want {
			t.Errorf("isStopword(%q) = %v, want %v", w, got, want)
		}
		if want {
			stop++
		}
	}
	if stop != len(stopwords) || len(words) < 1000 {
		t.Errorf("checked %d words, %d of them stopwords; want all %d stopwords among at least 1,000", len(words), stop, len(stopwords))
	}
}
