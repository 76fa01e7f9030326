package framed

import (
	"bytes"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unsafe"
)

var testFormat = Format{Magic: "FRAMTEST", Version: 3}

// aligned copies b into 8-byte aligned memory, as a mapped file is.
func aligned(b []byte) []byte {
	words := make([]uint64, len(b)/8+1)
	out := unsafe.Slice((*byte)(unsafe.Pointer(&words[0])), len(words)*8)[:len(b)]
	copy(out, b)
	return out
}

// sample is a frame of sections of awkward sizes, and those sections by id.
func sample(t testing.TB) ([]byte, map[uint32][]byte) {
	t.Helper()
	secs := map[uint32][]byte{1: nil, 2: []byte("x"), 5: []byte("seven.."), 6: []byte("eight..."), 9: []byte("nine....."), 1 << 31: bytes.Repeat([]byte{0xff}, 100)}
	w := testFormat.NewWriter(nil)
	for _, id := range []uint32{1, 2, 5, 6, 9, 1 << 31} {
		if id == 6 {
			w.Add(id, secs[id][:3], secs[id][3:])
			continue
		}
		w.Add(id, secs[id])
	}
	b, err := w.Finish()
	if err != nil {
		t.Fatal(err)
	}
	return aligned(b), secs
}

func TestRoundTrip(t *testing.T) {
	t.Parallel()
	b, secs := sample(t)
	f, err := testFormat.Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	if f.Len() != len(secs) {
		t.Fatalf("Len = %d, want %d", f.Len(), len(secs))
	}
	for i := range f.Len() {
		id := f.ID(i)
		got, err := f.Section(id)
		if err != nil || !bytes.Equal(got, secs[id]) {
			t.Errorf("section %d = %q, %v; want %q", id, got, err, secs[id])
		}
		if len(got) > 0 && uintptr(unsafe.Pointer(&got[0]))%8 != 0 {
			t.Errorf("section %d is not 8-byte aligned", id)
		}
		if i > 0 && id <= f.ID(i-1) {
			t.Errorf("ids out of order: %d after %d", id, f.ID(i-1))
		}
	}
	if _, err := f.Section(3); !errors.Is(err, ErrCorrupt) {
		t.Errorf("a missing section: %v, want ErrCorrupt", err)
	}
	if err := f.Verify(); err != nil {
		t.Error(err)
	}
	if len(b)%8 != 0 {
		t.Errorf("frame length %d is not a multiple of 8", len(b))
	}
	empty, err := testFormat.NewWriter(nil).Finish()
	if err != nil {
		t.Fatal(err)
	}
	if f, err := testFormat.Parse(empty); err != nil || f.Len() != 0 || len(empty) != headerSize {
		t.Errorf("empty frame: %d bytes, %v", len(empty), err)
	}
}

// A frame inside a section of another, written in place by AddFunc.
func TestNested(t *testing.T) {
	t.Parallel()
	inner := Format{Magic: "INNERFRM", Version: 1}
	w := testFormat.NewWriter(nil)
	w.Add(1, []byte("abc"))
	w.AddFunc(2, func(b []byte) ([]byte, error) {
		iw := inner.NewWriter(b)
		iw.Add(7, []byte("deep"))
		return iw.Finish()
	})
	w.Add(3, []byte("after"))
	b, err := w.Finish()
	if err != nil {
		t.Fatal(err)
	}
	outer, err := testFormat.Parse(aligned(b))
	if err != nil {
		t.Fatal(err)
	}
	sec, err := outer.Section(2)
	if err != nil {
		t.Fatal(err)
	}
	in, err := inner.Parse(sec)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := in.Section(7); err != nil || string(got) != "deep" || uintptr(unsafe.Pointer(&got[0]))%8 != 0 {
		t.Errorf("inner section = %q, %v (or misaligned)", got, err)
	}
	if got, _ := outer.Section(3); string(got) != "after" {
		t.Errorf("section after the nested frame = %q", got)
	}
}

