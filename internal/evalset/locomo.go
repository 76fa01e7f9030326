package evalset

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
)

// LoCoMo is the shape of a LoCoMo file (Maharana et al., ACL 2024): a list
// of conversations between two speakers, each with observations (facts the
// conversation established, citing the turns they come from) and questions
// whose evidence names those turns. Only what the conversion reads is
// declared.
type locomoSample struct {
	SampleID     string                                    `json:"sample_id"`
	Conversation map[string]json.RawMessage                `json:"conversation"`
	Observation  map[string]map[string][][]json.RawMessage `json:"observation"`
	QA           []locomoQA                                `json:"qa"`
}

type locomoQA struct {
	Question string            `json:"question"`
	Evidence []json.RawMessage `json:"evidence"`
	Category int               `json:"category"`
}

// locomoCategories names LoCoMo's question categories, as tags.
var locomoCategories = map[int]string{1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}

// IsLoCoMo reports whether data looks like a LoCoMo file: a JSON list whose
// first element has "qa" and "conversation".
func IsLoCoMo(data []byte) bool {
	data = bytes.TrimSpace(data)
	if len(data) == 0 || data[0] != '[' {
		return false
	}
	var first []struct {
		QA           json.RawMessage `json:"qa"`
		Conversation json.RawMessage `json:"conversation"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&first); err != nil || len(first) == 0 {
		return false
	}
	return first[0].QA != nil && first[0].Conversation != nil
}

// ParseLoCoMo converts a LoCoMo file into one set per conversation, each
// the memory directory of that conversation: one memory per observation
// (its text as description and body, named after its speaker and first
// words, dated by its session), and the questions, each relevant to the
// memories that cite one of its evidence turns. Adversarial questions
// (category 5: the conversation does not answer them) have no relevant
// memory. A question of another category whose evidence no observation
// cites is left out (dropped counts them). Each set's Reference is the day
// after its last session, the time its questions are asked.
func ParseLoCoMo(data []byte) (sets []*Set, dropped int, err error) {
	var samples []locomoSample
	if err := json.Unmarshal(data, &samples); err != nil {
		return nil, 0, fmt.Errorf("decode LoCoMo: %w", err)
	}
	for i, s := range samples {
		set, n, err := locomoSet(s)
		if err != nil {
			return nil, 0, fmt.Errorf("LoCoMo sample %d (%s): %w", i, s.SampleID, err)
		}
		sets = append(sets, set)
		dropped += n
	}
	return sets, dropped, nil
}

// The patterns below are compiled on first use: the package is linked into
// every memdir process, and only an evaluation reads LoCoMo.
var locomoSessionKey = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^session_(\d+)_observation$`) })

