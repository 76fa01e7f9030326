// Package sqlite stores team memory in one SQLite file, through the pure-Go
// modernc.org/sqlite driver. It is the default store of `memdir serve`.
//
// The database runs in WAL mode, so reads never wait for a writer, with a
// busy timeout and foreign keys on. A store writes through one connection
// (writers of one process queue for it) and every write transaction starts
// with BEGIN IMMEDIATE, which takes the database write lock up front:
// writers are serialised by SQLite, which is where the If-Match comparison
// happens.
// Several processes on one machine may open the same file; a network
// filesystem is not safe for SQLite's locks, use PostgreSQL for several
// machines.
package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"

	sqlite "modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/internal/atomicfile"
	"github.com/memdir/memdir/internal/statedir"
	"github.com/memdir/memdir/team"
	"github.com/memdir/memdir/team/internal/sqlstore"
)

//go:embed migrations/*.sql
var migrations embed.FS

// FileName is the database's file name under memdir's data directory.
const FileName = "team.db"

// DefaultPath returns the default database file: team.db under
// statedir.Data.
func DefaultPath(lookup memdir.LookupEnvFunc) (string, error) {
	dir, err := statedir.Data(lookup)
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, FileName), nil
}

// Options configures Open. A nil *Options means the defaults.
type Options struct {
	// BusyTimeout is how long a writer waits for the write lock;
	// 0 means 10 s.
	BusyTimeout time.Duration
	// Logger receives migration messages; nil discards them.
	Logger *slog.Logger
	// CreateDir creates the database's directory (0700) when it does not
	// exist. Without it, Open refuses a path whose directory is missing:
	// for a path someone typed, that is most likely a typo. memdir serve
	// sets it for its default path under the data directory only.
	CreateDir bool
}

// Store is a [team.Store] in a SQLite file.
//
// Its methods are those of [team.Store] and its parts, shared with the
// other SQL store through an internal package (so go doc does not list them
// here): [team.Repos.Get], [team.Repos.Put] and [team.Repos.History] for
// repositories; [team.Tokens.CreateToken], [team.Tokens.LookupToken],
// [team.Tokens.RevokeToken] and [team.Tokens.ListTokens] for access tokens;
// [team.Store.EntryPage] and [team.Store.Ping]. Errors wrap team's sentinels
// ([team.ErrNotFound], [team.ErrConflict]) as the interface documents. Close
// releases the database.
type Store struct {
	*sqlstore.Store
	a *adapter
}

var _ team.Store = (*Store)(nil)

// Open opens (creating if needed, with mode 0600) the database at path and
// applies pending migrations. The directory must exist unless
// opts.CreateDir is set (it is then created 0700); a missing one is an
// error naming it that wraps memdir.ErrInvalid.
func Open(ctx context.Context, path string, opts *Options) (*Store, error) {
	if opts == nil {
		opts = &Options{}
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if path == "" || strings.ContainsAny(path, "?#") {
		return nil, fmt.Errorf("sqlite database path %q: empty or contains '?' or '#': %w", path, memdir.ErrInvalid)
	}
	if err := checkDir(filepath.Dir(path), opts.CreateDir); err != nil {
		return nil, fmt.Errorf("sqlite database %s: %w", path, err)
	}
	// SQLite creates the file 0644; create it first so it is private, and
	// the -wal and -shm files SQLite derives from it follow.
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("sqlite database %s: %w", path, err)
	}
	f.Close()
	busy := opts.BusyTimeout
	if busy <= 0 {
		busy = 10 * time.Second
	}
	params := fmt.Sprintf("_busy_timeout=%d&_journal_mode=WAL&_foreign_keys=1&_synchronous=NORMAL", busy.Milliseconds())
	// One connection writes, with BEGIN IMMEDIATE: writers of this process
	// queue for it in Go instead of each polling SQLite's lock in the busy
	// handler, whose sleeps made the tail latency (8 clients: PUT p99 3-4x
	// PostgreSQL's with a pool of writers). The busy timeout still covers
	// other processes on the same file. Reads use a pool of their own and
	// never wait for the writer (WAL).
	write, err := sql.Open("sqlite", path+"?"+params+"&_txlock=immediate")
	if err != nil {
		return nil, fmt.Errorf("sqlite database %s: %w", path, err)
	}
	write.SetMaxOpenConns(1)
	write.SetMaxIdleConns(1)
	write.SetConnMaxIdleTime(0)
	write.SetConnMaxLifetime(0)
	read, err := sql.Open("sqlite", path+"?"+params)
	if err != nil {
		write.Close()
		return nil, fmt.Errorf("sqlite database %s: %w", path, err)
	}
	a := &adapter{write: write, read: read}
	sub, err := fs.Sub(migrations, "migrations")
	if err != nil {
		a.close()
		return nil, err
	}
	if err := migrateRetrying(ctx, a, sub, busy, log.With("db", path)); err != nil {
		a.close()
		return nil, fmt.Errorf("sqlite database %s: %w", path, err)
	}
	return &Store{Store: sqlstore.New(a, "sqlite"), a: a}, nil
}

