package recall

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"strings"
	"unicode/utf8"

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/llm"
)

// Cosine returns the cosine similarity of a and b, from -1 to 1. Vectors of
// different lengths, empty vectors and zero vectors have similarity 0.
func Cosine(a, b []float32) float64 {
	if len(a) != len(b) || len(a) == 0 {
		return 0
	}
	return cosineWith(a, sumSquares(a), b)
}

// cosineWith is Cosine(a, b) for an a whose sum of squares na is known
// (sumSquares), so that a query compared with many vectors adds its own
// squares once. The sums are in float64, over four lanes each so that
// the additions do not wait for one another: the cosines of a hybrid
// prompt's 800 vectors of 1,536 dimensions are a twentieth of its cost
// with a single lane.
func cosineWith(a []float32, na float64, b []float32) float64 {
	if len(a) != len(b) || len(a) == 0 {
		return 0
	}
	b = b[:len(a)]
	var d0, d1, d2, d3, n0, n1, n2, n3 float64
	i := 0
	for ; i+4 <= len(a); i += 4 {
		x, y := a[i:i+4:i+4], b[i:i+4:i+4]
		y0, y1, y2, y3 := float64(y[0]), float64(y[1]), float64(y[2]), float64(y[3])
		d0 += float64(x[0]) * y0
		d1 += float64(x[1]) * y1
		d2 += float64(x[2]) * y2
		d3 += float64(x[3]) * y3
		n0 += y0 * y0
		n1 += y1 * y1
		n2 += y2 * y2
		n3 += y3 * y3
	}
	for ; i < len(a); i++ {
		y := float64(b[i])
		d0 += float64(a[i]) * y
		n0 += y * y
	}
	dot, nb := (d0+d1)+(d2+d3), (n0+n1)+(n2+n3)
	if na == 0 || nb == 0 {
		return 0
	}
	return dot / math.Sqrt(na*nb)
}

// sumSquares is the sum of the squares of a, in cosineWith's lanes.
func sumSquares(a []float32) float64 {
	var n0, n1, n2, n3 float64
	i := 0
	for ; i+4 <= len(a); i += 4 {
		x := a[i : i+4 : i+4]
		n0 += float64(x[0]) * float64(x[0])
		n1 += float64(x[1]) * float64(x[1])
		n2 += float64(x[2]) * float64(x[2])
		n3 += float64(x[3]) * float64(x[3])
	}
	for ; i < len(a); i++ {
		n0 += float64(a[i]) * float64(a[i])
	}
	return (n0 + n1) + (n2 + n3)
}

// EmbedTextMax bounds the text embedded for one memory, in bytes. About 500
// tokens of English: it fits the context of small local embedding models
// (all-MiniLM, bge-small: 512 tokens), and a memory's name, description and
// first paragraphs say what it is about; the rest adds little to a vector.
const EmbedTextMax = 2000

// EmbedText builds the text embedded for a memory: its name, description and
// body, each on its own after a blank line, cut to EmbedTextMax bytes at a
// rune boundary. Whitespace runs are folded so that reflowing a body does not
// change its vector. Every caller (recall, `memdir embed`) must use it, so
// that they share cache entries.
func EmbedText(name, description, body string) string {
	var parts []string
	for _, p := range []string{name, description, body} {
		if p = strings.Join(strings.Fields(p), " "); p != "" {
			parts = append(parts, p)
		}
	}
	text := strings.Join(parts, "\n\n")
	if len(text) <= EmbedTextMax {
		return text
	}
	cut := EmbedTextMax
	for cut > 0 && !utf8.RuneStart(text[cut]) {
		cut--
	}
	return text[:cut]
}

// EmbedKey returns the cache key of a text: the hex SHA-256 of its bytes.
func EmbedKey(text string) string {
	sum := sha256.Sum256([]byte(text))
	return hex.EncodeToString(sum[:])
}

// EmbedInput is one text to get a vector for.
type EmbedInput struct {
	// Key identifies the content: a hex SHA-256 (EmbedKey of Text when
	// empty). Any other string is hashed to make the key.
	Key  string
	Text string
}

