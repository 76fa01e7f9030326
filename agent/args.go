package agent

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// args decodes the JSON input of a project tool call key by key, so that a
// mistake is reported with the key's name and the keys the tool takes. The
// first problem is kept; later lookups return zero values.
type args struct {
	tool string
	keys []string
	m    map[string]json.RawMessage
	err  error
}

// parseArgs checks that input is a JSON object whose keys are all in keys.
// An empty input counts as {}.
func parseArgs(tool string, input json.RawMessage, keys ...string) *args {
	a := &args{tool: tool, keys: keys}
	in := bytes.TrimSpace(input)
	if len(in) == 0 {
		in = []byte("{}")
	}
	if !json.Valid(in) {
		a.err = fmt.Errorf("%s: the input is not valid JSON; send a JSON object with the keys %s", tool, a.keyList())
		return a
	}
	if err := json.Unmarshal(in, &a.m); err != nil || a.m == nil {
		a.err = fmt.Errorf("%s: the input must be a JSON object with the keys %s, not %s", tool, a.keyList(), jsonKind(in))
		return a
	}
	var unknown []string
	for k := range a.m {
		if !slices.Contains(keys, k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		a.err = fmt.Errorf("%s: unknown key %s; the keys are %s", tool, quoteList(unknown), a.keyList())
	}
	return a
}

func (a *args) keyList() string { return strings.Join(a.keys, ", ") }

// raw returns the value of key, or nil when it is absent or null.
func (a *args) raw(key string) json.RawMessage {
	if a.err != nil {
		return nil
	}
	v, ok := a.m[key]
	if !ok || string(v) == "null" {
		return nil
	}
	return v
}

func (a *args) fail(key, want string, v json.RawMessage) {
	got := jsonKind(v)
	if len(v) <= 40 {
		got = string(v) // short values are clearer shown as sent: "10", 1.5
	}
	a.err = fmt.Errorf("%s: key %q must be %s, not %s", a.tool, key, want, got)
}

// str returns a string value; a required key that is missing or empty is an
// error.
func (a *args) str(key string, required bool) string {
	v := a.raw(key)
	var s string
	if v != nil && json.Unmarshal(v, &s) != nil {
		a.fail(key, "a string", v)
		return ""
	}
	if required && s == "" && a.err == nil {
		a.err = fmt.Errorf("%s: the %q key is required; the keys are %s", a.tool, key, a.keyList())
	}
	return s
}

// int returns an integer value of at least lo, or def when the key is absent.
func (a *args) int(key string, def, lo int) int {
	v := a.raw(key)
	if v == nil {
		return def
	}
	var n int
	if json.Unmarshal(v, &n) != nil {
		a.fail(key, "an integer", v)
		return def
	}
	if n < lo {
		a.err = fmt.Errorf("%s: key %q must be at least %d, not %d", a.tool, key, lo, n)
		return def
	}
	return n
}

// bool returns a boolean value, false when absent.
func (a *args) bool(key string) bool {
	v := a.raw(key)
	var b bool
	if v != nil && json.Unmarshal(v, &b) != nil {
		a.fail(key, "true or false", v)
	}
	return b
}

// jsonKind names the kind of a JSON value for error messages.
func jsonKind(v []byte) string {
	v = bytes.TrimSpace(v)
	if len(v) == 0 {
		return "nothing"
	}
	switch v[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

func quoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(q, ", ")
}
