// Package jsoncheck checks memdir's JSON contract: every key memdir emits
// (the --json output of every command, every web UI response, every MCP
// structured result) is snake_case, except the keys that belong to another
// program's format and keep its spelling (Claude Code's settings, hook
// protocol and transcript fields), which are listed in Foreign and in
// docs/json.md. Tests of each package that emits JSON walk the types they
// emit with BadKeys.
package jsoncheck

import (
	"encoding"
	"encoding/json"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"time"
)

// Foreign are the keys that are another program's own spelling, which
// memdir keeps: Claude Code's settings and hook protocol, and the fields
// of its transcripts and file-history records. docs/json.md lists them.
var Foreign = map[string]bool{
	// Claude Code settings (settings.json).
	"autoMemoryEnabled": true, "autoMemoryDirectory": true, "autoDreamEnabled": true,
	// Claude Code's hook protocol (a hook's standard output).
	"hookSpecificOutput": true, "hookEventName": true, "additionalContext": true, "systemMessage": true,
	// Claude Code's file history (FileHistorySnapshot, FileHistoryBackup),
	// which memdir checkpoint prints as it stores them.
	"messageId": true, "trackedFileBackups": true, "backupFileName": true, "backupTime": true,
}

var snake = regexp.MustCompile(`^[a-z0-9]+(_[a-z0-9]+)*$`)

// IsSnake reports whether key is snake_case: lower-case letters and
// digits, words joined by single underscores.
func IsSnake(key string) bool { return snake.MatchString(key) }

// BadKeys returns the JSON keys of the types of values (walked through
// struct fields, pointers, slices, arrays and map values) that are neither
// snake_case nor Foreign, each as "Type.Field: key", sorted. Maps with
// string keys are not checked key by key: their keys are data. Where a
// value holds an interface (a field of type any), the type of what it
// holds is walked too. A type with its own MarshalJSON is checked on the
// values given, by the keys of every object its JSON holds, as
// "Type (MarshalJSON): key".
func BadKeys(values ...any) []string {
	w := walker{seen: map[reflect.Type]bool{}, bad: map[string]bool{}, dynamic: map[reflect.Type]bool{}, visiting: map[reflect.Type]bool{}}
	for _, v := range values {
		w.walk(reflect.TypeOf(v))
		w.walkValue(reflect.ValueOf(v))
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
	// dynamic caches whether a type can hold an interface, whose
	// content only the value shows.
	dynamic  map[reflect.Type]bool
	visiting map[reflect.Type]bool
}

var (
	rawMessage = reflect.TypeOf(json.RawMessage(nil))
	marshaler  = reflect.TypeFor[json.Marshaler]()
	textual    = reflect.TypeFor[encoding.TextMarshaler]()
	timeType   = reflect.TypeFor[time.Time]()
)

// custom reports whether t writes its own JSON: a JSON object only the
// value shows (json.Marshaler), or a string (encoding.TextMarshaler).
func custom(t reflect.Type) (object, text bool) {
	switch {
	case t.Kind() == reflect.Interface || t == rawMessage:
		return false, false // what it holds, or data
	case t == timeType:
		return false, true
	}
	if t.Implements(marshaler) || reflect.PointerTo(t).Implements(marshaler) {
		return true, false
	}
	return false, t.Implements(textual) || reflect.PointerTo(t).Implements(textual)
}

func (w *walker) walk(t reflect.Type) {
	if t == nil || w.seen[t] || t == rawMessage {
		return
	}
	w.seen[t] = true
	if object, text := custom(t); object || text {
		return
	}
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Array, reflect.Map:
		w.walk(t.Elem())
	case reflect.Struct:
		for i := range t.NumField() {
			f := t.Field(i)
			if !encoded(f) {
				continue
			}
			tag := f.Tag.Get("json")
			name, _, _ := strings.Cut(tag, ",")
			if name == "" && f.Anonymous {
				w.walk(f.Type) // embedded: its fields are promoted
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

// encoded reports whether encoding/json writes f: an exported field, or
// an embedded struct (or pointer to one) whose fields it promotes, unless
// tagged "-".
func encoded(f reflect.StructField) bool {
	if f.Tag.Get("json") == "-" {
		return false
	}
	if f.IsExported() {
		return true
	}
	t := f.Type
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return f.Anonymous && t.Kind() == reflect.Struct
}

// walkValue walks the types held in the interfaces inside v.
func (w *walker) walkValue(v reflect.Value) {
	if !v.IsValid() || !w.holdsInterface(v.Type()) {
		return
	}
	if object, _ := custom(v.Type()); object {
		w.marshaled(v)
		return
	}
	switch v.Kind() {
	case reflect.Interface:
		if !v.IsNil() {
			w.walk(v.Elem().Type())
			w.walkValue(v.Elem())
		}
	case reflect.Pointer:
		if !v.IsNil() {
			w.walkValue(v.Elem())
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			w.walkValue(v.Index(i))
		}
	case reflect.Map:
		for it := v.MapRange(); it.Next(); {
			w.walkValue(it.Value())
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if encoded(v.Type().Field(i)) {
				w.walkValue(v.Field(i))
			}
		}
	}
}

// marshaled checks the keys of the objects in the JSON v writes itself.
func (w *walker) marshaled(v reflect.Value) {
	if (v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface) && v.IsNil() {
		return
	}
	name := v.Type().String()
	if v.Kind() != reflect.Pointer && v.CanAddr() {
		v = v.Addr() // as encoding/json does, for a method on the pointer
	}
	if !v.CanInterface() {
		w.bad[name+" (MarshalJSON): not checked, being inside an embedded unexported type"] = true
		return
	}
	data, err := json.Marshal(v.Interface())
	if err != nil {
		w.bad[name+" (MarshalJSON): "+err.Error()] = true
		return
	}
	var doc any
	if err := json.Unmarshal(data, &doc); err != nil {
		return
	}
	var keys func(any)
	keys = func(x any) {
		switch x := x.(type) {
		case map[string]any:
			for k, e := range x {
				if !IsSnake(k) && !Foreign[k] {
					w.bad[name+" (MarshalJSON): "+k] = true
				}
				keys(e)
			}
		case []any:
			for _, e := range x {
				keys(e)
			}
		}
	}
	keys(doc)
}

// holdsInterface reports whether a value of type t can hold an interface,
// or a type writing its own JSON objects, in what encoding/json writes of
// it.
func (w *walker) holdsInterface(t reflect.Type) bool {
	if v, ok := w.dynamic[t]; ok {
		return v
	}
	if w.visiting[t] {
		return false // a recursive type holds one only through another field
	}
	w.visiting[t] = true
	v := w.findInterface(t)
	delete(w.visiting, t)
	// A false answer found inside a cycle may be false for the cycle's
	// sake alone: only the outermost is known.
	if v || len(w.visiting) == 0 {
		w.dynamic[t] = v
	}
	return v
}

func (w *walker) findInterface(t reflect.Type) bool {
	if object, text := custom(t); object || text {
		return object
	}
	switch t.Kind() {
	case reflect.Interface:
		return true
	case reflect.Pointer, reflect.Slice, reflect.Array, reflect.Map:
		return t != rawMessage && w.holdsInterface(t.Elem())
	case reflect.Struct:
		for i := range t.NumField() {
			if f := t.Field(i); encoded(f) && w.holdsInterface(f.Type) {
				return true
			}
		}
	}
	return false
}
