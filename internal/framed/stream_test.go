package framed

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"testing"
)

// TestStreamWriterMatchesWriter holds the StreamWriter to the frame a
// Writer builds from the same sections, whatever the sections' sizes, how
// they are split into writes, and where the frame starts.
func TestStreamWriterMatchesWriter(t *testing.T) {
	t.Parallel()
	ft := Format{Magic: "TESTSTRM", Version: 7}
	r := rand.New(rand.NewPCG(5, 6))
	for round := range 60 {
		n := r.IntN(6)
		secs := make([][]byte, n)
		for i := range secs {
			size := r.IntN(40)
			if r.IntN(4) == 0 {
				size = r.IntN(3 * streamChunk)
			}
			secs[i] = make([]byte, size)
			for j := range secs[i] {
				secs[i][j] = byte(r.Uint32())
			}
		}
		w := ft.NewWriter(nil)
		for i, s := range secs {
			w.Add(uint32(2*i+1), s)
		}
		want, err := w.Finish()
		if err != nil {
			t.Fatal(err)
		}
		base := int64(8 * r.IntN(3))
		var buf Buffer
		s := ft.NewStreamWriter(&buf, base)
		for i, sec := range secs {
			s.Begin(uint32(2*i + 1))
			for len(sec) > 0 {
				k := min(len(sec), r.IntN(200000)+1)
				s.Write(sec[:k])
				sec = sec[k:]
			}
		}
		size, err := s.Finish()
		if err != nil {
			t.Fatal(err)
		}
		got := buf.Bytes(base + size)[base:]
		if !bytes.Equal(want, got) {
			t.Fatalf("round %d: the stream's frame (%d bytes) differs from the Writer's (%d)", round, len(got), len(want))
		}
		f, err := ft.Parse(got)
		if err != nil || f.Verify() != nil {
			t.Fatalf("round %d: %v", round, err)
		}
	}
}

type failingWriterAt struct{ after int }

func (w *failingWriterAt) WriteAt(p []byte, off int64) (int, error) {
	if w.after--; w.after < 0 {
		return 0, errors.New("disk full")
	}
	return len(p), nil
}

func TestStreamWriterErrors(t *testing.T) {
	t.Parallel()
	ft := Format{Magic: "TESTSTRM", Version: 1}
	s := ft.NewStreamWriter(&failingWriterAt{after: 1}, 0)
	s.Begin(1)
	s.Write(make([]byte, 3*streamChunk))
	if _, err := s.Finish(); err == nil {
		t.Error("a failing write went unreported")
	}
	s = ft.NewStreamWriter(&Buffer{}, 0)
	s.Begin(2)
	s.Begin(1)
	if _, err := s.Finish(); err == nil {
		t.Error("decreasing ids went unreported")
	}
	s = ft.NewStreamWriter(&Buffer{}, 0)
	if _, err := s.Write([]byte("x")); err == nil {
		t.Error("a write outside a section went unreported")
	}
}
