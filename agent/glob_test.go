package agent

import (
	"strings"
	"testing"
)

func TestGlobMatch(t *testing.T) {
	for _, tc := range []struct {
		pattern, name string
		want          bool
	}{
		{"*.go", "main.go", true},
		{"*.go", "src/main.go", false},
		{"*.go", "main.go.txt", false},
		{"**/*.go", "main.go", true},
		{"**/*.go", "a/b/c.go", true},
		{"**/*.go", "a/b/c.mod", false},
		{"src/**", "src", true},
		{"src/**", "src/a/b", true},
		{"src/**", "srcx/a", false},
		{"**", "anything/at/all", true},
		{"a/**/b", "a/b", true},
		{"a/**/b", "a/x/y/b", true},
		{"a/**/b", "a/x/y/c", false},
		{"a/**/**/b", "a/x/b", true},
		{"**/x/**/y", "p/x/q/r/y", true},
		{"**/x/**/y", "p/x/q/r/z", false},
		{"*.{go,mod}", "go.mod", true},
		{"*.{go,mod}", "go.sum", false},
		{"{src,docs}/*.md", "docs/a.md", true},
		{"{src,docs}/*.md", "lib/a.md", false},
		{"a{b,c{d,e}}f", "acef", true},
		{"a{b,c{d,e}}f", "acf", false},
		{"x{,.bak}", "x", true},
		{"x{,.bak}", "x.bak", true},
		{"?.md", "a.md", true},
		{"?.md", "ab.md", false},
		{"?.md", "é.md", true},
		{"[abc].md", "b.md", true},
		{"[abc].md", "d.md", false},
		{"[!abc].md", "b.md", false},
		{"[!abc].md", "d.md", true},
		{"[^abc].md", "d.md", true},
		{"[a-c]x", "bx", true},
		{"[a-c]x", "dx", false},
		{"[]]x", "]x", true},
		{"[!]]x", "]x", false},
		{"[a\\-]x", "-x", true},
		{`\*.md`, "*.md", true},
		{`\*.md`, "a.md", false},
		{`\{a,b\}`, "{a,b}", true},
		{"*", ".env", true},
		{"*", "", false},
		{"*a*b*c", "xaybzc", true},
		{"*a*b*c", "xaybzcd", false},
		{"*a*b*c", "abcabc", true},
		{"a*", "a", true},
		{"a**b", "axxb", true},
		{"a**b", "ax/b", false},
		{"**/.github/**", "x/.github/w.yml", true},
		{"./src/*.go", "src/a.go", true},
		{"src//x", "src/x", true},
		{"README.md", "README.md", true},
		{"README.md", "readme.md", false},
	} {
		g, err := compileGlob(tc.pattern)
		if err != nil {
			t.Errorf("compileGlob(%q): %v", tc.pattern, err)
			continue
		}
		if got := g.match(tc.name); got != tc.want {
			t.Errorf("%q matching %q = %v, want %v", tc.pattern, tc.name, got, tc.want)
		}
	}
}

// mayMatchBelow decides which directories a walk enters.
func TestGlobMayMatchBelow(t *testing.T) {
	for _, tc := range []struct {
		pattern, dir string
		want         bool
	}{
		{"src/*.go", "src", true},
		{"src/*.go", "docs", false},
		{"src/*.go", "src/sub", false},
		{"**/*.go", "any/depth/at/all", true},
		{"a/**/b", "a", true},
		{"a/**/b", "a/x/y", true},
		{"a/**/b", "b", false},
		{"{src,docs}/x", "docs", true},
		{"{src,docs}/x", "lib", false},
		{"*/x", "anything", true},
		{"*/x", "a/b", false},
	} {
		g, err := compileGlob(tc.pattern)
		if err != nil {
			t.Fatal(err)
		}
		if got := g.mayMatchBelow(tc.dir); got != tc.want {
			t.Errorf("%q below %q = %v, want %v", tc.pattern, tc.dir, got, tc.want)
		}
	}
}

func TestGlobCompileErrors(t *testing.T) {
	for _, tc := range []struct{ pattern, want string }{
		{"", "empty"},
		{"[abc", "not closed"},
		{"a\\", "backslash"},
		{"{a,b", `"{" without`},
		{"a}", `"}" without`},
		{"../x", `".."`},
		{"[z-a]", "backwards"},
		{"/", "no segment"},
		{strings.Repeat("{a,b}", 9), "more than 256 alternatives"},
		{strings.Repeat("x", 2000), "longer than"},
		{"\xff", "UTF-8"},
	} {
		_, err := compileGlob(tc.pattern)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("compileGlob(%.20q) = %v, want an error saying %q", tc.pattern, err, tc.want)
		}
	}
}

// Patterns built to make naive backtracking explode still answer; the test
// would hang rather than fail if matching were exponential.
func TestGlobHostilePatterns(t *testing.T) {
	name := strings.Repeat("a", 5000)
	g, err := compileGlob(strings.Repeat("*a", 40) + "b")
	if err != nil {
		t.Fatal(err)
	}
	if g.match(name) {
		t.Error("matched a name without b")
	}
	deep := strings.Repeat("x/", 300) + "y"
	g, err = compileGlob(strings.Repeat("**/x/", 30) + "z")
	if err != nil {
		t.Fatal(err)
	}
	if g.match(deep) {
		t.Error("matched a path not ending in z")
	}
}

func BenchmarkGlobMatch(b *testing.B) {
	g, err := compileGlob("**/internal/**/*_{test,bench}.go")
	if err != nil {
		b.Fatal(err)
	}
	names := []string{"a/b/internal/c/d/x_test.go", "a/b/c/d/e/f.go", "internal/y_bench.go", "cmd/memdir/main.go"}
	for b.Loop() {
		for _, n := range names {
			g.match(n)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(names)), "ns/path")
}