// migrateRetrying migrates the schema, retrying while the database is busy
// for up to the busy timeout. Processes (or goroutines) opening one new
// database together all switch it to WAL on their first connection, and
// SQLite answers a connection that finds the switch under way with
// SQLITE_BUSY at once, without waiting in the busy handler.
// checkDir makes sure dir is a directory, creating it when create is set.
func checkDir(dir string, create bool) error {
	fi, err := os.Stat(dir)
	switch {
	case err == nil && fi.IsDir():
		return nil
	case err == nil:
		return fmt.Errorf("%s is not a directory: %w", dir, memdir.ErrInvalid)
	case errors.Is(err, fs.ErrNotExist) && create:
		return atomicfile.MkdirAll(dir, 0o700)
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("directory %s does not exist; create it first (memdir creates only its default directory): %w", dir, memdir.ErrInvalid)
	case errors.Is(err, syscall.ENOTDIR):
		return fmt.Errorf("%s is not a directory (a file is in its path): %w", dir, memdir.ErrInvalid)
	}
	return err
}

func migrateRetrying(ctx context.Context, a *adapter, fsys fs.FS, timeout time.Duration, log *slog.Logger) error {
	deadline := time.Now().Add(timeout)
	wait := 5 * time.Millisecond
	for {
		err := sqlstore.Migrate(ctx, a, fsys, "", log)
		if err == nil || !errors.Is(err, team.ErrUnavailable) || time.Now().Add(wait).After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
		wait = min(2*wait, 200*time.Millisecond)
	}
}

// Close closes the database.
func (s *Store) Close() error { return s.a.close() }

// adapter implements sqlstore.DB over database/sql: one connection for
// writes, a pool for reads.
type adapter struct {
	write, read *sql.DB
}

func (a *adapter) close() error {
	return errors.Join(a.write.Close(), a.read.Close())
}

func (a *adapter) ReadTx(ctx context.Context, fn func(sqlstore.Querier) error) error {
	return a.tx(ctx, a.read, &sql.TxOptions{ReadOnly: true}, fn)
}

func (a *adapter) WriteTx(ctx context.Context, fn func(sqlstore.Querier) error) error {
	return a.tx(ctx, a.write, nil, fn)
}

func (a *adapter) tx(ctx context.Context, db *sql.DB, opts *sql.TxOptions, fn func(sqlstore.Querier) error) error {
	tx, err := db.BeginTx(ctx, opts)
	if err != nil {
		return busy(err)
	}
	if err := fn(querier{tx}); err != nil {
		tx.Rollback()
		return busy(err)
	}
	return busy(tx.Commit())
}

// busy marks SQLITE_BUSY (the busy timeout expired) as ErrUnavailable, so
// the server answers 503 and clients retry.
func busy(err error) error {
	var se *sqlite.Error
	if errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_BUSY {
		return fmt.Errorf("%w: %v", team.ErrUnavailable, err)
	}
	return err
}

func (a *adapter) Ping(ctx context.Context) error { return a.read.PingContext(ctx) }

func (a *adapter) ForUpdate() string { return "" }

func (a *adapter) IsUniqueViolation(err error) bool {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return false
	}
	return se.Code() == sqlite3.SQLITE_CONSTRAINT_UNIQUE || se.Code() == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY
}

type querier struct{ tx *sql.Tx }

var (
	placeholder = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\$([0-9]+)`) })
	rebound     sync.Map // query -> query with ?N placeholders
)

// rebind turns $N placeholders into SQLite's numbered ?N form.
func rebind(q string) string {
	if v, ok := rebound.Load(q); ok {
		return v.(string)
	}
	r := placeholder().ReplaceAllString(q, "?$1")
	rebound.Store(q, r)
	return r
}

func (q querier) Query(ctx context.Context, query string, args ...any) (sqlstore.Rows, error) {
	rows, err := q.tx.QueryContext(ctx, rebind(query), args...)
	if err != nil {
		return nil, err
	}
	return sqlRows{rows}, nil
}

func (q querier) QueryRow(ctx context.Context, query string, args ...any) sqlstore.Row {
	return sqlRow{q.tx.QueryRowContext(ctx, rebind(query), args...)}
}

func (q querier) Exec(ctx context.Context, query string, args ...any) error {
	_, err := q.tx.ExecContext(ctx, rebind(query), args...)
	return err
}

type sqlRow struct{ r *sql.Row }

func (r sqlRow) Scan(dest ...any) error {
	err := r.r.Scan(dest...)
	if errors.Is(err, sql.ErrNoRows) {
		return sqlstore.ErrNoRows
	}
	return err
}

type sqlRows struct{ *sql.Rows }

func (r sqlRows) Close() { r.Rows.Close() }
