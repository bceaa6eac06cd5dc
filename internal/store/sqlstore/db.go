// Package sqlstore is the SQL that every digest database speaks, over
// database/sql: the one implementation of store.Store, parameterized by a
// Dialect for what differs between databases (placeholders, the schema's
// types, errors, the migration lock, the clock).
package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"

	objects "github.com/digest-cli/digest/internal/payloads"
	"github.com/digest-cli/digest/internal/store"
)

// Dialect is what a database does its own way.
type Dialect struct {
	// Migrations are the schema's versions, from index 1: applied in
	// order and never edited once released.
	Migrations []string
	// Numbered placeholders ($1, $2...) instead of ?.
	Numbered bool
	// Explain turns a driver's error into one that says what to do; nil
	// says which database failed.
	Explain func(name string, err error) error
	// LockMigrations runs first in each migration's transaction, so that
	// processes starting together apply each migration once: PostgreSQL's
	// advisory lock (SQLite's BEGIN IMMEDIATE locks already).
	LockMigrations func(ctx context.Context, tx *sql.Tx) error
	// NowMillis is an SQL expression for the database's clock, in Unix
	// milliseconds: claims expire by it, not by any one client's clock.
	NowMillis string
	// Greatest names the function returning the largest of its
	// arguments: max in SQLite, GREATEST in PostgreSQL.
	Greatest string
	// NoFlush is an SQL expression that, evaluated in a statement, lets
	// that statement's transaction commit without waiting for its write
	// to reach the disk or a synchronous standby, and is the string 'off';
	// the shared limit's statements evaluate it. PostgreSQL's is
	// set_config('synchronous_commit', 'off', true); empty where a commit
	// waits for no disk anyway (SQLite in WAL mode at synchronous=NORMAL).
	NoFlush string
	// Timestamps says the schema's times are the database's own type
	// (PostgreSQL's timestamptz), bound and read as time.Time; without
	// it they are RFC 3339 text (SQLite's), which sorts as it compares
	// where it is written at a fixed width (see timeArg).
	Timestamps bool
	// Now is an SQL expression for the database's clock as a value its
	// time columns take, whether text (SQLite's RFC 3339) or timestamptz.
	Now string
}

// DB is an open digest database.
type DB struct {
	db   *handle
	name string // where it is, fit to print
	d    Dialect
	// bucket, when set, holds the payloads' bodies (see UsePayloads).
	bucket *objects.Bucket
}

var _ store.Store = (*DB)(nil)

// New wraps an open database, migrating it to the dialect's latest
// schema. name says where it is, fit to print (no password).
func New(ctx context.Context, db *sql.DB, name string, d Dialect) (*DB, error) {
	s := &DB{db: &handle{DB: db, numbered: d.Numbered}, name: name, d: d}
	if err := s.migrate(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

// Path says where the database is.
func (s *DB) Path() string { return s.name }

// Close releases the database.
func (s *DB) Close() error {
	if s.bucket != nil {
		s.bucket.Close()
	}
	return s.db.Close()
}

func (s *DB) explain(err error) error {
	if err == nil {
		return nil
	}
	if s.d.Explain != nil {
		return s.d.Explain(s.name, err)
	}
	return fmt.Errorf("database %s: %w", s.name, err)
}

// handle and txn write every statement with ? placeholders, numbered on
// the way to a database that wants them numbered.
type handle struct {
	*sql.DB
	numbered bool
}

type txn struct {
	*sql.Tx
	numbered bool
}

func (h *handle) ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error) {
	return h.DB.ExecContext(ctx, bind(q, h.numbered), args...)
}

func (h *handle) QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	return h.DB.QueryContext(ctx, bind(q, h.numbered), args...)
}

func (h *handle) QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row {
	return h.DB.QueryRowContext(ctx, bind(q, h.numbered), args...)
}

func (h *handle) BeginTx(ctx context.Context, opts *sql.TxOptions) (*txn, error) {
	tx, err := h.DB.BeginTx(ctx, opts)
	if err != nil {
		return nil, err
	}
	return &txn{Tx: tx, numbered: h.numbered}, nil
}

func (t *txn) ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error) {
	return t.Tx.ExecContext(ctx, bind(q, t.numbered), args...)
}

func (t *txn) QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row {
	return t.Tx.QueryRowContext(ctx, bind(q, t.numbered), args...)
}

func (t *txn) PrepareContext(ctx context.Context, q string) (*sql.Stmt, error) {
	return t.Tx.PrepareContext(ctx, bind(q, t.numbered))
}

// bind numbers q's ? placeholders $1, $2... when asked. The core's SQL has
// no ? inside its string literals.
func bind(q string, numbered bool) string {
	if !numbered || !strings.Contains(q, "?") {
		return q
	}
	var b strings.Builder
	n := 0
	for _, r := range q {
		if r == '?' {
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// SQL is the database underneath, for a backend's own checks and tests.
func (s *DB) SQL() *sql.DB { return s.db.DB }
