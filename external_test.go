package memdir

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func newTestJournal(tb testing.TB) *Journal {
	tb.Helper()
	return NewJournal(filepath.Join(tb.TempDir(), "journal"), nil)
}

func TestEditExternalFileRefusesNonRegular(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	os.Mkdir(filepath.Join(dir, "CLAUDE.md"), 0o700)
	_, err := EditExternalFile(context.Background(), newTestJournal(t), "promote", "x", filepath.Join(dir, "CLAUDE.md"), func([]byte, bool) ([]byte, error) { return []byte("x"), nil })
	if !errors.Is(err, ErrInvalid) {
		t.Errorf("editing a directory: %v", err)
	}
}
