package memdir

import (
	"bytes"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/memdir/memdir/internal/mdtext"
)

// Type is a memory's kind. Claude Code knows exactly four; a file with any
// other type, or none, is untyped and still works.
type Type string

// The four memory types.
const (
	TypeUser      Type = "user"      // who the user is: role, goals, knowledge
	TypeFeedback  Type = "feedback"  // corrections and confirmations of how to work
	TypeProject   Type = "project"   // ongoing work, decisions, incidents not derivable from the code
	TypeReference Type = "reference" // pointers to external systems
)

// Types lists the memory types in Claude Code's order.
var Types = []Type{TypeUser, TypeFeedback, TypeProject, TypeReference}

// ParseType returns the type named exactly (case-sensitively) by s, or "" if
// s names none of the four.
func ParseType(s string) Type {
	// The constants, not s: s is usually a slice of the file's text, which
	// a header's type would otherwise keep alive (a scan of 100,000
	// memories held every file's first 30 lines through it).
	switch Type(s) {
	case TypeUser:
		return TypeUser
	case TypeFeedback:
		return TypeFeedback
	case TypeProject:
		return TypeProject
	case TypeReference:
		return TypeReference
	}
	return ""
}

// Memory is one memory file.
type Memory struct {
	// Path is the file's slash-separated path relative to the memory
	// directory, e.g. "feedback_testing.md" or "team/oncall.md".
	Path string
	// Name is for people and models; the file name is what identifies a memory.
	Name string
	// Description is the one line that recall uses to judge relevance.
	Description string
	// Type is the parsed type, "" when missing or not one of the four.
	Type Type
	// RawType is the type exactly as written, so an unknown type survives
	// a rewrite and can be reported.
	RawType string
	// Body is the Markdown after the frontmatter.
	Body string
	// ModTime is the file's modification time (zero for a memory not yet saved).
	ModTime time.Time

	// front keeps the frontmatter as parsed, so keys memdir does not manage
	// (metadata, modified, anything a user added) survive a rewrite in order.
	front *yaml.Node
}

// FrontmatterMaxLines is how many lines of a file Claude Code reads to find its
// frontmatter when scanning.
const FrontmatterMaxLines = 30

// FrontmatterProblem reports frontmatter that could not be read as written.
type FrontmatterProblem struct {
	// Recovered is true when the YAML only parsed after quoting simple
	// "key: value" lines; false when the frontmatter was treated as empty.
	Recovered bool
	Err       error
}

func (p *FrontmatterProblem) Error() string {
	if p.Recovered {
		return fmt.Sprintf("frontmatter is not valid YAML (read after quoting its values): %v", p.Err)
	}
	return fmt.Sprintf("frontmatter is not valid YAML and was ignored: %v", p.Err)
}

// ParseMemory parses a memory file's content. It never fails: frontmatter that
// is missing, unclosed or broken yields empty fields, and a non-nil problem
// says what was wrong. A UTF-8 byte order mark and CRLF line ends are accepted.
func ParseMemory(content []byte) (*Memory, *FrontmatterProblem) {
	front, body, ok := splitMemory(content)
	m := &Memory{Body: body}
	if !ok {
		return m, nil
	}
	node, prob := parseFrontmatterYAML(front)
	m.setFront(node)
	return m, prob
}

// MemoryBody returns the body of a memory file's content, as ParseMemory
// gives it, without parsing the frontmatter: for a reader that has the
// header already (the recall index reads it with HeaderOf) and wants only
// the text to index.
func MemoryBody(content []byte) string {
	_, body, _ := splitMemory(content)
	return body
}

// splitMemory normalises content and splits it into frontmatter (ok false
// when there is none) and body.
func splitMemory(content []byte) (front, body string, ok bool) {
	text := mdtext.Normalize(content)
	front, bodyStart, ok := mdtext.SplitFrontmatter(text)
	if !ok {
		return "", text, false
	}
	return front, text[bodyStart:], true
}

