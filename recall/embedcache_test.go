package recall_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/internal/atomicfile"
	"github.com/memdir/memdir/internal/framed"
	"github.com/memdir/memdir/llm"
	"github.com/memdir/memdir/memdirtest"
	"github.com/memdir/memdir/openai"
	"github.com/memdir/memdir/recall"
)

// newTestEmbedder returns the real OpenAI adapter pointed at srv, without
// retries so that each scripted reply answers one request.
func newTestEmbedder(tb testing.TB, srv *memdirtest.EmbedServer, model string, dims int) *openai.Embedder {
	tb.Helper()
	e, err := openai.NewEmbedder(&openai.EmbedderOptions{Model: model, BaseURL: srv.OpenAIBaseURL(), Dimensions: dims, MaxRetries: -1})
	if err != nil {
		tb.Fatal(err)
	}
	return e
}

func openTestCache(tb testing.TB, path string) *recall.EmbedCache {
	tb.Helper()
	c, err := recall.OpenEmbedCache(path)
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

func inputs(texts ...string) []recall.EmbedInput {
	in := make([]recall.EmbedInput, len(texts))
	for i, t := range texts {
		in[i] = recall.EmbedInput{Key: recall.EmbedKey(t), Text: t}
	}
	return in
}

func mustVectors(tb testing.TB, c *recall.EmbedCache, e llm.Embedder, in []recall.EmbedInput, opts *recall.EmbedOptions) ([][]float32, *recall.EmbedStats) {
	tb.Helper()
	v, st, err := c.Vectors(context.Background(), e, in, opts)
	if err != nil {
		tb.Fatal(err)
	}
	if len(v) != len(in) {
		tb.Fatalf("%d vectors for %d inputs", len(v), len(in))
	}
	return v, st
}

func TestEmbedCacheEmbedsOnlyWhatChanged(t *testing.T) {
	t.Parallel()
	srv := memdirtest.NewEmbedServer(t)
	e := newTestEmbedder(t, srv, "embed-test", 0)
	path := filepath.Join(t.TempDir(), "state", "embed", "dir.vec")
	texts := []string{"deploy the service with make ship", "tests use the real database", "release notes live in CHANGES.md"}

	c := openTestCache(t, path)
	vecs, st := mustVectors(t, c, e, inputs(texts...), nil)
	if diff := cmp.Diff(recall.EmbedStats{Embedded: 3, Requests: 1, Usage: llm.Usage{InputTokens: 16, Calls: 1}}, *st); diff != "" {
		t.Errorf("first call stats (-want +got):\n%s", diff)
	}
	for i, text := range texts {
		if diff := cmp.Diff(memdirtest.FakeVector(text, memdirtest.DefaultEmbedDim), vecs[i]); diff != "" {
			t.Errorf("vector %d is not the server's (-want +got):\n%s", i, diff)
		}
	}

	// A new process: everything comes from the file.
	c2 := openTestCache(t, path)
	vecs2, st := mustVectors(t, c2, e, inputs(texts...), nil)
	if diff := cmp.Diff(recall.EmbedStats{Cached: 3}, *st); diff != "" {
		t.Errorf("second process stats (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(vecs, vecs2); diff != "" {
		t.Errorf("vectors read back differ (-first +second):\n%s", diff)
	}

	// Editing one memory re-embeds that one only.
	texts[1] = "tests use the real database, never mocks"
	_, st = mustVectors(t, c2, e, inputs(texts...), nil)
	if st.Cached != 2 || st.Embedded != 1 {
		t.Errorf("after one edit: cached %d, embedded %d; want 2, 1", st.Cached, st.Embedded)
	}
	if got := srv.Texts(); len(got) != 4 || got[3] != texts[1] {
		t.Errorf("texts sent = %q, want the three then the edited one", got)
	}
}

func TestEmbedCacheModelAndDimensionChanges(t *testing.T) {
	t.Parallel()
	srv := memdirtest.NewEmbedServer(t)
	path := filepath.Join(t.TempDir(), "c.vec")
	in := inputs("alpha beta", "gamma delta")
	c := openTestCache(t, path)
	small := newTestEmbedder(t, srv, "small", 0)
	large := newTestEmbedder(t, srv, "large", 0)
	short := newTestEmbedder(t, srv, "small", 32) // named small@32

	mustVectors(t, c, small, in, nil)
	if _, st := mustVectors(t, c, large, in, nil); st.Embedded != 2 {
		t.Errorf("another model embedded %d, want every input (2)", st.Embedded)
	}
	if _, st := mustVectors(t, openTestCache(t, path), small, in, nil); st.Cached != 2 {
		t.Errorf("back to the first model: cached %d, want 2 (kept beside the other)", st.Cached)
	}
	v, st := mustVectors(t, c, short, in, nil)
	if st.Embedded != 2 || len(v[0]) != 32 {
		t.Errorf("requested dimension: embedded %d, dim %d; want 2, 32", st.Embedded, len(v[0]))
	}

	// Same name, vectors of another size (the server's model changed):
	// the cached vectors are dropped and every input is embedded again.
	srv.SetDim(48)
	in3 := append(inputs("epsilon"), in...)
	v, st = mustVectors(t, openTestCache(t, path), small, in3, nil)
	if st.Cached != 0 || st.Embedded != 3 {
		t.Errorf("dimension change: cached %d, embedded %d; want 0, 3", st.Cached, st.Embedded)
	}
	for i := range v {
		if len(v[i]) != 48 {
			t.Errorf("vector %d has %d dimensions, want 48", i, len(v[i]))
		}
	}
	if _, st := mustVectors(t, openTestCache(t, path), small, in3, nil); st.Cached != 3 {
		t.Errorf("after the dimension change: cached %d, want 3", st.Cached)
	}
}

func TestEmbedCacheBatchesAndProgress(t *testing.T) {
	t.Parallel()
	srv := memdirtest.NewEmbedServer(t)
	e := newTestEmbedder(t, srv, "m", 0)
	var texts []string
	for i := range 150 {
		texts = append(texts, fmt.Sprintf("memory number %d about topic %d", i, i%7))
	}
	in := inputs(texts...)
	in = append(in, in[0], recall.EmbedInput{Text: "  \n"}) // a duplicate and an empty text
	var calls [][2]int
	c := openTestCache(t, filepath.Join(t.TempDir(), "c.vec"))
	v, st := mustVectors(t, c, e, in, &recall.EmbedOptions{BatchSize: 64, Progress: func(done, total int) { calls = append(calls, [2]int{done, total}) }})
	if diff := cmp.Diff([][2]int{{0, 150}, {64, 150}, {128, 150}, {150, 150}}, calls); diff != "" {
		t.Errorf("progress (-want +got):\n%s", diff)
	}
	var sizes []int
	for _, r := range srv.Requests() {
		sizes = append(sizes, len(r.Input))
	}
	if diff := cmp.Diff([]int{64, 64, 22}, sizes); diff != "" {
		t.Errorf("request sizes (-want +got):\n%s", diff)
	}
	if st.Requests != 3 || st.Usage.Calls != 3 || st.Embedded != 150 {
		t.Errorf("stats = %+v, want 3 requests of 150 texts", st)
	}
	if diff := cmp.Diff(v[0], v[150]); diff != "" {
		t.Errorf("duplicate input got another vector:\n%s", diff)
	}
	if v[151] != nil {
		t.Errorf("empty text got a vector of %d dimensions, want nil", len(v[151]))
	}
}

func TestEmbedCacheCorruptFileIsRebuilt(t *testing.T) {
	t.Parallel()
	srv := memdirtest.NewEmbedServer(t)
	e := newTestEmbedder(t, srv, "m", 0)
	in := inputs("one text", "two texts")
	dir := t.TempDir()
	good := filepath.Join(dir, "good.vec")
	vecs, _ := mustVectors(t, openTestCache(t, good), e, in, nil)
	data, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	// A bit of a vector: the sums catch it.
	at := bytes.Index(data, framed.Raw(vecs[1]))
	if at < 0 {
		t.Fatal("the vector is not in the file")
	}
	flipped := append([]byte(nil), data...)
	flipped[at+5] ^= 0xff
	otherVersion := append([]byte(nil), data...)
	otherVersion[8] = 99
	for name, content := range map[string][]byte{
		"garbage":       []byte("not a cache at all"),
		"truncated":     data[:len(data)-9],
		"bit flip":      flipped,
		"other version": otherVersion,
		"empty":         nil,
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "c.vec")
			if err := os.WriteFile(path, content, 0o600); err != nil {
				t.Fatal(err)
			}
			_, st := mustVectors(t, openTestCache(t, path), e, in, nil)
			if st.Embedded != 2 {
				t.Errorf("embedded %d, want 2 (the file is rebuilt)", st.Embedded)
			}
			if _, st := mustVectors(t, openTestCache(t, path), e, in, nil); st.Cached != 2 {
				t.Errorf("after the rebuild: cached %d, want 2", st.Cached)
			}
		})
	}
}

