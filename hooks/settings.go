package hooks

import (
	"bytes"
	"encoding/json"
	"fmt"
	"github.com/memdir/memdir/internal/jsonobj"
)

// Entry is one handler memdir installs: the event it answers, the matcher
// of its group ("" for none, which matches everything), and the command
// with its timeout.
type Entry struct {
	Event   string
	Matcher string
	Command string
	// Timeout is in the program's unit (seconds for Claude Code and Codex,
	// milliseconds for Gemini); 0 leaves the key out (the default).
	Timeout int
	// Name is the handler's name, for programs that name hooks (Gemini
	// lists names to skip in hooksConfig.disabled); "" leaves the key out.
	Name string
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
	root, err := jsonobj.Parse(data)
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

	raw, at, err := root.Get("hooks")
	if err != nil {
		return nil, nil, err
	}
	var events jsonobj.Object
	if at >= 0 {
		if events, err = jsonobj.Parse(raw); err != nil {
			return nil, nil, fmt.Errorf("key hooks: %w", err)
		}
	}
	emptiedByUs := false
	var out jsonobj.Object
	for _, ev := range events {
		groups, err := jsonobj.ParseArray(ev.Value)
		if err != nil {
			return nil, nil, fmt.Errorf("key hooks.%s: %w", ev.Key, err)
		}
		newGroups, removedAll, err := editEvent(ev.Key, groups, want[ev.Key], ch)
		if err != nil {
			return nil, nil, err
		}
		delete(want, ev.Key)
		if removedAll {
			continue
		}
		out = append(out, jsonobj.Member{Key: ev.Key, Value: newGroups})
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
		out = append(out, jsonobj.Member{Key: name, Value: groups})
	}
	if len(out) == 0 && len(events) > 0 {
		emptiedByUs = true
	}
	switch {
	case at >= 0 && emptiedByUs:
		root = append(root[:at:at], root[at+1:]...)
	case at >= 0:
		root[at].Value = out.Marshal()
	case len(out) > 0:
		root = append(root, jsonobj.Member{Key: "hooks", Value: out.Marshal()})
	}
	return root.Render(), ch, nil
}

