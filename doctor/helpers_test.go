package doctor

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/memdir/memdir"
)

// mustOpen opens a Dir in a temp directory with its journal in another.
func mustOpen(tb testing.TB) *memdir.Dir {
	tb.Helper()
	base := tb.TempDir()
	d, err := memdir.Open(filepath.Join(base, "memory"), &memdir.Options{Journal: memdir.NewJournal(filepath.Join(base, "journal"), nil)})
	if err != nil {
		tb.Fatal(err)
	}
	return d
}

func mustSave(tb testing.TB, d *memdir.Dir, m *memdir.Memory, opts *memdir.SaveOptions) *memdir.SaveResult {
	tb.Helper()
	res, err := d.Save(context.Background(), m, opts)
	if err != nil {
		tb.Fatal(err)
	}
	return res
}

func readString(tb testing.TB, path string) string {
	tb.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	return string(b)
}
