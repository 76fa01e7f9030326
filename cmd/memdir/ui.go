package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os/exec"
	"runtime"
	"strings"
	"time"

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/internal/cli"
	"github.com/memdir/memdir/locate"
	"github.com/memdir/memdir/recall"
	"github.com/memdir/memdir/team"
	"github.com/memdir/memdir/ui"
)

var uiCmd = &cli.Command{
	Name:  "ui",
	Args:  "[--addr 127.0.0.1:0] [--open] [flags]",
	Short: "browse and curate the memory directory in a local web page",
	Long: `Ui serves a web page for the project's memory directory on a loopback
address and prints its URL; --open also opens it in your browser. Stop it
with Ctrl-C.

Pages (one click each from the navigation bar):
  Memories       every memory with type, team or private, age and
                 description; filter by type and area; search through recall
                 (the engine of 'memdir recall': method, scores, reasons)
  a memory       rendered Markdown, frontmatter, MEMORY.md line, freshness,
                 its journal history with diffs; edit in place (validated as
                 'memdir edit' validates, refused when the file changed since
                 it was opened), create, rename, move to team/, delete, each
                 journaled and answered with an Undo button
  Index health   MEMORY.md as agents load it, gauges against 200 lines and
                 25,000 characters, doctor's findings with their fixes,
                 compaction
  Activity       the journal as a timeline with token usage, diffs and undo
  Recall preview what the UserPromptSubmit hook would inject for a prompt,
                 the manifest the selector sees and its token cost beside
                 Claude Code's 200-newest manifest, why each memory was chosen
  Team           sync status against the configured server, a key's history
  Checkpoints    the project's file-history sessions and snapshots, per-file
                 diffs and a rewind dry run
  Chart          memories by age and type
  Review         writes injection screening held back (see 'memdir help
                 review'): who made each, the findings and the content;
                 accept (journaled, with Undo) or reject

Security: the server listens on loopback only (--addr must be 127.0.0.1, ::1
or localhost). The printed URL carries a random token, valid for this run,
that the page exchanges for an HttpOnly SameSite=Strict cookie; every change
needs a CSRF token; requests from other origins or for other hosts get 403.
Memory bodies are never rendered as live HTML.

Recall uses the configured model (see 'memdir config'; --no-model ranks
lexically). Team status uses the team server configured for 'memdir sync'.

` + locationHelp + `

Examples:
  memdir ui --open
  memdir ui --dir ~/notes/memory --addr 127.0.0.1:8790`,
	Setup: cli.Setup(runUi),
}

// uiOptions holds the flag values of memdir ui.
type uiOptions struct {
	lf      locationFlags
	mf      *modelFlags
	addr    string
	open    bool
	verbose bool
}

func (o *uiOptions) Declare(fs *flag.FlagSet) {
	o.lf.register(fs, false)
	o.mf = addConfigFlags(fs, "recall ranks lexically even when a model is configured", keysModel)
	fs.StringVar(&o.addr, "addr", "127.0.0.1:0", "listen on `HOST:PORT` (loopback only; port 0 picks a free one)")
	fs.BoolVar(&o.open, "open", false, "open the page in the default browser")
	fs.BoolVar(&o.verbose, "verbose", false, "log requests refused and debug details to standard error")
}

func runUi(ctx context.Context, env *cli.Env, o *uiOptions, args []string) error {
	if len(args) > 0 {
		return cli.Usagef("ui takes no arguments")
	}
	host, _, err := net.SplitHostPort(o.addr)
	if err != nil {
		return cli.Usagef("--addr %q: want HOST:PORT", o.addr)
	}
	if !ui.IsLoopback(host) {
		return cli.Usagef("--addr: the UI only listens on a loopback address (127.0.0.1, ::1 or localhost), not %q", o.addr)
	}
	level := slog.LevelWarn
	if o.verbose {
		level = slog.LevelDebug
	}
	logger := slog.New(slog.NewTextHandler(env.Stderr, &slog.HandlerOptions{Level: level}))
	d, queue, loc, err := o.lf.openReview(env)
	if err != nil {
		return err
	}
	opts := &ui.Options{Location: loc, Review: queue, Now: env.Now, Logger: logger, Version: cli.Version}
	if opts.Model, err = o.mf.loadModel(env); err != nil {
		return err
	}
	cache, err := recall.DefaultIndexPath(d.Path(), env.LookupEnv)
	if err != nil {
		return err
	}
	opts.RecallIndex = recall.NewIndex(d.Path(), &recall.IndexOptions{CachePath: cache})
	opts.Team, opts.TeamReason = uiTeam(env, &o.lf, logger)
	cp := &ui.Checkpoints{Project: env.Cwd}
	if loc != nil {
		cp.ConfigHome, cp.Project = loc.ConfigHome, loc.ProjectRoot
	} else if cp.ConfigHome, err = locate.ConfigHome(env.LookupEnv); err != nil {
		return err
	}
	opts.Checkpoints = cp

	ln, err := net.Listen("tcp", o.addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", o.addr, err)
	}
	defer ln.Close()
	srv, err := ui.New(d, ln.Addr().String(), opts)
	if err != nil {
		return err
	}
	url := srv.URL(ln.Addr().String())
	fmt.Fprintf(env.Stderr, "memdir ui: serving %s; open this URL (it holds this run's token), Ctrl-C to stop:\n", d.Path())
	fmt.Fprintln(env.Stdout, url)
	if loc != nil && !loc.Enabled {
		fmt.Fprintf(env.Stderr, "note: auto memory is disabled (%s), so Claude Code will not load this directory\n", loc.EnabledReason)
	}
	if o.open {
		if err := openBrowser(url); err != nil {
			fmt.Fprintf(env.Stderr, "memdir ui: could not open a browser (%v); open the URL above yourself\n", err)
		}
	}
	return serveListener(ctx, ln, srv.Handler(), logger)
}

// uiTeam connects to the team server 'memdir sync' uses, or says why there
// is none.
func uiTeam(env *cli.Env, lf *locationFlags, logger *slog.Logger) (*ui.Team, string) {
	s, err := newSyncer(env, lf, syncConfig{}, logger)
	if err != nil {
		return nil, strings.TrimSuffix(advise(err), ": "+memdir.ErrInvalid.Error())
	}
	conf, err := loadConfig(env)
	if err != nil {
		return nil, err.Error()
	}
	remote, err := team.NewRemote(conf.Team.URL.Value, conf.Team.Token.Value, &team.RemoteOptions{UserAgent: "memdir/" + cli.Version, Logger: logger})
	if err != nil {
		return nil, err.Error()
	}
	return &ui.Team{Client: s.client, Repos: remote, Repo: s.repo, Server: redactURL(conf.Team.URL.Value)}, ""
}

// serveListener serves h on ln until ctx ends, then finishes requests in
// flight.
func serveListener(ctx context.Context, ln net.Listener, h http.Handler, log *slog.Logger) error {
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       time.Minute,
		WriteTimeout:      2 * time.Minute,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("serve on %s: %w", ln.Addr(), err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return fmt.Errorf("shut down: %w", err)
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// openBrowser hands url to the desktop's opener.
func openBrowser(url string) error {
	var cmd *exec.Cmd
	switch runtime.GOOS {
	case "darwin":
		cmd = exec.Command("open", url)
	case "windows":
		cmd = exec.Command("rundll32", "url.dll,FileProtocolHandler", url)
	default:
		cmd = exec.Command("xdg-open", url)
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	go cmd.Wait()
	return nil
}