func TestWriterErrors(t *testing.T) {
	t.Parallel()
	w := testFormat.NewWriter(nil)
	w.Add(2, nil)
	w.Add(2, nil)
	if _, err := w.Finish(); err == nil || !strings.Contains(err.Error(), "ids must increase") {
		t.Errorf("a repeated id: %v", err)
	}
	if _, err := (Format{Magic: "short"}).NewWriter(nil).Finish(); err == nil {
		t.Error("a 5-byte magic was accepted")
	}
	boom := errors.New("boom")
	w = testFormat.NewWriter(nil)
	w.AddFunc(1, func(b []byte) ([]byte, error) { return b, boom })
	w.Add(2, []byte("ignored"))
	if _, err := w.Finish(); !errors.Is(err, boom) {
		t.Errorf("AddFunc's error: %v", err)
	}
	w = testFormat.NewWriter(nil)
	w.AddFunc(1, func(b []byte) ([]byte, error) { return b[:3], nil })
	if _, err := w.Finish(); err == nil {
		t.Error("a section writer that shortened the buffer was accepted")
	}
	w = testFormat.NewWriter(nil)
	if _, err := w.Finish(); err != nil {
		t.Fatal(err)
	}
	w.Add(1, nil)
	if _, err := w.Finish(); err == nil {
		t.Error("a section added after Finish was accepted")
	}
	if err := testFormat.NewWriter(nil).WriteFile(filepath.Join(t.TempDir(), "no", "dir"), 0o600); err == nil || !strings.Contains(err.Error(), "no/dir") {
		t.Errorf("WriteFile into a missing directory: %v, want an error naming the file", err)
	}
}

// Every byte of the header, the table and the padding is checked when the
// file is parsed; every byte of a section when it is first used.
func TestEveryByteIsChecked(t *testing.T) {
	t.Parallel()
	good, _ := sample(t)
	f, _ := testFormat.Parse(good)
	inSection := make([]bool, len(good))
	for i := range f.Len() {
		s := &f.secs[i]
		for j := s.off; j < s.off+s.n; j++ {
			inSection[j] = true
		}
	}
	for i := range good {
		for _, flip := range []byte{0x01, 0x80, 0xff} {
			bad := aligned(good)
			bad[i] ^= flip
			g, err := testFormat.Parse(bad)
			if !inSection[i] {
				if err == nil {
					t.Fatalf("byte %d ^ %#x: parsed", i, flip)
				}
				continue
			}
			if err != nil {
				t.Fatalf("byte %d ^ %#x, inside a section: %v", i, flip, err)
			}
			if err := g.Verify(); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("byte %d ^ %#x: Verify = %v", i, flip, err)
			}
		}
	}
	for n := range len(good) {
		if _, err := testFormat.Parse(aligned(good[:n])); err == nil {
			t.Fatalf("cut to %d bytes: parsed", n)
		}
	}
	if _, err := testFormat.Parse(append(aligned(good), 0)); err == nil {
		t.Fatal("a byte appended: parsed")
	}
}

// A damaged section fails when used, and keeps failing; the others and the
// unchecked view still work.
func TestLazyCheck(t *testing.T) {
	t.Parallel()
	b, secs := sample(t)
	f, _ := testFormat.Parse(b)
	s := &f.secs[4] // id 9
	b[s.off+2] ^= 1
	if _, err := f.Section(9); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("damaged section: %v", err)
	}
	if _, err := f.Section(9); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("damaged section, asked again: %v", err)
	}
	if got, err := f.Section(5); err != nil || !bytes.Equal(got, secs[5]) {
		t.Errorf("an intact section: %q, %v", got, err)
	}
	if got, err := f.Unverified(9); err != nil || len(got) != len(secs[9]) {
		t.Errorf("Unverified = %q, %v", got, err)
	}
	if f.Verify() == nil {
		t.Error("Verify passed a damaged section")
	}
}

