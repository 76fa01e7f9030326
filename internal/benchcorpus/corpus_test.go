package benchcorpus

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/memdir/memdir"
)

func TestWriteIndexedIndexesEveryMemory(t *testing.T) {
	t.Parallel()
	c, err := Load("../../testdata/eval/recall-dev.json")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	const n = 600
	if err := c.WriteIndexed(context.Background(), dir, n); err != nil {
		t.Fatal(err)
	}
	main, _ := os.ReadFile(filepath.Join(dir, "MEMORY.md"))
	more, _ := os.ReadFile(filepath.Join(dir, memdir.OverflowIndexName))
	if lines := strings.Count(string(main), "\n"); lines > memdir.MaxIndexLines || utf8.RuneCount(main) > memdir.MaxIndexChars {
		t.Errorf("MEMORY.md has %d lines, %d characters: over its limits", lines, utf8.RuneCount(main))
	}
	if !strings.Contains(string(main), "]("+memdir.OverflowIndexName+")") {
		t.Error("MEMORY.md does not link the overflow file")
	}
	all := string(main) + string(more)
	for i := range n {
		if f := c.Memory(i, n).File; !strings.Contains(all, "]("+f+")") {
			t.Fatalf("%s has no index line", f)
		}
	}
}
