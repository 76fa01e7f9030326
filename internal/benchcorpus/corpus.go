// Package benchcorpus writes synthetic memory directories of any size for
// benchmarks: realistic, varied bodies recombined from the sentences of a
// labelled recall set (testdata/eval/recall-dev.json), plus rare words drawn
// from a long-tailed vocabulary, so that the index grows as a real one does
// instead of repeating one body.
package benchcorpus

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/doctor"
	"github.com/memdir/memdir/internal/evalset"
)

// Ref is the newest modification time a corpus file gets; file i is i
// minutes older.
var Ref = time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)

// Corpus generates memories from a recall set.
type Corpus struct {
	sentences, descs []string
	syllables        []string
}

// New prepares a generator from a set's memories.
func New(set *evalset.Set) *Corpus {
	c := &Corpus{syllables: strings.Fields("ka lo mi ren ta vu so ne dar pel qui ost ber zan fi mor tel gra hu ix")}
	for _, m := range set.Memories {
		for s := range strings.SplitSeq(m.Body, "\n") {
			if s = strings.TrimSpace(s); len(s) > 20 {
				c.sentences = append(c.sentences, s)
			}
		}
		c.descs = append(c.descs, m.Description)
	}
	return c
}

// Load reads the set at path and prepares a generator.
func Load(path string) (*Corpus, error) {
	set, err := evalset.Load(path)
	if err != nil {
		return nil, err
	}
	return New(set), nil
}

// rare returns a made-up word (a code name, a ticket, a host) from a
// vocabulary of about vocab words, the low ranks far more common (Zipf).
func (c *Corpus) rare(rng *rand.Rand, vocab int) string {
	// Inverse-CDF sampling of a Zipf(1) distribution over [1, vocab].
	r := int(math.Exp(rng.Float64()*math.Log(float64(vocab)))) - 1
	var b strings.Builder
	x := r
	for k := 0; k < 3 || x > 0; k++ {
		b.WriteString(c.syllables[x%len(c.syllables)])
		x /= len(c.syllables)
	}
	switch r % 4 {
	case 1:
		return "svc-" + b.String()
	case 2:
		return fmt.Sprintf("%s_%d", b.String(), r%97)
	case 3:
		return strings.ToUpper(b.String()[:1]) + b.String()[1:]
	}
	return b.String()
}

// Memory returns memory i of a corpus of n: file name, name, description,
// type and body. The same (i, n) always gives the same memory.
func (c *Corpus) Memory(i, n int) evalset.Memory {
	rng := rand.New(rand.NewPCG(uint64(i), 7))
	vocab := max(1000, n*2)
	types := []string{"user", "feedback", "project", "reference"}
	a, b := c.descs[rng.IntN(len(c.descs))], c.descs[rng.IntN(len(c.descs))]
	desc := half(a, true) + " " + c.rare(rng, vocab) + " " + half(b, false)
	var body []string
	for j, k := 0, 2+rng.IntN(6); j < k; j++ {
		s := c.sentences[rng.IntN(len(c.sentences))]
		if rng.IntN(2) == 0 {
			s += " See " + c.rare(rng, vocab) + " and " + c.rare(rng, vocab) + "."
		}
		body = append(body, s)
	}
	typ := types[i%4]
	name := fmt.Sprintf("%s-%s-%d", typ, c.rare(rng, vocab), i)
	return evalset.Memory{
		File: fmt.Sprintf("%s_mem_%06d.md", typ, i), Name: name,
		Description: desc, Type: typ, Body: strings.Join(body, "\n"),
	}
}

func half(s string, first bool) string {
	w := strings.Fields(s)
	if first {
		return strings.Join(w[:len(w)/2], " ")
	}
	return strings.Join(w[len(w)/2:], " ")
}

// Write writes memories 0..n-1 into dir (created if missing), file i
// modified i minutes before Ref, and a MEMORY.md indexing the newest 150.
func (c *Corpus) Write(dir string, n int) error { return c.write(dir, n, 150) }

// WriteIndexed is Write with every memory indexed, as a user's directory
// is after memdir saved each memory and 'memdir doctor --fix --compact'
// moved what MEMORY.md cannot hold into MEMORY-more.md: the newest lines
// in MEMORY.md, under its limits, the rest in the overflow file.
func (c *Corpus) WriteIndexed(ctx context.Context, dir string, n int) error {
	if err := c.write(dir, n, n); err != nil {
		return err
	}
	journal, err := os.MkdirTemp("", "benchcorpus-journal-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(journal)
	d, err := memdir.Open(dir, &memdir.Options{Journal: memdir.NewJournal(journal, nil)})
	if err != nil {
		return err
	}
	_, err = doctor.Fix(ctx, d, &doctor.FixOptions{Compact: true})
	return err
}

func (c *Corpus) write(dir string, n, indexed int) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	var ix strings.Builder
	for i := range n {
		m := c.Memory(i, n)
		data, err := m.Markdown()
		if err != nil {
			return err
		}
		p := filepath.Join(dir, m.File)
		if err := os.WriteFile(p, data, 0o600); err != nil {
			return err
		}
		mt := Ref.Add(-time.Duration(i) * time.Minute)
		if err := os.Chtimes(p, mt, mt); err != nil {
			return err
		}
		if i < indexed {
			fmt.Fprintf(&ix, "- [%s](%s) — %s\n", m.Name, m.File, m.Description)
		}
	}
	return os.WriteFile(filepath.Join(dir, "MEMORY.md"), []byte(ix.String()), 0o600)
}
