package hooks

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// Entry is one handler memdir installs: the event it answers, the matcher
// of its group ("" for none, which matches everything), and the command
// with its timeout.
type Entry struct {
	Event   string
	Matcher string
	Command string
	// Timeout is in seconds; 0 leaves the key out (Claude Code's default).
	Timeout int
}

// Install returns the settings file data with memdir's handlers set to
// entries, and a summary of what changed. Every other key, event, group
// and handler is kept, in its order. An existing memdir handler (see
// IsMemdirHook) in a group with the entry's matcher is updated in place,
// keeping any keys the user added to it; memdir handlers that match no
// entry are removed, with groups and events they leave empty. Entries
// with no handler yet get a group of their own at the end of their event.
// Installing the same entries twice gives the same bytes.
//
// Empty or blank data reads as an empty object. Data that is not a JSON
// object, or whose "hooks" is not an object of arrays, is an error naming
// the key; the caller must then leave the file alone.
func Install(data []byte, entries []Entry) ([]byte, *Changes, error) {
	return edit(data, entries)
}

// Uninstall returns the settings file data without memdir's handlers,
// dropping the groups, events and "hooks" key that only they filled. After
// Install and Uninstall, the file holds what it held before, up to
// formatting.
func Uninstall(data []byte) ([]byte, *Changes, error) {
	return edit(data, nil)
}

// Changes counts memdir handlers added, updated in place, left as they
// were, and removed, per event.
type Changes struct {
	Added, Updated, Unchanged, Removed []string
}

// Changed reports whether anything was added, updated or removed.
func (c *Changes) Changed() bool {
	return len(c.Added)+len(c.Updated)+len(c.Removed) > 0
}

func edit(data []byte, entries []Entry) ([]byte, *Changes, error) {
	root, err := parseObject(data)
	if err != nil {
		return nil, nil, err
	}
	ch := &Changes{}
	want := map[string][]Entry{}
	var order []string
	for _, e := range entries {
		if _, seen := want[e.Event]; !seen {
			order = append(order, e.Event)
		}
		want[e.Event] = append(want[e.Event], e)
	}

	raw, at, err := root.get("hooks")
	if err != nil {
		return nil, nil, err
	}
	var events object
	if at >= 0 {
		if events, err = parseObject(raw); err != nil {
			return nil, nil, fmt.Errorf("key hooks: %w", err)
		}
	}
	emptiedByUs := false
	var out object
	for _, ev := range events {
		groups, err := parseArray(ev.value)
		if err != nil {
			return nil, nil, fmt.Errorf("key hooks.%s: %w", ev.key, err)
		}
		newGroups, removedAll, err := editEvent(ev.key, groups, want[ev.key], ch)
		if err != nil {
			return nil, nil, err
		}
		delete(want, ev.key)
		if removedAll {
			continue
		}
		out = append(out, member{ev.key, newGroups})
	}
	for _, name := range order {
		es, left := want[name]
		if !left {
			continue
		}
		groups, _, err := editEvent(name, nil, es, ch)
		if err != nil {
			return nil, nil, err
		}
		out = append(out, member{name, groups})
	}
	if len(out) == 0 && len(events) > 0 {
		emptiedByUs = true
	}
	switch {
	case at >= 0 && emptiedByUs:
		root = append(root[:at:at], root[at+1:]...)
	case at >= 0:
		root[at].value = out.marshal()
	case len(out) > 0:
		root = append(root, member{"hooks", out.marshal()})
	}
	rendered, err := render(root)
	if err != nil {
		return nil, nil, err
	}
	return rendered, ch, nil
}

// editEvent rewrites one event's groups: memdir handlers are updated in
// place when their group's matcher is one an entry wants, and removed
// otherwise; entries left over get new groups at the end. removedAll is
// true when the event had groups and memdir's removals left none.
func editEvent(event string, groups []json.RawMessage, entries []Entry, ch *Changes) (json.RawMessage, bool, error) {
	placed := make([]bool, len(entries))
	var out []json.RawMessage
	for _, g := range groups {
		group, err := parseObject(g)
		if err != nil {
			out = append(out, g) // not a group memdir wrote: keep it as it is
			continue
		}
		hraw, hat, err := group.get("hooks")
		if err != nil || hat < 0 {
			out = append(out, g)
			continue
		}
		handlers, err := parseArray(hraw)
		if err != nil {
			out = append(out, g)
			continue
		}
		matcher := groupMatcher(group)
		var kept []json.RawMessage
		touched := false
		for _, h := range handlers {
			if !isMemdirHandler(h) {
				kept = append(kept, h)
				continue
			}
			touched = true
			i := nextEntry(entries, placed, matcher)
			if i < 0 {
				ch.Removed = append(ch.Removed, event)
				continue
			}
			placed[i] = true
			nh, err := updateHandler(h, entries[i])
			if err != nil {
				return nil, false, err
			}
			if bytes.Equal(compact(nh), compact(h)) {
				ch.Unchanged = append(ch.Unchanged, event)
			} else {
				ch.Updated = append(ch.Updated, event)
			}
			kept = append(kept, nh)
		}
		switch {
		case !touched:
			out = append(out, g)
		case len(kept) == 0:
			// Only memdir's handlers were here: the group goes with them.
		default:
			group[hat].value = marshalArray(kept)
			out = append(out, group.marshal())
		}
	}
	for i, e := range entries {
		if placed[i] {
			continue
		}
		out = append(out, newGroup(e))
		ch.Added = append(ch.Added, event)
	}
	if len(out) == 0 && len(groups) > 0 {
		return nil, true, nil
	}
	return marshalArray(out), false, nil
}

