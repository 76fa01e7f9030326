package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/config"
	"github.com/memdir/memdir/internal/cli"
	"github.com/memdir/memdir/llm"
	"github.com/memdir/memdir/mcpserver"
	"github.com/memdir/memdir/recall"
)

var mcpCmd = &cli.Command{
	Name:  "mcp",
	Args:  "[--http HOST:PORT] [--team] [flags]",
	Short: "serve the memory directory to MCP clients (Claude Code, IDEs, agents)",
	Long: `Mcp serves the project's memory directory over the Model Context Protocol, so
any MCP client gets the same file-based memory Claude Code keeps. By default
it speaks MCP on standard input and output, the way clients start local
servers; logs go to standard error only.

What the client gets:
  tools      memory  the memory-tool commands (view, create, str_replace,
                     insert, delete, rename) on the directory, seen as
                     /memories
             recall  a query in, the relevant memories out (each memory is
                     surfaced once per session, 60 KB per session at most)
             save    name, description, type, body (and team) → a memory
                     file plus its MEMORY.md line
             forget  a memory's name or path → file and line removed
  resources  memdir://MEMORY.md (and memdir://team/MEMORY.md with --team)
             as agents load them; memdir://memory/{path} for each memory
  prompt     memory: the memory system prompt (argument mode: individual,
             team or daily-log; with_index; search)
  plus instructions telling the model when to recall, save and forget.

Every change is journaled: 'memdir log' lists the runs (the memory tool's as
kind mcp) and 'memdir undo' reverts them. Writes take the directory lock, so
the server is safe next to Claude Code, 'memdir sync' and other servers.

When auto memory is turned off (autoMemoryEnabled=false in settings, or
CLAUDE_CODE_DISABLE_AUTO_MEMORY=1), the server does not start (exit 8, naming
the setting); --dir DIR serves a directory anyway.

Recall uses the configured model (see 'memdir config'; --no-model ranks
lexically), falling back to the lexical ranker when the model fails.

--http HOST:PORT serves streamable HTTP at http://HOST:PORT/mcp instead of
stdio. There is no authentication, so HOST must be a loopback address;
requests naming another Host, or with an Origin header other than the
server's own (a web page in a browser), get 403 Forbidden.
'memdir serve --mcp' mounts the same endpoint on the team server.

` + locationHelp + `

Set-up in Claude Code:
  claude mcp add --transport stdio memdir -- memdir mcp
or in .mcp.json at the project root:
  {"mcpServers": {"memdir": {"command": "memdir", "args": ["mcp"]}}}

Examples:
  memdir mcp
  memdir mcp --team --model anthropic:claude-haiku-4-5
  memdir mcp --dir ~/notes/memory --http 127.0.0.1:8788`,
	Setup: cli.Setup(runMcp),
}

// mcpOptions holds the flag values of memdir mcp.
type mcpOptions struct {
	lf       locationFlags
	mf       *modelFlags
	team     bool
	httpAddr string
	verbose  bool
}

func (o *mcpOptions) Declare(fs *flag.FlagSet) {
	o.lf.register(fs, false)
	o.lf.creates = true
	o.mf = addModelFlags(fs, "recall ranks lexically even when a model is configured")
	fs.BoolVar(&o.team, "team", false, "team memory on: save into team/, serve team/MEMORY.md, team prompt by default")
	fs.StringVar(&o.httpAddr, "http", "", "serve streamable HTTP on `HOST:PORT` (loopback only) at /mcp instead of stdio")
	fs.BoolVar(&o.verbose, "verbose", false, "log debug details to standard error")
}

