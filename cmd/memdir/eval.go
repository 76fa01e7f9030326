package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/internal/evalset"
)

func init() {
	register(&Command{
		Name:  "eval",
		Args:  "recall FILE [--distractors N] [--shortlist K] [--json]",
		Short: "measure recall quality on a labelled set",
		Long: `Eval measures how well recall finds the memories that matter. 'memdir eval
recall FILE' reads a labelled set (the format of testdata/eval/recall-dev.json:
memories with file, name, description, type, body and age_days; queries with
the files relevant to each), writes the memories into a temporary directory
with modification times from age_days, and runs every query through memdir's
recall, end to end. It reports:

  lexical path   what recall returns without a model: recall@5, precision@5,
                 MRR, and the share of queries with nothing relevant that
                 get nothing back;
  selector path  the shortlist the model selector would see: recall@K (is
                 each relevant memory among the K candidates?), beside the
                 baseline of Claude Code's manifest of the 200 newest files,
                 and the manifest tokens each sends per query.

--distractors N adds N synthetic memories, newer than every real one and
recombined from its sentences, to show how each approach holds up in a large
directory. Nothing is sent to a model.

Examples:
  memdir eval recall testdata/eval/recall-dev.json
  memdir eval recall testdata/eval/recall-dev.json --distractors 2000 --json`,
		Setup: func(fs *flag.FlagSet) RunFunc {
			distractors := fs.Int("distractors", 0, "add `N` synthetic memories newer than the real ones")
			shortlist := fs.Int("shortlist", memdir.RecallShortlist, "the selector's shortlist size `K`")
			asJSON := fs.Bool("json", false, "print the report as JSON, with per-query details")
			return func(ctx context.Context, env *Env, args []string) error {
				if len(args) != 2 || args[0] != "recall" {
					return usagef("eval takes: recall FILE")
				}
				p := args[1]
				if !filepath.IsAbs(p) {
					p = filepath.Join(env.Cwd, p)
				}
				set, err := evalset.Load(p)
				if err != nil {
					return fmt.Errorf("%w: %w", err, memdir.ErrInvalid)
				}
				rep, err := evalRecall(ctx, set, *distractors, *shortlist)
				if err != nil {
					return err
				}
				if *asJSON {
					return writeJSON(env.Stdout, rep)
				}
				rep.print(env.Stdout)
				return nil
			}
		},
	})
}

// evalRef is the reference date the dev set's ages count back from.
var evalRef = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

type recallEvalReport struct {
	File        string          `json:"-"`
	Memories    int             `json:"memories"`
	Distractors int             `json:"distractors"`
	Queries     int             `json:"queries"`
	Shortlist   int             `json:"shortlist_size"`
	Lexical     *evalset.Report `json:"lexical"`
	// ShortlistReport scores the selector's candidates; Baseline scores
	// Claude Code's manifest of the 200 newest files.
	ShortlistReport *evalset.Report `json:"shortlist"`
	Baseline        *evalset.Report `json:"baseline_newest_200"`
	// Mean manifest tokens per query (bytes/4), shortlist against newest 200.
	ShortlistTokens float64 `json:"shortlist_manifest_tokens"`
	BaselineTokens  float64 `json:"baseline_manifest_tokens"`
}

