package lexical_test

import (
	"testing"

	"github.com/memdir/memdir/lexical"
)

// TestLightVerbsWeighLess checks that a light verb in a question counts
// less than the word the question is about, even where it is the rarer
// of the two.
func TestLightVerbsWeighLess(t *testing.T) {
	t.Parallel()
	docs := []lexical.Doc{
		{ID: "leave.md", Name: "leave", Description: "Is going on leave after the release", Body: "Back in June."},
		{ID: "offsite.md", Name: "offsite-plan", Description: "The offsite is in Lisbon this year", Body: "Two days of planning."},
		{ID: "offsite_budget.md", Name: "offsite-budget", Description: "Budget for the offsite dinner", Body: "Save receipts."},
		{ID: "park.md", Name: "park", Description: "Played in the park all afternoon", Body: "Park."},
		{ID: "bake.md", Name: "baking", Description: "Baked bread on Sunday", Body: "Bread."},
	}
	x := lexical.New(docs, &lexical.Options{Feedback: -1, Coordination: -1})
	hits := x.Search("when do we go to the offsite?", 5)
	if len(hits) < 2 || hits[0].ID == "leave.md" {
		t.Fatalf("hits %v: want an offsite memory first, above the memory that only goes", hits)
	}
	// The verb still counts: with nothing else to match, it finds its memory.
	if hits := x.Search("where did they go?", 1); len(hits) != 1 || hits[0].ID != "leave.md" {
		t.Errorf("a light verb alone: hits %v, want leave.md", hits)
	}
}

// TestReportingVerbsWeighLess checks that a reporting verb in a question
// counts less than what the question asks about, even where it is the
// rarer of the two: the question asks about the agency, not about
// whatever was said.
func TestReportingVerbsWeighLess(t *testing.T) {
	t.Parallel()
	docs := []lexical.Doc{
		{ID: "standup.md", Name: "standup", Description: "Priya said the demo slipped a week", Body: "Standup notes."},
		{ID: "agency.md", Name: "adoption-agency", Description: "Looked into adoption agencies in Oslo", Body: "Two of them called back."},
		{ID: "fees.md", Name: "agency-fees", Description: "The agency fees are due in March", Body: "Pay by card."},
		{ID: "park.md", Name: "park", Description: "Played in the park all afternoon", Body: "Park."},
		{ID: "bake.md", Name: "baking", Description: "Baked bread on Sunday", Body: "Bread."},
	}
	x := lexical.New(docs, &lexical.Options{Feedback: -1, Coordination: -1})
	hits := x.Search("what was said about the agency?", 5)
	if len(hits) < 2 || hits[0].ID == "standup.md" {
		t.Fatalf("hits %v: want an agency memory first, above the memory that only says", hits)
	}
}
