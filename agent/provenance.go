package agent

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"

	"github.com/memdir/memdir/llm"
	"github.com/memdir/memdir/transcript"
)

// untrustedTools are Claude Code tools whose results carry content from
// outside the project: a memory written after reading them may repeat text
// a third party chose.
var untrustedTools = map[string]bool{"WebFetch": true, "WebSearch": true}

// untrustedSources lists what in msgs brought untrusted content into the
// conversation: web tools by name, MCP fetch/browse tools by name, and
// "file:<path>" for a Read of a file outside project (when project is set).
func untrustedSources(msgs []transcript.Message, project string) []string {
	var out []string
	add := func(s string) {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	proj := ""
	if project != "" {
		proj = filepath.Clean(project) + string(filepath.Separator)
	}
	for _, m := range msgs {
		if m.Role != llm.RoleAssistant {
			continue
		}
		for _, b := range m.Content {
			if b.Type != llm.BlockToolUse {
				continue
			}
			name := b.ToolName
			lower := strings.ToLower(name)
			switch {
			case untrustedTools[name]:
				add(name)
			case strings.HasPrefix(name, "mcp__") && (strings.Contains(lower, "fetch") || strings.Contains(lower, "browse") || strings.Contains(lower, "search_web") || strings.Contains(lower, "web")):
				add(name)
			case name == "Read" && proj != "":
				var in struct {
					FilePath string `json:"file_path"`
				}
				json.Unmarshal(b.Input, &in)
				if in.FilePath != "" && filepath.IsAbs(in.FilePath) && !strings.HasPrefix(filepath.Clean(in.FilePath)+string(filepath.Separator), proj) {
					add("file:" + filepath.Clean(in.FilePath))
				}
			}
		}
	}
	return out
}

// lastUUID is the transcript position an extraction read up to.
func lastUUID(msgs []transcript.Message) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].UUID != "" {
			return msgs[i].UUID
		}
	}
	return ""
}
