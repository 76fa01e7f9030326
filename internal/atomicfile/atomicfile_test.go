package atomicfile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestWriteFileReplaces(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	name := filepath.Join(dir, "a.md")
	if err := WriteFile(name, []byte("one"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(name, []byte("two"), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(name)
	if err != nil || string(got) != "two" {
		t.Fatalf("ReadFile = %q, %v; want two", got, err)
	}
	fi, _ := os.Stat(name)
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("mode = %v, want 0600", fi.Mode().Perm())
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("directory holds %d entries, want 1 (temp file left behind?)", len(entries))
	}
}

func TestWriteFileFailureLeavesOriginal(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "a.md")
	if err := WriteFile(name, []byte("keep"), 0o600); err != nil {
		t.Fatal(err)
	}
	// Make the directory unwritable so the temp file cannot be created.
	if os.Getuid() == 0 {
		orig := createTemp
		createTemp = func(string, string) (*os.File, error) { return nil, errors.New("disk full") }
		defer func() { createTemp = orig }()
	} else {
		os.Chmod(dir, 0o500)
		defer os.Chmod(dir, 0o700)
	}
	if err := WriteFile(name, []byte("lost"), 0o600); err == nil {
		t.Fatal("WriteFile succeeded, want error")
	}
	got, _ := os.ReadFile(name)
	if string(got) != "keep" {
		t.Fatalf("content = %q, want keep", got)
	}
}

func TestMkdirAll(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "a", "b", "c")
	if err := MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(dir)
	if err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
		t.Fatalf("Stat = %v, %v", fi, err)
	}
	if err := MkdirAll(dir, 0o700); err != nil {
		t.Fatalf("second MkdirAll: %v", err)
	}
}

func TestWriteFileInRefusesEscape(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	inside := filepath.Join(base, "mem")
	outside := filepath.Join(base, "outside")
	os.Mkdir(inside, 0o700)
	os.Mkdir(outside, 0o700)
	if err := os.Symlink(outside, filepath.Join(inside, "link")); err != nil {
		t.Fatal(err)
	}
	root, err := os.OpenRoot(inside)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	if err := WriteFileIn(root, "a.md", []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := WriteFileIn(root, "link/evil.md", []byte("x"), 0o600); err == nil {
		t.Fatal("write through a symlink leading outside the root succeeded")
	}
	if _, err := os.Stat(filepath.Join(outside, "evil.md")); err == nil {
		t.Fatal("file created outside the root")
	}
	entries, _ := os.ReadDir(inside)
	if len(entries) != 2 {
		t.Errorf("root holds %d entries, want a.md and link", len(entries))
	}
}

func TestWriteFileLongName(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	name := strings.Repeat("n", 250) + ".md"
	if err := WriteFile(filepath.Join(dir, name), []byte("x"), 0o600); err != nil {
		t.Fatalf("WriteFile with a 253-byte name: %v", err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	if err := WriteFileIn(root, name, []byte("y"), 0o600); err != nil {
		t.Fatalf("WriteFileIn with a 253-byte name: %v", err)
	}
}

// WriteMapped writes in pieces; the file must hold exactly the data, of any
// length around the piece size, and replace the old file whole.
func TestWriteMapped(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	name := filepath.Join(dir, "x.idx")
	for _, n := range []int{0, 1, mappedChunk - 1, mappedChunk, mappedChunk + 1, 3*mappedChunk + 17} {
		data := make([]byte, n)
		for i := range data {
			data[i] = byte(i*7 + n)
		}
		if err := WriteMapped(name, data, 0o600); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(name)
		if err != nil || string(got) != string(data) {
			t.Fatalf("%d bytes: read back %d bytes, %v", n, len(got), err)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("directory holds %d entries, want 1", len(entries))
	}
}

func TestRemoveStale(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	name := filepath.Join(dir, "index.idx")
	old := time.Now().Add(-time.Hour)
	for _, n := range []string{".index.idx.tmp-1", ".index.idx.tmp-2", ".other.idx.tmp-1", "index.idx"} {
		p := filepath.Join(dir, n)
		if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
		os.Chtimes(p, old, old)
	}
	young := filepath.Join(dir, ".index.idx.tmp-3")
	os.WriteFile(young, []byte("x"), 0o600)
	removed, err := RemoveStale(name, 5*time.Minute, time.Now())
	if err != nil || len(removed) != 2 {
		t.Fatalf("RemoveStale = %v, %v; want the two old temporary files of index.idx", removed, err)
	}
	for _, n := range []string{".other.idx.tmp-1", "index.idx", ".index.idx.tmp-3"} {
		if _, err := os.Stat(filepath.Join(dir, n)); err != nil {
			t.Errorf("%s was removed: %v", n, err)
		}
	}
	if removed, err := RemoveStale(filepath.Join(t.TempDir(), "missing", "x"), 0, time.Now()); err != nil || removed != nil {
		t.Errorf("RemoveStale in a missing directory = %v, %v", removed, err)
	}
}
