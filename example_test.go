package memdir_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/locate"
)

// Locate applies Claude Code's rules in order; here the first one,
// CLAUDE_COWORK_MEMORY_PATH_OVERRIDE, decides. The environment is passed in
// as a function, so nothing here depends on the process's own.
func ExampleLocate() {
	tmp, _ := os.MkdirTemp("", "locate-example")
	defer os.RemoveAll(tmp)
	override := filepath.Join(tmp, "memories")
	env := map[string]string{
		"HOME":                               tmp,
		"CLAUDE_CONFIG_DIR":                  filepath.Join(tmp, ".claude"),
		"CLAUDE_COWORK_MEMORY_PATH_OVERRIDE": override,
	}
	loc, err := locate.Locate(&locate.LocateOptions{
		LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok },
		Cwd:       tmp,
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(loc.Source, strings.TrimPrefix(loc.Dir, tmp))
	// Output:
	// env /memories/
}

// Open returns the store for a directory, which need not exist yet; Save
// writes the memory file and its MEMORY.md line, atomically and under the
// directory's lock.
func ExampleOpen() {
	tmp, _ := os.MkdirTemp("", "open-example")
	defer os.RemoveAll(tmp)
	// memdir keeps its journal (for undo) outside the memory directory, by
	// default in the user's state directory; this example keeps it in its
	// temporary directory instead.
	d, err := memdir.Open(filepath.Join(tmp, "memory"), &memdir.Options{
		Journal: memdir.NewJournal(filepath.Join(tmp, "state", "journal"), nil),
	})
	if err != nil {
		panic(err)
	}
	res, err := d.Save(context.Background(), &memdir.Memory{
		Name:        "testing policy",
		Description: "integration tests hit a real database, never mocks",
		Type:        memdir.TypeFeedback,
		Body:        "Run them with make itest.\n",
	}, nil)
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Path, res.Created)
	index, _ := os.ReadFile(filepath.Join(d.Path(), "MEMORY.md"))
	fmt.Println(strings.TrimSpace(string(index)))
	// Output:
	// feedback_testing_policy.md true
	// - [testing policy](feedback_testing_policy.md) — integration tests hit a real database, never mocks
}

// Save updates the memory of the same name rather than adding a second one.
func ExampleDir_Save() {
	tmp, _ := os.MkdirTemp("", "save-example")
	defer os.RemoveAll(tmp)
	d := openExample(tmp)
	ctx := context.Background()
	m := &memdir.Memory{Name: "editor", Description: "the user's editor", Type: memdir.TypeUser, Body: "Vim.\n"}
	first, err := d.Save(ctx, m, nil)
	if err != nil {
		panic(err)
	}
	m.Body = "Helix, since March.\n"
	second, err := d.Save(ctx, m, nil)
	if err != nil {
		panic(err)
	}
	got, err := d.Get(ctx, second.Path)
	if err != nil {
		panic(err)
	}
	fmt.Println(first.Path == second.Path, first.Created, second.Created, second.Changed)
	fmt.Print(got.Body)
	// Output:
	// true true false true
	// Helix, since March.
}

// Scan reads the frontmatter of every memory, newest first: what manifests
// and recall work from, without reading whole files.
func ExampleDir_Scan() {
	tmp, _ := os.MkdirTemp("", "scan-example")
	defer os.RemoveAll(tmp)
	d := openExample(tmp)
	ctx := context.Background()
	for _, m := range []*memdir.Memory{
		{Name: "deploys", Description: "how we ship", Type: memdir.TypeProject, Body: "Never on Fridays.\n"},
		{Name: "grafana", Description: "where the dashboards are", Type: memdir.TypeReference, Body: "grafana.internal\n"},
	} {
		if _, err := d.Save(ctx, m, nil); err != nil {
			panic(err)
		}
	}
	scan, err := d.Scan(ctx, nil)
	if err != nil {
		panic(err)
	}
	paths := []string{}
	for _, h := range scan.Memories {
		paths = append(paths, fmt.Sprintf("%s (%s): %s", h.Path, h.Type, h.Description))
	}
	// Both were written within the same instant here, so sort for a stable
	// listing; in use the order is newest first.
	slices.Sort(paths)
	fmt.Println(scan.Total, len(scan.Problems))
	fmt.Println(strings.Join(paths, "\n"))
	// Output:
	// 2 0
	// project_deploys.md (project): how we ship
	// reference_grafana.md (reference): where the dashboards are
}

// openExample opens tmp/memory with its state under tmp/state, so that the
// examples leave nothing in the user's state directory.
func openExample(tmp string) *memdir.Dir {
	d, err := memdir.Open(filepath.Join(tmp, "memory"), &memdir.Options{
		Journal: memdir.NewJournal(filepath.Join(tmp, "state", "journal"), nil),
	})
	if err != nil {
		panic(err)
	}
	return d
}
