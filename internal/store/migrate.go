package store

import (
	"context"
	"fmt"
	"time"
)

// migrations are applied in order and never edited once released: a new
// schema change is a new entry, so any older database can be brought forward.
var migrations = []string{
	1: `
CREATE TABLE repositories (
	id          TEXT PRIMARY KEY,
	root_commit TEXT NOT NULL,
	path        TEXT NOT NULL,
	created_at  TEXT NOT NULL,
	updated_at  TEXT NOT NULL
);
CREATE TABLE commits (
	repo_id      TEXT NOT NULL REFERENCES repositories(id),
	hash         TEXT NOT NULL,
	author_name  TEXT NOT NULL,
	author_email TEXT NOT NULL,
	author_date  TEXT NOT NULL,
	commit_date  TEXT NOT NULL,
	subject      TEXT NOT NULL,
	PRIMARY KEY (repo_id, hash)
);
CREATE INDEX commits_by_hash ON commits(hash);
-- model, prompt version and scope are part of the key so that a summary
-- written by one model, prompt or path filter is never served for another.
CREATE TABLE summaries (
	repo_id        TEXT NOT NULL,
	commit_hash    TEXT NOT NULL,
	model          TEXT NOT NULL,
	prompt_version TEXT NOT NULL,
	scope          TEXT NOT NULL,
	summary        TEXT NOT NULL,
	input_tokens   INTEGER NOT NULL,
	output_tokens  INTEGER NOT NULL,
	cost_usd       REAL NOT NULL,
	diff_tokens    INTEGER NOT NULL,
	truncated      INTEGER NOT NULL,
	skipped_files  TEXT NOT NULL,
	created_at     TEXT NOT NULL,
	PRIMARY KEY (repo_id, commit_hash, model, prompt_version, scope),
	FOREIGN KEY (repo_id, commit_hash) REFERENCES commits(repo_id, hash)
);`,
	2: `
-- A paid answer, under the content hash of everything that shaped it: a
-- result is reused by any run that would send the same request again.
-- Failed calls are never stored here.
CREATE TABLE eval_results (
	key           TEXT PRIMARY KEY,
	model         TEXT NOT NULL,
	latency_ms    REAL NOT NULL,
	input_tokens  INTEGER NOT NULL,
	output_tokens INTEGER NOT NULL,
	cost_usd      REAL NOT NULL,
	request       TEXT NOT NULL REFERENCES payloads(hash),
	response      TEXT NOT NULL REFERENCES payloads(hash),
	created_at    TEXT NOT NULL
);
-- The bodies themselves, gzipped and content-addressed, apart from the
-- rows above so that aggregating results never reads them.
CREATE TABLE payloads (
	hash TEXT PRIMARY KEY,
	gz   BLOB NOT NULL
);
CREATE TABLE eval_runs (
	id         TEXT PRIMARY KEY,
	dataset    TEXT NOT NULL,
	models     TEXT NOT NULL,
	params     TEXT NOT NULL,
	created_at TEXT NOT NULL,
	finished_at TEXT
);
-- One row per model, item and repeat of a run: how the answer scored.
CREATE TABLE eval_run_results (
	run_id   TEXT NOT NULL REFERENCES eval_runs(id),
	model    TEXT NOT NULL,
	item     TEXT NOT NULL,
	line     INTEGER NOT NULL,
	repeat   INTEGER NOT NULL,
	key      TEXT NOT NULL,
	pass     INTEGER NOT NULL,
	score    REAL NOT NULL,
	reasons  TEXT NOT NULL,
	expected TEXT NOT NULL,
	error    TEXT NOT NULL,
	cached   INTEGER NOT NULL,
	-- Lines, unlike ids a dataset may repeat, name items uniquely.
	PRIMARY KEY (run_id, model, line, repeat)
);`,
	3: `
-- Claims on work in progress, so that two processes on one database never
-- pay for the same item: the SET key NX EX of a Redis design, in SQLite.
CREATE TABLE leases (
	key        TEXT PRIMARY KEY,
	owner      TEXT NOT NULL,
	expires_at INTEGER NOT NULL -- Unix milliseconds
);`,
	4: `
-- A summary written from a diff that lacked some blobs (a partial clone's):
-- served to partial clones, replaced by the first complete one.
ALTER TABLE summaries ADD COLUMN partial INTEGER NOT NULL DEFAULT 0;`,
}

func (s *Store) migrate(ctx context.Context) error {
	if _, err := s.db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)`); err != nil {
		return s.explain(err)
	}
	var current int
	if err := s.db.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&current); err != nil {
		return s.explain(err)
	}
	if err := newerSchema(s.path, current); err != nil {
		return err
	}
	latest := len(migrations) - 1
	for v := current + 1; v <= latest; v++ {
		tx, err := s.db.BeginTx(ctx, nil) // BEGIN IMMEDIATE: _txlock=immediate
		if err != nil {
			return s.explain(err)
		}
		var done int
		if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&done); err != nil {
			tx.Rollback()
			return s.explain(err)
		}
		if done >= v {
			tx.Rollback() // another process applied it meanwhile
			continue
		}
		if _, err := tx.ExecContext(ctx, migrations[v]); err != nil {
			tx.Rollback()
			return fmt.Errorf("migrate database %s to version %d: %w", s.path, v, err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations(version, applied_at) VALUES (?, ?)`,
			v, time.Now().UTC().Format(time.RFC3339)); err != nil {
			tx.Rollback()
			return s.explain(err)
		}
		if err := tx.Commit(); err != nil {
			return s.explain(err)
		}
	}
	return nil
}
