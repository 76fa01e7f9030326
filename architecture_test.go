package memdir_test

import (
	"flag"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// The layers of the module, lowest first. A package may import packages of
// lower layers only, plus the same-layer imports listed in sameLayer. Every
// package of the module must be listed: a new package is placed here (and in
// docs/architecture.md, which mirrors this table) before it can be imported.
// Only the imports of non-test files count: tests may use anything.
var layers = []struct {
	name     string
	packages []string // import paths relative to the module ("" is the root)
}{
	{"leaves", []string{"internal/atomicfile", "internal/claudedir", "internal/errs", "internal/flock", "internal/jsonobj", "internal/jsonx", "internal/mdtext", "internal/sanitize", "internal/gitroot", "internal/jsoncheck", "internal/linediff", "internal/safeopen", "internal/codextrust", "internal/progress", "internal/prefault", "internal/uring", "team/internal/migrate", "secrets", "screen", "anchors"}},
	{"helpers", []string{"internal/evalset", "internal/memfile", "internal/statedir", "internal/framed"}},
	{"leaf services", []string{"lexical", "usage"}},
	{"vocabulary", []string{"llm"}},
	{"store", []string{""}},
	{"location", []string{"locate"}},
	{"services", []string{"prompt", "review", "recall", "doctor", "memtool", "transcript", "team", "checkpoint", "promote", "agentmem", "dailylog"}},
	{"configuration", []string{"config"}},
	{"agents", []string{"agent", "session"}},
	{"driver support", []string{"internal/modelkit", "team/internal/sqlstore", "internal/cli"}},
	{"drivers", []string{"anthropic", "openai", "config/provider", "mcpserver", "hooks", "ui", "team/sqlite", "team/postgres"}},
	{"wiring", []string{"cmd/memdir", "cmd/memdir-checkpoint", "internal/checkpointcmd", "examples/chat", "examples/mcp", "examples/memorytool"}},
	{"test support", []string{"memdirtest", "internal/benchcorpus"}},
	{"tools", []string{"bench", "bench/sqlitecmp"}},
}

// sameLayer lists the imports allowed between two packages of one layer.
var sameLayer = map[string][]string{
	"session":         {"agent"}, // a notes update is a forked-agent run
	"config/provider": {"anthropic", "openai"},
	// the checkpoint command, in both programs
	"cmd/memdir":            {"internal/checkpointcmd"},
	"cmd/memdir-checkpoint": {"internal/checkpointcmd"},
}

const modulePath = "github.com/memdir/memdir"

func TestArchitectureLayers(t *testing.T) {
	t.Parallel()
	layerOf := map[string]int{}
	for i, l := range layers {
		for _, p := range l.packages {
			if _, dup := layerOf[p]; dup {
				t.Errorf("package %q is in the layer table twice", p)
			}
			layerOf[p] = i
		}
	}
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	rel := func(path string) (string, bool) {
		if path == modulePath {
			return "", true
		}
		r, ok := strings.CutPrefix(path, modulePath+"/")
		return r, ok
	}
	seen := map[string]bool{}
	for line := range strings.Lines(string(out)) {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		pkg, _ := rel(f[0])
		seen[pkg] = true
		from, ok := layerOf[pkg]
		if !ok {
			t.Errorf("package %s is not in the layer table of architecture_test.go: place it in a layer (and in docs/architecture.md)", f[0])
			continue
		}
		for _, imp := range f[1:] {
			dep, ok := rel(imp)
			if !ok {
				continue
			}
			to, ok := layerOf[dep]
			if !ok {
				continue // reported as missing on its own line
			}
			if to < from || (to == from && slices.Contains(sameLayer[pkg], dep)) {
				continue
			}
			t.Errorf("%s (%s) imports %s (%s): a layer may import only lower layers", f[0], layers[from].name, imp, layers[to].name)
		}
	}
	for p := range layerOf {
		if !seen[p] {
			t.Errorf("the layer table lists %q, which is not a package of the module", p)
		}
	}
}

// leanPrograms are the per-turn binaries and what they must not link: each
// exists to start without these packages' initialisation (see
// docs/performance.md).
var leanPrograms = map[string][]string{
	"cmd/memdir-checkpoint": {
		modulePath, // the root: the lexical index, screens, YAML
		"github.com/anthropics/", "github.com/openai/", "modernc.org/", "github.com/jackc/",
		"github.com/modelcontextprotocol/", "net/http",
	},
}

func TestLeanProgramsStayLean(t *testing.T) {
	t.Parallel()
	for prog, banned := range leanPrograms {
		out, err := exec.Command("go", "list", "-deps", "./"+prog).Output()
		if err != nil {
			t.Fatalf("go list -deps ./%s: %v", prog, err)
		}
		for dep := range strings.Lines(string(out)) {
			dep = strings.TrimSpace(dep)
			for _, b := range banned {
				if dep == b || (strings.HasSuffix(b, "/") && strings.HasPrefix(dep, b)) {
					t.Errorf("%s links %s, which it exists to do without", prog, dep)
				}
			}
		}
	}
}

// sdkLinkers are the packages allowed to link a model provider's SDK: the
// two adapters, the package that builds a model from the configuration on
// them, and the programs. Every other package reaches models through
// package llm alone, so a host that uses neither provider links neither.
var sdkLinkers = map[string]bool{
	"anthropic": true, "openai": true, "config/provider": true,
	"cmd/memdir": true, "examples/chat": true, "examples/mcp": true, "examples/memorytool": true,
}

var sdkPrefixes = []string{"github.com/anthropics/", "github.com/openai/"}

// TestSDKsOnlyInAdapters checks, with go list -deps of every package of
// the module, that no package outside sdkLinkers links a model SDK.
func TestSDKsOnlyInAdapters(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Deps}} {{.}}{{end}}`, "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	checked := 0
	for line := range strings.Lines(string(out)) {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		pkg := strings.TrimPrefix(strings.TrimPrefix(f[0], modulePath), "/")
		checked++
		if sdkLinkers[pkg] {
			continue
		}
		for _, dep := range f[1:] {
			for _, p := range sdkPrefixes {
				if strings.HasPrefix(dep, p) {
					t.Errorf("%s links %s: only %v may link a model SDK", f[0], dep, slices.Sorted(maps.Keys(sdkLinkers)))
				}
			}
		}
	}
	if checked < 40 {
		t.Fatalf("go list listed only %d packages", checked)
	}
}

// TestArchitectureDoc checks that docs/architecture.md's layer table says
// what the layers table of this file does: one row per layer, in order,
// with the same packages.
func TestArchitectureDoc(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("docs/architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	var rows [][2]string // layer name, packages
	for line := range strings.Lines(string(data)) {
		cells := strings.Split(strings.TrimSpace(line), "|")
		if len(cells) < 4 || !strings.HasPrefix(strings.TrimSpace(line), "| ") {
			continue
		}
		name, pkgs := strings.TrimSpace(cells[1]), strings.TrimSpace(cells[2])
		if name == "" || name[0] < '0' || name[0] > '9' {
			continue // the header, or another table
		}
		rows = append(rows, [2]string{name, pkgs})
	}
	if *updateDoc {
		for i, l := range layers {
			var ps []string
			for _, p := range l.packages {
				if p == "" {
					p = "memdir"
				}
				ps = append(ps, "`"+p+"`")
			}
			fmt.Printf("| %d %s | %s | |\n", i, l.name, strings.Join(ps, ", "))
		}
	}
	if len(rows) != len(layers) {
		t.Fatalf("docs/architecture.md has %d layer rows, the layers table %d: regenerate the table (go test -run TestArchitectureDoc -update-doc prints it)", len(rows), len(layers))
	}
	for i, l := range layers {
		if want := fmt.Sprintf("%d %s", i, l.name); rows[i][0] != want {
			t.Errorf("row %d of docs/architecture.md is %q, want %q", i, rows[i][0], want)
		}
		var got []string
		for p := range strings.SplitSeq(rows[i][1], ",") {
			p = strings.Trim(strings.TrimSpace(p), "`")
			if p == "memdir" {
				p = ""
			}
			got = append(got, p)
		}
		if !slices.Equal(got, l.packages) {
			t.Errorf("layer %s in docs/architecture.md lists %q, the layers table %q", l.name, got, l.packages)
		}
	}
}

var updateDoc = flag.Bool("update-doc", false, "print the layer table of docs/architecture.md")
