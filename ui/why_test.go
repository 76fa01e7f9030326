package ui

import "testing"

func TestReasonInWords(t *testing.T) {
	memory := "---\nname: release-freeze\ndescription: no deploys on Fridays\n---\n\nUse the docker-compose file; ask the carrier's desk, don't deploy by hand.\n"
	for _, c := range []struct{ reason, query, want string }{
		// The memory's word, the one the query uses when it has several.
		{"lexical match on deploi, freez", "deploying during the freeze", "lexical match on deploys, freeze"},
		{"lexical match on deploi", "deploy it", "lexical match on deploy"},
		// Compounds and their parts, apostrophes kept.
		{"lexical match on docker-compose, compos, carrier", "docker-compose carriers", "lexical match on docker-compose, compose, carrier's"},
		// A term only the query has; one neither has stays.
		{"lexical match on hotfix, zzz", "hotfixes", "lexical match on hotfixes, zzz"},
		// Other parts of the reason are left alone.
		{"lexical match on fridai; semantically close (cosine 0.91)", "friday", "lexical match on Fridays; semantically close (cosine 0.91)"},
		{"chosen by the model", "deploys", "chosen by the model"},
	} {
		if got := reasonInWords(c.reason, memory, c.query); got != c.want {
			t.Errorf("reasonInWords(%q, query %q) = %q, want %q", c.reason, c.query, got, c.want)
		}
	}
}