// NewEmbedInput returns the input for a memory: EmbedText of its parts,
// keyed by the hash of that text.
func NewEmbedInput(name, description, body string) EmbedInput {
	text := EmbedText(name, description, body)
	return EmbedInput{Key: EmbedKey(text), Text: text}
}

// MemoryEmbedInput returns the input for a memory file: EmbedText of its
// name, description and body, keyed by the SHA-256 of the file's bytes, so
// that a process which knows a file's hash (the recall index keeps it) can
// find the file's vector without reading it, and any edit of the file
// re-embeds it. name and description are the header's (see Scan).
func MemoryEmbedInput(name, description string, file []byte) EmbedInput {
	m, _ := memdir.ParseMemory(file)
	sum := sha256.Sum256(file)
	return EmbedInput{Key: hex.EncodeToString(sum[:]), Text: EmbedText(name, description, m.Body)}
}

// key returns the 32-byte key of an input.
func (in EmbedInput) key() [32]byte {
	var k [32]byte
	if in.Key == "" {
		return sha256.Sum256([]byte(in.Text))
	}
	if len(in.Key) == 64 {
		if _, err := hex.Decode(k[:], []byte(in.Key)); err == nil {
			return k
		}
	}
	return sha256.Sum256([]byte(in.Key))
}

// DefaultEmbedBatchSize is how many texts go into one embeddings request
// when EmbedOptions leaves it zero.
const DefaultEmbedBatchSize = 64

// EmbedOptions adjust EmbedCache.Vectors.
type EmbedOptions struct {
	// BatchSize is the most texts sent in one Embed call
	// (DefaultEmbedBatchSize when zero).
	BatchSize int
	// Progress, when set, is called after each batch with the number of
	// texts embedded so far and the number to embed in this call (those
	// missing from the cache), and once at the start with done = 0.
	Progress func(done, total int)
	// Prune says the inputs are every text the caller will want from this
	// embedder (all memories of the directory): other entries of the same
	// embedder, left by edited or removed memories, are dropped from the
	// cache file.
	Prune bool
}

// EmbedStats says what a Vectors call did.
type EmbedStats struct {
	// Cached counts inputs found in the cache.
	Cached int `json:"cached"`
	// Embedded counts texts sent to the embedder.
	Embedded int `json:"embedded"`
	// Requests counts Embed calls made.
	Requests int `json:"requests"`
	// Usage is the embedder's token count (InputTokens) and HTTP requests
	// (Calls).
	Usage llm.Usage `json:"usage"`
	// Pruned counts entries dropped because of EmbedOptions.Prune.
	Pruned int `json:"pruned,omitempty"`
}

// EmbedQuery returns the vector of one text, such as a recall query, which
// is not worth caching. Failures are *EmbedError, as from EmbedCache.Vectors;
// an empty text is an error wrapping ErrInvalid.
func EmbedQuery(ctx context.Context, e llm.Embedder, text string) ([]float32, llm.Usage, error) {
	if strings.TrimSpace(text) == "" {
		return nil, llm.Usage{}, fmt.Errorf("embedding an empty query: %w", memdir.ErrInvalid)
	}
	name := e.EmbedderName()
	emb, err := e.Embed(ctx, []string{text})
	switch {
	case err != nil && ctx.Err() != nil:
		return nil, llm.Usage{}, fmt.Errorf("embeddings from %s: %w", name, ctx.Err())
	case err != nil:
		return nil, llm.Usage{}, &llm.EmbedError{Embedder: name, Err: err}
	case emb == nil || len(emb.Vectors) != 1 || len(emb.Vectors[0]) == 0:
		n := 0
		if emb != nil {
			n = len(emb.Vectors)
		}
		return nil, llm.Usage{}, errEmbedReply(name, "%d vectors for 1 text", n)
	}
	return emb.Vectors[0], emb.Usage, nil
}

// errEmbedReply builds the EmbedError of a reply that does not fit.
func errEmbedReply(name, format string, args ...any) error {
	return &llm.EmbedError{Embedder: name, Err: fmt.Errorf(format, args...)}
}
