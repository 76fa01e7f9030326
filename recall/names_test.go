package recall

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/memdir/memdir"
)

// With a recall index, Save finds a memory by name through it (not by
// scanning), checks the name in the file as it is now, and still refuses an
// ambiguous name.
func TestSaveFindsNameThroughRecallIndex(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d, cache := openIndexedDir(t)
	mustSave(t, d, &memdir.Memory{Path: "odd_file_name.md", Name: "deploy-rules", Description: "how we deploy", Type: memdir.TypeProject, Body: "v1"}, nil)
	for i := range 30 {
		mustSave(t, d, &memdir.Memory{Name: fmt.Sprintf("other-%d", i), Description: "filler", Type: memdir.TypeUser, Body: "x"}, nil)
	}
	if _, err := os.Stat(cache); err != nil {
		t.Fatalf("the recall index was not written: %v", err)
	}
	res := mustSave(t, d, &memdir.Memory{Name: "deploy-rules", Description: "how we deploy now", Type: memdir.TypeProject, Body: "v2"}, nil)
	if res.Path != "odd_file_name.md" || res.Created {
		t.Fatalf("save by name went to %s (created %v), want the existing odd_file_name.md", res.Path, res.Created)
	}
	// The name changed in the file: the old name no longer leads to it.
	m, _ := d.Get(ctx, "odd_file_name.md")
	m.Name = "renamed-rules"
	os.WriteFile(d.Abs("odd_file_name.md"), m.Format(), 0o600)
	res = mustSave(t, d, &memdir.Memory{Name: "deploy-rules", Description: "a new one", Type: memdir.TypeProject, Body: "v3"}, nil)
	if res.Path == "odd_file_name.md" || !res.Created {
		t.Fatalf("save by the old name overwrote the renamed memory: %+v", res)
	}
	// Two files with one name: refused, naming both.
	os.WriteFile(d.Abs("twin_a.md"), []byte("---\nname: twin\ndescription: a\ntype: user\n---\nx\n"), 0o600)
	os.WriteFile(d.Abs("twin_b.md"), []byte("---\nname: twin\ndescription: b\ntype: user\n---\nx\n"), 0o600)
	// Another program's files, written a clock tick after the last save
	// (within the same tick, a kernel without fine-grained timestamps may
	// leave the directory's time unchanged: see docs/performance.md).
	bumpMTime(t, d.Path())
	_, err := d.Save(ctx, &memdir.Memory{Name: "twin", Description: "c", Type: memdir.TypeUser, Body: "y"}, nil)
	if !errors.Is(err, memdir.ErrInvalid) || !strings.Contains(err.Error(), "twin_a.md") || !strings.Contains(err.Error(), "twin_b.md") {
		t.Fatalf("ambiguous name: %v", err)
	}
}
