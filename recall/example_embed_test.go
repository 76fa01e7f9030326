package recall_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/memdir/memdir/memdirtest"
	"github.com/memdir/memdir/openai"
	"github.com/memdir/memdir/recall"
)

// Rank memories by meaning: embed them through the cache (only new or
// changed ones reach the server), embed the query, sort by cosine. The fake
// server stands in for OpenAI, Ollama or any /v1/embeddings server.
func ExampleEmbedCache() {
	srv := memdirtest.StartEmbedServer()
	defer srv.Close()
	tmp, _ := os.MkdirTemp("", "memdir-example")
	defer os.RemoveAll(tmp)

	e, err := openai.NewEmbedder(&openai.EmbedderOptions{Model: "nomic-embed-text", BaseURL: srv.OpenAIBaseURL()})
	if err != nil {
		panic(err)
	}
	cache, err := recall.OpenEmbedCache(filepath.Join(tmp, "dir.vec")) // recall.DefaultEmbedCachePath in real use
	if err != nil {
		panic(err)
	}
	names := []string{"deploy", "testing", "lunch"}
	in := []recall.EmbedInput{
		recall.NewEmbedInput("deploy", "how we ship the service to production", "Run make ship from main."),
		recall.NewEmbedInput("testing", "integration tests hit a real database", "Never mock it."),
		recall.NewEmbedInput("lunch", "team lunch", "Fridays at noon."),
	}
	vecs, st, err := cache.Vectors(context.Background(), e, in, nil)
	if err != nil {
		panic(err)
	}
	fmt.Printf("embedded %d, cached %d\n", st.Embedded, st.Cached)

	q, _, err := recall.EmbedQuery(context.Background(), e, "shipping to production")
	if err != nil {
		panic(err)
	}
	order := []int{0, 1, 2}
	sort.Slice(order, func(i, j int) bool { return recall.Cosine(q, vecs[order[i]]) > recall.Cosine(q, vecs[order[j]]) })
	fmt.Println("best match:", names[order[0]])

	_, st, _ = cache.Vectors(context.Background(), e, in, nil)
	fmt.Printf("again: embedded %d, cached %d\n", st.Embedded, st.Cached)
	// Output:
	// embedded 3, cached 0
	// best match: deploy
	// again: embedded 0, cached 3
}
