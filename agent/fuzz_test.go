package agent

import (
	"context"
	"encoding/json"
	"io/fs"
	"path"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzResolve checks that every project path the checks accept is local,
// and that reading it never shows what lies outside the project.
func FuzzResolve(f *testing.F) {
	for _, s := range []string{"a.txt", "../outside/secret.txt", "leak.txt", "%2e%2e/outside", "．．/x", "/etc/passwd", `a\..\b`, ".github/x"} {
		f.Add(s)
	}
	p, _ := testProject(f, map[string]string{"a.txt": "hello\n"})
	f.Fuzz(func(t *testing.T, name string) {
		rel, err := p.resolve(ToolReadFile, "path", name)
		if err == nil && rel != "." {
			if !filepath.IsLocal(rel) || !fs.ValidPath(rel) || strings.ContainsAny(rel, "\\\x00") {
				t.Fatalf("resolve(%q) accepted %q", name, rel)
			}
		}
		in, _ := json.Marshal(map[string]string{"path": name})
		out, err := p.readFile(context.Background(), in)
		if strings.Contains(out, "TOPSECRET") || (err != nil && strings.Contains(err.Error(), "TOPSECRET")) {
			t.Fatalf("read_file %q showed the outside file", name)
		}
	})
}

// FuzzGlob checks the matcher against itself: a walk only enters
// directories mayMatchBelow accepts, so every ancestor of a matching path
// must be accepted, or matches would be lost. A pattern without special
// characters matches only itself.
func FuzzGlob(f *testing.F) {
	for _, s := range [][2]string{
		{"**/*.go", "a/b/c.go"}, {"a/**/b", "a/x/b"}, {"{a,b}/*", "b/c"}, {"[!a-c]?", "dz"},
		{`\*`, "*"}, {"*a*b", "xaxb"}, {"a/b", "a/b"}, {"**", "x"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, pattern, name string) {
		g, err := compileGlob(pattern)
		if err != nil || !fs.ValidPath(name) || name == "." {
			return
		}
		matched := g.match(name)
		if matched {
			for d := path.Dir(name); d != "."; d = path.Dir(d) {
				if !g.mayMatchBelow(d) {
					t.Fatalf("%q matches %q but the walk would not enter %q", pattern, name, d)
				}
			}
		}
		if !strings.ContainsAny(pattern, `*?[]{}\`) && fs.ValidPath(pattern) && matched != (pattern == name) {
			t.Fatalf("literal %q matching %q = %v", pattern, name, matched)
		}
	})
}

// FuzzProjectTools sends arbitrary input to every project tool: each must
// answer (an error is fine), and no answer may show the file outside the
// project that a link points at.
func FuzzProjectTools(f *testing.F) {
	for _, s := range []string{
		`{"path":"leak.txt"}`, `{"pattern":"TOP","path":"."}`, `{"pattern":"**/*"}`, `{"path":"src"}`,
		`{"path":"a.txt","offset":2,"limit":1}`, `{"pattern":"(","glob":"[x"}`, `[]`, `{"path":"%2e%2e"}`,
	} {
		for tool := range uint8(4) {
			f.Add(tool, s)
		}
	}
	p, _ := testProject(f, map[string]string{"a.txt": "one\ntwo\n", "src/b.go": "package b\n"})
	p.lim.walkEntries = 50
	f.Fuzz(func(t *testing.T, tool uint8, input string) {
		name := projectToolNames[int(tool)%len(projectToolNames)]
		out, err := toolFuncs[name](p, context.Background(), []byte(input))
		if err != nil {
			out = err.Error()
		}
		if out == "" || strings.Contains(out, "TOPSECRET") {
			t.Fatalf("%s %q answered %q", name, input, out)
		}
	})
}