// editEvent rewrites one event's groups: memdir handlers are updated in
// place when their group's matcher is one an entry wants, and removed
// otherwise; entries left over get new groups at the end. removedAll is
// true when the event had groups and memdir's removals left none.
func editEvent(event string, groups []json.RawMessage, entries []Entry, ch *Changes) (json.RawMessage, bool, error) {
	placed := make([]bool, len(entries))
	var out []json.RawMessage
	for _, g := range groups {
		group, err := jsonobj.Parse(g)
		if err != nil {
			out = append(out, g) // not a group memdir wrote: keep it as it is
			continue
		}
		hraw, hat, err := group.Get("hooks")
		if err != nil || hat < 0 {
			out = append(out, g)
			continue
		}
		handlers, err := jsonobj.ParseArray(hraw)
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
			if bytes.Equal(jsonobj.Compact(nh), jsonobj.Compact(h)) {
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
			group[hat].Value = jsonobj.MarshalArray(kept)
			out = append(out, group.Marshal())
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
	return jsonobj.MarshalArray(out), false, nil
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
func groupMatcher(g jsonobj.Object) string {
	raw, at, err := g.Get("matcher")
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
	h, err := jsonobj.Parse(raw)
	if err != nil {
		return nil, err
	}
	if e.Name != "" {
		h = h.Set("name", jsonobj.Value(e.Name))
	}
	h = h.Set("type", jsonobj.Value("command"))
	h = h.Set("command", jsonobj.Value(e.Command))
	if e.Timeout > 0 {
		h = h.Set("timeout", jsonobj.Value(e.Timeout))
	} else {
		h = h.Delete("timeout")
	}
	h = h.Delete("args")
	return h.Marshal(), nil
}

func newGroup(e Entry) json.RawMessage {
	var h jsonobj.Object
	if e.Name != "" {
		h = append(h, jsonobj.Member{Key: "name", Value: jsonobj.Value(e.Name)})
	}
	h = append(h, jsonobj.Member{Key: "type", Value: jsonobj.Value("command")}, jsonobj.Member{Key: "command", Value: jsonobj.Value(e.Command)})
	if e.Timeout > 0 {
		h = append(h, jsonobj.Member{Key: "timeout", Value: jsonobj.Value(e.Timeout)})
	}
	var g jsonobj.Object
	if e.Matcher != "" {
		g = append(g, jsonobj.Member{Key: "matcher", Value: jsonobj.Value(e.Matcher)})
	}
	return append(g, jsonobj.Member{Key: "hooks", Value: jsonobj.MarshalArray([]json.RawMessage{h.Marshal()})}).Marshal()
}

// Compact returns data with insignificant whitespace removed, for comparing
// settings files up to formatting.
func Compact(data []byte) ([]byte, error) {
	var b bytes.Buffer
	err := json.Compact(&b, bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")))
	return b.Bytes(), err
}

// Installed returns memdir's handlers in a settings file (or Codex's
// hooks.json), in file order, as the entries that would install them:
// event, group matcher, command, timeout (0 when absent or not a whole
// number) and name.
func Installed(data []byte) ([]Entry, error) {
	var out []Entry
	err := eachMemdirHandler(data, func(event string, group, handler int, matcher string, h json.RawMessage) {
		v := decodeHandler(h)
		out = append(out, Entry{Event: event, Matcher: matcher, Command: v.Command, Timeout: v.timeout, Name: v.Name})
	})
	return out, err
}

// handlerFields are the keys of a command handler memdir reads back.
type handlerFields struct {
	Command       string          `json:"command"`
	Timeout       json.RawMessage `json:"timeout"`
	Name          string          `json:"name"`
	StatusMessage string          `json:"statusMessage"`
	// timeout is Timeout as a whole number, 0 when absent or not one.
	timeout int
}

func decodeHandler(h json.RawMessage) handlerFields {
	var v handlerFields
	json.Unmarshal(h, &v)
	json.Unmarshal(v.Timeout, &v.timeout)
	return v
}

// eachMemdirHandler calls fn for every memdir handler of a settings file,
// with its event, the indexes of its group in the event's list and of the
// handler in the group's, and the group's matcher. Groups and handlers
// that are not objects are skipped, as Install keeps them.
func eachMemdirHandler(data []byte, fn func(event string, group, handler int, matcher string, h json.RawMessage)) error {
	root, err := jsonobj.Parse(data)
	if err != nil {
		return err
	}
	raw, at, err := root.Get("hooks")
	if err != nil || at < 0 {
		return err
	}
	events, err := jsonobj.Parse(raw)
	if err != nil {
		return fmt.Errorf("key hooks: %w", err)
	}
	for _, ev := range events {
		groups, err := jsonobj.ParseArray(ev.Value)
		if err != nil {
			return fmt.Errorf("key hooks.%s: %w", ev.Key, err)
		}
		for gi, g := range groups {
			group, err := jsonobj.Parse(g)
			if err != nil {
				continue
			}
			hraw, hat, err := group.Get("hooks")
			if err != nil || hat < 0 {
				continue
			}
			handlers, err := jsonobj.ParseArray(hraw)
			if err != nil {
				continue
			}
			for hi, h := range handlers {
				if isMemdirHandler(h) {
					fn(ev.Key, gi, hi, groupMatcher(group), h)
				}
			}
		}
	}
	return nil
}

// Restore undoes an install exactly when nothing else changed since: when
// current is byte for byte what install makes of backup (the file before
// memdir's last change of it, nil when there was none) with the handlers
// current holds, and backup holds no memdir handler, the file is put back
// as backup was, or removed when there was no backup (install created
// it). ok is false otherwise, and the caller removes memdir's handlers
// one by one instead.
func Restore(current, backup []byte, hadBackup bool, install func(data []byte, entries []Entry) ([]byte, error)) (restored []byte, remove, ok bool) {
	entries, err := Installed(current)
	if err != nil || len(entries) == 0 {
		return nil, false, false
	}
	if hadBackup {
		if old, err := Installed(backup); err != nil || len(old) > 0 {
			return nil, false, false
		}
	}
	redo, err := install(backup, entries)
	if err != nil || !bytes.Equal(redo, current) {
		return nil, false, false
	}
	return backup, !hadBackup, true
}
