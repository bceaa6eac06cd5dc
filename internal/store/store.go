// Package store keeps every result digest has paid for in one SQLite file, so
// that a rerun, a second clone or a crashed run never pays for it again.
package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// busyTimeout is how long a writer waits for another digest process holding
// the write lock before giving up; summaries land one at a time, so waits are short.
const busyTimeout = 10 * time.Second

// Store is an open digest database.
type Store struct {
	db   *sql.DB
	path string
}

// Open opens the database at path, creating it (mode 0600, directory 0700)
// and migrating it to the current schema. It refuses files that are not
// digest databases rather than recreating them over the user's data.
func Open(ctx context.Context, path string) (*Store, error) {
	if path == "" {
		return nil, errors.New("database path is empty. Try: --db PATH or DIGEST_DB")
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("create database directory: %w. Try: --db with a writable path", err)
	}
	// SQLite would create the file with the umask's mode; create it first so
	// summaries of private code are readable by the owner alone.
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open database %s: %w. Try: --db with a writable path", path, err)
	}
	head := make([]byte, 16)
	n, _ := io.ReadFull(f, head)
	f.Close()
	if n > 0 && string(head[:n]) != "SQLite format 3\x00" {
		return nil, fmt.Errorf("database %s is not a usable SQLite database (no SQLite header); digest will not overwrite it. Try: --db with another path, or move the file away", path)
	}

	dsn := "file:" + uriEscaper.Replace(filepath.ToSlash(path)) +
		fmt.Sprintf("?_pragma=busy_timeout(%d)", busyTimeout.Milliseconds()) +
		"&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_pragma=foreign_keys(ON)&_txlock=immediate"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("open database %s: %w", path, err)
	}
	s := &Store{db: db, path: path}
	// A brand-new file is switched to WAL by the first connection; SQLite
	// reports SQLITE_BUSY to a concurrent opener without waiting, so retry.
	deadline := time.Now().Add(busyTimeout)
	for {
		err := s.check(ctx)
		if err == nil {
			break
		}
		var se *sqlite.Error
		if !errors.As(err, &se) || se.Code()&0xff != sqlite3.SQLITE_BUSY || time.Now().After(deadline) {
			db.Close()
			return nil, err
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := s.migrate(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

// check proves the pragmas took effect: a DSN typo or a read-only file would
// otherwise surface later as a confusing error in the middle of a run.
func (s *Store) check(ctx context.Context) error {
	var mode string
	if err := s.db.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		return s.explain(err)
	}
	if !strings.EqualFold(mode, "wal") {
		return fmt.Errorf("database %s: journal mode is %q, want wal. Try: a database on a local file system", s.path, mode)
	}
	var timeout int64
	if err := s.db.QueryRowContext(ctx, "PRAGMA busy_timeout").Scan(&timeout); err != nil {
		return s.explain(err)
	}
	if timeout != busyTimeout.Milliseconds() {
		return fmt.Errorf("database %s: busy_timeout is %d ms, want %d", s.path, timeout, busyTimeout.Milliseconds())
	}
	return nil
}

// explain turns SQLite's terse codes into a message that says what to do.
func (s *Store) explain(err error) error {
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff {
		case sqlite3.SQLITE_NOTADB, sqlite3.SQLITE_CORRUPT:
			return fmt.Errorf("database %s is not a usable SQLite database (%v); digest will not overwrite it. Try: --db with another path, or move the file away", s.path, err)
		case sqlite3.SQLITE_READONLY, sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_PERM:
			return fmt.Errorf("database %s cannot be written (%v). Try: --db with a writable path", s.path, err)
		}
	}
	return fmt.Errorf("database %s: %w", s.path, err)
}

// Path is the file the store lives in.
func (s *Store) Path() string { return s.path }

// Close releases the database.
func (s *Store) Close() error { return s.db.Close() }

// IntegrityCheck runs SQLite's own consistency check.
func (s *Store) IntegrityCheck(ctx context.Context) error {
	var res string
	if err := s.db.QueryRowContext(ctx, "PRAGMA integrity_check").Scan(&res); err != nil {
		return s.explain(err)
	}
	if res != "ok" {
		return fmt.Errorf("database %s failed its integrity check: %s", s.path, res)
	}
	return nil
}

// uriEscaper escapes the characters a SQLite URI filename gives a meaning.
var uriEscaper = strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23")