func TestEmbedCacheFailures(t *testing.T) {
	t.Parallel()
	texts := make([]string, 10)
	for i := range texts {
		texts[i] = fmt.Sprintf("text %d", i)
	}
	tests := []struct {
		name  string
		reply memdirtest.EmbedReply
		kind  llm.ModelErrorKind // ModelError kind, "" when the cache itself rejects the reply
	}{
		{"server error", memdirtest.EmbedReply{Status: 503, Message: "overloaded"}, "server"},
		{"bad key", memdirtest.EmbedReply{Status: 401, Message: "bad key"}, "auth"},
		{"broken JSON", memdirtest.EmbedReply{Body: `{"data": [`}, "bad_response"},
		{"wrong count", memdirtest.EmbedReply{Vectors: [][]float32{{1, 0}}}, "bad_response"},
		// The adapter keeps to one size per call; across calls it is the cache's to check.
		{"mixed dimensions", memdirtest.EmbedReply{Vectors: [][]float32{{1, 0}, {1, 0, 0}, {1, 0}, {1, 0}}}, "bad_response"},
		{"another dimension than the first batch", memdirtest.EmbedReply{Vectors: [][]float32{{1, 0}, {0, 1}, {1, 0}, {0, 1}}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := memdirtest.NewEmbedServer(t)
			e := newTestEmbedder(t, srv, "m", 0)
			path := filepath.Join(t.TempDir(), "c.vec")
			// The first batch succeeds, the second fails.
			srv.Enqueue(memdirtest.EmbedReply{}, tt.reply)
			_, _, err := openTestCache(t, path).Vectors(context.Background(), e, inputs(texts...), &recall.EmbedOptions{BatchSize: 4})
			var ee *llm.EmbedError
			if !errors.As(err, &ee) || ee.Embedder != "openai:m" {
				t.Fatalf("error = %v, want an *EmbedError from openai:m", err)
			}
			var me *llm.ModelError
			switch {
			case tt.kind == "" && errors.As(err, &me):
				t.Errorf("error %v is a ModelError, want the cache's own", err)
			case tt.kind != "" && (!errors.As(err, &me) || me.Kind != tt.kind):
				t.Errorf("error = %v, want a ModelError of kind %s", err, tt.kind)
			}
			// The first batch was kept.
			_, st := mustVectors(t, openTestCache(t, path), e, inputs(texts...), &recall.EmbedOptions{BatchSize: 4})
			if st.Cached != 4 || st.Embedded != 6 {
				t.Errorf("after the failure: cached %d, embedded %d; want 4, 6", st.Cached, st.Embedded)
			}
		})
	}
}