// parseFrontmatterYAML returns the frontmatter's top-level mapping, or nil.
func parseFrontmatterYAML(src string) (*yaml.Node, *FrontmatterProblem) {
	if strings.TrimSpace(src) == "" {
		return nil, nil
	}
	if fields, ok := parseSimpleFrontmatter(src); ok {
		return fields, nil
	}
	node, err := decodeMapping(src)
	if err == nil {
		return node, nil
	}
	if quoted, changed := quoteSimpleValues(src); changed {
		if node, err2 := decodeMapping(quoted); err2 == nil {
			return node, &FrontmatterProblem{Recovered: true, Err: err}
		}
	}
	return nil, &FrontmatterProblem{Err: err}
}

func decodeMapping(src string) (*yaml.Node, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(src), &doc); err != nil {
		return nil, err
	}
	if doc.Kind == 0 {
		return nil, nil
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, fmt.Errorf("frontmatter is not a mapping of keys to values")
	}
	return doc.Content[0], nil
}

var simpleLineRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_.-]*):[ \t]+(.*)$`) })

// quoteSimpleValues double-quotes the value of every top-level "key: value"
// line that is not already quoted or structured, which rescues the common
// mistake of an unquoted colon or '#' in a description.
func quoteSimpleValues(src string) (string, bool) {
	lines := strings.Split(src, "\n")
	changed := false
	for i, line := range lines {
		m := simpleLineRe().FindStringSubmatch(line)
		if m == nil {
			continue
		}
		v := strings.TrimSpace(m[2])
		if v == "" || strings.ContainsAny(v[:1], `"'[{|>&*!`) {
			continue
		}
		lines[i] = m[1] + ": " + yamlDoubleQuote(v)
		changed = true
	}
	return strings.Join(lines, "\n"), changed
}

func yamlDoubleQuote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20:
			fmt.Fprintf(&b, "\\x%02x", r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// parseSimpleFrontmatter reads frontmatter whose every line is "key: plain
// value" with nothing YAML would interpret differently from the literal text.
// It is the fast path for the usual memory file; anything else goes to the
// YAML parser, so the result is always what YAML would give.
func parseSimpleFrontmatter(src string) (*yaml.Node, bool) {
	node := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	ok := simpleFields(src, func(key, val string, style yaml.Style) {
		v := strNode(val)
		v.Style = style
		node.Content = append(node.Content, strNode(key), v)
	})
	if !ok {
		return nil, false
	}
	return node, true
}

// simpleFields calls field with the key, value and quoting style of each
// line of src when every line is "key: plain value" (or a whole-line
// quoted value needing no escapes) that YAML reads as its literal text,
// keys unique; it reports false, having called field for some lines or
// none, when one is not.
func simpleFields(src string, field func(key, val string, style yaml.Style)) bool {
	var seenArr [8]string
	seen := seenArr[:0]
	for line := range strings.SplitSeq(strings.TrimRight(src, "\n"), "\n") {
		if strings.Trim(line, " ") == "" {
			continue
		}
		for i := 0; i < len(line); i++ {
			// Tabs, lone CRs (YAML line breaks) and other controls: leave
			// them to the YAML parser.
			if line[i] < 0x20 || line[i] == 0x7f {
				return false
			}
		}
		colon := strings.Index(line, ": ")
		if colon <= 0 {
			return false
		}
		key := line[:colon]
		if !isSimpleKey(key) || slices.Contains(seen, key) {
			return false
		}
		seen = append(seen, key)
		val := strings.TrimSpace(line[colon+2:])
		if q, style, ok := simpleQuoted(val); ok {
			field(key, q, style)
			continue
		}
		if !isPlainSafe(val) {
			return false
		}
		field(key, val, 0)
	}
	return true
}

// headerFields is what a scan's header takes from a memory's text.
type headerFields struct {
	name, desc, rawType string
	hasFront            bool
}

// parseHeaderFields reads text, normalised as by mdtext.Normalize, as
// ParseMemory reads it, for the fields a header holds: a scan of 100,000
// memories built a yaml.Node for every key and value to read three of
// them (a fifth of what a first index build allocated).
func parseHeaderFields(text string) (headerFields, *FrontmatterProblem) {
	front, _, ok := mdtext.SplitFrontmatter(text)
	if !ok || strings.TrimSpace(front) == "" {
		return headerFields{}, nil
	}
	var f headerFields
	if simpleFields(front, func(key, val string, _ yaml.Style) {
		f.hasFront = true
		switch key {
		case "name":
			f.name = val
		case "description":
			f.desc = val
		case "type":
			f.rawType = val
		}
	}) {
		// A plain "metadata: x" is a scalar: it holds no type.
		return f, nil
	}
	m := &Memory{}
	node, prob := parseFrontmatterYAML(front)
	m.setFront(node)
	return headerFields{m.Name, m.Description, m.RawType, m.HasFrontmatter()}, prob
}

func isSimpleKey(k string) bool {
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !(isASCIIAlnum(c) || c == '_' || c == '-') || (i == 0 && c == '-') {
			return false
		}
	}
	return k != ""
}

