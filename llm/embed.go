package llm

import (
	"context"
	"fmt"
)

// Embedder turns texts into vectors, as memdir consumes an embedding model.
// Implementations live in adapter packages (openai); tests use the fake
// server in memdirtest through the real adapter.
//
// Embed returns one vector per text, in order, all of one dimension. Failures
// reported by the provider come back as a *ModelError, as from a Model.
type Embedder interface {
	Embed(ctx context.Context, texts []string) (*Embedding, error)
	// EmbedderName names the vector space: "provider:model", with "@N" when
	// a dimension N was asked for. Vectors with different names are never
	// compared; the embedding cache keys its entries by it.
	EmbedderName() string
}

// Embedding is the answer to one Embed call.
type Embedding struct {
	// Vectors holds one vector per text, in the order of the texts.
	Vectors [][]float32
	// Usage counts the tokens read (InputTokens) and the HTTP requests made
	// (Calls).
	Usage Usage
}

// EmbedError is a failure to get vectors from an embedder: the provider's
// error (often a *ModelError, reachable with errors.As) or a reply that does
// not fit the request (wrong number of vectors, mixed dimensions). Recall
// falls back to lexical ranking on it and says so.
type EmbedError struct {
	// Embedder is the embedder's name.
	Embedder string
	Err      error
}

func (e *EmbedError) Error() string {
	return fmt.Sprintf("embeddings from %s: %v", e.Embedder, e.Err)
}

func (e *EmbedError) Unwrap() error { return e.Err }
