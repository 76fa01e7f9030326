// Command chat is a minimal chat agent that remembers across sessions with
// memdir, end to end:
//
//   - its system prompt carries the memory instructions and MEMORY.md;
//   - each message is preceded by the memories relevant to it (recall);
//   - after each answer, a background extraction saves what is worth
//     remembering from the conversation.
//
// It works with any model memdir supports:
//
//	MEMDIR_MODEL=anthropic:claude-sonnet-4-5 ANTHROPIC_API_KEY=… go run ./examples/chat
//	MEMDIR_MODEL=openai:llama3.2 OPENAI_BASE_URL=http://localhost:11434/v1 go run ./examples/chat
//
// It uses the project's memory directory, as Claude Code would (or -dir).
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"time"

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/agent"
	"github.com/memdir/memdir/anthropic"
	"github.com/memdir/memdir/llm"
	"github.com/memdir/memdir/locate"
	"github.com/memdir/memdir/openai"
	"github.com/memdir/memdir/prompt"
	"github.com/memdir/memdir/recall"
	"github.com/memdir/memdir/transcript"
)

func main() {
	dir := flag.String("dir", "", "memory directory (default: this project's, by Claude Code's rules)")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	model, err := modelFromEnv(os.Getenv)
	if err != nil {
		fmt.Fprintln(os.Stderr, "chat:", err)
		os.Exit(2)
	}
	if *dir == "" {
		loc, err := locate.Locate(nil)
		if err != nil {
			fmt.Fprintln(os.Stderr, "chat:", err)
			os.Exit(1)
		}
		*dir = loc.Dir
	}
	state, err := locate.StateDir(nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, "chat:", err)
		os.Exit(1)
	}
	c := &chat{model: model, dir: *dir, state: state, session: "chat-" + strconv.FormatInt(time.Now().Unix(), 10), now: time.Now}
	if err := c.run(ctx, os.Stdin, os.Stdout); err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintln(os.Stderr, "chat:", err)
		os.Exit(1)
	}
}

// modelFromEnv builds the model MEMDIR_MODEL names ("anthropic:NAME" or
// "openai:NAME"), with the providers' usual key and base-URL variables.
func modelFromEnv(getenv func(string) string) (llm.Model, error) {
	provider, name, _ := strings.Cut(getenv("MEMDIR_MODEL"), ":")
	switch provider {
	case "anthropic":
		return anthropic.New(&anthropic.Options{Model: name, APIKey: getenv("ANTHROPIC_API_KEY"), BaseURL: getenv("ANTHROPIC_BASE_URL")})
	case "openai":
		return openai.New(&openai.Options{Model: name, APIKey: getenv("OPENAI_API_KEY"), BaseURL: getenv("OPENAI_BASE_URL")})
	}
	return nil, errors.New("set MEMDIR_MODEL to anthropic:NAME or openai:NAME (and the provider's API key)")
}

type chat struct {
	model   llm.Model
	dir     string
	state   string
	session string
	now     func() time.Time
}

func (c *chat) run(ctx context.Context, in io.Reader, out io.Writer) error {
	d, err := memdir.Open(c.dir, &memdir.Options{Now: c.now})
	if err != nil {
		return err
	}
	system, err := c.systemPrompt(d)
	if err != nil {
		return err
	}
	extractor, err := agent.NewExtractor(&agent.ExtractOptions{Model: c.model, Dir: d, StateDir: c.state, SessionID: c.session, Now: c.now})
	if err != nil {
		return err
	}
	idx := recall.NewIndex(d.Path(), nil)
	var history []transcript.Message
	var surfaced []string
	used := 0
	scanner := bufio.NewScanner(in)
	fmt.Fprint(out, "> ")
	for scanner.Scan() {
		line := strings.TrimSpace(scanner.Text())
		if line == "" {
			fmt.Fprint(out, "> ")
			continue
		}
		// Recall: the memories relevant to this message, each shown once.
		rec, err := recall.Recall(ctx, d, line, &recall.Options{Model: c.model, Index: idx, Surfaced: surfaced, SessionBytes: used, Now: c.now})
		if err != nil {
			return err
		}
		blocks := []llm.Block{}
		for _, m := range rec.Memories {
			blocks = append(blocks, llm.TextBlock(m.Render()))
			surfaced = append(surfaced, m.Path)
		}
		used += rec.Bytes
		if len(rec.Memories) > 0 {
			fmt.Fprintf(out, "(recalled %s)\n", memories(len(rec.Memories)))
		}
		blocks = append(blocks, llm.TextBlock(line))
		history = append(history, message(llm.RoleUser, len(history), blocks...))

		resp, err := c.model.Generate(ctx, &llm.Request{System: system, Messages: plain(history)})
		if err != nil {
			return err
		}
		answer := resp.Text()
		fmt.Fprintln(out, answer)
		history = append(history, message(llm.RoleAssistant, len(history), llm.TextBlock(answer)))

		// Extraction after the answer: save what is worth remembering.
		res, err := extractor.Extract(ctx, agent.Source{Messages: history})
		if err != nil {
			fmt.Fprintf(out, "(memory extraction failed: %v)\n", err)
		} else if len(res.Saved) > 0 {
			fmt.Fprintf(out, "(saved %s: %s)\n", memories(len(res.Saved)), strings.Join(res.Saved, ", "))
		}
		fmt.Fprint(out, "> ")
	}
	return scanner.Err()
}

// systemPrompt is a short assistant prompt, the memory instructions and the
// loaded MEMORY.md.
func (c *chat) systemPrompt(d *memdir.Dir) (string, error) {
	mem, err := prompt.Build(&prompt.Options{Mode: prompt.Individual, Dir: d.Path()})
	if err != nil {
		return "", err
	}
	system := "You are a helpful coding assistant.\n\n" + mem
	index, err := d.LoadIndex(false)
	if err != nil {
		return "", err
	}
	if index.Exists && index.Text != "" {
		system += "\n" + prompt.IndexContext(d.Abs(memdir.EntrypointName), index.Text, false) + "\n"
	}
	return system, nil
}

func message(role llm.Role, n int, blocks ...llm.Block) transcript.Message {
	return transcript.Message{Message: llm.Message{Role: role, Content: blocks}, UUID: "m" + strconv.Itoa(n+1)}
}

func plain(ms []transcript.Message) []llm.Message {
	out := make([]llm.Message, len(ms))
	for i, m := range ms {
		out[i] = m.Message
	}
	return out
}

// memories counts memories in words: "1 memory", "2 memories".
func memories(n int) string {
	if n == 1 {
		return "1 memory"
	}
	return fmt.Sprintf("%d memories", n)
}
