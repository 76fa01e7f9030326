package doctor

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/memdir/memdir"
)

func TestDoctorDuplicateNames(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	d, err := memdir.Open(filepath.Join(base, "memory"), &memdir.Options{Journal: memdir.NewJournal(filepath.Join(base, "journal"), nil)})
	if err != nil {
		t.Fatal(err)
	}
	write := func(rel, name, body string) {
		p := filepath.Join(d.Path(), rel)
		os.MkdirAll(filepath.Dir(p), 0o700)
		if err := os.WriteFile(p, []byte("---\nname: "+name+"\ndescription: about "+name+"\ntype: project\n---\n\n"+body+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("project_release.md", "release", "freeze on Thursday")
	write("notes/release.md", "release", "freeze moved to Friday")
	write("team/project_release.md", "release", "team copy") // another area: not a duplicate
	write("project_other.md", "other", "x")
	write("copy_other.md", "other", "x") // identical: duplicate-content says it already
	index := "- [Release](project_release.md) — freeze\n- [Release 2](notes/release.md) — moved\n- [Other](project_other.md) — x\n- [Copy](copy_other.md) — x\n"
	os.WriteFile(filepath.Join(d.Path(), "MEMORY.md"), []byte(index), 0o600)
	os.WriteFile(filepath.Join(d.Path(), "team", "MEMORY.md"), []byte("- [Release](project_release.md) — team\n"), 0o600)

	ctx := context.Background()
	rep, err := Check(ctx, d)
	if err != nil {
		t.Fatal(err)
	}
	var got []Finding
	for _, f := range rep.Findings {
		if f.Kind == FindDuplicateName {
			got = append(got, f)
		}
	}
	if len(got) != 2 || got[0].Path != "notes/release.md" || got[1].Path != "project_release.md" ||
		!slices.Equal(got[0].Related, []string{"project_release.md"}) || !slices.Equal(got[1].Related, []string{"notes/release.md"}) || got[0].Fix != "" {
		t.Fatalf("duplicate-name findings = %+v (all: %+v)", got, rep.Findings)
	}
	// --fix deletes nothing: both files stay.
	if _, err := Fix(ctx, d, &FixOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, rel := range []string{"project_release.md", "notes/release.md", "team/project_release.md"} {
		if _, err := os.Stat(filepath.Join(d.Path(), rel)); err != nil {
			t.Errorf("after fix: %v", err)
		}
	}
}
