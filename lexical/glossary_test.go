package lexical

import (
	"bytes"
	"slices"
	"testing"
	"unsafe"
)

func TestGlossaryTranslations(t *testing.T) {
	t.Parallel()
	g := loadGlossary()
	for _, tc := range []struct {
		query     string
		want, not []string
	}{
		// 跑 (run) is one character, so only 压测 is matched.
		{query: "怎么跑 dispatch 的压测？", want: []string{"load", "test"}, not: []string{"run"}},
		{query: "where are the load test results?", want: []string{"压测", "结果"}},
		{query: "write up the postmortem for the outage", want: []string{"复盘", "事故"}},
		// One character alone is not matched: 表 in 表单 is not "table".
		{query: "表单页面", want: []string{"form", "page"}, not: []string{"table"}},
		{query: "plain words with no entry like zebra", not: []string{"斑马"}},
	} {
		got := g.translations(tc.query)
		for _, w := range tc.want {
			if !slices.Contains(got, w) {
				t.Errorf("translations(%q) = %v, want %q among them", tc.query, got, w)
			}
		}
		for _, n := range tc.not {
			if slices.Contains(got, n) {
				t.Errorf("translations(%q) = %v, should not hold %q", tc.query, got, n)
			}
		}
	}
}

func TestGlossaryBridgesLanguages(t *testing.T) {
	t.Parallel()
	docs := []Doc{
		{ID: "k6.md", Name: "load-testing", Description: "how to run load tests with k6 and where results go", Body: "perf/k6 scripts"},
		{ID: "other.md", Name: "editor", Description: "the user edits in Neovim", Body: "vim keys"},
	}
	with := New(docs, nil)
	hits := with.Search("怎么跑压测？上次的结果在哪看？", 5)
	if len(hits) == 0 || hits[0].ID != "k6.md" || hits[0].Norm < 0.13 {
		t.Fatalf("Chinese question, English memory: %+v", hits)
	}
	without := New(docs, &Options{GlossaryWeight: -1})
	if hits := without.Search("怎么跑压测？上次的结果在哪看？", 5); len(hits) != 0 {
		t.Errorf("with the glossary off, a Chinese question matched English text: %+v", hits)
	}
	// The reverse direction: an English question, a Chinese memory.
	zh := New([]Doc{{ID: "pm.md", Name: "事故复盘", Description: "事故复盘文档统一放在 Confluence", Body: "模板"}}, nil)
	if hits := zh.Search("where do postmortem write-ups go?", 5); len(hits) == 0 {
		t.Error("English question did not reach the Chinese memory")
	}
}

// TestGlossaryOnLoadedSegments: a loaded index skips the glossary for an
// English query only when no term it holds can be CJK; both directions
// still bridge the languages.
func TestGlossaryOnLoadedSegments(t *testing.T) {
	t.Parallel()
	load := func(docs []Doc) *Index {
		t.Helper()
		var b bytes.Buffer
		if _, err := New(docs, nil).WriteTo(&b); err != nil {
			t.Fatal(err)
		}
		words := make([]uint64, b.Len()/8+1)
		data := unsafe.Slice((*byte)(unsafe.Pointer(&words[0])), len(words)*8)[:b.Len()]
		copy(data, b.Bytes())
		x, err := Load(data, nil)
		if err != nil {
			t.Fatal(err)
		}
		return x
	}
	en := load([]Doc{{ID: "k6.md", Name: "load-testing", Description: "how to run load tests with k6 — résumé, naïve café", Body: "perf/k6 scripts, Привет"}})
	if en.mayHoldCJK() {
		t.Error("an index of English, French and Russian words says it may hold CJK terms")
	}
	if hits := en.Search("怎么跑压测？", 5); len(hits) == 0 || hits[0].ID != "k6.md" {
		t.Errorf("Chinese question, loaded English memory: %+v", hits)
	}
	zh := load([]Doc{{ID: "pm.md", Name: "事故复盘", Description: "事故复盘文档统一放在 Confluence", Body: "模板"}})
	if !zh.mayHoldCJK() {
		t.Error("an index of Chinese terms says it holds none")
	}
	if hits := zh.Search("where do postmortem write-ups go?", 5); len(hits) == 0 {
		t.Error("English question did not reach the loaded Chinese memory")
	}
	if empty := load(nil); empty.mayHoldCJK() {
		t.Error("an empty index says it may hold CJK terms")
	}
}
