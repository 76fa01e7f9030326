package sqlstore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"time"

	"github.com/memdir/memdir/team/internal/migrate"
)

// Migrate applies the migrations in fsys that the database has not
// recorded yet, all in one write transaction. prelude, when set, runs first
// in that transaction; PostgreSQL takes an advisory lock there, while
// SQLite's immediate transaction already excludes other writers. Either
// way, servers starting together apply each migration once: the second
// waits, then finds them recorded.
func Migrate(ctx context.Context, db DB, fsys fs.FS, prelude string, log *slog.Logger) error {
	ms, err := migrate.Load(fsys)
	if err != nil {
		return err
	}
	return db.WriteTx(ctx, func(q Querier) error {
		if prelude != "" {
			if err := q.Exec(ctx, prelude); err != nil {
				return fmt.Errorf("lock migrations: %w", err)
			}
		}
		if err := q.Exec(ctx, `CREATE TABLE IF NOT EXISTS `+migrate.TableName+` (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)`); err != nil {
			return fmt.Errorf("create migrations table: %w", err)
		}
		for _, m := range ms {
			var one int
			err := q.QueryRow(ctx, `SELECT 1 FROM `+migrate.TableName+` WHERE version = $1`, m.Version).Scan(&one)
			if err == nil {
				continue
			}
			if !errors.Is(err, ErrNoRows) {
				return err
			}
			if err := q.Exec(ctx, m.SQL); err != nil {
				return fmt.Errorf("migration %s: %w", m.Name, err)
			}
			if err := q.Exec(ctx, `INSERT INTO `+migrate.TableName+` (version, name, applied_at) VALUES ($1, $2, $3)`,
				m.Version, m.Name, time.Now().UnixMilli()); err != nil {
				return err
			}
			log.Info("applied migration", "migration", m.Name)
		}
		return nil
	})
}
