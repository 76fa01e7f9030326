package team

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestBatches(t *testing.T) {
	local := map[string]string{}
	var keys []string
	for i := range 30 {
		k := fmt.Sprintf("k%02d.md", i)
		keys = append(keys, k)
		// Quotes, newlines and HTML characters make the JSON longer than
		// the content; the estimate must count the encoded form.
		local[k] = strings.Repeat("\"<&>\n", 4_000+i*100)
	}
	huge := "zz-huge.md"
	keys = append(keys, huge)
	local[huge] = strings.Repeat("h", MaxEntryBytes)
	bs := batches(keys, local)
	var flat []string
	for i, b := range bs {
		flat = append(flat, b...)
		entries := map[string]string{}
		for _, k := range b {
			entries[k] = local[k]
		}
		body, err := putBody(entries, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(b) > 1 && len(body) > MaxPutBodyBytes {
			t.Errorf("batch %d: %d entries in %d bytes, over %d", i, len(b), len(body), MaxPutBodyBytes)
		}
		if len(b) == 1 && b[0] != huge && len(body) > MaxPutBodyBytes {
			t.Errorf("batch %d: lone entry %s over the limit", i, b[0])
		}
	}
	if diff := cmp.Diff(keys, flat); diff != "" {
		t.Errorf("batches lose or reorder keys (-want +got):\n%s", diff)
	}
	if last := bs[len(bs)-1]; len(last) != 1 || last[0] != huge {
		t.Errorf("the oversize entry is not alone: %v", last)
	}
	if len(bs) < 4 {
		t.Errorf("%d batches for ~1 MB, want more", len(bs))
	}
	if got := batches(nil, nil); got != nil {
		t.Errorf("batches(nil) = %v", got)
	}
}

func TestIsTempFile(t *testing.T) {
	for name, want := range map[string]bool{".a.md.tmp-123": true, ".x.tmp-": true, "a.md": false, ".hidden.md": false, "a.tmp-1": false} {
		if got := isTempFile(name); got != want {
			t.Errorf("isTempFile(%q) = %v, want %v", name, got, want)
		}
	}
}