func locomoSet(s locomoSample) (*Set, int, error) {
	id := s.SampleID
	if id == "" {
		id = "conversation"
	}
	set := &Set{Description: "LoCoMo " + id}
	cites := map[string][]string{} // dia id → memory files
	var last time.Time
	var sessions []int
	for k := range s.Observation {
		if m := locomoSessionKey().FindStringSubmatch(k); m != nil {
			n, _ := strconv.Atoi(m[1])
			sessions = append(sessions, n)
		}
	}
	sort.Ints(sessions)
	type dated struct {
		m    Memory
		when time.Time
	}
	var all []dated
	names := map[string]int{}
	for _, n := range sessions {
		when, err := locomoSessionDate(s.Conversation, n)
		if err != nil {
			return nil, 0, err
		}
		last = maxTime(last, when)
		obs := s.Observation[fmt.Sprintf("session_%d_observation", n)]
		speakers := make([]string, 0, len(obs))
		for sp := range obs {
			speakers = append(speakers, sp)
		}
		sort.Strings(speakers)
		for _, sp := range speakers {
			for j, o := range obs[sp] {
				if len(o) == 0 {
					continue
				}
				var text string
				if err := json.Unmarshal(o[0], &text); err != nil || strings.TrimSpace(text) == "" {
					continue
				}
				text = strings.TrimSpace(text)
				name := locomoName(sp, text)
				if names[name]++; names[name] > 1 {
					name += "-" + strconv.Itoa(names[name])
				}
				m := Memory{
					File: fmt.Sprintf("s%02d_%s_%02d.md", n, slug(sp), j+1), Name: name,
					Description: text, Type: "user", Body: text,
				}
				all = append(all, dated{m, when})
				if len(o) > 1 {
					for _, d := range locomoIDs(o[1]) {
						cites[d] = append(cites[d], m.File)
					}
				}
			}
		}
	}
	if len(all) == 0 {
		return nil, 0, fmt.Errorf("no observations")
	}
	ref := time.Date(last.Year(), last.Month(), last.Day()+1, 12, 0, 0, 0, time.UTC)
	set.Reference = &ref
	for _, d := range all {
		day := time.Date(d.when.Year(), d.when.Month(), d.when.Day(), 12, 0, 0, 0, time.UTC)
		d.m.AgeDays = int(ref.Sub(day).Hours() / 24) // whole days: the file is dated the session's day
		set.Memories = append(set.Memories, d.m)
	}
	dropped := 0
	for i, q := range s.QA {
		cat := locomoCategories[q.Category]
		if cat == "" {
			cat = "category-" + strconv.Itoa(q.Category)
		}
		query := Query{ID: fmt.Sprintf("%s-q%03d", id, i+1), Query: strings.TrimSpace(q.Question), Notes: "[" + cat + "]"}
		if q.Category == 5 {
			query.Notes = "[" + cat + "][none]"
			query.Relevant = []string{}
		} else {
			seen := map[string]bool{}
			for _, raw := range q.Evidence {
				for _, d := range locomoIDs(raw) {
					for _, f := range cites[d] {
						if !seen[f] {
							seen[f] = true
							query.Relevant = append(query.Relevant, f)
						}
					}
				}
			}
			if len(query.Relevant) == 0 {
				dropped++
				continue
			}
		}
		if query.Query == "" {
			continue
		}
		set.Queries = append(set.Queries, query)
	}
	return set, dropped, nil
}

// locomoSessionDate parses a session's "1:56 pm on 8 May, 2023".
func locomoSessionDate(conv map[string]json.RawMessage, n int) (time.Time, error) {
	raw, ok := conv[fmt.Sprintf("session_%d_date_time", n)]
	if !ok {
		return time.Time{}, fmt.Errorf("session %d has no date", n)
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return time.Time{}, fmt.Errorf("session %d date: %w", n, err)
	}
	for _, layout := range []string{"3:04 pm on 2 January, 2006", "3:04 pm on 2 Jan, 2006", "3:04 PM on 2 January, 2006"} {
		if t, err := time.Parse(layout, strings.TrimSpace(s)); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("session %d date %q: not in LoCoMo's format", n, s)
}

var locomoID = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`D\s*:?\s*(\d+)\s*:\s*(\d+)`) })

// locomoIDs reads the dialogue ids of an evidence or citation value: a
// string or a list of strings, each holding one or more ids, some written
// "D:11:26" or "D30:05"; they come back as "D11:26".
func locomoIDs(raw json.RawMessage) []string {
	var list []string
	if err := json.Unmarshal(raw, &list); err != nil {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return nil
		}
		list = []string{s}
	}
	var out []string
	for _, s := range list {
		for _, m := range locomoID().FindAllStringSubmatch(s, -1) {
			a, _ := strconv.Atoi(m[1])
			b, _ := strconv.Atoi(m[2])
			out = append(out, fmt.Sprintf("D%d:%d", a, b))
		}
	}
	return out
}

// locomoName names an observation's memory as an extraction agent would:
// the speaker and the first few words that say what it is about.
func locomoName(speaker, text string) string {
	words := []string{slug(speaker)}
	for w := range strings.FieldsSeq(text) {
		w = slug(w)
		if w == "" || w == words[0] || locomoSkip[w] {
			continue
		}
		words = append(words, w)
		if len(words) == 5 {
			break
		}
	}
	return strings.Join(words, "-")
}

var locomoSkip = map[string]bool{"a": true, "an": true, "the": true, "is": true, "was": true, "has": true, "have": true, "and": true, "to": true, "of": true, "in": true, "on": true, "for": true, "her": true, "his": true, "she": true, "he": true, "that": true, "with": true, "s": true}

// slug lowercases s and keeps letters and digits, joined by dashes.
func slug(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			b.WriteRune(r)
			dash = false
		} else {
			dash = true
		}
	}
	return b.String()
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
