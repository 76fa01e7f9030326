package mcpserver_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/mcpserver"
)

// FuzzMemoryPathFromURI checks that no URI a client sends resolves to a path
// outside the memory directory, and that the URIs the server hands out name
// the paths they came from.
func FuzzMemoryPathFromURI(f *testing.F) {
	for _, s := range []string{
		"memdir://memory/feedback_testing.md",
		"memdir://memory/team/project_release.md",
		"memdir://memory/../x.md",
		"memdir://memory/%2e%2e/x.md",
		"memdir://memory/%252e%252e%252fx.md",
		"memdir://memory/%EF%BC%8E%EF%BC%8E%EF%BC%8Fx.md",
		"memdir://memory/a/./b/../c.md",
		"memdir://memory/%00.md",
		"memdir://memory/C:%5cx.md",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, uri string) {
		rel, err := mcpserver.MemoryPathFromURI(uri)
		if err != nil {
			return
		}
		if !filepath.IsLocal(filepath.FromSlash(rel)) || strings.Contains(rel, `\`) {
			t.Fatalf("%q resolved to %q, not local", uri, rel)
		}
		for part := range strings.SplitSeq(rel, "/") {
			if part == ".." || part == "." || strings.HasPrefix(part, ".") {
				t.Fatalf("%q resolved to %q, with segment %q", uri, rel, part)
			}
		}
		if again, err := memdir.CleanMemoryFilePath(rel); err != nil || again != rel {
			t.Fatalf("%q resolved to %q, which CleanMemoryFilePath turns into %q, %v", uri, rel, again, err)
		}
		if back, err := mcpserver.MemoryPathFromURI(mcpserver.MemoryURI(rel)); err != nil || back != rel {
			t.Fatalf("%q → %q → %s → %q, %v", uri, rel, mcpserver.MemoryURI(rel), back, err)
		}
	})
}
