package evalset

import (
	"bytes"
	"fmt"
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
		Recall:          map[int]float64{1: 0, 5: 0.25},
		Precision:       map[int]float64{1: 0, 5: 0.1},
		MRR:             0.25,
		NoneEmpty:       0.5,
		AnswerableEmpty: 0.5, // q2
		Answered:        1,
		AnsweredRecall:  map[int]float64{1: 0, 5: 0.5},
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

func TestPoolCountsEachQueryOnce(t *testing.T) {
	set := tinySet()
	answers := map[string][]string{"one": {"a.md"}, "four": {"a.md"}}
	r := Evaluate(set, func(q string) []string { return answers[q] }, &Options{Ks: []int{5}})
	pooled := Pool(r, r)
	if pooled.Queries != 2*r.Queries || math.Abs(pooled.Recall[5]-r.Recall[5]) > 1e-12 || pooled.NoneEmpty != r.NoneEmpty {
		t.Errorf("pooling a report with itself: %+v, want the same averages over twice the queries (%+v)", pooled, r)
	}
	for tag, tr := range r.ByTag() {
		if tr.Queries == 0 || tag == "" {
			t.Errorf("tag %q: %+v", tag, tr)
		}
	}
}

const tinyLoCoMo = `[{"sample_id": "conv-1",
 "conversation": {"speaker_a": "Ann", "speaker_b": "Bo",
   "session_1_date_time": "1:56 pm on 8 May, 2023", "session_2_date_time": "10:00 am on 25 May, 2023"},
 "observation": {
   "session_1_observation": {"Ann": [["Ann adopted a cat named Miso.", "D1:3"]], "Bo": [["Bo runs marathons.", ["D1:5", "D1:6"]]]},
   "session_2_observation": {"Ann": [["Ann started a pottery class.", "D2:1"]]}},
 "qa": [
   {"question": "What is the name of Ann's cat?", "answer": "Miso", "evidence": ["D:1:3"], "category": 4},
   {"question": "What sports does Bo do?", "answer": "running", "evidence": ["D1:06; D2:1"], "category": 1},
   {"question": "What did Bo adopt?", "adversarial_answer": "a cat", "evidence": ["D1:3"], "category": 5},
   {"question": "Where does Ann live?", "answer": "?", "evidence": ["D9:9"], "category": 4}]}]`

func TestParseLoCoMo(t *testing.T) {
	data := []byte(tinyLoCoMo)
	if !IsLoCoMo(data) || IsLoCoMo([]byte(`{"memories": []}`)) {
		t.Fatal("IsLoCoMo misjudges the shapes")
	}
	sets, dropped, err := ParseLoCoMo(data)
	if err != nil || len(sets) != 1 || dropped != 1 {
		t.Fatalf("ParseLoCoMo = %d sets, %d dropped, %v", len(sets), dropped, err)
	}
	s := sets[0]
	if got := s.Reference.Format("2006-01-02"); got != "2023-05-26" {
		t.Errorf("reference %s, want the day after the last session", got)
	}
	var files []string
	for _, m := range s.Memories {
		files = append(files, fmt.Sprintf("%s %s %d", m.File, m.Name, m.AgeDays))
	}
	want := []string{"s01_ann_01.md ann-adopted-cat-named-miso 18", "s01_bo_01.md bo-runs-marathons 18", "s02_ann_01.md ann-started-pottery-class 1"}
	if diff := cmp.Diff(want, files); diff != "" {
		t.Errorf("memories (-want +got):\n%s", diff)
	}
	var qs []string
	for _, q := range s.Queries {
		qs = append(qs, fmt.Sprintf("%s %v %v", q.ID, q.Relevant, q.Tags()))
	}
	wantQ := []string{
		"conv-1-q001 [s01_ann_01.md] [single-hop]",
		"conv-1-q002 [s01_bo_01.md s02_ann_01.md] [multi-hop]",
		"conv-1-q003 [] [adversarial none]",
	}
	if diff := cmp.Diff(wantQ, qs); diff != "" {
		t.Errorf("queries (-want +got):\n%s", diff)
	}
	if err := s.check(); err != nil {
		t.Error(err)
	}
}
