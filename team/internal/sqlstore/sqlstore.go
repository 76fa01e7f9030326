// Package sqlstore implements team.Store once, over SQL that SQLite and
// PostgreSQL both accept, so the two adapters (team/sqlite, team/postgres)
// differ only in how they connect, lock and run transactions.
//
// # Schema
//
// repos holds one row per repository (current version and checksum);
// entries the current content; versions one row per PUT; changes one row
// per key a version wrote, with NULL content for a deletion (tombstone).
// An old version N is rebuilt from changes: for each key, its latest change
// at or before N, unless that change is a tombstone. Times are Unix
// milliseconds.
//
// # Concurrency
//
// Put runs in a write transaction that first makes sure the repository row
// exists (INSERT ... ON CONFLICT DO NOTHING), then locks it (SELECT ... FOR
// UPDATE on PostgreSQL; SQLite's immediate transaction already holds the
// database write lock), compares If-Match with the checksum it read under
// the lock, and only then reads the entries and writes. Writers to one
// repository are therefore serialised by the database itself, and several
// stateless servers may share it. A failed Put rolls back, including the
// placeholder row.
package sqlstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/team"
)

// Row is a single-row result. Scan returns ErrNoRows when there is none.
type Row interface {
	Scan(dest ...any) error
}

// Rows is a multi-row result.
type Rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
	Close()
}

// Querier runs statements inside a transaction. SQL uses $1, $2, ...
// placeholders; adapters rewrite them if their driver needs to.
type Querier interface {
	Query(ctx context.Context, sql string, args ...any) (Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) Row
	Exec(ctx context.Context, sql string, args ...any) error
}

// DB is what an adapter provides.
type DB interface {
	// ReadTx runs fn in a read-only transaction that sees one snapshot.
	ReadTx(ctx context.Context, fn func(Querier) error) error
	// WriteTx runs fn in a read-write transaction, committing if fn
	// returns nil and rolling back otherwise.
	WriteTx(ctx context.Context, fn func(Querier) error) error
	Ping(ctx context.Context) error
	// IsUniqueViolation reports whether err is a unique-constraint failure.
	IsUniqueViolation(err error) bool
	// ForUpdate is appended to the repository-row SELECT in Put:
	// " FOR UPDATE" on PostgreSQL, "" on SQLite.
	ForUpdate() string
}

// ErrNoRows is what Row.Scan returns when the query matched nothing.
var ErrNoRows = errors.New("no rows")

// Store is a team.Store over a DB.
type Store struct {
	db   DB
	name string // "sqlite" or "postgres", for error messages
}

var _ team.Store = (*Store)(nil)

// New returns a Store over db; name prefixes error messages.
func New(db DB, name string) *Store { return &Store{db: db, name: name} }

func ms(t time.Time) int64 { return t.UnixMilli() }

func fromMS(v int64) time.Time { return time.UnixMilli(v).UTC() }

// Get implements team.Repos.
func (s *Store) Get(ctx context.Context, repo string, opts *team.GetOptions) (*team.Data, error) {
	if opts == nil {
		opts = &team.GetOptions{}
	}
	var d *team.Data
	err := s.db.ReadTx(ctx, func(q Querier) error {
		var err error
		d, err = s.get(ctx, q, repo, opts)
		return err
	})
	if err != nil {
		return nil, s.wrap("get", repo, err)
	}
	return d, nil
}

