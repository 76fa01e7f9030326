package memdir

import (
	"bytes"
	"context"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/memdir/memdir/anchors"
	"github.com/memdir/memdir/internal/mdtext"
)

// Anchors returns the memory's recorded anchors (nil when it has none).
func (m *Memory) Anchors() ([]anchors.Anchor, error) {
	v := scalarString(mapGet(m.front, anchors.Key))
	if v == "" {
		return nil, nil
	}
	return anchors.Parse(v)
}

// SetAnchors records anchors in the memory's frontmatter, replacing any
// there; none removes the key. Other keys keep their order.
func (m *Memory) SetAnchors(as []anchors.Anchor) {
	front := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	found := false
	if m.front != nil {
		for i := 0; i+1 < len(m.front.Content); i += 2 {
			k, v := m.front.Content[i], m.front.Content[i+1]
			if k.Value == anchors.Key {
				found = true
				if len(as) == 0 {
					continue
				}
				v = strNode(anchors.Format(as))
			}
			front.Content = append(front.Content, k, v)
		}
	}
	if !found && len(as) > 0 {
		front.Content = append(front.Content, strNode(anchors.Key), strNode(anchors.Format(as)))
	}
	m.front = front
}

// StaleAnchors checks the memory file's content for recorded anchors whose
// files changed or went away since, with c (whose Root is the project);
// nil when c has no root or the content records no anchors.
func StaleAnchors(ctx context.Context, content []byte, c *anchors.Checker) []anchors.Stale {
	if c.Root == "" || !bytes.Contains(content, []byte(anchors.Key+":")) {
		return nil
	}
	m, _ := ParseMemory(content)
	as, err := m.Anchors()
	if err != nil || len(as) == 0 {
		return nil
	}
	return c.Check(ctx, as)
}

// ProjectRoot returns the project root the directory records anchors
// against, "" when it has none.
func (d *Dir) ProjectRoot() string { return d.project }

// findAnchors finds the anchors m names in the directory's project; ok is
// false when the directory has no project root (anchors off).
func (d *Dir) findAnchors(ctx context.Context, m *Memory) (as []anchors.Anchor, ok bool) {
	if d.project == "" {
		return nil, false
	}
	return anchors.Find(ctx, d.project, m.Description+"\n"+m.Body), true
}

// AnchorContent records anchors in a memory file's content written by other
// means than Save (the memory tool, so extraction, dream, MCP and the
// Anthropic memory tool): the frontmatter's anchors line is set, replaced
// or removed, and every other byte is left as written. Content without
// frontmatter, or whose frontmatter does not parse, is returned unchanged.
func AnchorContent(ctx context.Context, root string, content []byte) []byte {
	if root == "" {
		return content
	}
	m, prob := ParseMemory(content)
	if prob != nil || !m.HasFrontmatter() {
		return content
	}
	as := anchors.Find(ctx, root, m.Description+"\n"+m.Body)
	old, _ := m.Anchors()
	if len(as) == 0 && len(old) == 0 {
		return content
	}
	text := string(content)
	front, _, ok := mdtext.SplitFrontmatter(text)
	if !ok || strings.Contains(text, "\r") {
		return content
	}
	fstart := strings.Index(text, front)
	lines := strings.SplitAfter(front, "\n")
	value := anchors.Format(as)
	if !isPlainSafe(value) {
		value = yamlDoubleQuote(value)
	}
	newLine := anchors.Key + ": " + value + "\n"
	replaced := false
	for i, l := range lines {
		if strings.HasPrefix(l, anchors.Key+":") {
			if len(as) == 0 {
				newLine = ""
			}
			lines[i], replaced = newLine, true
			break
		}
	}
	if !replaced {
		if len(as) == 0 {
			return content
		}
		if n := len(lines); n > 0 && lines[n-1] == "" {
			lines[n-1] = newLine
		} else {
			lines = append(lines, newLine)
		}
	}
	out := text[:fstart] + strings.Join(lines, "") + text[fstart+len(front):]
	// Keep the result only if it still reads as the same memory.
	if m2, prob := ParseMemory([]byte(out)); prob != nil || m2.Name != m.Name || m2.Description != m.Description || m2.Body != m.Body {
		return content
	}
	return []byte(out)
}
