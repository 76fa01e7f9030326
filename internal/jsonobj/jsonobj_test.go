package jsonobj

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestEditKeepsOrderAndValues(t *testing.T) {
	t.Parallel()
	in := "\ufeff{\n  \"b\": 1e2,\n  \"a\": {\"x\": 1.50},\n  \"b\": 3\n}\n"
	o, err := Parse([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := o.Get("b"); err == nil || !strings.Contains(err.Error(), "twice") {
		t.Errorf("Get of a repeated key: %v", err)
	}
	o = o.Set("b", json.RawMessage("true")).Set("c", Value("<&>")).Delete("zzz")
	want := "{\n  \"b\": true,\n  \"a\": {\n    \"x\": 1.50\n  },\n  \"c\": \"<&>\"\n}\n"
	if got := string(o.Render()); got != want {
		t.Errorf("Render = %q, want %q", got, want)
	}
	if got := string(Object(nil).Render()); got != "{}\n" {
		t.Errorf("empty object renders as %q", got)
	}
}

func TestParseErrors(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"[1]":           "not a JSON object (it is an array)",
		"{\"a\":1,}":    "not valid JSON: line 1",
		"{\n\"a\":\n}":  "not valid JSON: line 3",
		`{"a":1} {}`:    "after top-level value",
		"   ":           "",
		`"just a text"`: "it is a string",
	} {
		_, err := Parse([]byte(in))
		switch {
		case want == "" && err != nil:
			t.Errorf("Parse(%q) = %v, want an empty object", in, err)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
			t.Errorf("Parse(%q) = %v, want an error mentioning %q", in, err, want)
		}
	}
}
