package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// helpFlags are the flags each command reads, as reviewed against its
// code: a flag a command declares but ignores (dream once listed
// --team-url, ui --embed-batch-size) fails TestHelpFlags, and so does one
// it reads but does not list.
var helpFlags = map[string][]string{
	"agent":      {"json", "keep", "project", "scope", "yes"},
	"anchors":    {"agent", "dir", "json", "project", "scope"},
	"checkpoint": {"dry-run", "from", "json", "message", "session", "stat"},
	"completion": {"agent", "dir", "project", "scope"},
	"config":     {"anthropic-base-url", "embed-base-url", "embed-batch-size", "embed-dimensions", "embed-model", "json", "manifest-tokens", "max-retries", "model", "openai-base-url", "stream", "team-repo", "team-url", "timeout"},
	"doctor":     {"agent", "compact", "dir", "fix", "json", "project", "quiet", "scope", "unused-days"},
	"dream":      {"agent", "anthropic-base-url", "dir", "force", "json", "max-retries", "model", "openai-base-url", "project", "scope", "session", "stream", "timeout"},
	"edit":       {"agent", "dir", "json", "project", "scope", "team", "type"},
	"embed":      {"agent", "dir", "embed-base-url", "embed-batch-size", "embed-dimensions", "embed-model", "json", "max-retries", "openai-base-url", "project", "quiet", "scope", "timeout"},
	"eval":       {"anthropic-base-url", "by-tag", "distractors", "embed-base-url", "embed-batch-size", "embed-dimensions", "embed-model", "json", "manifest-tokens", "max-retries", "model", "openai-base-url", "quiet", "stream", "timeout"},
	"extract":    {"agent", "anthropic-base-url", "dir", "every", "json", "max-retries", "model", "openai-base-url", "project", "scope", "session", "stream", "team", "timeout", "transcript"},
	"hook":       {"agent", "anthropic-base-url", "embed-base-url", "embed-batch-size", "embed-dimensions", "embed-model", "inject-index", "manifest-tokens", "max-retries", "model", "model-timeout", "no-checkpoint", "no-model", "openai-base-url", "pull-timeout", "stream", "team-repo", "team-url", "timeout"},
	"hooks":      {"agent", "binary", "dry-run", "inject-index", "json", "local", "no-checkpoint", "project", "user"},
	"index":      {"agent", "dir", "json", "project", "scope", "team"},
	"list":       {"agent", "dir", "json", "limit", "project", "scope", "sort", "team", "type"},
	"log":        {"agent", "dir", "json", "limit", "project", "scope"},
	"mcp":        {"agent", "anthropic-base-url", "dir", "embed-base-url", "embed-batch-size", "embed-dimensions", "embed-model", "http", "manifest-tokens", "max-retries", "model", "no-model", "openai-base-url", "project", "scope", "stream", "team", "timeout", "verbose"},
	"mv":         {"agent", "dir", "json", "project", "scope"},
	"path":       {"agent", "agent-cli", "dir", "explain", "json", "project", "scope", "team"},
	"promote":    {"anthropic-base-url", "apply", "dir", "json", "keep-memory", "max-retries", "model", "openai-base-url", "project", "stream", "timeout"},
	"prompt":     {"agent", "dir", "extra", "mode", "project", "scope", "search", "skip-index", "with-index"},
	"recall":     {"agent", "all", "anthropic-base-url", "budget", "dir", "embed-base-url", "embed-batch-size", "embed-dimensions", "embed-model", "json", "manifest", "manifest-tokens", "max", "max-retries", "model", "no-cache", "no-model", "openai-base-url", "project", "quiet", "scope", "stream", "surfaced", "timeout", "tools", "used"},
	"review":     {"agent", "all", "dir", "json", "project", "scope"},
	"rm":         {"agent", "dir", "json", "project", "scope"},
	"save":       {"agent", "body", "create", "description", "dir", "file", "json", "name", "project", "scope", "team", "type"},
	"serve":      {"addr", "db", "json", "log-format", "max-entries", "mcp", "mcp-dir", "name", "org", "read-only", "repo"},
	"session":    {"anthropic-base-url", "force", "json", "max-retries", "max-tokens", "max-turns", "min-growth", "min-init-tokens", "min-text-messages", "min-tokens", "model", "openai-base-url", "path", "project", "session", "stream", "threshold", "timeout", "tool-calls", "transcript"},
	"settings":   {"json", "project"},
	"show":       {"agent", "dir", "json", "project", "scope"},
	"status":     {"json", "project"},
	"sync":       {"debounce", "dir", "edit", "json", "ours", "project", "quiet", "repo", "team-dir", "theirs", "token", "url", "v"},
	"ui":         {"addr", "agent", "anthropic-base-url", "dir", "max-retries", "model", "no-model", "open", "openai-base-url", "project", "scope", "stream", "timeout", "verbose"},
	"undo":       {"agent", "dir", "force", "json", "project", "scope"}}

