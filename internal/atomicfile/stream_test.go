package atomicfile

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestWriteStream(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	name := filepath.Join(dir, "x.idx")
	if err := os.WriteFile(name, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	// A failing fill leaves the file as it was, and no temporary file.
	err := WriteStream(name, 0o600, func(f *os.File) error {
		f.Write([]byte("partial"))
		return errors.New("no space")
	})
	if err == nil {
		t.Fatal("a failing fill went unreported")
	}
	if got, _ := os.ReadFile(name); string(got) != "old" {
		t.Fatalf("after a failed write the file holds %q", got)
	}
	// Writes at offsets, the header last.
	err = WriteStream(name, 0o640, func(f *os.File) error {
		if _, err := f.WriteAt([]byte("world"), 6); err != nil {
			return err
		}
		_, err := f.WriteAt([]byte("hello "), 0)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(name); string(got) != "hello world" {
		t.Fatalf("file holds %q", got)
	}
	if fi, err := os.Stat(name); err != nil || fi.Mode().Perm() != 0o640 {
		t.Errorf("mode %v, %v; want 0640", fi.Mode(), err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("directory holds %d entries, want 1", len(entries))
	}
}
