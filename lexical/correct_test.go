package lexical_test

import (
	"slices"
	"testing"

	"github.com/memdir/memdir/lexical"
)

var correctDocs = []lexical.Doc{
	{ID: "festival.md", Name: "jazz-festival", Description: "Went to the jazz festival by the river", Body: "The jazz festival was loud."},
	{ID: "limiter.md", Name: "rate-limiter", Description: "The rate limiter drops bursts over 100 requests a second", Body: "Tune the rate limiter in gateway.yaml."},
	{ID: "education.md", Name: "education-budget", Description: "The team's education budget covers one conference a year", Body: "Ask before booking."},
	{ID: "kid.md", Name: "kid-school", Description: "The kid starts school in May", Body: "School starts."},
	{ID: "other.md", Name: "other", Description: "Nothing to do with any of it", Body: "Coffee and tea."},
	{ID: "lamp.md", Name: "lamp", Description: "The night light in the hall is broken", Body: "A new bulb."},
}

// TestSearchCorrectsUnknownTerms checks that a query term no document
// holds is mended into the word one edit away, or the two words, that
// the documents use, and that a short or already typed one is left alone.
func TestSearchCorrectsUnknownTerms(t *testing.T) {
	t.Parallel()
	mem := lexical.New(correctDocs, nil)
	seg, err := lexical.Load(segment(t, mem), nil)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		query string
		first string   // "" for no hit
		terms []string // the first hit's matched terms
	}{
		{"when was the fesitval?", "festival.md", []string{"festival"}},                // two letters swapped
		{"the eduction budget", "education.md", []string{"educat", "budget"}},          // a missing one, met through the stem
		{"where is the ratelimiter config", "limiter.md", []string{"rate", "limiter"}}, // one word for two
		{"the kidd", "", nil},   // too short to mend
		{"turn right", "", nil}, // not "light": the first letter is kept
		{"the jazz festival, or festivl?", "festival.md", []string{"jazz", "festival"}}, // its mend is typed already
	}
	for name, x := range map[string]*lexical.Index{"in memory": mem, "loaded": seg} {
		for _, tt := range tests {
			hits := x.Search(tt.query, 3)
			if tt.first == "" {
				if len(hits) != 0 {
					t.Errorf("%s: %q: first hit %s, want none", name, tt.query, hits[0].ID)
				}
				continue
			}
			if len(hits) == 0 || hits[0].ID != tt.first {
				t.Errorf("%s: %q: hits %v, want %s first", name, tt.query, hits, tt.first)
				continue
			}
			if !slices.Equal(hits[0].Terms, tt.terms) {
				t.Errorf("%s: %q: matched %v, want %v", name, tt.query, hits[0].Terms, tt.terms)
			}
		}
	}
	// A mend scores but covers nothing: whether the index answers the
	// query at all is judged on the words as typed.
	if hits := mem.Search("fesitval", 1); len(hits) != 1 || hits[0].ID != "festival.md" || hits[0].Coverage != 0 {
		t.Errorf("a mended term alone: hits %v, want festival.md with coverage 0", hits)
	}
	// The term left unmended still counts as one no document holds.
	if hits := mem.Search("jazz festival festivl", 1); len(hits) == 0 || hits[0].Coverage > 0.9 {
		t.Errorf("unmended term: hits %v, want coverage below 0.9", hits)
	}
	// A query full of unknown words (a pasted log) tries only its first
	// four: a typo past them is left as typed.
	noise := "qwxzvb plmokn zzyzxq vbnmqw"
	if hits := mem.Search(noise+" fesitval", 1); len(hits) != 0 {
		t.Errorf("a typo after four unknown words: hits %v, want none", hits)
	}
	if hits := mem.Search("qwxzvb plmokn zzyzxq fesitval vbnmqw", 1); len(hits) != 1 || hits[0].ID != "festival.md" {
		t.Errorf("a typo among the first four unknown words: hits %v, want festival.md", hits)
	}
}
