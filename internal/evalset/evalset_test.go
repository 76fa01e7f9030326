package evalset

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.yaml.in/yaml/v3"
)

func tinySet() *Set {
	return &Set{
		Memories: []Memory{
			{File: "a.md", Name: "a", Description: "alpha: first", Type: "user", Body: "body a", AgeDays: 3},
			{File: "b.md", Name: "b", Description: "beta", Type: "feedback", Body: "body b\n", AgeDays: 1},
			{File: "sub/c.md", Name: "c", Description: "gamma # not a comment", Type: "project", Body: "", AgeDays: 300},
			{File: "d.md", Name: "d", Description: "delta", Type: "reference", Body: "body d", AgeDays: 1},
		},
		Queries: []Query{
			{ID: "q1", Query: "one", Relevant: []string{"a.md", "b.md"}, Notes: "[old][zh] two relevant"},
			{ID: "q2", Query: "two", Relevant: []string{"sub/c.md"}, Notes: "plain"},
			{ID: "q3", Query: "three", Notes: "[none] nothing relevant"},
			{ID: "q4", Query: "four", Notes: "[none]"},
		},
	}
}

func TestEvaluate(t *testing.T) {
	answers := map[string][]string{
		"one":   {"x.md", "a.md", "a.md", "y.md", "z.md", "w.md", "b.md"}, // duplicate a.md is dropped
		"two":   nil,
		"three": nil,
		"four":  {"a.md"},
	}
	r := Evaluate(tinySet(), func(q string) []string { return answers[q] }, &Options{Ks: []int{5, 1, 5}})

	want := &Report{
		Ks:           []int{1, 5},
		Queries:      4,
		WithRelevant: 2,
		NoRelevant:   2,
		// q1: a.md at rank 2, b.md at rank 6; q2 answered nothing.
		Recall:         map[int]float64{1: 0, 5: 0.25},
		Precision:      map[int]float64{1: 0, 5: 0.1},
		MRR:            0.25,
		NoneEmpty:      0.5,
		Answered:       1,
		AnsweredRecall: map[int]float64{1: 0, 5: 0.5},
	}
	opt := cmp.Comparer(func(a, b float64) bool { return math.Abs(a-b) < 1e-12 })
	got := *r
	got.PerQuery = nil
	if diff := cmp.Diff(want, &got, opt); diff != "" {
		t.Errorf("report (-want +got):\n%s", diff)
	}
	q1 := r.PerQuery[0]
	if diff := cmp.Diff([]string{"x.md", "a.md", "y.md", "z.md", "w.md", "b.md"}, q1.Ranked); diff != "" {
		t.Errorf("q1 ranked (-want +got):\n%s", diff)
	}
	if q1.Rank != 2 || !cmp.Equal([]string{"b.md"}, q1.Missed) || !cmp.Equal([]string{"old", "zh"}, q1.Tags) {
		t.Errorf("q1 = rank %d, missed %v, tags %v; want 2, [b.md], [old zh]", q1.Rank, q1.Missed, q1.Tags)
	}

	var b strings.Builder
	if err := r.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"recall@1=0.000", "recall@5=0.250", "MRR=0.250", "none-empty=0.500", "q4 answered a no-relevant query", "q2 recall@1=0.00 rank=0", "[old] recall@1"} {
		if !strings.Contains(b.String(), s) {
			t.Errorf("text report lacks %q:\n%s", s, b.String())
		}
	}
}

func TestEvaluateNoQueries(t *testing.T) {
	r := Evaluate(&Set{}, func(string) []string { return nil }, nil)
	if r.NoneEmpty != 1 || r.MRR != 0 || r.Recall[5] != 0 || len(r.Ks) != 2 {
		t.Errorf("empty set report = %+v", r)
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name, json, want string
	}{
		{"broken json", `{"memories": [`, "decode"},
		{"empty file", `{"memories": [{"file": ""}]}`, "memories[0]: empty file"},
		{"duplicate file", `{"memories": [{"file": "a.md"}, {"file": "a.md"}]}`, `memories[1]: duplicate file "a.md"`},
		{"duplicate query", `{"queries": [{"id": "q"}, {"id": "q"}]}`, `queries[1]: missing or duplicate id "q"`},
		{"unknown relevant", `{"memories": [{"file": "a.md"}], "queries": [{"id": "q", "relevant": ["b.md"]}]}`, `query q: relevant file "b.md" is not among the memories`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.json))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Parse error = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

func TestLoadDevSet(t *testing.T) {
	s, err := Load("../../testdata/eval/recall-dev.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Memories) != 120 || len(s.Queries) != 60 {
		t.Errorf("dev set has %d memories and %d queries, want 120 and 60", len(s.Memories), len(s.Queries))
	}
	if _, err := Load(filepath.Join(t.TempDir(), "missing.json")); err == nil || !strings.Contains(err.Error(), "missing.json") {
		t.Errorf("Load of a missing file: error %v should name the file", err)
	}
}

func TestNewest(t *testing.T) {
	s := tinySet()
	if diff := cmp.Diff([]string{"b.md", "d.md", "a.md"}, s.Newest(3)); diff != "" {
		t.Errorf("Newest(3) (-want +got):\n%s", diff)
	}
	if got := len(s.Newest(200)); got != 4 {
		t.Errorf("Newest(200) returned %d files, want all 4", got)
	}
}

func TestWriteDir(t *testing.T) {
	dir := t.TempDir()
	s := tinySet()
	ref := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	if err := s.WriteDir(dir, ref); err != nil {
		t.Fatal(err)
	}
	for _, m := range s.Memories {
		path := filepath.Join(dir, filepath.FromSlash(m.File))
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if want := ref.AddDate(0, 0, -m.AgeDays); !fi.ModTime().Equal(want) {
			t.Errorf("%s: mtime %v, want %v", m.File, fi.ModTime(), want)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v, want 0600", m.File, fi.Mode().Perm())
		}
		head, body, ok := bytes.Cut(bytes.TrimPrefix(data, []byte("---\n")), []byte("---\n\n"))
		if !ok || !bytes.HasPrefix(data, []byte("---\n")) {
			t.Fatalf("%s: no frontmatter:\n%s", m.File, data)
		}
		var fm frontmatter
		if err := yaml.Unmarshal(head, &fm); err != nil {
			t.Fatalf("%s: frontmatter does not parse: %v", m.File, err)
		}
		if diff := cmp.Diff(frontmatter{m.Name, m.Description, m.Type}, fm); diff != "" {
			t.Errorf("%s: frontmatter (-want +got):\n%s", m.File, diff)
		}
		if strings.TrimSuffix(string(body), "\n") != strings.TrimSuffix(m.Body, "\n") {
			t.Errorf("%s: body %q, want %q", m.File, body, m.Body)
		}
	}
	fi, err := os.Stat(filepath.Join(dir, "sub"))
	if err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("subdirectory: %v, mode %v; want 0700", err, fi.Mode().Perm())
	}

	bad := &Set{Memories: []Memory{{File: "../escape.md"}}}
	if err := bad.WriteDir(dir, ref); err == nil || !strings.Contains(err.Error(), "../escape.md") {
		t.Errorf("WriteDir with an escaping path: error %v, want one naming it", err)
	}
}
