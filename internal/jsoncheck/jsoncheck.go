// Package jsoncheck checks memdir's JSON contract: every key memdir emits
// (the --json output of every command, every web UI response, every MCP
// structured result) is snake_case, except the keys that belong to another
// program's format and keep its spelling (Claude Code's settings, hook
// protocol and transcript fields), which are listed in Foreign and in
// docs/json.md. Tests of each package that emits JSON walk the types they
// emit with BadKeys.
package jsoncheck

import (
	"encoding/json"
	"reflect"
	"regexp"
	"sort"
	"strings"
)

// Foreign are the keys that are another program's own spelling, which
// memdir keeps: Claude Code's settings and hook protocol, and the fields
// of its transcripts and file-history records. docs/json.md lists them.
var Foreign = map[string]bool{
	// Claude Code settings (settings.json).
	"autoMemoryEnabled": true, "autoMemoryDirectory": true, "autoDreamEnabled": true,
	// Claude Code's hook protocol (a hook's standard output).
	"hookSpecificOutput": true, "hookEventName": true, "additionalContext": true, "systemMessage": true,
}

var snake = regexp.MustCompile(`^[a-z0-9]+(_[a-z0-9]+)*$`)

// IsSnake reports whether key is snake_case: lower-case letters and
// digits, words joined by single underscores.
func IsSnake(key string) bool { return snake.MatchString(key) }

// BadKeys returns the JSON keys of the types of values (walked through
// struct fields, pointers, slices, arrays and map values) that are neither
// snake_case nor Foreign, each as "Type.Field: key", sorted. Maps with
// string keys are not checked key by key: their keys are data.
func BadKeys(values ...any) []string {
	w := walker{seen: map[reflect.Type]bool{}, bad: map[string]bool{}}
	for _, v := range values {
		w.walk(reflect.TypeOf(v))
	}
	out := make([]string, 0, len(w.bad))
	for k := range w.bad {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

type walker struct {
	seen map[reflect.Type]bool
	bad  map[string]bool
}

var rawMessage = reflect.TypeOf(json.RawMessage(nil))

func (w *walker) walk(t reflect.Type) {
	if t == nil || w.seen[t] || t == rawMessage {
		return
	}
	w.seen[t] = true
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Array, reflect.Map:
		w.walk(t.Elem())
	case reflect.Struct:
		for i := range t.NumField() {
			f := t.Field(i)
			tag := f.Tag.Get("json")
			if tag == "-" {
				continue
			}
			name, _, _ := strings.Cut(tag, ",")
			if name == "" && f.Anonymous {
				// Embedded, exported or not: encoding/json promotes its
				// exported fields.
				w.walk(f.Type)
				continue
			}
			if !f.IsExported() {
				continue
			}
			if name == "" {
				name = f.Name
			}
			if !IsSnake(name) && !Foreign[name] {
				w.bad[t.String()+"."+f.Name+": "+name] = true
			}
			w.walk(f.Type)
		}
	}
}
