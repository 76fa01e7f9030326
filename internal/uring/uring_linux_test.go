//go:build linux

package uring

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The kernel's sizes (include/uapi/linux/io_uring.h).
func TestLayout(t *testing.T) {
	for name, got := range map[string]uintptr{
		"io_uring_params": unsafe.Sizeof(params{}),
		"io_uring_sqe":    unsafe.Sizeof(sqe{}),
		"io_uring_cqe":    unsafe.Sizeof(cqe{}),
	} {
		want := map[string]uintptr{"io_uring_params": 120, "io_uring_sqe": 64, "io_uring_cqe": 16}[name]
		if got != want {
			t.Errorf("%s is %d bytes, want %d", name, got, want)
		}
	}
}

// newRing returns a ring, or skips the test where this kernel does not
// offer io_uring (the io_uring_disabled sysctl set, or no such file); a
// kernel that says it does and fails the setup fails the test.
func newRing(t *testing.T, entries uint32) *Ring {
	t.Helper()
	r, err := New(entries)
	if err != nil {
		b, rerr := os.ReadFile("/proc/sys/kernel/io_uring_disabled")
		if rerr != nil || strings.TrimSpace(string(b)) != "0" {
			t.Skipf("io_uring is not offered here (%v): %v", strings.TrimSpace(string(b)), err)
		}
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

func openFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(ents)
}

func TestReadFiles(t *testing.T) {
	dir := t.TempDir()
	contents := map[string]string{
		"empty.md":   "",
		"small.md":   "---\nname: a\n---\nbody\n",
		"exact.md":   strings.Repeat("x", 64),
		"larger.md":  strings.Repeat("y", 100),
		"unicode.md": "caf\u00e9 \u90e8\u7f72\n",
	}
	for name, c := range contents {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(c), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	os.Symlink("small.md", filepath.Join(dir, "link.md"))
	os.Mkdir(filepath.Join(dir, "sub.md"), 0o700)
	if err := unix.Mkfifo(filepath.Join(dir, "fifo.md"), 0o600); err != nil {
		t.Fatal(err)
	}
	names := []string{"empty.md", "small.md", "exact.md", "larger.md", "unicode.md", "link.md", "sub.md", "fifo.md", "missing.md"}
	dfd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(dfd)
	r := newRing(t, 64)
	before := openFDs(t)
	files := make([]File, len(names))
	for i, n := range names {
		files[i] = File{Dir: dfd, Name: CString(n), Buf: make([]byte, 0, 64)}
	}
	for round := range 3 { // the ring is reused
		if err := r.ReadFiles(files, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		for i, n := range names {
			f := &files[i]
			c, regular := contents[n]
			switch {
			case regular:
				var st unix.Stat_t
				if err := unix.Stat(filepath.Join(dir, n), &st); err != nil {
					t.Fatal(err)
				}
				want := c[:min(len(c), 64)]
				if f.Err != nil || string(f.Data) != want || f.Full != (len(c) >= 64) {
					t.Errorf("%s: data %q full %v err %v, want %q", n, f.Data, f.Full, f.Err, want)
				}
				if f.Stat.Ino != st.Ino || f.Stat.Size != st.Size || f.Stat.Mtim != st.Mtim || f.Stat.Mode&unix.S_IFMT != unix.S_IFREG {
					t.Errorf("%s: stat %+v, want inode %d size %d", n, f.Stat, st.Ino, st.Size)
				}
			case n == "link.md":
				if !errors.Is(f.Err, syscall.ELOOP) {
					t.Errorf("a link opened with O_NOFOLLOW: %v", f.Err)
				}
			case n == "missing.md":
				if !errors.Is(f.Err, syscall.ENOENT) {
					t.Errorf("a missing file: %v", f.Err)
				}
			case n == "sub.md":
				if !errors.Is(f.Err, syscall.EISDIR) || f.Stat.Mode&unix.S_IFMT != unix.S_IFDIR && f.Stat.Mode != 0 {
					t.Errorf("a directory: %v, mode %o", f.Err, f.Stat.Mode)
				}
			case n == "fifo.md":
				// Opened without blocking, with no writer: a read of
				// nothing; its stat says what it is.
				if f.Err == nil && (f.Stat.Mode&unix.S_IFMT != unix.S_IFIFO || len(f.Data) != 0) {
					t.Errorf("a FIFO: mode %o data %q", f.Stat.Mode, f.Data)
				}
			}
		}
	}
	if after := openFDs(t); after != before {
		t.Errorf("%d descriptors open before, %d after", before, after)
	}
}

func TestReadFilesRefusesWhatItCannotHold(t *testing.T) {
	r := newRing(t, 4)
	files := make([]File, r.Entries()/2+1)
	for i := range files {
		files[i] = File{Dir: unix.AT_FDCWD, Name: CString("x"), Buf: make([]byte, 0, 8)}
	}
	if err := r.ReadFiles(files, unix.O_RDONLY); err == nil {
		t.Fatal("a batch larger than the ring was taken")
	}
	if err := r.ReadFiles([]File{{Dir: unix.AT_FDCWD, Name: []byte("x")}}, unix.O_RDONLY); err == nil {
		t.Fatal("a name without its NUL was taken")
	}
}

// TestReadFilesManyBatches reads more files than a batch holds, batch by
// batch, as the recall index does, against os.ReadFile.
func TestReadFilesManyBatches(t *testing.T) {
	dir := t.TempDir()
	var names []string
	for i := range 300 {
		n := filepath.Join(dir, "f"+string(rune('a'+i/26))+string(rune('a'+i%26))+".md")
		os.WriteFile(n, bytes.Repeat([]byte{byte('a' + i%26)}, i), 0o600)
		names = append(names, filepath.Base(n))
	}
	dfd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(dfd)
	r := newRing(t, 64)
	batch := make([]File, r.Entries()/2)
	for start := 0; start < len(names); start += len(batch) {
		b := batch[:min(len(batch), len(names)-start)]
		for i := range b {
			b[i] = File{Dir: dfd, Name: CString(names[start+i]), Buf: make([]byte, 0, 512)}
		}
		if err := r.ReadFiles(b, unix.O_RDONLY); err != nil {
			t.Fatal(err)
		}
		for i := range b {
			want, _ := os.ReadFile(filepath.Join(dir, names[start+i]))
			if b[i].Err != nil || !bytes.Equal(b[i].Data, want) {
				t.Fatalf("%s: %q, %v; want %q", names[start+i], b[i].Data, b[i].Err, want)
			}
		}
	}
}