func evalRecall(ctx context.Context, set *evalset.Set, distractors, shortlist int) (*recallEvalReport, error) {
	tmp, err := os.MkdirTemp("", "memdir-eval-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	dir := filepath.Join(tmp, "memory")
	if err := os.Mkdir(dir, 0o700); err != nil {
		return nil, err
	}
	if err := set.WriteDir(dir, evalRef); err != nil {
		return nil, err
	}
	if distractors > 0 {
		if err := writeDistractors(dir, set, distractors); err != nil {
			return nil, err
		}
	}
	d, err := memdir.Open(dir, &memdir.Options{Journal: memdir.NewJournal(filepath.Join(tmp, "journal"), nil)})
	if err != nil {
		return nil, err
	}
	idx := memdir.NewRecallIndex(dir, "")
	if _, err := idx.Refresh(ctx); err != nil {
		return nil, err
	}
	now := func() time.Time { return evalRef }
	var recallErr error
	recall := func(q string, k int) *memdir.RecallResult {
		res, err := d.Recall(ctx, q, &memdir.RecallOptions{Index: idx, Shortlist: k, Now: now})
		if err != nil && recallErr == nil {
			recallErr = err
		}
		if res == nil {
			return &memdir.RecallResult{}
		}
		return res
	}
	rep := &recallEvalReport{Memories: len(set.Memories), Distractors: distractors, Queries: len(set.Queries), Shortlist: shortlist}
	rep.Lexical = evalset.Evaluate(set, func(q string) []string {
		var out []string
		for _, m := range recall(q, shortlist).Memories {
			out = append(out, m.Path)
		}
		return out
	}, &evalset.Options{Ks: []int{5}})

	var shortTokens, baseTokens float64
	rep.ShortlistReport = evalset.Evaluate(set, func(q string) []string {
		res := recall(q, shortlist)
		shortTokens += float64(len(manifestFor(idx, res.Shortlist))) / 4
		return res.Shortlist
	}, &evalset.Options{Ks: []int{5, shortlist}})
	newest := idx.Headers()
	if len(newest) > memdir.MaxScanFiles {
		newest = newest[:memdir.MaxScanFiles]
	}
	var newestPaths []string
	for _, h := range newest {
		newestPaths = append(newestPaths, h.Path)
	}
	baseManifest := memdir.Manifest(newest)
	rep.Baseline = evalset.Evaluate(set, func(q string) []string {
		baseTokens += float64(len(baseManifest)) / 4
		return newestPaths
	}, &evalset.Options{Ks: []int{memdir.MaxScanFiles}})
	if n := float64(len(set.Queries)); n > 0 {
		rep.ShortlistTokens, rep.BaselineTokens = shortTokens/n, baseTokens/n
	}
	return rep, recallErr
}

// manifestFor renders the manifest of the given paths, as the selector sees it.
func manifestFor(idx *memdir.RecallIndex, paths []string) string {
	want := map[string]int{}
	for i, p := range paths {
		want[p] = i + 1
	}
	hs := make([]memdir.Header, len(paths))
	for _, h := range idx.Headers() {
		if i := want[h.Path]; i > 0 {
			hs[i-1] = h
		}
	}
	return memdir.Manifest(hs)
}

// writeDistractors adds n memories, newer than every real one, whose text is
// recombined from the set's own sentences: realistic competition for the
// ranker, and for the newest-200 baseline.
func writeDistractors(dir string, set *evalset.Set, n int) error {
	rng := rand.New(rand.NewPCG(1, 2))
	var sentences, descs []string
	for _, m := range set.Memories {
		for _, s := range strings.Split(m.Body, "\n") {
			if s = strings.TrimSpace(s); len(s) > 20 {
				sentences = append(sentences, s)
			}
		}
		descs = append(descs, m.Description)
	}
	types := []string{"user", "feedback", "project", "reference"}
	for i := 0; i < n; i++ {
		a, b := descs[rng.IntN(len(descs))], descs[rng.IntN(len(descs))]
		desc := firstHalf(a) + " " + secondHalf(b)
		var body []string
		for j := 0; j < 3; j++ {
			body = append(body, sentences[rng.IntN(len(sentences))])
		}
		m := evalset.Memory{
			File: fmt.Sprintf("zz_distractor_%05d.md", i), Name: fmt.Sprintf("distractor-%d", i),
			Description: desc, Type: types[i%4], Body: strings.Join(body, "\n"),
		}
		data, err := m.Markdown()
		if err != nil {
			return err
		}
		p := filepath.Join(dir, m.File)
		if err := os.WriteFile(p, data, 0o600); err != nil {
			return err
		}
		// Newer than every real memory (the newest real one is age 0).
		mt := evalRef.Add(time.Duration(i+1) * time.Minute)
		if err := os.Chtimes(p, mt, mt); err != nil {
			return err
		}
	}
	return nil
}

func firstHalf(s string) string {
	w := strings.Fields(s)
	return strings.Join(w[:len(w)/2], " ")
}

func secondHalf(s string) string {
	w := strings.Fields(s)
	return strings.Join(w[len(w)/2:], " ")
}

func (r *recallEvalReport) print(w io.Writer) {
	fmt.Fprintf(w, "Recall evaluation: %d memories", r.Memories)
	if r.Distractors > 0 {
		fmt.Fprintf(w, " + %d distractors", r.Distractors)
	}
	fmt.Fprintf(w, ", %d queries (%d with relevant memories, %d without)\n\n", r.Queries, r.Lexical.WithRelevant, r.Lexical.NoRelevant)
	fmt.Fprintf(w, "Lexical path (no model):\n")
	fmt.Fprintf(w, "  recall@5             %.3f\n", r.Lexical.Recall[5])
	fmt.Fprintf(w, "  precision@5          %.3f\n", r.Lexical.Precision[5])
	fmt.Fprintf(w, "  MRR                  %.3f\n", r.Lexical.MRR)
	fmt.Fprintf(w, "  no-relevant → empty  %.3f\n", r.Lexical.NoneEmpty)
	fmt.Fprintf(w, "  answered queries     %d of %d (recall@5 when answered %.3f)\n\n", r.Lexical.Answered, r.Lexical.WithRelevant, r.Lexical.AnsweredRecall[5])
	fmt.Fprintf(w, "Lexical ranking, top 5 without the relevance threshold:\n")
	fmt.Fprintf(w, "  recall@5             %.3f   (MRR %.3f)\n\n", r.ShortlistReport.Recall[5], r.ShortlistReport.MRR)
	fmt.Fprintf(w, "Selector path (what the model is shown):\n")
	fmt.Fprintf(w, "  shortlist recall@%-3d %.3f   (~%.0f manifest tokens per query)\n", r.Shortlist, r.ShortlistReport.Recall[r.Shortlist], r.ShortlistTokens)
	fmt.Fprintf(w, "  newest-200 recall    %.3f   (~%.0f manifest tokens per query; Claude Code's baseline)\n", r.Baseline.Recall[memdir.MaxScanFiles], r.BaselineTokens)
}
