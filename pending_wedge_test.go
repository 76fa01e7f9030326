package memdir

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// A move refused because its source lies behind a symbolic link out of the
// directory leaves no pending record, and the directory stays usable.
func TestRefusedRenameLeavesNoPendingRecord(t *testing.T) {
	ctx := context.Background()
	d := mustOpen(t)
	mustSave(t, d, &Memory{Name: "kept", Description: "an earlier memory", Type: TypeUser, Body: "b"}, nil)
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "inner.md"), []byte("---\nname: inner\ndescription: outside\ntype: user\n---\n\nx\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, d.Abs("linkdir")); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Rename(ctx, "linkdir/inner.md", "x.md", nil); err == nil {
		t.Fatal("a rename through a link out of the directory was made")
	}
	if _, err := os.Lstat(d.Abs(PendingName)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the refused rename left %s: %v", PendingName, err)
	}
	if _, err := os.Stat(filepath.Join(outside, "inner.md")); err != nil {
		t.Errorf("the file outside was moved: %v", err)
	}
	if _, err := d.Save(ctx, &Memory{Name: "after", Description: "a later memory", Type: TypeUser, Body: "b"}, nil); err != nil {
		t.Fatalf("save after the refused rename: %v", err)
	}
}

// A pending record the next process cannot act on (garbage, a path out of
// the directory) never blocks the directory: it is set aside, as written,
// for doctor to report.
func TestBadPendingRecordIsSetAside(t *testing.T) {
	ctx := context.Background()
	for name, record := range map[string]string{
		"not JSON":          "{garbage",
		"path outside":      `{"op":"save","path":"../x.md","index":"MEMORY.md","link":"x.md"}`,
		"unknown operation": `{"op":"explode","path":"a.md","index":"MEMORY.md","link":"a.md"}`,
	} {
		t.Run(name, func(t *testing.T) {
			d := mustOpen(t)
			mustSave(t, d, &Memory{Name: "kept", Description: "an earlier memory", Type: TypeUser, Body: "b"}, nil)
			if err := os.WriteFile(d.Abs(PendingName), []byte(record), 0o600); err != nil {
				t.Fatal(err)
			}
			if _, err := d.Save(ctx, &Memory{Name: "after", Description: "a later memory", Type: TypeUser, Body: "b"}, nil); err != nil {
				t.Fatalf("save with a bad pending record: %v", err)
			}
			if _, err := os.Lstat(d.Abs(PendingName)); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("%s is still there: %v", PendingName, err)
			}
			got, err := os.ReadFile(d.Abs(PendingAsideName))
			if err != nil || string(got) != record {
				t.Errorf("the record set aside = %q, %v; want it kept as written", got, err)
			}
		})
	}
}
