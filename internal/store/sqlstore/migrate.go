package sqlstore

import (
	"context"
	"fmt"
)

// migrate brings the schema to the dialect's latest version, one
// migration per transaction. Each transaction first takes the dialect's
// migration lock, then reads the version again: processes starting
// together apply each migration once, and none sees a half-made schema.
// A database written by a newer digest is refused, never changed.
func (s *DB) migrate(ctx context.Context) error {
	latest := len(s.d.Migrations) - 1
	for {
		done, err := s.migrateOnce(ctx, latest)
		if err != nil || done {
			return err
		}
	}
}

// migrateOnce applies the next migration, if any, and reports whether the
// schema is now the latest.
func (s *DB) migrateOnce(ctx context.Context, latest int) (bool, error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return false, s.explain(err)
	}
	defer tx.Rollback()
	if s.d.LockMigrations != nil {
		if err := s.d.LockMigrations(ctx, tx.Tx); err != nil {
			return false, s.explain(err)
		}
	}
	if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)`); err != nil {
		return false, s.explain(err)
	}
	var current int
	if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&current); err != nil {
		return false, s.explain(err)
	}
	if err := s.NewerSchema(current); err != nil {
		return false, err
	}
	if current == latest {
		return true, tx.Commit()
	}
	v := current + 1
	if _, err := tx.ExecContext(ctx, s.d.Migrations[v]); err != nil {
		return false, fmt.Errorf("migrate database %s to version %d: %w", s.name, v, err)
	}
	// The database's clock, not a bound time: a migration may change the
	// column's type under a statement prepared for the one before.
	if _, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations(version, applied_at) VALUES (?, `+s.d.Now+`)`, v); err != nil {
		return false, s.explain(err)
	}
	if err := tx.Commit(); err != nil {
		return false, s.explain(err)
	}
	return v == latest, nil
}

// NewerSchema refuses a schema version newer than this digest knows.
func (s *DB) NewerSchema(version int) error {
	if latest := len(s.d.Migrations) - 1; version > latest {
		return fmt.Errorf("database %s has schema version %d, newer than this digest understands (%d). Try: a newer digest, or another --db", s.name, version, latest)
	}
	return nil
}