// looseEmbedder breaks llm.Embedder's promise of one size per call, as an
// embedder from another package might: its vectors alternate between 2 and 3
// dimensions.
type looseEmbedder struct{}

func (looseEmbedder) EmbedderName() string { return "loose:m" }

func (looseEmbedder) Embed(_ context.Context, texts []string) (*llm.Embedding, error) {
	out := &llm.Embedding{Usage: llm.Usage{Calls: 1}}
	for i := range texts {
		v := make([]float32, 2+i%2)
		v[0] = 1
		out.Vectors = append(out.Vectors, v)
	}
	return out, nil
}

// TestEmbedCacheMixedBatch checks that the cache rejects a batch of mixed
// sizes itself, whatever the embedder lets through.
func TestEmbedCacheMixedBatch(t *testing.T) {
	t.Parallel()
	_, _, err := openTestCache(t, filepath.Join(t.TempDir(), "c.vec")).Vectors(context.Background(), looseEmbedder{}, inputs("a", "b"), nil)
	var ee *llm.EmbedError
	if !errors.As(err, &ee) || ee.Embedder != "loose:m" || !strings.Contains(err.Error(), "vector 1 of a batch has 3 dimensions") {
		t.Errorf("error = %v, want the cache's EmbedError about vector 1", err)
	}
}

