//go:build unix

package safeopen

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

func TestRefusesWhatIsNotARegularFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Open(fifo); !errors.Is(err, ErrNotRegular) {
		t.Errorf("Open(FIFO) = %v, want ErrNotRegular", err)
	}
	if _, err := ReadFile(fifo, 10); !errors.Is(err, ErrNotRegular) {
		t.Errorf("ReadFile(FIFO) = %v, want ErrNotRegular", err)
	}
	if _, _, err := Open(dir); !errors.Is(err, ErrNotRegular) {
		t.Errorf("Open(dir) = %v, want ErrNotRegular", err)
	}
	if _, err := OpenAppend(fifo, 0o600); err == nil {
		t.Error("OpenAppend(FIFO) opened it")
	}
	target := filepath.Join(dir, "target")
	os.WriteFile(target, []byte("x"), 0o600)
	link := filepath.Join(dir, "link")
	os.Symlink(target, link)
	if f, err := OpenAppend(link, 0o600); err == nil {
		f.Close()
		t.Error("OpenAppend followed a symbolic link")
	}
	if _, _, err := Open(filepath.Join(dir, "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Open(missing) = %v, want ErrNotExist", err)
	}
	if data, err := ReadFile(target, 10); err != nil || string(data) != "x" {
		t.Errorf("ReadFile = %q, %v", data, err)
	}
	if _, err := ReadFile(target, 0); err == nil {
		t.Error("ReadFile read past its limit")
	}
	root, _ := os.OpenRoot(dir)
	defer root.Close()
	if _, _, err := OpenIn(root, "fifo"); !errors.Is(err, ErrNotRegular) {
		t.Errorf("OpenIn(FIFO) = %v", err)
	}
}
