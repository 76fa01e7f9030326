package lexical

import (
	"strings"
	"testing"
)

// TestLightVerbForms checks that every form of the light and reporting
// verbs reaches the list through the tokenizer, and that their neighbours
// do not.
func TestLightVerbForms(t *testing.T) {
	t.Parallel()
	for _, w := range strings.Fields("go goes going went gone get gets getting got gotten make makes making made take takes taking took taken come comes coming came give gives giving gave given put puts putting keep keeps keeping kept done say says saying said tell tells telling told mention mentions mentioned mentioning talk talks talked talking describe describes described describing share shares shared sharing") {
		terms := Tokenize(w)
		if len(terms) != 1 {
			t.Errorf("%q: terms %q", w, terms)
			continue
		}
		if _, ok := lightVerbs[terms[0]]; !ok {
			t.Errorf("%q (%q) is not a light verb", w, terms[0])
		}
	}
	for _, w := range strings.Fields("good golang gift target maker keeper outcome comedy teller talkative description shareholder") {
		for _, term := range Tokenize(w) {
			if _, ok := lightVerbs[term]; ok {
				t.Errorf("%q (%q) taken for a light verb", w, term)
			}
		}
	}
}