func TestEmbedCacheCancelled(t *testing.T) {
	t.Parallel()
	srv := memdirtest.NewEmbedServer(t)
	e := newTestEmbedder(t, srv, "m", 0)
	ctx, cancel := context.WithCancel(context.Background())
	opts := &recall.EmbedOptions{BatchSize: 1, Progress: func(done, total int) {
		if done == 2 {
			cancel()
		}
	}}
	path := filepath.Join(t.TempDir(), "c.vec")
	_, _, err := openTestCache(t, path).Vectors(ctx, e, inputs("a", "b", "c", "d"), opts)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error = %v, want context.Canceled", err)
	}
	if _, st := mustVectors(t, openTestCache(t, path), e, inputs("a", "b", "c", "d"), nil); st.Cached != 2 {
		t.Errorf("cached %d after cancelling at 2, want 2 (work done is kept)", st.Cached)
	}
}

// TestEmbedCacheSharedFile has several caches, as several processes would,
// add different texts to one file at once: none loses another's vectors.
func TestEmbedCacheSharedFile(t *testing.T) {
	t.Parallel()
	srv := memdirtest.NewEmbedServer(t)
	e := newTestEmbedder(t, srv, "m", 0)
	path := filepath.Join(t.TempDir(), "c.vec")
	const workers, each = 4, 5
	var all []string
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		var texts []string
		for i := range each {
			texts = append(texts, fmt.Sprintf("worker %d text %d", w, i))
		}
		all = append(all, texts...)
		c := openTestCache(t, path)
		wg.Go(func() {
			for i := range texts { // one save per text: many interleaved writes
				if _, _, err := c.Vectors(context.Background(), e, inputs(texts[i]), nil); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	c := openTestCache(t, path)
	if _, st := mustVectors(t, c, e, inputs(all...), nil); st.Cached != workers*each {
		t.Errorf("cached %d of %d after concurrent writers", st.Cached, workers*each)
	}
}

func TestEmbedCachePrune(t *testing.T) {
	t.Parallel()
	srv := memdirtest.NewEmbedServer(t)
	e := newTestEmbedder(t, srv, "m", 0)
	path := filepath.Join(t.TempDir(), "c.vec")
	c := openTestCache(t, path)
	mustVectors(t, c, e, inputs("a b", "c d", "e f"), nil)
	if _, st := mustVectors(t, c, e, inputs("a b", "g h"), nil); st.Pruned != 0 || c.Len("openai:m") != 4 {
		t.Errorf("without Prune: pruned %d, holds %d; want 0, 4", st.Pruned, c.Len("openai:m"))
	}
	_, st := mustVectors(t, c, e, inputs("a b", "g h"), &recall.EmbedOptions{Prune: true})
	if st.Pruned != 2 || c.Len("openai:m") != 2 {
		t.Errorf("with Prune: pruned %d, holds %d; want 2, 2", st.Pruned, c.Len("openai:m"))
	}
	_, st = mustVectors(t, openTestCache(t, path), e, inputs("a b", "g h", "c d"), nil)
	if st.Cached != 2 || st.Embedded != 1 {
		t.Errorf("in a new process after Prune: cached %d, embedded %d; want 2, 1", st.Cached, st.Embedded)
	}
}

func TestCosine(t *testing.T) {
	t.Parallel()
	tests := []struct {
		a, b []float32
		want float64
	}{
		{[]float32{1, 0}, []float32{1, 0}, 1},
		{[]float32{1, 0}, []float32{0, 3}, 0},
		{[]float32{1, 1}, []float32{-2, -2}, -1},
		{[]float32{3, 4}, []float32{4, 3}, 24.0 / 25},
		{[]float32{1, 0}, []float32{1, 0, 0}, 0},
		{nil, nil, 0},
		{[]float32{0, 0}, []float32{1, 0}, 0},
	}
	for _, tt := range tests {
		if got := recall.Cosine(tt.a, tt.b); got < tt.want-1e-6 || got > tt.want+1e-6 {
			t.Errorf("Cosine(%v, %v) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
	// Lengths around the four lanes' and a real model's, against one sum.
	for _, n := range []int{1, 3, 4, 5, 7, 8, 9, 1536} {
		a, b := memdirtest.RandomVector(fmt.Sprint("a", n), n), memdirtest.RandomVector(fmt.Sprint("b", n), n)
		var dot, na, nb float64
		for i := range a {
			dot += float64(a[i]) * float64(b[i])
			na += float64(a[i]) * float64(a[i])
			nb += float64(b[i]) * float64(b[i])
		}
		want := dot / math.Sqrt(na*nb)
		if got := recall.Cosine(a, b); math.Abs(got-want) > 1e-12 {
			t.Errorf("length %d: Cosine = %v, want %v", n, got, want)
		}
	}
}

func TestEmbedText(t *testing.T) {
	t.Parallel()
	if got, want := recall.EmbedText("Deploy", "how we  ship\tto prod", "Run make ship.\n\nThen watch."), "Deploy\n\nhow we ship to prod\n\nRun make ship. Then watch."; got != want {
		t.Errorf("EmbedText = %q, want %q", got, want)
	}
	if got := recall.EmbedText("", "", "body only"); got != "body only" {
		t.Errorf("EmbedText of a body alone = %q", got)
	}
	long := recall.EmbedText("n", "d", strings.Repeat("é", recall.EmbedTextMax))
	if len(long) > recall.EmbedTextMax || !strings.HasPrefix(long, "n\n\nd\n\né") || strings.ToValidUTF8(long, "?") != long {
		t.Errorf("long text cut to %d bytes, valid UTF-8 %v", len(long), strings.ToValidUTF8(long, "?") == long)
	}
	in := recall.NewEmbedInput("n", "d", "b")
	if in.Text != "n\n\nd\n\nb" || in.Key != recall.EmbedKey(in.Text) || len(in.Key) != 64 {
		t.Errorf("NewEmbedInput = %+v", in)
	}
}

func TestDefaultEmbedCachePath(t *testing.T) {
	t.Parallel()
	state := t.TempDir()
	lookup := func(k string) (string, bool) {
		if k == "MEMDIR_STATE_DIR" {
			return state, true
		}
		return "", false
	}
	mem := filepath.Join(t.TempDir(), "memory")
	p, err := recall.DefaultEmbedCachePath(mem, lookup)
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(p) != filepath.Join(state, "embed") || !strings.HasSuffix(p, ".vec") || strings.HasPrefix(p, mem) {
		t.Errorf("DefaultEmbedCachePath = %s, want a .vec file under %s/embed, outside the memory directory", p, state)
	}
	other, _ := recall.DefaultEmbedCachePath(filepath.Join(t.TempDir(), "other"), lookup)
	if other == p {
		t.Errorf("two directories share the cache file %s", p)
	}
}

// TestFakeVectorRanksBySharedWords checks that the fake embedder is useful
// for tests of ranking: a query is closest to the text it shares words with.
func TestFakeVectorRanksBySharedWords(t *testing.T) {
	t.Parallel()
	srv := memdirtest.NewEmbedServer(t)
	e := newTestEmbedder(t, srv, "m", 0)
	docs := []string{"how to deploy the service to production", "the team lunch is on fridays", "database migrations run before tests"}
	c := openTestCache(t, filepath.Join(t.TempDir(), "c.vec"))
	v, _ := mustVectors(t, c, e, inputs(docs...), nil)
	q, err := e.Embed(context.Background(), []string{"deploying to production"})
	if err != nil {
		t.Fatal(err)
	}
	best, bestScore := -1, -2.0
	for i := range v {
		if s := recall.Cosine(q.Vectors[0], v[i]); s > bestScore {
			best, bestScore = i, s
		}
	}
	if best != 0 {
		t.Errorf("closest document to the deploy query is %q", docs[best])
	}
}

func TestEmbedQuery(t *testing.T) {
	t.Parallel()
	srv := memdirtest.NewEmbedServer(t)
	e := newTestEmbedder(t, srv, "m", 0)
	v, u, err := recall.EmbedQuery(context.Background(), e, "deploy to production")
	if err != nil {
		t.Fatal(err)
	}
	if !cmp.Equal(v, memdirtest.FakeVector("deploy to production", 0)) || u.InputTokens != 3 || u.Calls != 1 {
		t.Errorf("EmbedQuery = %d dims, usage %+v", len(v), u)
	}
	srv.Enqueue(memdirtest.EmbedReply{Status: 500, Message: "down"})
	_, _, err = recall.EmbedQuery(context.Background(), e, "x")
	var ee *llm.EmbedError
	if !errors.As(err, &ee) {
		t.Errorf("server failure: error = %v, want *EmbedError", err)
	}
	if _, _, err := recall.EmbedQuery(context.Background(), e, " "); !errors.Is(err, memdir.ErrInvalid) {
		t.Errorf("empty query: error = %v, want ErrInvalid", err)
	}
	if n := len(srv.Requests()); n != 2 {
		t.Errorf("%d requests, want 2 (none for the empty query)", n)
	}
}

// TestEmbedCacheSavesDuringLongRuns checks that a long first indexing writes
// the file as it goes, so an interrupted run (a killed process) keeps most
// of its work.
func TestEmbedCacheSavesDuringLongRuns(t *testing.T) {
	t.Parallel()
	srv := memdirtest.NewEmbedServer(t)
	e := newTestEmbedder(t, srv, "m", 0)
	path := filepath.Join(t.TempDir(), "c.vec")
	var texts []string
	for i := range 40 {
		texts = append(texts, fmt.Sprintf("text number %d", i))
	}
	var onDisk []int
	opts := &recall.EmbedOptions{BatchSize: 1, Progress: func(done, total int) {
		// Another process's view of the file while the run goes on.
		onDisk = append(onDisk, openTestCache(t, path).Len("openai:m"))
	}}
	mustVectors(t, openTestCache(t, path), e, inputs(texts...), opts)
	// onDisk[i] is seen after batch i (onDisk[0] at the start).
	if onDisk[16] != 0 || onDisk[17] != 16 || onDisk[33] != 32 {
		t.Errorf("vectors on disk after each batch = %v; want saves after the 16th and 32nd", onDisk)
	}
	if n := openTestCache(t, path).Len("openai:m"); n != 40 {
		t.Errorf("%d vectors on disk at the end, want 40", n)
	}
}

func TestModelServerServesEmbeddings(t *testing.T) {
	t.Parallel()
	models := memdirtest.NewModelServer(t)
	embeds := memdirtest.NewEmbedServer(t)
	models.ServeEmbeddings(embeds)
	e, err := openai.NewEmbedder(&openai.EmbedderOptions{Model: "m", BaseURL: models.OpenAIBaseURL(), MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := recall.EmbedQuery(context.Background(), e, "hello"); err != nil {
		t.Fatal(err)
	}
	if len(embeds.Requests()) != 1 || len(models.Requests()) != 0 {
		t.Errorf("embedding requests %d, model requests %d; want 1, 0", len(embeds.Requests()), len(models.Requests()))
	}
}

func TestEmbedCacheWriteRemovesLeftTemporaryFiles(t *testing.T) {
	t.Parallel()
	srv := memdirtest.NewEmbedServer(t)
	e := newTestEmbedder(t, srv, "embed-test", 0)
	path := filepath.Join(t.TempDir(), "state", "embed", "dir.vec")
	os.MkdirAll(filepath.Dir(path), 0o700)
	old, young := atomicfile.TempPrefix(path)+"111", atomicfile.TempPrefix(path)+"222"
	for _, p := range []string{old, young} {
		os.WriteFile(p, []byte("torn"), 0o600)
	}
	hour := time.Now().Add(-time.Hour)
	os.Chtimes(old, hour, hour)
	mustVectors(t, openTestCache(t, path), e, inputs("deploy with make ship"), nil)
	if _, err := os.Stat(old); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a killed write's temporary file is still there (%v)", err)
	}
	if _, err := os.Stat(young); err != nil {
		t.Errorf("a temporary file young enough to be in progress was removed: %v", err)
	}
}

// textEmbedder makes a vector from each text alone, so that a vector
// embedded again equals the one embedded before.
type textEmbedder struct {
	name string
	dim  int
}

func (t textEmbedder) EmbedderName() string { return t.name }

func (t textEmbedder) Embed(_ context.Context, texts []string) (*llm.Embedding, error) {
	out := &llm.Embedding{}
	for _, s := range texts {
		k := recall.EmbedKey(s)
		v := make([]float32, t.dim)
		for i := range v {
			v[i] = float32(k[i%len(k)]) + float32(i)/8
		}
		out.Vectors = append(out.Vectors, v)
	}
	return out, nil
}

// TestEmbedCacheDamagedFile flips each byte of a cache file of two
// embedders and cuts it at each length: every read must give the vectors
// the embedders make (a damaged section is treated as empty and embedded
// again), never a wrong vector or a panic.
func TestEmbedCacheDamagedFile(t *testing.T) {
	t.Parallel()
	es := []textEmbedder{{"a:m", 5}, {"b:m", 3}}
	in := inputs("one", "two", "three", "four")
	good := filepath.Join(t.TempDir(), "good.vec")
	for _, e := range es {
		mustVectors(t, openTestCache(t, good), e, in, nil)
	}
	data, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][][]float32{}
	for _, e := range es {
		emb, _ := e.Embed(context.Background(), []string{"one", "two", "three", "four"})
		want[e.name] = emb.Vectors
	}
	check := func(t *testing.T, content []byte) {
		t.Helper()
		path := filepath.Join(t.TempDir(), "c.vec")
		if err := os.WriteFile(path, content, 0o600); err != nil {
			t.Fatal(err)
		}
		c := openTestCache(t, path)
		for _, e := range es {
			got, _ := mustVectors(t, c, e, in, nil)
			if diff := cmp.Diff(want[e.name], got); diff != "" {
				t.Fatalf("%s: vectors differ (-want +got):\n%s", e.name, diff)
			}
		}
		for _, e := range es {
			if _, st := mustVectors(t, openTestCache(t, path), e, in, nil); st.Cached != len(in) {
				t.Fatalf("%s after the rewrite: cached %d, want %d", e.name, st.Cached, len(in))
			}
		}
	}
	t.Run("flipped", func(t *testing.T) {
		for i := range data {
			b := append([]byte(nil), data...)
			b[i] ^= 0x5a
			check(t, b)
		}
	})
	t.Run("truncated", func(t *testing.T) {
		for n := range data {
			check(t, data[:n])
		}
	})
}

// TestEmbedCacheVectorsOutliveReplacement: vectors handed out view the
// mapped file, and stay what they were after another process replaced it.
func TestEmbedCacheVectorsOutliveReplacement(t *testing.T) {
	t.Parallel()
	e := textEmbedder{"a:m", 4}
	path := filepath.Join(t.TempDir(), "c.vec")
	mustVectors(t, openTestCache(t, path), e, inputs("one", "two"), nil)
	reader := openTestCache(t, path)
	got, st := mustVectors(t, reader, e, inputs("one", "two"), nil)
	if st.Cached != 2 {
		t.Fatalf("cached %d, want 2", st.Cached)
	}
	before := fmt.Sprint(got)
	mustVectors(t, openTestCache(t, path), e, inputs("three"), &recall.EmbedOptions{Prune: true})
	if reader.Len("a:m") != 1 {
		t.Errorf("the reader sees %d vectors after the replacement, want 1", reader.Len("a:m"))
	}
	if after := fmt.Sprint(got); after != before {
		t.Errorf("vectors changed under their holder: %s, were %s", after, before)
	}
	// Later replacements are read, not mapped (one kept mapping at most):
	// the same answers.
	got3, st := mustVectors(t, reader, e, inputs("three"), nil)
	if st.Cached != 1 {
		t.Fatalf("cached %d after the replacement, want 1", st.Cached)
	}
	before = fmt.Sprint(got3)
	mustVectors(t, openTestCache(t, path), e, inputs("four"), nil)
	if _, st := mustVectors(t, reader, e, inputs("three", "four"), nil); st.Cached != 2 || reader.Len("a:m") != 2 {
		t.Errorf("after a second replacement: cached %d, holds %d; want 2, 2", st.Cached, reader.Len("a:m"))
	}
	if after := fmt.Sprint(got3); after != before {
		t.Errorf("vectors read from a file changed: %s, were %s", after, before)
	}
}
