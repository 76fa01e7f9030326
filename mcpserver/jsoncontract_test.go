package mcpserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"testing"

	"github.com/memdir/memdir/internal/jsoncheck"
	"github.com/memdir/memdir/mcpserver"
)

// Every tool's structured result follows the JSON contract (docs/json.md):
// the server is asked for its tools, so a new tool cannot be missed, and
// the property names of each output schema (which the SDK infers from the
// tool's output type) are checked at every depth; the output types are
// walked too.
func TestToolOutputsAreSnakeCase(t *testing.T) {
	cs := newFixture(t, nil).connect(t)
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Tools) == 0 {
		t.Fatal("the server lists no tools")
	}
	for _, tool := range res.Tools {
		if tool.OutputSchema == nil {
			t.Errorf("tool %s has no output schema: its result is not a typed struct", tool.Name)
			continue
		}
		data, err := json.Marshal(tool.OutputSchema)
		if err != nil {
			t.Fatal(err)
		}
		var schema map[string]any
		if err := json.Unmarshal(data, &schema); err != nil {
			t.Fatal(err)
		}
		var bad []string
		schemaKeys(schema, tool.Name, &bad)
		sort.Strings(bad)
		for _, b := range bad {
			t.Errorf("tool output %s: not snake_case", b)
		}
	}
	if bad := jsoncheck.BadKeys(mcpserver.MemoryOutput{}, mcpserver.RecallOutput{}, mcpserver.SaveOutput{}, mcpserver.ForgetOutput{}); len(bad) > 0 {
		t.Errorf("output types with keys not snake_case: %q", bad)
	}
}

// schemaKeys adds to bad the property names of schema (and of the schemas
// inside it) that are neither snake_case nor jsoncheck.Foreign.
func schemaKeys(schema map[string]any, at string, bad *[]string) {
	if props, ok := schema["properties"].(map[string]any); ok {
		for name, sub := range props {
			if !jsoncheck.IsSnake(name) && !jsoncheck.Foreign[name] {
				*bad = append(*bad, fmt.Sprintf("%s.%s", at, name))
			}
			if s, ok := sub.(map[string]any); ok {
				schemaKeys(s, at+"."+name, bad)
			}
		}
	}
	for _, key := range []string{"items", "additionalProperties"} {
		if s, ok := schema[key].(map[string]any); ok {
			schemaKeys(s, at+"[]", bad)
		}
	}
	for _, key := range []string{"$defs", "definitions"} {
		if defs, ok := schema[key].(map[string]any); ok {
			for name, sub := range defs {
				if s, ok := sub.(map[string]any); ok {
					schemaKeys(s, at+"#"+name, bad)
				}
			}
		}
	}
	for _, key := range []string{"anyOf", "oneOf", "allOf"} {
		if list, ok := schema[key].([]any); ok {
			for _, sub := range list {
				if s, ok := sub.(map[string]any); ok {
					schemaKeys(s, at, bad)
				}
			}
		}
	}
}
