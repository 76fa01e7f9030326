// Command memorytool is a Go host that gives Claude Anthropic's memory tool
// on the project's Claude Code memory directory, with anthropic-sdk-go's
// tool runner: what the model saves through the tool is a memory Claude
// Code (and every memdir command) sees, journaled and undoable.
//
//	ANTHROPIC_API_KEY=... go run ./examples/memorytool "Remember that I prefer tabs."
//
// ANTHROPIC_BASE_URL points it at another server; MEMDIR_EXAMPLE_MODEL
// picks the model (default claude-sonnet-4-5).
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/anthropic"
	"github.com/memdir/memdir/locate"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: memorytool PROMPT")
		os.Exit(2)
	}
	if err := run(context.Background(), os.Args[1], ".", os.LookupEnv, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "memorytool:", err)
		os.Exit(1)
	}
}

// run answers prompt with the memory tool on project's memory directory
// and prints the model's final text to w.
func run(ctx context.Context, prompt, project string, lookup memdir.LookupEnvFunc, w io.Writer) error {
	loc, err := locate.Locate(&locate.LocateOptions{Project: project, LookupEnv: lookup, DetectRuntime: true})
	if err != nil {
		return err
	}
	if !loc.Enabled {
		return fmt.Errorf("auto memory is disabled for %s (%s)", project, loc.EnabledReason)
	}
	// Claude Code creates the directory on first use, owner-only.
	if err := os.MkdirAll(loc.Dir, 0o700); err != nil {
		return err
	}
	mem, err := anthropic.NewMemoryTool(loc.Dir, nil)
	if err != nil {
		return err
	}
	defer mem.Close()

	key, _ := lookup("ANTHROPIC_API_KEY")
	if key == "" {
		return errors.New("set ANTHROPIC_API_KEY")
	}
	opts := []option.RequestOption{option.WithAPIKey(key)}
	if u, ok := lookup("ANTHROPIC_BASE_URL"); ok && u != "" {
		opts = append(opts, option.WithBaseURL(u))
	}
	model := "claude-sonnet-4-5"
	if m, ok := lookup("MEMDIR_EXAMPLE_MODEL"); ok && m != "" {
		model = m
	}
	client := sdk.NewClient(opts...)
	runner := client.Beta.Messages.NewToolRunner([]sdk.BetaTool{mem}, sdk.BetaToolRunnerParams{
		BetaMessageNewParams: sdk.BetaMessageNewParams{
			Model: sdk.Model(model), MaxTokens: 2048,
			Tools:    []sdk.BetaToolUnionParam{mem.Definition()},
			Messages: []sdk.BetaMessageParam{sdk.NewBetaUserMessage(sdk.NewBetaTextBlock(prompt))},
		},
		MaxIterations: 10,
	})
	final, err := runner.RunToCompletion(ctx)
	if err != nil {
		return err
	}
	var text []string
	for _, b := range final.Content {
		if b.Type == "text" {
			text = append(text, b.Text)
		}
	}
	_, err = fmt.Fprintln(w, strings.Join(text, "\n"))
	return err
}
