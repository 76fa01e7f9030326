package memdir

import (
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// The YAML encoder treats characters outside the Basic Multilingual Plane
// (most emoji) as unprintable and writes them as "\U0001F680" escapes.
// Claude Code and people reading the file expect the character itself, so
// Format encodes such characters as private-use stand-ins, which the encoder
// writes as they are, and puts the real characters back in the output.

// literalRunes returns a copy of node in which every rune above U+FFFF in a
// key or value is replaced by a private-use BMP character that appears
// nowhere in the document, and a function that restores them in the encoded
// text. When node holds no such rune, or the stand-ins run out, node is
// returned unchanged with a restore that does nothing.
func literalRunes(node *yaml.Node) (*yaml.Node, func([]byte) []byte) {
	noop := func(b []byte) []byte { return b }
	used := map[rune]bool{}
	var wide []rune
	seen := map[rune]bool{}
	var walk func(n *yaml.Node)
	visited := map[*yaml.Node]bool{}
	walk = func(n *yaml.Node) {
		if n == nil || visited[n] {
			return
		}
		visited[n] = true
		for _, s := range []string{n.Value, n.Anchor, n.Tag, n.HeadComment, n.LineComment, n.FootComment} {
			for _, r := range s {
				switch {
				case isStandIn(r):
					used[r] = true
				case r > 0xFFFF && !seen[r]:
					seen[r] = true
					wide = append(wide, r)
				}
			}
		}
		for _, c := range n.Content {
			walk(c)
		}
		walk(n.Alias)
	}
	walk(node)
	if len(wide) == 0 {
		return node, noop
	}
	to := map[rune]rune{}
	var pairs []string
	next := rune(0xE000)
	for _, r := range wide {
		for next <= 0xF8FF && used[next] {
			next++
		}
		if next > 0xF8FF {
			return node, noop
		}
		to[r] = next
		pairs = append(pairs, string(next), string(r))
		next++
	}
	sub := func(s string) string {
		return strings.Map(func(r rune) rune {
			if x, ok := to[r]; ok {
				return x
			}
			return r
		}, s)
	}
	copies := map[*yaml.Node]*yaml.Node{}
	var clone func(n *yaml.Node) *yaml.Node
	clone = func(n *yaml.Node) *yaml.Node {
		if n == nil {
			return nil
		}
		if c, ok := copies[n]; ok {
			return c
		}
		c := *n
		copies[n] = &c
		c.Value = sub(n.Value)
		c.Content = make([]*yaml.Node, len(n.Content))
		for i, x := range n.Content {
			c.Content[i] = clone(x)
		}
		c.Alias = clone(n.Alias)
		return &c
	}
	back := strings.NewReplacer(pairs...)
	return clone(node), func(b []byte) []byte { return []byte(back.Replace(string(b))) }
}

func isStandIn(r rune) bool { return r >= 0xE000 && r <= 0xF8FF }

// invalidUTF8Key returns the first key of the mapping node whose key or
// value (at any depth) is not valid UTF-8 text, and whether there is one.
func invalidUTF8Key(front *yaml.Node) (string, bool) {
	if front == nil {
		return "", false
	}
	var bad func(n *yaml.Node) bool
	bad = func(n *yaml.Node) bool {
		if n == nil {
			return false
		}
		if !utf8.ValidString(n.Value) {
			return true
		}
		for _, c := range n.Content {
			if bad(c) {
				return true
			}
		}
		return false
	}
	for i := 0; i+1 < len(front.Content); i += 2 {
		if bad(front.Content[i]) || bad(front.Content[i+1]) {
			return strings.ToValidUTF8(front.Content[i].Value, "\uFFFD"), true
		}
	}
	return "", false
}

// validUTF8 replaces, in place, every invalid UTF-8 sequence in the
// node's text (at any depth) with U+FFFD, so that it encodes: the YAML
// encoder refuses invalid text.
func validUTF8(n *yaml.Node) {
	if n == nil {
		return
	}
	n.Value = strings.ToValidUTF8(n.Value, "\uFFFD")
	for _, c := range n.Content {
		validUTF8(c)
	}
}