// What a reader says of files of another kind, version or machine, and of
// the layouts memdir wrote before this package.
func TestErrors(t *testing.T) {
	t.Parallel()
	b, _ := sample(t)
	other := func(edit func([]byte)) []byte {
		c := aligned(b)
		edit(c)
		return c
	}
	cases := []struct {
		name string
		data []byte
		want error
	}{
		{"empty", nil, ErrMagic},
		{"text", []byte(`{"type":"memdir-checkpoint-state","version":2}` + "\n"), ErrMagic},
		{"magic only", []byte("FRAMTEST"), ErrCorrupt},
		{"another kind", other(func(c []byte) { copy(c, "OTHERFMT") }), ErrMagic},
		{"another version", other(func(c []byte) { c[8] = 2 }), ErrVersion},
		// A header of the old lexical segment and recall index: a byte
		// order mark where the version now is.
		{"old layout", other(func(c []byte) { copy(c[8:], []byte{4, 3, 2, 1, 1, 0, 0, 0}) }), ErrVersion},
		{"other byte order", other(func(c []byte) { c[12] ^= flagBig }), ErrVersion},
		{"unknown flag", other(func(c []byte) { c[13] = 1 }), ErrVersion},
		{"checksum", other(func(c []byte) { c[20]++ }), ErrCorrupt},
	}
	for _, c := range cases {
		if _, err := testFormat.Parse(c.data); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
}

func TestOpen(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "x.bin")
	for round := range 2 { // a new file, then a replaced one
		w := testFormat.NewWriter(nil)
		w.Add(1, []byte(fmt.Sprint("round ", round)))
		write := w.WriteFile
		if round == 1 {
			write = w.WriteMapped
		}
		if err := write(path, 0o600); err != nil {
			t.Fatal(err)
		}
		for _, open := range []func(string) (*File, error){testFormat.Open, testFormat.ReadFile} {
			f, err := open(path)
			if err != nil {
				t.Fatal(err)
			}
			got, err := f.Section(1)
			if err != nil || string(got) != fmt.Sprint("round ", round) {
				t.Errorf("round %d: %q, %v", round, got, err)
			}
			if uintptr(unsafe.Pointer(&f.Bytes()[0]))%8 != 0 {
				t.Error("file not aligned in memory")
			}
			f.Close()
			f.Close()
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("%d entries in the directory, want 1", len(entries))
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", fi.Mode())
	}
	missing := filepath.Join(dir, "missing")
	os.WriteFile(path, nil, 0o600)
	for name, open := range map[string]func(string) (*File, error){"Open": testFormat.Open, "ReadFile": testFormat.ReadFile} {
		if _, err := open(missing); !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), missing) {
			t.Errorf("%s of a missing file: %v", name, err)
		}
		if _, err := open(path); !errors.Is(err, ErrMagic) || !strings.Contains(err.Error(), path) {
			t.Errorf("%s of an empty file: %v", name, err)
		}
		if _, err := open(dir); err == nil {
			t.Errorf("%s opened a directory", name)
		}
	}
}

func TestView(t *testing.T) {
	t.Parallel()
	type rec struct {
		A uint32
		B uint16
	}
	recs := []rec{{1, 2}, {3, 4}}
	b := aligned(Raw(recs))
	got, ok := View[rec](b)
	if !ok || len(got) != 2 || got[1] != recs[1] {
		t.Fatalf("View = %v, %v", got, ok)
	}
	if _, ok := View[rec](b[:7]); ok {
		t.Error("a partial record was viewed")
	}
	if _, ok := View[uint32](b[1:5]); ok {
		t.Error("misaligned memory was viewed")
	}
	if got, ok := View[uint64](nil); !ok || got != nil {
		t.Error("an empty section is an empty slice")
	}
	if Raw[uint64](nil) != nil {
		t.Error("Raw of nothing")
	}
}

// checksum is hash/crc32's CRC-32C, whole or continued in pieces.
func TestChecksum(t *testing.T) {
	t.Parallel()
	table := crc32.MakeTable(crc32.Castagnoli)
	b := make([]byte, 300<<10)
	for i := range b {
		b[i] = byte(i*131 + i>>8)
	}
	for _, n := range []int{0, 1, 7, 8, 9, 63, 1000, len(b)} {
		want := crc32.Checksum(b[:n], table)
		if got := checksum(0, b[:n]); got != want {
			t.Errorf("%d bytes: %08x, want %08x", n, got, want)
		}
		if got := checksum(checksum(0, b[:n/3]), b[n/3:n]); got != want {
			t.Errorf("%d bytes in two pieces: %08x, want %08x", n, got, want)
		}
	}
}

// TestGrowKeepsWhatWasWritten grows a writer at every stage, including one
// that starts inside a caller's buffer, and holds the frame to the one
// written without Grow.
func TestGrowKeepsWhatWasWritten(t *testing.T) {
	t.Parallel()
	build := func(grow int) []byte {
		w := testFormat.NewWriter([]byte("prefix.."))
		w.Grow(grow)
		w.Add(1, []byte("abc"))
		w.Grow(grow)
		w.AddFunc(2, func(b []byte) ([]byte, error) { return append(b, "in place"...), nil })
		w.Grow(grow)
		w.Add(3, bytes.Repeat([]byte("z"), 5000))
		b, err := w.Finish()
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	want := build(0)
	if !bytes.HasPrefix(want, []byte("prefix..")) {
		t.Fatalf("the caller's bytes are gone: %q", want[:8])
	}
	for _, n := range []int{1, 7, 4096, 1 << 20} {
		if got := build(n); !bytes.Equal(got, want) {
			t.Errorf("Grow(%d) changed the frame", n)
		}
	}
}
