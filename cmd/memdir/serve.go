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
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/memdir/memdir/internal/cli"
	"github.com/memdir/memdir/team"
	"github.com/memdir/memdir/team/postgres"
	"github.com/memdir/memdir/team/sqlite"
)

var serveCmd = &cli.Command{
	Name:  "serve",
	Args:  "[--addr HOST:PORT] [--db DB] | token create --repo OWNER/NAME [--read-only] | token list | token revoke ID",
	Short: "run the team memory sync server, and manage its tokens",
	Long: `Serve runs the team memory sync server: the protocol Claude Code's team
memory sync speaks (GET/PUT /api/claude_code/team_memory?repo=owner/name),
plus history (view=history), old versions (version=N) and explicit deletes.
Team members sync their team/ directory with 'memdir sync'.

Storage is a SQLite file by default (team.db under memdir's data directory:
MEMDIR_DATA_DIR, else $XDG_DATA_HOME/memdir, else ~/.local/share/memdir) or
PostgreSQL, which lets several server replicas share one database. The schema
is created and migrated at start. The directory of a sqlite:PATH must exist;
only the default one is created.

Every request needs a bearer token issued by this server for the repository
it names. Tokens are stored hashed; the secret is shown once, at creation.
Read-only tokens may only read.

  memdir serve token create --repo owner/name [--read-only] [--name LABEL]
  memdir serve token list
  memdir serve token revoke ID

The server listens on 127.0.0.1:8787 unless told otherwise; put it behind a
TLS-terminating proxy before exposing it. It logs one JSON line per request
to stderr (never tokens or contents), answers /healthz (alive) and /readyz
(database reachable), and on SIGINT or SIGTERM stops accepting connections
and finishes the requests in flight (up to 10 s).

Limits: 200,000 bytes per PUT body holding several entries, 250,000 bytes per
entry, --max-entries entries per repository. Entries that look like secrets
(API keys, tokens, private keys) are refused with 422. So is, with 400,
anything a client could not write back as sent: a key segment over 255
bytes, a key that is a directory of another key, a value that is not a
string, invalid UTF-8 or lone surrogates, unknown or miscased fields. Errors
and logs name such keys by a prefix and a hash, never whole.

Full GETs are streamed from the database in pages, so memory stays bounded
however large the repository. Replicas on one PostgreSQL database share all
state through it.

Environment: MEMDIR_TEAM_DB sets --db.

Examples:
  memdir serve
  memdir serve --addr 0.0.0.0:8787 --db postgres://memdir@db:5432/memdir
  memdir serve --db sqlite:/srv/memdir/team.db token create --repo acme/widgets
  memdir serve token list --json`,
	Setup: cli.Setup(runServe),
}

// serveOptions holds the flag values of memdir serve.
type serveOptions struct {
	addr       string
	db         string
	maxEntries int
	org        string
	logFormat  string
	repo       string
	readOnly   bool
	name       string
	asJSON     bool
	mcpOn      bool
	mcpDir     string
}

func (o *serveOptions) Declare(fs *flag.FlagSet) {
	fs.StringVar(&o.addr, "addr", "127.0.0.1:8787", "listen on `HOST:PORT`")
	fs.StringVar(&o.db, "db", "", "database: sqlite:`PATH` or a postgres:// URL (default: sqlite:<data dir>/team.db)")
	fs.IntVar(&o.maxEntries, "max-entries", team.DefaultMaxEntries, "maximum entries per repository")
	fs.StringVar(&o.org, "org", "", "organization id reported in responses")
	fs.StringVar(&o.logFormat, "log-format", "json", "request log format: json or text")
	fs.StringVar(&o.repo, "repo", "", "token create: the repository `OWNER/NAME` the token grants")
	fs.BoolVar(&o.readOnly, "read-only", false, "token create: the token may only read")
	fs.StringVar(&o.name, "name", "", "token create: a `LABEL` to recognise the token by")
	fs.BoolVar(&o.asJSON, "json", false, "token create and list: print JSON")
	fs.BoolVar(&o.mcpOn, "mcp", false, "also serve the memory directory found from the working directory over MCP at /mcp (loopback --addr only; see 'memdir help mcp')")
	fs.StringVar(&o.mcpDir, "mcp-dir", "", "serve `DIR` as the memory directory at /mcp (implies --mcp)")
}

func runServe(ctx context.Context, env *cli.Env, o *serveOptions, args []string) error {
	var logger *slog.Logger
	switch o.logFormat {
	case "json":
		logger = slog.New(slog.NewJSONHandler(env.Stderr, nil))
	case "text":
		logger = slog.New(slog.NewTextHandler(env.Stderr, nil))
	default:
		return cli.Usagef("--log-format %q: want json or text", o.logFormat)
	}
	if len(args) > 0 && args[0] != "token" {
		return cli.Usagef("unknown argument %q; did you mean 'memdir serve token ...'?", args[0])
	}
	dsn := o.db
	if dsn == "" {
		dsn = env.Getenv("MEMDIR_TEAM_DB")
	}
	store, err := openTeamStore(ctx, env, dsn, logger)
	if err != nil {
		return err
	}
	defer store.Close()
	if len(args) > 0 {
		return tokenCommand(ctx, env, store, args[1:], o.repo, o.readOnly, o.name, o.asJSON)
	}
	if o.maxEntries <= 0 {
		return cli.Usagef("--max-entries must be positive")
	}
	h := team.NewHandler(store, &team.HandlerOptions{
		MaxEntries:     o.maxEntries,
		OrganizationID: o.org,
		Now:            env.Now,
		Logger:         logger,
	})
	var handler http.Handler = h
	if o.mcpOn || o.mcpDir != "" {
		if handler, err = withMCP(ctx, env, h, o.addr, o.mcpDir, logger); err != nil {
			return err
		}
	}
	return serveHTTP(ctx, o.addr, handler, logger)
}

