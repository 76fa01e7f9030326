package mcpserver_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/internal/benchcorpus"
	"github.com/memdir/memdir/mcpserver"
	"github.com/memdir/memdir/memdirtest"
	"github.com/memdir/memdir/recall"
)

// benchFiles returns n memories from the corpus generator: varied bodies
// recombined from the recall set's sentences, not one body repeated.
func benchFiles(n int) map[string]string {
	c, err := benchcorpus.Load("../testdata/eval/recall-dev.json")
	if err != nil {
		panic(err)
	}
	files := make(map[string]string, n)
	for i := range n {
		m := c.Memory(i, n)
		files[m.File] = memoryFile(m.Name, m.Description, memdir.Type(m.Type), m.Body)
	}
	return files
}

// BenchmarkRecall compares a recall through the MCP server (in-memory
// transport, JSON both ways, schema validation) with the same recall made
// directly on the directory. The selector model is a fake that picks nothing,
// so every call does the whole lookup and the session's record stays empty.
func BenchmarkRecall(b *testing.B) {
	model := &fakeModel{reply: `{"selected_memories":[]}`}
	query := "why is the dispatch service lagging behind Kafka after the Postgres migration?"
	for _, n := range []int{200, 2000} {
		f := newFixture(b, &mcpserver.Options{Model: model})
		memdirtest.WriteFiles(b, f.dir.Path(), benchFiles(n))
		ctx := context.Background()
		idx := recall.NewIndex(f.dir.Path(), nil)
		b.Run(fmt.Sprintf("memories=%d/direct", n), func(b *testing.B) {
			for b.Loop() {
				if _, err := recall.Recall(ctx, f.dir, query, &recall.Options{Model: model, Index: idx}); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("memories=%d/mcp", n), func(b *testing.B) {
			cs := f.connect(b)
			callOK(b, cs, "recall", map[string]any{"query": query}, nil) // builds the server's index
			for b.Loop() {
				callOK(b, cs, "recall", map[string]any{"query": query}, nil)
			}
		})
	}
}

// BenchmarkWrite measures the write paths through the server: save (lock,
// journal, memory file and MEMORY.md) and a memory-tool create (lock, journal
// run, index lines noted, file).
func BenchmarkWrite(b *testing.B) {
	f := newFixture(b, nil)
	memdirtest.WriteFiles(b, f.dir.Path(), benchFiles(200))
	cs := f.connect(b)
	// The counters live outside the sub-benchmarks, which -count runs
	// again on the same directory: each call creates a new memory.
	i, j := 0, 0
	b.Run("save", func(b *testing.B) {
		for b.Loop() {
			i++
			callOK(b, cs, "save", map[string]any{"name": fmt.Sprintf("bench %d", i), "description": "a memory saved by the benchmark", "type": "project", "body": "body"}, nil)
		}
	})
	b.Run("memory-create", func(b *testing.B) {
		for b.Loop() {
			j++
			callOK(b, cs, "memory", map[string]any{"command": "create", "path": fmt.Sprintf("/memories/bench/create_%d.md", j), "file_text": "body\n"}, nil)
		}
	})
}