// isPlainSafe reports whether YAML reads s, as a plain scalar, as exactly the
// string s.
func isPlainSafe(s string) bool {
	if s == "" || strings.ContainsAny(s[:1], "-?:,[]{}#&*!|>'\"%@`") {
		return false
	}
	if strings.Contains(s, ": ") || strings.Contains(s, " #") || strings.HasSuffix(s, ":") {
		return false
	}
	// YAML's words for null, booleans and special floats, in any case: none
	// is longer than 5 bytes, so a longer value (most descriptions) is
	// neither lowered nor copied.
	if len(s) <= 5 {
		for _, w := range [...]string{"null", "~", "true", "false", "yes", "no", "on", "off", "y", "n", ".nan", ".inf", "-.inf", "+.inf"} {
			if strings.EqualFold(s, w) {
				return false
			}
		}
	}
	// Anything that starts like a number could resolve to an int, float or
	// timestamp.
	if c := s[0]; c >= '0' && c <= '9' || c == '+' || c == '.' {
		return false
	}
	return true
}

// simpleQuoted decodes a whole-line quoted scalar that needs no YAML
// parser: single-quoted (a doubled quote stands for one), or double-quoted without
// backslash escapes. Anything else (text after the closing quote, an
// escape) is left to the parser.
func simpleQuoted(s string) (string, yaml.Style, bool) {
	if len(s) < 2 {
		return "", 0, false
	}
	switch q := s[0]; {
	case q == '\'' && s[len(s)-1] == '\'':
		inner := s[1 : len(s)-1]
		if strings.Count(inner, "'")%2 != 0 || strings.Contains(strings.ReplaceAll(inner, "''", ""), "'") {
			return "", 0, false
		}
		return strings.ReplaceAll(inner, "''", "'"), yaml.SingleQuotedStyle, true
	case q == '"' && s[len(s)-1] == '"':
		inner := s[1 : len(s)-1]
		if strings.ContainsAny(inner, "\\\"") {
			return "", 0, false
		}
		return inner, yaml.DoubleQuotedStyle, true
	}
	return "", 0, false
}

func strNode(s string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s}
}

// mapGet returns the value node of key in a mapping node.
func mapGet(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

// scalarString returns a scalar's text; other kinds give "".
func scalarString(n *yaml.Node) string {
	if n == nil || n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		return ""
	}
	return n.Value
}