// teamStore is a team.Store the command must close.
type teamStore interface {
	team.Store
	io.Closer
}

// openTeamStore opens the database named by dsn: "sqlite:PATH", a
// postgres:// URL, or "" for the default SQLite file.
func openTeamStore(ctx context.Context, env *cli.Env, dsn string, log *slog.Logger) (teamStore, error) {
	switch {
	case dsn == "":
		path, err := sqlite.DefaultPath(env.LookupEnv)
		if err != nil {
			return nil, err
		}
		// Only the default directory is created: a --db path under a
		// missing one is likely a typo, refused as invalid input.
		return sqlite.Open(ctx, path, &sqlite.Options{Logger: log, CreateDir: true})
	case strings.HasPrefix(dsn, "sqlite:"):
		path := strings.TrimPrefix(strings.TrimPrefix(dsn, "sqlite:"), "//")
		if path == "" {
			return nil, cli.Usagef("--db sqlite: needs a path, e.g. sqlite:/srv/memdir/team.db")
		}
		if !filepath.IsAbs(path) {
			path = filepath.Join(env.Cwd, path)
		}
		return sqlite.Open(ctx, path, &sqlite.Options{Logger: log})
	case strings.HasPrefix(dsn, "postgres://"), strings.HasPrefix(dsn, "postgresql://"):
		return postgres.Open(ctx, dsn, &postgres.Options{Logger: log})
	default:
		return nil, cli.Usagef("--db %q: want sqlite:PATH or a postgres:// URL", redactDSN(dsn))
	}
}

// redactDSN hides a password in a connection string shown in a message.
func redactDSN(dsn string) string {
	if at := strings.LastIndex(dsn, "@"); at >= 0 {
		if scheme := strings.Index(dsn, "://"); scheme >= 0 && scheme < at {
			return dsn[:scheme+3] + "…@" + dsn[at+1:]
		}
	}
	return dsn
}

// serveHTTP serves h on addr until ctx is done, then shuts down
// gracefully: it stops accepting and waits up to 10 s for requests in
// flight.
func serveHTTP(ctx context.Context, addr string, h http.Handler, log *slog.Logger) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", addr, err)
	}
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       time.Minute,
		WriteTimeout:      time.Minute,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	log.Info("team memory server listening", "addr", ln.Addr().String(), "url", "http://"+ln.Addr().String())
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("serve on %s: %w", addr, err)
	case <-ctx.Done():
	}
	log.Info("shutting down; finishing requests in flight")
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return fmt.Errorf("shut down: %w", err)
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	log.Info("stopped")
	return nil
}

func tokenCommand(ctx context.Context, env *cli.Env, store teamStore, args []string, repo string, readOnly bool, name string, asJSON bool) error {
	if len(args) == 0 {
		return cli.Usagef("token needs create, list or revoke")
	}
	switch args[0] {
	case "create":
		if len(args) != 1 {
			return cli.Usagef("token create takes no arguments; pass --repo OWNER/NAME")
		}
		if repo == "" {
			return cli.Usagef("token create needs --repo OWNER/NAME")
		}
		secret, tok, err := team.IssueToken(ctx, store, repo, readOnly, name, env.Now())
		if err != nil {
			return err
		}
		return cli.Emit(env, asJSON, struct {
			*team.Token
			Secret string `json:"secret"`
		}{tok, secret}, func(w io.Writer) error {
			fmt.Fprintf(w, "Created %s token %s for %s.\n\n  %s\n\n", access(tok.ReadOnly), tok.ID, tok.Repo, secret)
			fmt.Fprintf(w, "This is the only time the secret is shown. Give it to the team member, who sets\n  export MEMDIR_TEAM_TOKEN=%s\nor passes --token to 'memdir sync'. Revoke it with 'memdir serve token revoke %s'.\n", secret, tok.ID)
			return nil
		})
	case "list":
		if len(args) != 1 {
			return cli.Usagef("token list takes no arguments")
		}
		toks, err := store.ListTokens(ctx)
		if err != nil {
			return err
		}
		if toks == nil {
			toks = []team.Token{}
		}
		return cli.Emit(env, asJSON, toks, func(w io.Writer) error {
			if len(toks) == 0 {
				fmt.Fprintln(w, "No tokens. Create one with 'memdir serve token create --repo OWNER/NAME'.")
				return nil
			}
			tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tREPO\tACCESS\tNAME\tCREATED\tREVOKED")
			for _, t := range toks {
				revoked := "-"
				if t.RevokedAt != nil {
					revoked = t.RevokedAt.Format(time.RFC3339)
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", t.ID, t.Repo, access(t.ReadOnly), t.Name, t.CreatedAt.Format(time.RFC3339), revoked)
			}
			return tw.Flush()
		})
	case "revoke":
		if len(args) != 2 {
			return cli.Usagef("token revoke takes one token ID (see 'memdir serve token list')")
		}
		if err := store.RevokeToken(ctx, args[1], env.Now()); err != nil {
			return err
		}
		fmt.Fprintf(env.Stdout, "Revoked %s.\n", args[1])
		return nil
	default:
		return cli.Usagef("unknown token command %q: want create, list or revoke", args[0])
	}
}

func access(readOnly bool) string {
	if readOnly {
		return "read-only"
	}
	return "read-write"
}
