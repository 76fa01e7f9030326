package framed

import (
	"bytes"
	"testing"
)

// FuzzParse feeds arbitrary bytes to the reader: a malformed frame must be
// an error, never a panic, and a frame that parses and passes Verify is the
// one frame of its sections (writing them again gives the same bytes).
// Seeds are in testdata/fuzz/FuzzParse.
func FuzzParse(f *testing.F) {
	b, _ := sample(f)
	f.Add(b)
	f.Fuzz(func(t *testing.T, data []byte) {
		data = aligned(data)
		fr, err := testFormat.Parse(data)
		if err != nil {
			return
		}
		w := testFormat.NewWriter(nil)
		for i := range fr.Len() {
			id := fr.ID(i)
			raw, err := fr.Unverified(id)
			if err != nil {
				t.Fatalf("section %d listed but not found: %v", id, err)
			}
			if _, ok := View[byte](raw); !ok {
				t.Fatalf("section %d: View failed", id)
			}
			if len(raw) >= 8 {
				if _, ok := View[uint64](raw[:8]); !ok {
					t.Fatalf("section %d of an aligned frame is misaligned", id)
				}
			}
			fr.Section(id)
			w.Add(id, raw)
		}
		again, err := w.Finish()
		if err != nil {
			t.Fatal(err)
		}
		if len(again) != len(data) {
			t.Fatalf("rewritten frame is %d bytes, the parsed one %d", len(again), len(data))
		}
		if fr.Verify() == nil && !bytes.Equal(again, data) {
			t.Fatalf("a valid frame differs from its sections written again:\n%x\n%x", data, again)
		}
	})
}
