package secrets

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// FuzzRedact checks, for any input, that Scan and Redact do not panic, that
// Redact leaves nothing any rule matches, and that the keyword search Scan
// relies on finds every match a search at every byte offset finds.
//
// The seed corpus holds the generated vectors (added here, so that no
// token-shaped string is stored) and the near misses in testdata/fuzz.
func FuzzRedact(f *testing.F) {
	pos, neg := vectors()
	for _, p := range pos {
		f.Add(p.text())
		f.Add(p.pre + p.secret[:len(p.secret)/2])
	}
	for _, n := range neg {
		f.Add(n.text)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ms := Scan(s)
		if len(s) <= 4096 {
			if diff := cmp.Diff(scanEverywhere(s), ms); diff != "" {
				t.Errorf("Scan disagrees with a search at every offset (-want +got):\n%s", diff)
			}
		}

		out := Redact(s)
		if got := Scan(out); got != nil {
			t.Errorf("Scan(Redact(s)) = %v, want nil\nredacted: %q", got, out)
		}
		if again := Redact(out); again != out {
			t.Errorf("Redact is not idempotent:\nonce:  %q\ntwice: %q", out, again)
		}
		if ms == nil && out != s {
			t.Errorf("Redact changed text in which Scan found nothing:\n%q\n%q", s, out)
		}
		// A URL password may be shorter than the marker, so the text may
		// grow; what is outside the markers never does.
		if outside := len(strings.ReplaceAll(out, Marker, "")); outside > len(s) {
			t.Errorf("Redact grew the text outside its markers from %d to %d bytes", len(s), outside)
		}
	})
}

// scanEverywhere is Scan without the keyword search: it tries every rule at
// every byte offset. It is the reference for the fuzz test.
func scanEverywhere(s string) []Match {
	var ms []Match
	for _, r := range Rules() {
		found := false
		for p := 0; p <= len(s) && !found; p++ {
			if p > 0 && r.edge.has(s[p-1]) {
				continue
			}
			end, _, _, ok := r.match(s, p)
			found = ok && !(end < len(s) && r.edge.has(s[end]))
		}
		if found {
			ms = append(ms, Match{RuleID: r.ID, Label: r.Label})
		}
	}
	return ms
}