// helpPage is 'memdir help NAME' as printed.
func helpPage(tb testing.TB, name string) string {
	tb.Helper()
	w := newMemWorld(tb)
	return w.ok(tb, "help", name)
}

// TestHelpFlags checks every command's help lists exactly the flags of
// helpFlags, spelled --flag as the usage lines spell them.
func TestHelpFlags(t *testing.T) {
	flagLine := regexp.MustCompile(`^  (-+)([a-z0-9-]+)`)
	for _, c := range commandList {
		page := helpPage(t, c.Name)
		got := []string{}
		if _, flags, ok := strings.Cut(page, "\nFlags:\n"); ok {
			flags, _, _ = strings.Cut(flags, "\nExit status:")
			for _, l := range strings.Split(flags, "\n") {
				m := flagLine.FindStringSubmatch(l)
				if m == nil {
					continue
				}
				if m[1] != "--" {
					t.Errorf("help %s lists %s%s: want --%s", c.Name, m[1], m[2], m[2])
				}
				got = append(got, m[2])
			}
		}
		want, ok := helpFlags[c.Name]
		if !ok {
			t.Errorf("help %s: the command is missing from helpFlags; list the flags it reads", c.Name)
			continue
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("help %s flags (-read +listed):\n%s", c.Name, diff)
		}
	}
}

// TestHelpPages checks what the manuals once drifted from: each lists
// the exit table once, doctor every kind of finding, and ui every page
// of its navigation bar.
func TestHelpPages(t *testing.T) {
	for _, c := range commandList {
		if n := strings.Count(helpPage(t, c.Name), "\nExit status:\n"); n != 1 {
			t.Errorf("help %s prints the exit table %d times", c.Name, n)
		}
	}
	src, err := filepath.Glob("../../doctor/*.go")
	if err != nil || len(src) == 0 {
		t.Fatalf("doctor sources: %v", err)
	}
	kind := regexp.MustCompile(`FindingKind = "([a-z-]+)"`)
	doctor := helpPage(t, "doctor")
	for _, f := range src {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range kind.FindAllStringSubmatch(string(data), -1) {
			if !strings.Contains(doctor, "\n  "+m[1]+" ") {
				t.Errorf("help doctor does not describe the finding %s", m[1])
			}
		}
	}
	html, err := os.ReadFile("../../ui/assets/index.html")
	if err != nil {
		t.Fatal(err)
	}
	ui := helpPage(t, "ui")
	pages := regexp.MustCompile(`data-page="[a-z]+">([^<]+)</a>`).FindAllStringSubmatch(string(html), -1)
	if len(pages) < 8 {
		t.Fatalf("found %d pages in the UI's navigation bar", len(pages))
	}
	for _, m := range pages {
		if !strings.Contains(ui, "\n  "+m[1]+" ") {
			t.Errorf("help ui does not describe the page %s", m[1])
		}
	}
}
