package lexical_test

import (
	"testing"

	"github.com/memdir/memdir/lexical"
)

// TestLightVerbsWeighLess checks that a light verb ("go") or a reporting
// verb ("said") in a question counts less than the word the question is
// about, even where it is the rarer of the two, and that the verb still
// counts: with nothing else to match, it finds its memory.
func TestLightVerbsWeighLess(t *testing.T) {
	t.Parallel()
	filler := []lexical.Doc{
		{ID: "park.md", Name: "park", Description: "Played in the park all afternoon", Body: "Park."},
		{ID: "bake.md", Name: "baking", Description: "Baked bread on Sunday", Body: "Bread."},
	}
	for _, c := range []struct {
		verb         lexical.Doc // the one memory that holds the verb
		topic        []lexical.Doc
		query, alone string
	}{
		{
			verb: lexical.Doc{ID: "leave.md", Name: "leave", Description: "Is going on leave after the release", Body: "Back in June."},
			topic: []lexical.Doc{
				{ID: "offsite.md", Name: "offsite-plan", Description: "The offsite is in Lisbon this year", Body: "Two days of planning."},
				{ID: "offsite_budget.md", Name: "offsite-budget", Description: "Budget for the offsite dinner", Body: "Save receipts."},
			},
			query: "when do we go to the offsite?", alone: "where did they go?",
		},
		{
			verb: lexical.Doc{ID: "standup.md", Name: "standup", Description: "Priya said the demo slipped a week", Body: "Standup notes."},
			topic: []lexical.Doc{
				{ID: "agency.md", Name: "adoption-agency", Description: "Looked into adoption agencies in Oslo", Body: "Two of them called back."},
				{ID: "fees.md", Name: "agency-fees", Description: "The agency fees are due in March", Body: "Pay by card."},
			},
			query: "what was said about the agency?", alone: "what was said?",
		},
	} {
		docs := append(append([]lexical.Doc{c.verb}, c.topic...), filler...)
		x := lexical.New(docs, &lexical.Options{Feedback: -1, Coordination: -1})
		hits := x.Search(c.query, 5)
		if len(hits) < 2 || hits[0].ID == c.verb.ID {
			t.Errorf("%q: hits %v, want a memory of the topic first, above %s, which only holds the verb", c.query, hits, c.verb.ID)
		}
		if hits := x.Search(c.alone, 1); len(hits) != 1 || hits[0].ID != c.verb.ID {
			t.Errorf("%q, the verb alone: hits %v, want %s", c.alone, hits, c.verb.ID)
		}
	}
}
