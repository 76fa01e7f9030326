package ui

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/memdir/memdir/internal/jsoncheck"
	"github.com/memdir/memdir/recall"
)

// answers lists, in one place, every type the API answers with: the error
// body and each endpoint's answer. handle's type parameter is the answer's
// type, so endpoints() knows them all; TestEveryAnswerIsListed keeps this
// list equal to that set, and TestAnswerKeys checks the keys of all.
var answers = []any{
	errorResponse{},
	(*sessionResponse)(nil),
	(*memoriesResponse)(nil),
	(*recall.Result)(nil),
	(*memoryResponse)(nil),
	(*saveResponse)(nil),
	(*createResponse)(nil),
	(*renameResponse)(nil),
	(*deleteResponse)(nil),
	(*undoResponse)(nil),
	(*indexResponse)(nil),
	(*fixResponse)(nil),
	(*activityResponse)(nil),
	(*runResponse)(nil),
	(*previewResponse)(nil),
	(*teamResponse)(nil),
	(*teamHistoryResponse)(nil),
	(*checkpointsResponse)(nil),
	(*checkpointDiffResponse)(nil),
	(*rewindResponse)(nil),
	(*reviewResponse)(nil),
	(*decideResponse)(nil),
}

// notAnEndpoint are listed answers no endpoint returns: the error body,
// which handle and refuse write.
var notAnEndpoint = map[reflect.Type]bool{reflect.TypeFor[errorResponse](): true}

func TestEveryAnswerIsListed(t *testing.T) {
	listed := map[reflect.Type]bool{}
	for _, v := range answers {
		listed[reflect.TypeOf(v)] = true
	}
	used := map[reflect.Type]bool{}
	for _, e := range (&Server{}).endpoints() {
		used[e.answer] = true
		if e.answer.Kind() == reflect.Interface || e.answer.Kind() == reflect.Map {
			t.Errorf("%s answers with %s: answer with a struct, whose keys a test can check", e.path, e.answer)
		}
		if !listed[e.answer] {
			t.Errorf("%s answers with %s, which is not in answers: add it there", e.path, e.answer)
		}
	}
	for typ := range listed {
		if !used[typ] && !notAnEndpoint[typ] {
			t.Errorf("answers lists %s, which no endpoint returns", typ)
		}
	}
}

func TestAnswerKeys(t *testing.T) {
	if diff := cmp.Diff([]string{}, jsoncheck.BadKeys(answers...)); diff != "" {
		t.Errorf("answers with keys that are not snake_case (-want +got):\n%s", diff)
	}
	var hidden []string
	for _, v := range answers {
		opaque(reflect.TypeOf(v), map[reflect.Type]bool{}, &hidden)
	}
	if diff := cmp.Diff([]string(nil), hidden); diff != "" {
		t.Errorf("answers hold values whose keys BadKeys cannot see (-want +got):\n%s", diff)
	}
}

var (
	marshaler = reflect.TypeFor[json.Marshaler]()
	// ownSpelling are the types with their own MarshalJSON known to write
	// no object keys.
	ownSpelling = map[reflect.Type]bool{reflect.TypeFor[time.Time](): true}
)

// opaque adds to out what in t hides JSON keys from jsoncheck.BadKeys,
// which reads struct tags: a type with its own MarshalJSON, a field of
// interface type, an embedded struct of an unexported type (whose fields
// encoding/json promotes but BadKeys skips). A map's values may be of any
// type: its keys are data, and so are its values (a memory's frontmatter).
func opaque(t reflect.Type, seen map[reflect.Type]bool, out *[]string) {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if seen[t] || ownSpelling[t] {
		return
	}
	seen[t] = true
	if t.Implements(marshaler) || reflect.PointerTo(t).Implements(marshaler) {
		*out = append(*out, t.String()+" has its own MarshalJSON")
		return
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		opaque(t.Elem(), seen, out)
	case reflect.Map:
		if t.Elem().Kind() != reflect.Interface {
			opaque(t.Elem(), seen, out)
		}
	case reflect.Interface:
		*out = append(*out, t.String()+" is an interface")
	case reflect.Struct:
		for f := range t.Fields() {
			if f.Anonymous && !f.IsExported() {
				*out = append(*out, t.String()+"."+f.Name+" embeds an unexported type")
			}
			if f.IsExported() && f.Tag.Get("json") != "-" {
				opaque(f.Type, seen, out)
			}
		}
	}
}
