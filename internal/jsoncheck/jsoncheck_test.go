package jsoncheck

import (
	"encoding/json"
	"testing"
	"time"

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

type event struct {
	Kind   string `json:"kind"`
	Result any    `json:"result"`
	Next   *event `json:"next,omitempty"`
}

// What an interface holds is only known from the value: BadKeys walks it.
func TestBadKeysInInterfaces(t *testing.T) {
	want := []string{"jsoncheck.inner.Bad: badKey"}
	for _, v := range []any{
		event{Kind: "a", Result: &inner{}},
		event{Next: &event{Result: []any{map[string]any{"data key": inner{}}}}},
	} {
		if diff := cmp.Diff(want, BadKeys(v)); diff != "" {
			t.Errorf("BadKeys(%#v) (-want +got):\n%s", v, diff)
		}
	}
	if got := BadKeys(event{}, map[string]any{"anyKey": 1}); len(got) != 0 {
		t.Errorf("BadKeys of nothing held = %q, want none (map keys are data)", got)
	}
}

type own struct{ Name string }

func (own) MarshalJSON() ([]byte, error) {
	return []byte(`{"fine":1,"notFine":{"deepKey":[{"ok":2}]}}`), nil
}

// A type writing its own JSON is checked on the JSON it writes.
func TestBadKeysMarshalJSON(t *testing.T) {
	type holder struct {
		Own  own             `json:"own"`
		Ptr  *own            `json:"ptr"`
		Raw  json.RawMessage `json:"raw"`
		When time.Time       `json:"when"`
	}
	want := []string{"jsoncheck.own (MarshalJSON): deepKey", "jsoncheck.own (MarshalJSON): notFine"}
	if diff := cmp.Diff(want, BadKeys(holder{Raw: json.RawMessage(`{"dataKey":1}`)})); diff != "" {
		t.Errorf("BadKeys (-want +got):\n%s", diff)
	}
	if got := BadKeys(holder{}.Ptr); len(got) != 0 {
		t.Errorf("BadKeys(nil *own) = %q, want none", got)
	}
}

type promoted struct {
	Fine string `json:"fine"`
	Bad  string `json:"Bad"`
}

// encoding/json promotes the fields of embedded unexported structs.
func TestBadKeysEmbeddedUnexported(t *testing.T) {
	type out struct {
		promoted
		*inner
	}
	want := []string{"jsoncheck.inner.Bad: badKey", "jsoncheck.promoted.Bad: Bad"}
	if diff := cmp.Diff(want, BadKeys(out{})); diff != "" {
		t.Errorf("BadKeys (-want +got):\n%s", diff)
	}
}
