package memdir

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// ProvenanceKey is the frontmatter key that records how a memory was
// written. Claude Code reads only description and type from frontmatter and
// ignores other keys; memdir keeps unknown keys on rewrite, and team sync
// carries the whole file, so the record travels with the memory.
const ProvenanceKey = "provenance"

// Who wrote a memory: the values of Provenance.By.
const (
	ByUser       = "user"       // a person, through the CLI or the UI
	ByAgent      = "agent"      // a model, through a tool (MCP server, memory tool)
	ByExtraction = "extraction" // the background extraction agent
	ByDream      = "dream"      // the consolidation agent
	BySync       = "sync"       // a team sync pull
)

// Provenance records how a memory was last written. It is stored in the
// frontmatter as one flow mapping line, e.g.
//
//	provenance: {by: extraction, session: 5f1c…, position: 42, untrusted: [WebFetch]}
//
// so it stays within the 30 lines Claude Code reads for frontmatter.
type Provenance struct {
	// By is one of ByUser, ByAgent, ByExtraction, ByDream, BySync.
	By string `yaml:"by" json:"by"`
	// Via names the interface: "cli", "ui", "mcp", "memory-tool".
	Via string `yaml:"via,omitempty" json:"via,omitempty"`
	// Session is the Claude Code session id an extraction read.
	Session string `yaml:"session,omitempty" json:"session,omitempty"`
	// Position is where in the transcript the extraction stopped reading
	// (the uuid of the last message it saw).
	Position string `yaml:"position,omitempty" json:"position,omitempty"`
	// Server is the team server a sync pull came from.
	Server string `yaml:"server,omitempty" json:"server,omitempty"`
	// Version is the server's version of the entry a sync pull wrote.
	Version string `yaml:"version,omitempty" json:"version,omitempty"`
	// At is when the write happened, RFC 3339 in UTC.
	At string `yaml:"at,omitempty" json:"at,omitempty"`
	// Untrusted lists the sources of untrusted content the writer had read
	// before writing (tool names such as WebFetch or WebSearch, or
	// "file:<path>" for a file outside the project). Empty means none known.
	Untrusted []string `yaml:"untrusted,omitempty" json:"untrusted,omitempty"`
}

// Automatic reports whether the write was made by a program rather than by
// a person: such writes are held for review when screening flags them.
func (p *Provenance) Automatic() bool { return p != nil && p.By != ByUser }

// Validate checks By.
func (p *Provenance) Validate() error {
	switch p.By {
	case ByUser, ByAgent, ByExtraction, ByDream, BySync:
	default:
		return fmt.Errorf("provenance: by %q is not one of user, agent, extraction, dream, sync: %w", p.By, ErrInvalid)
	}
	fields := []struct{ name, value string }{{"via", p.Via}, {"session", p.Session}, {"position", p.Position}, {"server", p.Server}, {"version", p.Version}, {"at", p.At}}
	for _, u := range p.Untrusted {
		fields = append(fields, struct{ name, value string }{"untrusted", u})
	}
	for _, f := range fields {
		if err := checkUTF8("provenance: the "+f.name, f.value); err != nil {
			return err
		}
	}
	return nil
}

// String is a short human description: "extraction (session 5f1c, position 42), untrusted: WebFetch".
func (p *Provenance) String() string {
	if p == nil {
		return "unknown"
	}
	s := p.By
	var parts []string
	for _, kv := range [][2]string{{"via", p.Via}, {"session", p.Session}, {"position", p.Position}, {"server", p.Server}, {"version", p.Version}} {
		if kv[1] != "" {
			parts = append(parts, kv[0]+" "+kv[1])
		}
	}
	if len(parts) > 0 {
		s += " (" + strings.Join(parts, ", ") + ")"
	}
	if len(p.Untrusted) > 0 {
		s += ", untrusted: " + strings.Join(p.Untrusted, ", ")
	}
	return s
}

// Provenance returns the memory's recorded provenance, or nil when it has
// none (written before memdir recorded it, or by hand with an editor) or the
// key cannot be read as one.
func (m *Memory) Provenance() *Provenance {
	n := mapGet(m.front, ProvenanceKey)
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	var p Provenance
	if err := n.Decode(&p); err != nil || p.By == "" {
		return nil
	}
	return &p
}

// SetProvenance records p in the memory's frontmatter, replacing any earlier
// record, and keeps every other key. A nil p removes the record.
func (m *Memory) SetProvenance(p *Provenance) {
	if m.front == nil {
		m.front = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	}
	c := m.front.Content
	for i := 0; i+1 < len(c); i += 2 {
		if c[i].Value == ProvenanceKey {
			c = slices.Delete(c, i, i+2)
			break
		}
	}
	m.front.Content = c
	if p == nil {
		return
	}
	var v yaml.Node
	if err := v.Encode(p.validText()); err != nil {
		// A struct of valid strings always encodes.
		panic(fmt.Sprintf("memdir: encoding provenance: %v", err))
	}
	v.Style = yaml.FlowStyle
	for _, n := range v.Content {
		if n.Kind == yaml.SequenceNode {
			n.Style = yaml.FlowStyle
		}
	}
	m.front.Content = append(m.front.Content, strNode(ProvenanceKey), &v)
}

// validText is p with any invalid UTF-8 made valid (Validate refuses it;
// other callers get U+FFFD in its place, not a failure).
func (p *Provenance) validText() *Provenance {
	q := *p
	for _, s := range []*string{&q.By, &q.Via, &q.Session, &q.Position, &q.Server, &q.Version, &q.At} {
		*s = strings.ToValidUTF8(*s, "\uFFFD")
	}
	q.Untrusted = make([]string, len(p.Untrusted))
	for i, u := range p.Untrusted {
		q.Untrusted[i] = strings.ToValidUTF8(u, "\uFFFD")
	}
	if len(q.Untrusted) == 0 {
		q.Untrusted = nil
	}
	return &q
}

// StampProvenance returns content with p recorded in its frontmatter, for
// writers that produce whole files (the memory tool, sync). Content without
// a frontmatter block (MEMORY.md, notes) is returned unchanged with false.
func StampProvenance(content []byte, p *Provenance) ([]byte, bool) {
	m, prob := ParseMemory(content)
	if prob != nil || !m.HasFrontmatter() {
		return content, false
	}
	m.SetProvenance(p)
	return m.Format(), true
}

// Stamped returns a copy of p with At set to now when p leaves it empty.
func (p *Provenance) Stamped(now time.Time) *Provenance {
	q := *p
	if q.At == "" {
		q.At = now.UTC().Format(time.RFC3339)
	}
	q.Untrusted = slices.Clone(p.Untrusted)
	return &q
}
