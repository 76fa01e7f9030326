package recall_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memdir/memdir/memdirtest"
	"github.com/memdir/memdir/recall"
)

// TestRecallHybrid runs recall with embeddings through the real OpenAI SDK
// client against the fake embeddings server: the rankings are fused, the
// memory vectors are cached so a second recall embeds only the query, and a
// failing server leaves recall lexical, saying so.
func TestRecallHybrid(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := modelFixture(t)
	srv := memdirtest.NewEmbedServer(t)
	emb := newTestEmbedder(t, srv, "text-embedding-3-small", 0)
	cache := openTestCache(t, filepath.Join(t.TempDir(), "vectors.vec"))
	opts := &recall.Options{Embedder: emb, EmbedCache: cache, ShowManifest: true, EmbedMissing: true}

	res, err := recall.Recall(ctx, d, "should integration tests mock the Postgres database?", opts)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(res.Semantic, "hybrid") || len(res.Memories) == 0 || res.Memories[0].Path != "feedback_db_tests.md" {
		t.Fatalf("hybrid recall: semantic %q, memories %+v", res.Semantic, res.Memories)
	}
	if res.EmbedUsage.InputTokens == 0 || len(res.Shortlist) != 4 {
		t.Errorf("embed usage %+v, manifest %v", res.EmbedUsage, res.Shortlist)
	}
	// Four memories and the query: every text reached the server once.
	if got := len(srv.Texts()); got != 5 {
		t.Errorf("%d texts embedded, want 5 (4 memories and the query)", got)
	}

	// The second recall finds the memories' vectors in the cache.
	before := len(srv.Texts())
	if _, err := recall.Recall(ctx, d, "how do deploys reach prod without kubectl apply?", opts); err != nil {
		t.Fatal(err)
	}
	if got := len(srv.Texts()) - before; got != 1 {
		t.Errorf("second recall embedded %d texts, want only the query", got)
	}

	// A broken embeddings server: lexical ranking, and the result says why.
	srv.Enqueue(memdirtest.EmbedReply{Status: 500, Message: "overloaded"})
	res, err = recall.Recall(ctx, d, "should integration tests mock the Postgres database?", opts)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Semantic, "lexical only") || !strings.Contains(res.Semantic, "500") || len(res.Memories) == 0 || res.Memories[0].Path != "feedback_db_tests.md" {
		t.Errorf("fallback: semantic %q, memories %+v", res.Semantic, res.Memories)
	}
}

// TestRecallNeverWaitsForMemoryVectors: on a cold vector cache a recall
// embeds only the query; the memories without a vector rank lexically and
// are counted, and once the cache holds them (as `memdir embed` fills it)
// the rankings are fused. A query vector that does not come in time makes
// the recall lexical, saying why.
func TestRecallNeverWaitsForMemoryVectors(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := modelFixture(t)
	srv := memdirtest.NewEmbedServer(t)
	emb := newTestEmbedder(t, srv, "text-embedding-3-small", 0)
	cache := openTestCache(t, filepath.Join(t.TempDir(), "vectors.vec"))
	q := "should integration tests mock the Postgres database?"

	res, err := recall.Recall(ctx, d, q, &recall.Options{Embedder: emb, EmbedCache: cache})
	if err != nil {
		t.Fatal(err)
	}
	if got := len(srv.Texts()); got != 1 {
		t.Errorf("cold cache: %d texts embedded, want only the query", got)
	}
	if res.Method != recall.MethodLexical || res.VectorsMissing != 4 || len(res.Memories) == 0 || res.Memories[0].Path != "feedback_db_tests.md" {
		t.Errorf("cold cache: method %s, %d missing, memories %+v; want lexical, 4 missing", res.Method, res.VectorsMissing, res.Memories)
	}
	if !strings.Contains(res.Summary(), "without a vector") && !strings.Contains(res.Semantic, "no memory has a vector") {
		t.Errorf("the result does not say vectors are missing: %q / %q", res.Summary(), res.Semantic)
	}

	// Fill the cache, as memdir embed does.
	if _, err := recall.Recall(ctx, d, q, &recall.Options{Embedder: emb, EmbedCache: cache, EmbedMissing: true}); err != nil {
		t.Fatal(err)
	}
	res, err = recall.Recall(ctx, d, q, &recall.Options{Embedder: emb, EmbedCache: cache})
	if err != nil {
		t.Fatal(err)
	}
	if res.Method != recall.MethodHybrid || res.VectorsMissing != 0 || !strings.Contains(res.Summary(), "hybrid") {
		t.Errorf("warm cache: method %s, %d missing, summary %q; want hybrid", res.Method, res.VectorsMissing, res.Summary())
	}
	if len(res.Memories) == 0 || res.Memories[0].ScoreParts == nil || res.Memories[0].ScoreParts.Fused == nil || *res.Memories[0].ScoreParts.Fused != res.Memories[0].Score {
		t.Errorf("warm cache: the score is not the fused one with its parts: %+v", res.Memories)
	}

	// A query vector that comes too late.
	srv.Enqueue(memdirtest.EmbedReply{Delay: 5 * time.Second})
	before := len(srv.Texts())
	res, err = recall.Recall(ctx, d, q, &recall.Options{Embedder: emb, EmbedCache: cache, QueryEmbedTimeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if res.Method != recall.MethodLexical || !strings.Contains(res.EmbedError, "within 50ms") || !strings.Contains(res.Summary(), "embeddings took no part") {
		t.Errorf("slow embedder: method %s, embed error %q, summary %q", res.Method, res.EmbedError, res.Summary())
	}
	if got := len(srv.Texts()) - before; got > 1 {
		t.Errorf("slow embedder: %d texts sent, want the query alone", got)
	}
}

// TestRecallHybridRanksWithoutSharedWords: a memory that shares no word
// with the query is ranked first, and so shown to a selector whose budget
// holds one line, by similarity alone.
func TestRecallHybridRanksWithoutSharedWords(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := modelFixture(t)
	srv := memdirtest.NewEmbedServer(t)
	emb := newTestEmbedder(t, srv, "text-embedding-3-small", 0)
	// Typos two edits from the memory's words (the lexical search mends
	// one edit), or too short to mend: no word in common, but character
	// trigrams ("pay", "fro", "aud") that the fake embedder, like real
	// ones, makes close.
	q := "are payymnts froozn while the audt lasts"
	lex, err := recall.Recall(ctx, d, q, &recall.Options{ManifestTokens: -1, ShowManifest: true})
	if err != nil {
		t.Fatal(err)
	}
	hyb, err := recall.Recall(ctx, d, q, &recall.Options{Embedder: emb, ManifestTokens: 30, ShowManifest: true})
	if err != nil {
		t.Fatal(err)
	}
	if lex.Ranked != 0 {
		t.Fatalf("lexical ranking matched %v: the query must share no word", lex.Shortlist)
	}
	if len(hyb.Shortlist) == 0 || hyb.Shortlist[0] != "project_freeze.md" || hyb.Ranked == 0 {
		t.Errorf("hybrid manifest %v (lexical %v): want project_freeze.md first", hyb.Shortlist, lex.Shortlist)
	}
}