func runMcp(ctx context.Context, env *cli.Env, o *mcpOptions, args []string) error {
	if len(args) > 0 {
		return cli.Usagef("mcp takes no arguments")
	}
	level := slog.LevelWarn
	if o.verbose {
		level = slog.LevelDebug
	}
	logger := slog.New(slog.NewTextHandler(env.Stderr, &slog.HandlerOptions{Level: level}))
	if o.httpAddr != "" {
		if err := checkLoopback("--http", o.httpAddr); err != nil {
			return err
		}
	}
	cfg, err := o.mf.config(env)
	if err != nil {
		return err
	}
	srv, d, err := newMCPServer(ctx, env, &o.lf, cfg, o.mf, o.team, logger)
	if err != nil {
		return err
	}
	if o.httpAddr != "" {
		mux := http.NewServeMux()
		mux.Handle("/mcp", mcpserver.NewHandler(srv, logger))
		fmt.Fprintf(env.Stderr, "memdir mcp: serving %s at http://%s/mcp\n", d.Path(), o.httpAddr)
		return serveHTTP(ctx, o.httpAddr, mux, logger)
	}
	err = srv.Run(ctx, &mcp.IOTransport{Reader: io.NopCloser(env.Stdin), Writer: nopWriteCloser{env.Stdout}})
	if ctx.Err() != nil || errors.Is(err, io.EOF) {
		// Stopped by a signal, or the client closed the pipe:
		// both are the normal end of a stdio server.
		return nil
	}
	return err
}

// newMCPServer opens the directory lf selects and returns its MCP server,
// with the model cfg configures unless mf says --no-model (nil cfg: lexical
// recall) and the recall cache shared with 'memdir recall'.
func newMCPServer(ctx context.Context, env *cli.Env, lf *locationFlags, cfg *config.Config, mf *modelFlags, team bool, logger *slog.Logger) (*mcp.Server, *memdir.Dir, error) {
	d, loc, err := lf.openEnabled(env)
	if err != nil {
		return nil, nil, err
	}
	var model llm.Model
	var embedder llm.Embedder
	var embedCache *recall.EmbedCache
	var embedOpts *recall.EmbedOptions
	manifestTokens := 0
	if cfg != nil {
		if model, err = mf.model(cfg); err != nil {
			return nil, nil, err
		}
		manifestTokens = cfg.ManifestTokens()
		if embedder, embedCache, err = recallEmbedder(env, cfg, d.Path()); err != nil {
			return nil, nil, err
		}
		embedOpts = cfg.EmbedOptions()
	}
	cache, err := recall.DefaultIndexPath(d.Path(), env.LookupEnv)
	if err != nil {
		return nil, nil, err
	}
	// A long-lived server: file-system notifications tell the index when
	// to refresh; without them (no directory yet, no inotify) it refreshes
	// by stat.
	idx := recall.NewIndex(d.Path(), &recall.IndexOptions{CachePath: cache})
	if err := idx.Watch(); err != nil {
		logger.Debug("recall index: no file-system notifications; refreshing by stat", "err", err)
	}
	srv := mcpserver.New(d, &mcpserver.Options{
		Location:       loc,
		Model:          model,
		ManifestTokens: manifestTokens,
		Embedder:       embedder,
		EmbedCache:     embedCache,
		EmbedOptions:   embedOpts,
		RecallIndex:    idx,
		Team:           team,
		Version:        cli.Version,
		Now:            env.Now,
		Logger:         logger,
	})
	return srv, d, nil
}

// withMCP is how 'memdir serve --mcp' adds the MCP endpoint: /mcp serves the
// memory directory found from the working directory (or dir, when set), and
// every other path goes to h. The configured model, if any, drives recall.
func withMCP(ctx context.Context, env *cli.Env, h http.Handler, addr, dir string, logger *slog.Logger) (http.Handler, error) {
	if err := checkLoopback("--mcp", addr); err != nil {
		return nil, err
	}
	cfg, err := loadConfig(env)
	if err != nil {
		return nil, err
	}
	srv, d, err := newMCPServer(ctx, env, &locationFlags{dir: dir, creates: true}, cfg, nil, false, logger)
	if err != nil {
		return nil, err
	}
	logger.Info("serving memory over MCP", "path", "/mcp", "dir", d.Path())
	mux := http.NewServeMux()
	mux.Handle("/mcp", mcpserver.NewHandler(srv, logger))
	mux.Handle("/", h)
	return mux, nil
}

// checkLoopback refuses to serve the unauthenticated MCP endpoint on an
// address other machines can reach.
func checkLoopback(flagName, addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return cli.Usagef("%s %q: want HOST:PORT", flagName, addr)
	}
	if ip := net.ParseIP(host); host == "localhost" || ip != nil && ip.IsLoopback() {
		return nil
	}
	return cli.Usagef("%s: the MCP endpoint has no authentication, so it only listens on a loopback address (127.0.0.1, ::1 or localhost), not %q", flagName, addr)
}

// nopWriteCloser lets the MCP transport close standard output without
// closing it.
type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
