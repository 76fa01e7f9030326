// Command mcp is a Go host that embeds memdir's MCP server: it serves the
// memory directory of the project it runs in over stdio, with recall's
// model (if any) and the rest of memdir's configuration taken from the
// environment and config file, exactly as 'memdir mcp' reads them.
//
//	go run ./examples/mcp -project /path/to/project
//
// Point an MCP client (Claude Desktop, an IDE, an agent framework) at that
// command to give it Claude Code's memory for the project.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/config"
	"github.com/memdir/memdir/config/provider"
	"github.com/memdir/memdir/locate"
	"github.com/memdir/memdir/mcpserver"
	"github.com/memdir/memdir/recall"
	"github.com/memdir/memdir/review"
)

func main() {
	project := flag.String("project", ".", "the project whose memory directory is served")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	srv, err := newServer(*project, os.LookupEnv)
	if err == nil {
		err = srv.Run(ctx, &mcp.StdioTransport{})
	}
	if err != nil && ctx.Err() == nil {
		fmt.Fprintln(os.Stderr, "mcp:", err)
		os.Exit(1)
	}
}

// newServer locates the project's memory directory by Claude Code's rules
// and returns the MCP server for it.
func newServer(project string, lookup memdir.LookupEnvFunc) (*mcp.Server, error) {
	loc, err := locate.Locate(&locate.LocateOptions{Project: project, LookupEnv: lookup, DetectRuntime: true})
	if err != nil {
		return nil, err
	}
	if !loc.Enabled {
		return nil, fmt.Errorf("auto memory is disabled for %s (%s)", project, loc.EnabledReason)
	}
	d, _, err := review.Open(loc.Dir, &memdir.Options{LookupEnv: lookup}, nil)
	if err != nil {
		return nil, err
	}
	cfg, err := config.Load(lookup, nil)
	if err != nil {
		return nil, err
	}
	model, err := provider.NewModel(cfg) // nil when no model is configured
	if err != nil {
		return nil, err
	}
	cache, err := recall.DefaultIndexPath(d.Path(), lookup)
	if err != nil {
		return nil, err
	}
	return mcpserver.New(d, &mcpserver.Options{
		Location:       loc,
		Model:          model,
		ManifestTokens: cfg.ManifestTokens(),
		RecallIndex:    recall.NewIndex(d.Path(), &recall.IndexOptions{CachePath: cache}),
	}), nil
}
