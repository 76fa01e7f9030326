// Package jsonobj edits JSON objects without disturbing them: keys keep their
// order and values their exact text (numbers like 1e2 or 1.50 survive), which
// is what editing a person's settings file requires.
package jsonobj

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// Member is one key of an object with its value as written.
type Member struct {
	Key   string
	Value json.RawMessage
}

// Object is a JSON object that keeps its keys in order.
type Object []Member

// Parse reads a JSON object, keeping key order and raw values. Blank input
// is an empty object (Claude Code reads an empty settings file as no
// settings); a byte order mark is skipped. Errors say "not valid JSON" with
// the line, or what the value is instead of an object.
func Parse(data []byte) (Object, error) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	at := func(err error) error {
		// The decoder's offsets are not always positions in data;
		// Unmarshal's are, so it locates syntax errors.
		off := dec.InputOffset()
		var se *json.SyntaxError
		if errors.As(json.Unmarshal(data, new(any)), &se) {
			err, off = se, se.Offset
		}
		line := 1 + bytes.Count(data[:min(int(off), len(data))], []byte("\n"))
		return fmt.Errorf("not valid JSON: line %d: %v", line, err)
	}
	tok, err := dec.Token()
	if err != nil {
		return nil, at(err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, fmt.Errorf("not a JSON object (it is %s)", Kind(data))
	}
	var o Object
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, at(err)
		}
		key, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, at(err)
		}
		o = append(o, Member{key, v})
	}
	if _, err := dec.Token(); err != nil {
		return nil, at(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		if err == nil {
			err = errors.New("more data after the object")
		}
		return nil, at(err)
	}
	return o, nil
}

// ParseArray reads a JSON array into its raw elements.
func ParseArray(data json.RawMessage) ([]json.RawMessage, error) {
	var a []json.RawMessage
	if err := json.Unmarshal(data, &a); err != nil || a == nil {
		return nil, fmt.Errorf("not a JSON array (it is %s)", Kind(data))
	}
	return a, nil
}

// Kind names the kind of a JSON value for error messages.
func Kind(data []byte) string {
	var v any
	if json.Unmarshal(data, &v) != nil {
		return "not valid JSON"
	}
	switch v.(type) {
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case nil:
		return "null"
	}
	return "a number"
}

// Get returns the value of key and its index, -1 when absent. A key that
// appears twice is an error: readers disagree on which one counts.
func (o Object) Get(key string) (json.RawMessage, int, error) {
	at := -1
	for i, m := range o {
		if m.Key != key {
			continue
		}
		if at >= 0 {
			return nil, -1, fmt.Errorf("key %s appears twice", key)
		}
		at = i
	}
	if at < 0 {
		return nil, -1, nil
	}
	return o[at].Value, at, nil
}

// Set gives key the value v where it stands (or at the end when it is new).
// Repeats of the key are dropped, since readers disagree on which counts.
func (o Object) Set(key string, v json.RawMessage) Object {
	out := o[:0:0]
	done := false
	for _, m := range o {
		if m.Key != key {
			out = append(out, m)
			continue
		}
		if !done {
			out = append(out, Member{key, v})
			done = true
		}
	}
	if !done {
		out = append(out, Member{key, v})
	}
	return out
}

// Delete removes every occurrence of key.
func (o Object) Delete(key string) Object {
	out := o[:0:0]
	for _, m := range o {
		if m.Key != key {
			out = append(out, m)
		}
	}
	return out
}

// Marshal writes the object compactly.
func (o Object) Marshal() json.RawMessage {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(Value(m.Key))
		b.WriteByte(':')
		b.Write(m.Value)
	}
	b.WriteByte('}')
	return b.Bytes()
}

// MarshalArray writes raw elements as a compact array.
func MarshalArray(vs []json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	b.WriteByte('[')
	for i, v := range vs {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(v)
	}
	b.WriteByte(']')
	return b.Bytes()
}

// Value encodes a string or number without HTML escaping, so text with & or
// < stays readable.
func Value(v any) json.RawMessage {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(fmt.Sprintf("jsonobj: encoding %T: %v", v, err)) // strings and numbers always encode
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// Compact removes insignificant whitespace, for comparing values up to
// formatting; invalid JSON comes back unchanged.
func Compact(v []byte) []byte {
	var b bytes.Buffer
	if err := json.Compact(&b, bytes.TrimPrefix(v, []byte("\xef\xbb\xbf"))); err != nil {
		return v
	}
	return b.Bytes()
}

// Render indents the object with two spaces and a final newline, the way
// Claude Code (JSON.stringify(v, null, 2)) writes settings files.
func (o Object) Render() []byte {
	var b bytes.Buffer
	if err := json.Indent(&b, Compact(o.Marshal()), "", "  "); err != nil {
		// Values come from the decoder or were checked with json.Valid.
		panic(fmt.Sprintf("jsonobj: rendering: %v", err))
	}
	b.WriteByte('\n')
	return b.Bytes()
}
