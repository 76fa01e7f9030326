package lexical

import (
	"testing"
	"unsafe"
)

// FuzzLoadSections frames arbitrary section contents as a segment, so that
// Load's own checks are reached past the frame's checksums: a malformed
// segment must be an error or, for damage found while searching, Corrupt;
// never a panic. Seeds are in testdata/fuzz/FuzzLoadSections.
func FuzzLoadSections(f *testing.F) {
	x := New([]Doc{
		{ID: "a.md", Name: "deploy", Description: "how the service deploys", Body: "Run make deploy; 部署脚本 lives in ops/."},
		{ID: "b.md", Name: "testing", Description: "integration tests hit a real database", Body: "Use the compose Postgres."},
	}, nil)
	seg, err := x.AppendBinary(nil)
	if err != nil {
		f.Fatal(err)
	}
	fr, err := segFormat.Parse(seg)
	if err != nil {
		f.Fatal(err)
	}
	var secs [6][]byte
	for i := range secs {
		secs[i], _ = fr.Section(uint32(i + 1))
	}
	f.Add(secs[0], secs[1], secs[2], secs[3], secs[4], secs[5])
	f.Fuzz(func(t *testing.T, meta, docs, docTerms, dict, postings, blob []byte) {
		w := segFormat.NewWriter(nil)
		for i, s := range [][]byte{meta, docs, docTerms, dict, postings, blob} {
			w.Add(uint32(i+1), s)
		}
		data, err := w.Finish()
		if err != nil {
			t.Fatal(err)
		}
		words := make([]uint64, len(data)/8+1)
		buf := unsafe.Slice((*byte)(unsafe.Pointer(&words[0])), len(words)*8)[:len(data)]
		copy(buf, data)
		x, err := Load(buf, nil)
		if err != nil {
			return
		}
		for _, q := range []string{"deploy service", "部署", "postgres database tests", "make"} {
			x.Search(q, 5)
		}
		if _, err := x.AppendBinary(nil); err != nil {
			t.Fatal(err)
		}
		x.Put(Doc{ID: "c.md", Body: "a new document about deploys"})
		x.Remove("a.md")
		x.Search("deploy", 5)
	})
}
