package jsoncheck

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

type inner struct {
	OK   string `json:"ok_key"`
	Bad  string `json:"badKey"`
	Skip string `json:"-"`
}

type outer struct {
	inner
	Items   []inner           `json:"items"`
	ByName  map[string]*inner `json:"by_name"`
	NoTag   int
	Setting bool `json:"autoMemoryEnabled,omitempty"`
	private int
}

func TestBadKeys(t *testing.T) {
	want := []string{"jsoncheck.inner.Bad: badKey", "jsoncheck.outer.NoTag: NoTag"}
	if diff := cmp.Diff(want, BadKeys(outer{private: 1}, &outer{})); diff != "" {
		t.Errorf("BadKeys (-want +got):\n%s", diff)
	}
	for key, want := range map[string]bool{"a": true, "run_id": true, "a1_b2": true, "runID": false, "run-id": false, "_x": false, "x_": false, "a__b": false, "": false} {
		if got := IsSnake(key); got != want {
			t.Errorf("IsSnake(%q) = %v, want %v", key, got, want)
		}
	}
}
