package recall

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/internal/benchcorpus"
	"github.com/memdir/memdir/lexical"
)

// TestFirstBuildWritesWhatAnIndexWould holds the first build, which streams
// the cache file from a lexical.Builder, to the file a full write of the
// same memories through an in-memory lexical.Index makes: byte for byte,
// and ranking the same, in memory as from the file. The directory has
// memories in subdirectories and files that cannot be parsed.
func TestFirstBuildWritesWhatAnIndexWould(t *testing.T) {
	t.Parallel()
	c, err := benchcorpus.Load("../testdata/eval/recall-dev.json")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "memory")
	if err := c.Write(dir, 600); err != nil {
		t.Fatal(err)
	}
	for rel, content := range map[string]string{
		"team/deploys.md":    "---\nname: Deploys\ndescription: how we deploy\ntype: project\n---\nblue green kafka 部署流程\n",
		"team/a/b/nested.md": "---\nname: Nested\n---\nzebra crossing\n",
		"binary.md":          "---\nname: x\n---\n\x00\x01",
		"plain.md":           "no frontmatter, kafka lag\n",
	} {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	cache := filepath.Join(t.TempDir(), "x.idx")
	x := NewIndex(dir, &IndexOptions{CachePath: cache})
	if _, err := x.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(cache)
	if err != nil {
		t.Fatal(err)
	}
	// The same records, with an Index of the same documents.
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	var docs []lexical.Doc
	for _, f := range x.files {
		if !f.bad {
			rf, body, _ := readRecallFile(root, f.path, &memdir.HeaderReader{})
			docs = append(docs, lexical.Doc{ID: rf.path, Name: rf.name, Description: rf.desc, Body: body})
		}
	}
	y := &Index{dir: x.dir, files: x.files, dirs: x.dirs, lex: lexical.New(docs, nil)}
	want, err := y.marshal()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(want, got) {
		t.Fatalf("the first build wrote %d bytes, a full write of an Index %d, not the same", len(got), len(want))
	}
	mem := NewIndex(dir, nil)
	if _, err := mem.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	reopened := NewIndex(dir, &IndexOptions{CachePath: cache})
	if _, err := reopened.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"where is the on-call runbook for kafka lag alerts", "部署流程", "zebra crossing", "deploy"} {
		wh := y.lex.Search(q, 20)
		if len(wh) == 0 {
			t.Fatalf("%q found nothing", q)
		}
		for name, z := range map[string]*Index{"built": x, "in memory": mem, "reopened": reopened} {
			gh, _ := z.Search(q, 20)
			if diff := cmp.Diff(wh, gh); diff != "" {
				t.Errorf("%s, %q (-index +%s):\n%s", name, q, name, diff)
			}
		}
	}
}
