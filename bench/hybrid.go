package main

import (
	"fmt"
	"os"
	"os/exec"

	"github.com/memdir/memdir/memdirtest"
)

// hybridDim is the size of the fake embedder's vectors: that of OpenAI's
// text-embedding-3-small, the most common choice, so that the cache file
// has a real model's size (123 MB at 20,000 memories).
const hybridDim = 1536

// hybrid measures memdir hook's UserPromptSubmit on n memories, every one
// indexed and every one's vector cached, with embeddings against the same
// hook without: what fusing the cosine ranking costs a prompt. The
// embedder is memdirtest's fake OpenAI server on loopback in this process
// (a hashed bag of words, so that cosines have a real spread), whose own
// CPU is not the hook's.
func (b *bench) hybrid(n int) {
	dir := b.indexedDir(n)
	srv := memdirtest.StartEmbedServer()
	defer srv.Close()
	base := append(b.isolatedEnv(fmt.Sprintf("hybrid-%d", n)), "CLAUDE_COWORK_MEMORY_PATH_OVERRIDE="+dir)
	embed := append(append([]string{}, base...),
		"MEMDIR_EMBED_MODEL=openai:bench-fake", "MEMDIR_EMBED_BASE_URL="+srv.OpenAIBaseURL(),
		"MEMDIR_EMBED_API_KEY=bench", fmt.Sprintf("MEMDIR_EMBED_DIMENSIONS=%d", hybridDim))
	fmt.Fprintf(os.Stderr, "bench: embedding %d memories with the fake embedder\n", n)
	fill := exec.Command(b.bin, "embed", "--dir", dir)
	fill.Env = append(os.Environ(), embed...)
	out, err := fill.CombinedOutput()
	check(errOut(err, out))
	i := 0
	hook := func(env []string) func(int) *exec.Cmd { return b.promptHook(dir, env, &i, nil) }
	texts := len(srv.Texts())
	rs := b.interleave(hook(embed), hook(base))
	// One query a run: the warm-up, the measured runs and the one peakRSS
	// takes.
	if got := len(srv.Texts()) - texts; got > b.runs+2 {
		check(fmt.Errorf("the hybrid hooks sent %d texts to embed, more than one query each: were vectors missing?", got))
	}
	b.row(fmt.Sprintf("hybrid hook, vectors cached, %d ÷ lexical", n), rs[0], rs[1])
}
