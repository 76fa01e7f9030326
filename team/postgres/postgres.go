// Package postgres stores team memory in PostgreSQL through pgx, so that
// several stateless `memdir serve` replicas can share one database.
//
// All concurrency control is in the database: a PUT locks its repository's
// row (SELECT ... FOR UPDATE) in a READ COMMITTED transaction and compares
// If-Match with the checksum it read under the lock; reads run in READ ONLY
// REPEATABLE READ transactions, so a response never mixes two versions.
// Migrations run at Open under a transaction-scoped advisory lock, so
// replicas starting together apply each exactly once.
//
// The schema is whatever search_path selects; put search_path in the
// connection string (postgres://.../db?search_path=memdir) to keep the
// tables in their own schema.
package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/memdir/memdir/team"
	"github.com/memdir/memdir/team/internal/sqlstore"
)

//go:embed migrations/*.sql
var migrations embed.FS

// migrationLock is the advisory lock key that serialises migrations
// ("memdir" in ASCII).
const migrationLock int64 = 0x6d656d646972

// Options configures Open. A nil *Options means the defaults.
type Options struct {
	// MaxConns bounds the pool; 0 keeps pgxpool's default.
	MaxConns int32
	// Logger receives migration messages; nil discards them.
	Logger *slog.Logger
}

// Store is a [team.Store] in PostgreSQL.
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
	pool *pgxpool.Pool
}

var _ team.Store = (*Store)(nil)

// Open connects to the database named by dsn (a postgres:// URL or a
// key=value string) and applies pending migrations.
func Open(ctx context.Context, dsn string, opts *Options) (*Store, error) {
	if opts == nil {
		opts = &Options{}
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		// pgx's parse errors may echo the DSN, password included.
		return nil, errors.New("postgres: cannot parse the connection string; expected postgres://user@host:port/db?options")
	}
	if opts.MaxConns > 0 {
		cfg.MaxConns = opts.MaxConns
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres: connect to %s: %w", where(cfg), err)
	}
	a := &adapter{pool: pool}
	sub, err := fs.Sub(migrations, "migrations")
	if err != nil {
		pool.Close()
		return nil, err
	}
	lock := fmt.Sprintf("SELECT pg_advisory_xact_lock(%d)", migrationLock)
	if err := sqlstore.Migrate(ctx, a, sub, lock, log); err != nil {
		pool.Close()
		return nil, fmt.Errorf("postgres %s: %w", where(cfg), err)
	}
	return &Store{Store: sqlstore.New(a, "postgres"), pool: pool}, nil
}

func where(cfg *pgxpool.Config) string {
	return fmt.Sprintf("%s:%d/%s", cfg.ConnConfig.Host, cfg.ConnConfig.Port, cfg.ConnConfig.Database)
}

// Close closes the pool.
func (s *Store) Close() error {
	s.pool.Close()
	return nil
}

// adapter implements sqlstore.DB over a pgx pool.
type adapter struct {
	pool *pgxpool.Pool
}

func (a *adapter) ReadTx(ctx context.Context, fn func(sqlstore.Querier) error) error {
	return a.tx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, fn)
}

func (a *adapter) WriteTx(ctx context.Context, fn func(sqlstore.Querier) error) error {
	return a.tx(ctx, pgx.TxOptions{IsoLevel: pgx.ReadCommitted}, fn)
}

func (a *adapter) tx(ctx context.Context, opts pgx.TxOptions, fn func(sqlstore.Querier) error) error {
	tx, err := a.pool.BeginTx(ctx, opts)
	if err != nil {
		return unavailable(err)
	}
	if err := fn(querier{tx}); err != nil {
		tx.Rollback(context.WithoutCancel(ctx))
		return err
	}
	return tx.Commit(ctx)
}

// unavailable marks a failure to get a connection as ErrUnavailable, so the
// server answers 503 and clients retry.
func unavailable(err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return fmt.Errorf("%w: %v", team.ErrUnavailable, err)
}

func (a *adapter) Ping(ctx context.Context) error { return a.pool.Ping(ctx) }

func (a *adapter) ForUpdate() string { return " FOR UPDATE" }

func (a *adapter) IsUniqueViolation(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "23505"
}

type querier struct{ tx pgx.Tx }

func (q querier) Query(ctx context.Context, sql string, args ...any) (sqlstore.Rows, error) {
	rows, err := q.tx.Query(ctx, sql, args...)
	if err != nil {
		return nil, err
	}
	return rows, nil
}

func (q querier) QueryRow(ctx context.Context, sql string, args ...any) sqlstore.Row {
	return row{q.tx.QueryRow(ctx, sql, args...)}
}

func (q querier) Exec(ctx context.Context, sql string, args ...any) error {
	_, err := q.tx.Exec(ctx, sql, args...)
	return err
}

type row struct{ r pgx.Row }

func (r row) Scan(dest ...any) error {
	err := r.r.Scan(dest...)
	if errors.Is(err, pgx.ErrNoRows) {
		return sqlstore.ErrNoRows
	}
	return err
}
