package main

import (
	"encoding/json"
	"sort"
	"strings"
	"testing"
)

// jsonKeys decodes a JSON object and returns its keys, sorted, with the keys
// of nested objects as "outer.inner".
func jsonKeys(tb testing.TB, out string) []string {
	tb.Helper()
	var v map[string]any
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		tb.Fatalf("not a JSON object: %v\n%s", err, out)
	}
	var keys []string
	for k, x := range v {
		keys = append(keys, k)
		if m, ok := x.(map[string]any); ok {
			for k2 := range m {
				keys = append(keys, k+"."+k2)
			}
		}
	}
	sort.Strings(keys)
	return keys
}

// isSnake reports whether every key is lower snake_case.
func checkSnake(tb testing.TB, cmd string, keys []string) {
	tb.Helper()
	for _, k := range keys {
		if strings.ToLower(k) != k {
			tb.Errorf("%s --json: key %q is not snake_case (keys %v)", cmd, k, keys)
		}
	}
}

func TestSaveRmMvJSONSnakeCase(t *testing.T) {
	w := newMemWorld(t)
	out := w.ok(t, "save", "--json", "--name", "grafana", "--type", "reference", "--description", "dashboards", "--body", "grafana.internal")
	keys := jsonKeys(t, out)
	checkSnake(t, "save", keys)
	for _, want := range []string{"path", "abs_path", "created", "changed", "run_id", "index.lines", "index.chars", "index.truncated", "index_warning"} {
		if !containsString(keys, want) {
			t.Errorf("save --json lacks %q: %v", want, keys)
		}
	}
	out = w.ok(t, "mv", "--json", "reference_grafana", "reference_dash")
	keys = jsonKeys(t, out)
	checkSnake(t, "mv", keys)
	for _, want := range []string{"from", "to", "run_id"} {
		if !containsString(keys, want) {
			t.Errorf("mv --json lacks %q: %v", want, keys)
		}
	}
	out = w.ok(t, "rm", "--json", "reference_dash")
	keys = jsonKeys(t, out)
	checkSnake(t, "rm", keys)
	for _, want := range []string{"path", "index_lines", "run_id"} {
		if !containsString(keys, want) {
			t.Errorf("rm --json lacks %q: %v", want, keys)
		}
	}
	var rm struct {
		Path       string   `json:"path"`
		IndexLines []string `json:"index_lines"`
		RunID      string   `json:"run_id"`
	}
	json.Unmarshal([]byte(out), &rm)
	if rm.Path != "reference_dash.md" || len(rm.IndexLines) != 1 || rm.RunID == "" {
		t.Errorf("rm --json = %+v", rm)
	}
}
