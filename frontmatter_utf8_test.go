package memdir

import (
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

func TestFormatKeepsNonBMPLiteral(t *testing.T) {
	t.Parallel()
	src := "---\nname: old\ndescription: d\ntype: project\ntags:\n  - \"\\U0001F3AF goal\"\n  - plain\nnote: 'a \\U0001F680 stays text'\n---\n\nbody\n"
	m, prob := ParseMemory([]byte(src))
	if prob != nil {
		t.Fatal(prob)
	}
	m.Name = "🚀 launch"
	m.Description = "ship it 🎉, 日本語 and é"
	out := string(m.Format())
	if strings.Contains(out, `\U0001F680 launch`) || strings.Contains(out, `\U0001F389`) || strings.Contains(out, `\U0001F3AF`) {
		t.Errorf("Format escaped characters outside the BMP:\n%s", out)
	}
	for _, want := range []string{"🚀 launch", "🎉", "🎯 goal", `a \U0001F680 stays text`} {
		if !strings.Contains(out, want) {
			t.Errorf("Format output lacks %q:\n%s", want, out)
		}
	}
	back, prob := ParseMemory([]byte(out))
	if prob != nil {
		t.Fatalf("the output does not parse: %v\n%s", prob, out)
	}
	if back.Name != m.Name || back.Description != m.Description {
		t.Errorf("round trip: name %q, description %q", back.Name, back.Description)
	}
	// The frontmatter stays YAML any parser reads the same way.
	var front map[string]any
	fm := strings.TrimPrefix(out, "---\n")
	fm = fm[:strings.Index(fm, "---\n")]
	if err := yaml.Unmarshal([]byte(fm), &front); err != nil {
		t.Fatalf("frontmatter is not YAML: %v\n%s", err, fm)
	}
	if front["name"] != "🚀 launch" || front["note"] != `a \U0001F680 stays text` {
		t.Errorf("decoded frontmatter %v", front)
	}
	if tags, _ := front["tags"].([]any); len(tags) != 2 || tags[0] != "🎯 goal" {
		t.Errorf("tags = %v", front["tags"])
	}
	// A value holding the placeholder range itself is kept as it is.
	m.Name = "\ue000🚀"
	if back, _ := ParseMemory(m.Format()); back.Name != "\ue000🚀" {
		t.Errorf("name with a private-use character came back as %q", back.Name)
	}
}