// nextEntry returns the first unplaced entry whose matcher is the group's.
func nextEntry(entries []Entry, placed []bool, matcher string) int {
	for i, e := range entries {
		if !placed[i] && sameMatcher(e.Matcher, matcher) {
			return i
		}
	}
	return -1
}

// groupMatcher returns a group's matcher, "" when it has none or it is not
// a string.
func groupMatcher(g object) string {
	raw, at, err := g.get("matcher")
	if err != nil || at < 0 {
		return ""
	}
	var m string
	if json.Unmarshal(raw, &m) != nil {
		return ""
	}
	return m
}

// sameMatcher treats "", "*" and no matcher alike: all three match
// everything.
func sameMatcher(a, b string) bool {
	norm := func(s string) string {
		if s == "*" {
			return ""
		}
		return s
	}
	return norm(a) == norm(b)
}

// isMemdirHandler reports whether a handler object is a command handler
// running `memdir hook`.
func isMemdirHandler(raw json.RawMessage) bool {
	var h struct {
		Type    *string  `json:"type"`
		Command *string  `json:"command"`
		Args    []string `json:"args"`
	}
	if json.Unmarshal(raw, &h) != nil || h.Command == nil {
		return false
	}
	if h.Type != nil && *h.Type != "command" {
		return false
	}
	return IsMemdirHook(*h.Command, h.Args)
}

// updateHandler sets type, command and timeout of an existing memdir
// handler to the entry's, keeping keys the user added (statusMessage,
// async...). An exec-form args list goes: the command now holds the
// arguments.
func updateHandler(raw json.RawMessage, e Entry) (json.RawMessage, error) {
	h, err := parseObject(raw)
	if err != nil {
		return nil, err
	}
	h = h.set("type", jsonValue("command"))
	h = h.set("command", jsonValue(e.Command))
	if e.Timeout > 0 {
		h = h.set("timeout", jsonValue(e.Timeout))
	} else {
		h = h.del("timeout")
	}
	h = h.del("args")
	return h.marshal(), nil
}

func newGroup(e Entry) json.RawMessage {
	h := object{{"type", jsonValue("command")}, {"command", jsonValue(e.Command)}}
	if e.Timeout > 0 {
		h = append(h, member{"timeout", jsonValue(e.Timeout)})
	}
	var g object
	if e.Matcher != "" {
		g = append(g, member{"matcher", jsonValue(e.Matcher)})
	}
	return append(g, member{"hooks", marshalArray([]json.RawMessage{h.marshal()})}).marshal()
}

// member is one key of a JSON object with its value as written.
type member struct {
	key   string
	value json.RawMessage
}

// object is a JSON object that keeps its keys in order.
type object []member

// parseObject reads a JSON object, keeping key order and raw values. Blank
// input is an empty object (Claude Code reads an empty settings file as no
// settings); a byte order mark is skipped.
func parseObject(data []byte) (object, error) {
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
		return nil, fmt.Errorf("not a JSON object (it is %s)", kindOf(data))
	}
	var o object
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
		o = append(o, member{key, v})
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

func parseArray(data json.RawMessage) ([]json.RawMessage, error) {
	var a []json.RawMessage
	if err := json.Unmarshal(data, &a); err != nil || a == nil {
		return nil, fmt.Errorf("not a JSON array (it is %s)", kindOf(data))
	}
	return a, nil
}

// kindOf names the kind of a JSON value for error messages.
func kindOf(data []byte) string {
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

// get returns the value of key and its index, -1 when absent. A key that
// appears twice is an error: readers disagree on which one counts.
func (o object) get(key string) (json.RawMessage, int, error) {
	at := -1
	for i, m := range o {
		if m.key != key {
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
	return o[at].value, at, nil
}

// set replaces key's value in place, or adds key at the end.
func (o object) set(key string, v json.RawMessage) object {
	for i := range o {
		if o[i].key == key {
			o[i].value = v
			return o
		}
	}
	return append(o, member{key, v})
}

func (o object) del(key string) object {
	out := o[:0:0]
	for _, m := range o {
		if m.key != key {
			out = append(out, m)
		}
	}
	return out
}

func (o object) marshal() json.RawMessage {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(jsonValue(m.key))
		b.WriteByte(':')
		b.Write(m.value)
	}
	b.WriteByte('}')
	return b.Bytes()
}

func marshalArray(vs []json.RawMessage) json.RawMessage {
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

// jsonValue encodes a string or number without HTML escaping, so commands
// with & or < stay readable.
func jsonValue(v any) json.RawMessage {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(fmt.Sprintf("hooks: encoding %T: %v", v, err)) // strings and ints always encode
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

func compact(v json.RawMessage) []byte {
	var b bytes.Buffer
	if err := json.Compact(&b, v); err != nil {
		return v
	}
	return b.Bytes()
}

// render indents the object with two spaces and a final newline, the way
// Claude Code writes settings files.
func render(o object) ([]byte, error) {
	var b bytes.Buffer
	if err := json.Indent(&b, compact(o.marshal()), "", "  "); err != nil {
		return nil, fmt.Errorf("internal error: rendering settings: %w", err)
	}
	b.WriteByte('\n')
	return b.Bytes(), nil
}

// Compact returns data with insignificant whitespace removed, for comparing
// settings files up to formatting.
func Compact(data []byte) ([]byte, error) {
	var b bytes.Buffer
	err := json.Compact(&b, bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")))
	return b.Bytes(), err
}