func (m *Memory) setFront(node *yaml.Node) {
	m.front = node
	if node == nil {
		return
	}
	m.Name = scalarString(mapGet(node, "name"))
	m.Description = scalarString(mapGet(node, "description"))
	// Newer Claude Code writes metadata.type; older versions and the docs
	// use a top-level type. Read both, preferring the top level.
	m.RawType = scalarString(mapGet(node, "type"))
	if m.RawType == "" {
		m.RawType = scalarString(mapGet(mapGet(node, "metadata"), "type"))
	}
	m.Type = ParseType(m.RawType)
}

// HasFrontmatter reports whether the memory was parsed with a frontmatter
// block holding at least one key.
func (m *Memory) HasFrontmatter() bool { return m.front != nil && len(m.front.Content) > 0 }

// FrontmatterString returns the text of the top-level frontmatter key as
// written, "" when the key is missing, null or not a scalar. It reads keys
// memdir does not manage, such as an agent definition's memory:.
func (m *Memory) FrontmatterString(key string) string {
	return scalarString(mapGet(m.front, key))
}

// Format renders the memory in memdir's canonical form:
//
//	---
//	name: …
//	description: …
//	type: …
//	(other keys the file already had, in their order)
//	---
//
//	body
//
// The type line is omitted for an untyped memory. Values are quoted where YAML
// needs it. A description is always one line.
func (m *Memory) Format() []byte {
	front := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	front.Content = append(front.Content, strNode("name"), strNode(mdtext.OneLine(m.Name)))
	front.Content = append(front.Content, strNode("description"), strNode(mdtext.OneLine(m.Description)))
	typ := m.RawType
	if m.Type != "" {
		typ = string(m.Type)
	}
	if typ != "" {
		front.Content = append(front.Content, strNode("type"), strNode(typ))
	}
	if m.front != nil {
		for i := 0; i+1 < len(m.front.Content); i += 2 {
			k, v := m.front.Content[i], m.front.Content[i+1]
			switch k.Value {
			case "name", "description", "type":
				continue
			case "metadata":
				// Keep metadata.type in step with the type we write.
				if t := mapGet(v, "type"); t != nil && typ != "" {
					t.Value, t.Tag, t.Style = typ, "!!str", 0
				}
			}
			front.Content = append(front.Content, k, v)
		}
	}
	if _, bad := invalidUTF8Key(front); bad {
		// Save refuses such text; for other callers it is made valid
		// rather than refused by the encoder.
		validUTF8(front)
	}
	var fm bytes.Buffer
	front, restore := literalRunes(front)
	enc := yaml.NewEncoder(&fm)
	enc.SetIndent(2)
	if err := enc.Encode(front); err != nil {
		// Nodes of valid strings always encode; a failure here is a bug.
		panic(fmt.Sprintf("memdir: encoding frontmatter: %v", err))
	}
	enc.Close()
	var buf bytes.Buffer
	buf.WriteString("---\n")
	buf.Write(restore(fm.Bytes()))
	buf.WriteString("---\n\n")
	body := strings.Trim(strings.ReplaceAll(m.Body, "\r\n", "\n"), "\n")
	buf.WriteString(body)
	if body != "" {
		buf.WriteByte('\n')
	}
	return buf.Bytes()
}

// Metadata returns the frontmatter keys other than name, description and type,
// decoded as plain values.
func (m *Memory) Metadata() map[string]any {
	out := map[string]any{}
	if m.front == nil {
		return out
	}
	for i := 0; i+1 < len(m.front.Content); i += 2 {
		k := m.front.Content[i].Value
		if k == "name" || k == "description" || k == "type" {
			continue
		}
		var v any
		if err := m.front.Content[i+1].Decode(&v); err == nil {
			out[k] = v
		}
	}
	return out
}

func isASCIIAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// cloneFront gives the memory its own copy of the frontmatter's top-level
// list, so setting a key does not change the Memory it was copied from.
func (m *Memory) cloneFront() {
	if m.front == nil {
		return
	}
	n := *m.front
	n.Content = slices.Clone(m.front.Content)
	m.front = &n
}
