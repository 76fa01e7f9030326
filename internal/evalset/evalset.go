// Package evalset loads labelled memory-recall sets (memories plus queries
// with the files that are relevant to them) and scores any ranking function
// against them: recall@k, precision@k, MRR, and how queries with no
// relevant memory are handled.
//
// It knows nothing about how a ranking is produced, so the same code scores
// the lexical ranker, the model selector and end-to-end recall.
package evalset

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"
)

// Set is a labelled recall set.
type Set struct {
	Description string `json:"description"`
	// Reference, when set, is the date the queries are asked and ages
	// count back from; otherwise the evaluator's own reference date.
	Reference *time.Time `json:"reference,omitempty"`
	Memories  []Memory   `json:"memories"`
	Queries   []Query    `json:"queries"`
}

// Memory is one memory file of the set.
type Memory struct {
	// File is the path relative to the memory directory, with forward
	// slashes, e.g. "team/reference_oncall.md".
	File        string `json:"file"`
	Name        string `json:"name"`
	Description string `json:"description"`
	Type        string `json:"type"`
	Body        string `json:"body"`
	// AgeDays is how many days before the set's reference date the file
	// was last modified.
	AgeDays int `json:"age_days"`
}

// ModTime returns the memory's modification time: ref minus AgeDays.
func (m Memory) ModTime(ref time.Time) time.Time {
	return ref.AddDate(0, 0, -m.AgeDays)
}

// Query is one labelled query.
type Query struct {
	ID    string `json:"id"`
	Query string `json:"query"`
	// Relevant lists the files a good recall returns; empty means no
	// memory is relevant and the best answer is nothing.
	Relevant []string `json:"relevant"`
	// Notes explains the labels; it starts with tags such as "[zh][old]".
	Notes string `json:"notes"`
}

// Tags returns the bracketed tags at the start of the notes, without the
// brackets: "[zh][old] ..." gives ["zh", "old"].
func (q Query) Tags() []string {
	var tags []string
	s := strings.TrimSpace(q.Notes)
	for strings.HasPrefix(s, "[") {
		end := strings.IndexByte(s, ']')
		if end < 0 {
			break
		}
		tags = append(tags, s[1:end])
		s = strings.TrimSpace(s[end+1:])
	}
	return tags
}

// Reference is the reference date of the recall-dev set: ages count back
// from it.
var Reference = time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)

// Load reads and checks a set from a JSON file.
func Load(path string) (*Set, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("load eval set: %w", err)
	}
	s, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("load eval set %s: %w", path, err)
	}
	return s, nil
}

// LoadSets reads the sets of a file: one for a set in this package's
// format, one per conversation for a LoCoMo file (see ParseLoCoMo, whose
// count of questions left out it returns).
func LoadSets(path string) (sets []*Set, dropped int, err error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, 0, fmt.Errorf("load eval set: %w", err)
	}
	if IsLoCoMo(data) {
		sets, dropped, err = ParseLoCoMo(data)
	} else {
		var s *Set
		if s, err = Parse(data); err == nil {
			sets = []*Set{s}
		}
	}
	if err != nil {
		return nil, 0, fmt.Errorf("load eval set %s: %w", path, err)
	}
	for _, s := range sets {
		if err := s.check(); err != nil {
			return nil, 0, fmt.Errorf("load eval set %s (%s): %w", path, s.Description, err)
		}
	}
	return sets, dropped, nil
}

// Parse decodes and checks a set: memory files are unique and non-empty,
// query ids are unique, and every relevant file is one of the memories.
func Parse(data []byte) (*Set, error) {
	var s Set
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, fmt.Errorf("decode: %w", err)
	}
	if err := s.check(); err != nil {
		return nil, err
	}
	return &s, nil
}

// check checks that memory files are unique and non-empty, query ids
// unique, and every relevant file one of the memories.
func (s *Set) check() error {
	files := make(map[string]bool, len(s.Memories))
	for i, m := range s.Memories {
		if m.File == "" {
			return fmt.Errorf("memories[%d]: empty file", i)
		}
		if files[m.File] {
			return fmt.Errorf("memories[%d]: duplicate file %q", i, m.File)
		}
		files[m.File] = true
	}
	ids := make(map[string]bool, len(s.Queries))
	for i, q := range s.Queries {
		if q.ID == "" || ids[q.ID] {
			return fmt.Errorf("queries[%d]: missing or duplicate id %q", i, q.ID)
		}
		ids[q.ID] = true
		for _, f := range q.Relevant {
			if !files[f] {
				return fmt.Errorf("query %s: relevant file %q is not among the memories", q.ID, f)
			}
		}
	}
	return nil
}

// Newest returns up to n memory files, newest first (ties by file name):
// the candidates a manifest capped at n files, as Claude Code's is at 200,
// would show.
func (s *Set) Newest(n int) []string {
	ms := make([]Memory, len(s.Memories))
	copy(ms, s.Memories)
	sortMemories(ms)
	if n > len(ms) {
		n = len(ms)
	}
	out := make([]string, n)
	for i := range out {
		out[i] = ms[i].File
	}
	return out
}