func (s *Store) get(ctx context.Context, q Querier, repo string, opts *team.GetOptions) (*team.Data, error) {
	d := &team.Data{Repo: repo}
	var modified int64
	var err error
	if opts.Version == 0 {
		err = q.QueryRow(ctx, `SELECT version, checksum, last_modified FROM repos WHERE repo = $1 AND version > 0`, repo).
			Scan(&d.Version, &d.Checksum, &modified)
	} else {
		d.Version = opts.Version
		err = q.QueryRow(ctx, `SELECT checksum, created_at FROM versions WHERE repo = $1 AND version = $2`, repo, opts.Version).
			Scan(&d.Checksum, &modified)
	}
	if errors.Is(err, ErrNoRows) {
		if opts.Version != 0 {
			return nil, fmt.Errorf("version %d: %w", opts.Version, team.ErrNotFound)
		}
		return nil, team.ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	d.LastModified = fromMS(modified)
	if opts.IfNoneMatch != "" && opts.IfNoneMatch == d.Checksum {
		return nil, team.ErrNotModified
	}
	cols := "key, checksum, ''"
	if !opts.HashesOnly {
		cols = "key, checksum, content"
		d.Content.Entries = map[string]string{}
	}
	var rows Rows
	if opts.Version == 0 {
		rows, err = q.Query(ctx, `SELECT `+cols+` FROM entries WHERE repo = $1`, repo)
	} else {
		rows, err = q.Query(ctx, `SELECT `+cols+` FROM changes c WHERE c.repo = $1 AND c.checksum IS NOT NULL
			AND c.version = (SELECT MAX(c2.version) FROM changes c2 WHERE c2.repo = c.repo AND c2.key = c.key AND c2.version <= $2)`,
			repo, opts.Version)
	}
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	d.Content.EntryChecksums = map[string]string{}
	for rows.Next() {
		var key, sum, content string
		if err := rows.Scan(&key, &sum, &content); err != nil {
			return nil, err
		}
		d.Content.EntryChecksums[key] = sum
		if d.Content.Entries != nil {
			d.Content.Entries[key] = content
		}
	}
	return d, rows.Err()
}

// EntryPage implements team.Store. The page is read in a transaction of
// its own: from the entries table when the repository is still at
// version, else (a write came in between pages, or an old version was
// asked for) from the changes of version, which never change.
func (s *Store) EntryPage(ctx context.Context, repo string, version int64, after string, opts team.PageOptions) ([]team.Entry, error) {
	var out []team.Entry
	err := s.db.ReadTx(ctx, func(q Querier) error {
		out = out[:0]
		var current int64
		err := q.QueryRow(ctx, `SELECT version FROM repos WHERE repo = $1 AND version > 0`, repo).Scan(&current)
		if errors.Is(err, ErrNoRows) {
			return team.ErrNotFound
		}
		if err != nil {
			return err
		}
		if version <= 0 || version > current {
			return fmt.Errorf("version %d: %w", version, team.ErrNotFound)
		}
		var rows Rows
		if version == current {
			rows, err = q.Query(ctx, `SELECT key, content FROM entries WHERE repo = $1 AND key > $2 ORDER BY key LIMIT $3`,
				repo, after, opts.PageLimit())
		} else {
			rows, err = q.Query(ctx, `SELECT c.key, c.content FROM changes c WHERE c.repo = $1 AND c.key > $2 AND c.checksum IS NOT NULL
				AND c.version = (SELECT MAX(c2.version) FROM changes c2 WHERE c2.repo = c.repo AND c2.key = c.key AND c2.version <= $3)
				ORDER BY c.key LIMIT $4`, repo, after, version, opts.PageLimit())
		}
		if err != nil {
			return err
		}
		defer rows.Close()
		size, max := 0, opts.PageMaxBytes()
		for size < max && rows.Next() {
			var e team.Entry
			if err := rows.Scan(&e.Key, &e.Content); err != nil {
				return err
			}
			size += len(e.Content)
			out = append(out, e)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, s.wrap("read entries of", repo, err)
	}
	return out, nil
}

// Put implements team.Repos.
func (s *Store) Put(ctx context.Context, repo string, u *team.Update) (*team.Data, error) {
	var d *team.Data
	err := s.db.WriteTx(ctx, func(q Querier) error {
		var err error
		d, err = s.put(ctx, q, repo, u)
		return err
	})
	if err != nil {
		return nil, s.wrap("put", repo, err)
	}
	return d, nil
}

func (s *Store) put(ctx context.Context, q Querier, repo string, u *team.Update) (*team.Data, error) {
	if err := q.Exec(ctx, `INSERT INTO repos (repo, version, checksum, last_modified) VALUES ($1, 0, '', 0) ON CONFLICT (repo) DO NOTHING`, repo); err != nil {
		return nil, err
	}
	var version int64
	var checksum string
	if err := q.QueryRow(ctx, `SELECT version, checksum FROM repos WHERE repo = $1`+s.db.ForUpdate(), repo).Scan(&version, &checksum); err != nil {
		return nil, err
	}
	if u.IfMatch != "" && (version == 0 || u.IfMatch != checksum) {
		return nil, team.ErrConflict
	}
	current, err := s.checksums(ctx, q, repo)
	if err != nil {
		return nil, err
	}
	plan, err := team.PlanUpdate(current, u)
	if err != nil {
		return nil, err
	}
	version++
	now := ms(plan.Time)
	if err := q.Exec(ctx, `UPDATE repos SET version = $1, checksum = $2, last_modified = $3 WHERE repo = $4`,
		version, plan.Checksum, now, repo); err != nil {
		return nil, err
	}
	if err := q.Exec(ctx, `INSERT INTO versions (repo, version, checksum, created_at, entry_count, author) VALUES ($1, $2, $3, $4, $5, $6)`,
		repo, version, plan.Checksum, now, len(plan.Checksums), u.Author); err != nil {
		return nil, err
	}
	for _, k := range plan.Changed {
		content, sum := u.Entries[k], plan.Checksums[k]
		if err := q.Exec(ctx, `INSERT INTO entries (repo, key, content, checksum) VALUES ($1, $2, $3, $4)
			ON CONFLICT (repo, key) DO UPDATE SET content = excluded.content, checksum = excluded.checksum`,
			repo, k, content, sum); err != nil {
			return nil, err
		}
		if err := q.Exec(ctx, `INSERT INTO changes (repo, version, key, content, checksum) VALUES ($1, $2, $3, $4, $5)`,
			repo, version, k, content, sum); err != nil {
			return nil, err
		}
	}
	for _, k := range plan.Deleted {
		if err := q.Exec(ctx, `DELETE FROM entries WHERE repo = $1 AND key = $2`, repo, k); err != nil {
			return nil, err
		}
		if err := q.Exec(ctx, `INSERT INTO changes (repo, version, key, content, checksum) VALUES ($1, $2, $3, NULL, NULL)`,
			repo, version, k); err != nil {
			return nil, err
		}
	}
	return &team.Data{
		Repo:         repo,
		Version:      version,
		LastModified: plan.Time,
		Checksum:     plan.Checksum,
	}, nil
}

func (s *Store) checksums(ctx context.Context, q Querier, repo string) (map[string]string, error) {
	rows, err := q.Query(ctx, `SELECT key, checksum FROM entries WHERE repo = $1`, repo)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var k, sum string
		if err := rows.Scan(&k, &sum); err != nil {
			return nil, err
		}
		out[k] = sum
	}
	return out, rows.Err()
}

// History implements team.Repos.
func (s *Store) History(ctx context.Context, repo string, opts *team.HistoryOptions) ([]team.VersionInfo, error) {
	var out []team.VersionInfo
	err := s.db.ReadTx(ctx, func(q Querier) error {
		var exists int
		if err := q.QueryRow(ctx, `SELECT 1 FROM repos WHERE repo = $1 AND version > 0`, repo).Scan(&exists); err != nil {
			if errors.Is(err, ErrNoRows) {
				return team.ErrNotFound
			}
			return err
		}
		before := opts.HistoryBefore()
		if before <= 0 {
			before = 1 << 62
		}
		rows, err := q.Query(ctx, `SELECT version, checksum, created_at, entry_count, author FROM versions
			WHERE repo = $1 AND version < $2 ORDER BY version DESC LIMIT $3`, repo, before, opts.HistoryLimit())
		if err != nil {
			return err
		}
		index := map[int64]int{}
		for rows.Next() {
			var v team.VersionInfo
			var created int64
			if err := rows.Scan(&v.Version, &v.Checksum, &created, &v.EntryCount, &v.Author); err != nil {
				rows.Close()
				return err
			}
			v.LastModified = fromMS(created)
			v.Changed = []string{}
			index[v.Version] = len(out)
			out = append(out, v)
		}
		rows.Close()
		if err := rows.Err(); err != nil || len(out) == 0 {
			return err
		}
		rows, err = q.Query(ctx, `SELECT version, key, checksum IS NULL FROM changes
			WHERE repo = $1 AND version >= $2 AND version <= $3 ORDER BY version, key`,
			repo, out[len(out)-1].Version, out[0].Version)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var version int64
			var key string
			var deleted bool
			if err := rows.Scan(&version, &key, &deleted); err != nil {
				return err
			}
			v := &out[index[version]]
			if deleted {
				v.Deleted = append(v.Deleted, key)
			} else {
				v.Changed = append(v.Changed, key)
			}
		}
		return rows.Err()
	})
	if err != nil {
		return nil, s.wrap("history", repo, err)
	}
	return out, nil
}

// CreateToken implements team.Tokens.
func (s *Store) CreateToken(ctx context.Context, t *team.Token, hash string) error {
	err := s.db.WriteTx(ctx, func(q Querier) error {
		return q.Exec(ctx, `INSERT INTO tokens (id, hash, repo, read_only, name, created_at) VALUES ($1, $2, $3, $4, $5, $6)`,
			t.ID, hash, t.Repo, t.ReadOnly, t.Name, ms(t.CreatedAt))
	})
	if err != nil && s.db.IsUniqueViolation(err) {
		return fmt.Errorf("%s: token %s: %w", s.name, t.ID, memdir.ErrExists)
	}
	if err != nil {
		return fmt.Errorf("%s: create token %s: %w", s.name, t.ID, err)
	}
	return nil
}

const tokenCols = `id, repo, read_only, name, created_at, revoked_at`

func scanToken(r Row) (*team.Token, error) {
	var t team.Token
	var created int64
	var revoked *int64
	if err := r.Scan(&t.ID, &t.Repo, &t.ReadOnly, &t.Name, &created, &revoked); err != nil {
		return nil, err
	}
	t.CreatedAt = fromMS(created)
	if revoked != nil {
		at := fromMS(*revoked)
		t.RevokedAt = &at
	}
	return &t, nil
}

// LookupToken implements team.Tokens.
func (s *Store) LookupToken(ctx context.Context, hash string) (*team.Token, error) {
	var t *team.Token
	err := s.db.ReadTx(ctx, func(q Querier) error {
		var err error
		t, err = scanToken(q.QueryRow(ctx, `SELECT `+tokenCols+` FROM tokens WHERE hash = $1 AND revoked_at IS NULL`, hash))
		return err
	})
	if errors.Is(err, ErrNoRows) {
		return nil, fmt.Errorf("token: %w", team.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: look up token: %w", s.name, err)
	}
	return t, nil
}

// RevokeToken implements team.Tokens.
func (s *Store) RevokeToken(ctx context.Context, id string, at time.Time) error {
	err := s.db.WriteTx(ctx, func(q Querier) error {
		var one int
		if err := q.QueryRow(ctx, `SELECT 1 FROM tokens WHERE id = $1`, id).Scan(&one); err != nil {
			return err
		}
		return q.Exec(ctx, `UPDATE tokens SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL`, ms(at), id)
	})
	if errors.Is(err, ErrNoRows) {
		return fmt.Errorf("token %s: %w", id, team.ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("%s: revoke token %s: %w", s.name, id, err)
	}
	return nil
}

// ListTokens implements team.Tokens.
func (s *Store) ListTokens(ctx context.Context) ([]team.Token, error) {
	var out []team.Token
	err := s.db.ReadTx(ctx, func(q Querier) error {
		rows, err := q.Query(ctx, `SELECT `+tokenCols+` FROM tokens ORDER BY created_at, id`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			t, err := scanToken(rows)
			if err != nil {
				return err
			}
			out = append(out, *t)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("%s: list tokens: %w", s.name, err)
	}
	return out, nil
}

// Ping implements team.Store.
func (s *Store) Ping(ctx context.Context) error {
	if err := s.db.Ping(ctx); err != nil {
		return fmt.Errorf("%s: %w: %v", s.name, team.ErrUnavailable, err)
	}
	return nil
}

// wrap adds the repository to err, and for database failures the store
// and operation too. Domain errors (not found, conflict, limits, keys) read
// the same from every store, because the server sends their text to
// clients.
func (s *Store) wrap(op, repo string, err error) error {
	for _, domain := range []error{team.ErrNotFound, team.ErrNotModified, team.ErrConflict, team.ErrTooManyEntries, memdir.ErrInvalid, team.ErrUnavailable} {
		if errors.Is(err, domain) {
			return fmt.Errorf("%s: %w", repo, err)
		}
	}
	return fmt.Errorf("%s: %s %s: %w", s.name, op, repo, err)
}
