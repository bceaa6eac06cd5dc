package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// Space says how large the database at path is (its pages) and how much
// of it is free pages: what deleted rows left, which SQLite fills before
// it grows the file, and which only VACUUM gives back to the disk.
func Space(ctx context.Context, path string) (size, free int64, err error) {
	db, err := sql.Open("sqlite", "file:"+uriEscaper.Replace(filepath.ToSlash(path))+"?mode=rw"+
		fmt.Sprintf("&_pragma=busy_timeout(%d)&_pragma=query_only(1)", busyTimeout.Milliseconds()))
	if err != nil {
		return 0, 0, fmt.Errorf("open database %s: %w", path, err)
	}
	defer db.Close()
	var pageSize, pages, freePages int64
	for _, q := range []struct {
		pragma string
		v      *int64
	}{{"page_size", &pageSize}, {"page_count", &pages}, {"freelist_count", &freePages}} {
		if err := db.QueryRowContext(ctx, "PRAGMA "+q.pragma).Scan(q.v); err != nil {
			return 0, 0, explain(path, err)
		}
	}
	return pages * pageSize, freePages * pageSize, nil
}

// Vacuum rewrites the database at path without its free pages, and
// checkpoints the result into the file, which shrinks. It needs as much
// free disk as the database takes (the rewrite goes through the -wal), and
// holds the write lock throughout: another digest writing to it waits, and
// fails after its busy timeout.
func Vacuum(ctx context.Context, path string) error {
	db, err := sql.Open("sqlite", "file:"+uriEscaper.Replace(filepath.ToSlash(path))+"?mode=rw"+
		fmt.Sprintf("&_pragma=busy_timeout(%d)", busyTimeout.Milliseconds()))
	if err != nil {
		return fmt.Errorf("open database %s: %w", path, err)
	}
	defer db.Close()
	busy := func(err error) error {
		var se *sqlite.Error
		if errors.As(err, &se) && (se.Code()&0xff == sqlite3.SQLITE_BUSY || se.Code()&0xff == sqlite3.SQLITE_LOCKED) {
			return fmt.Errorf("database %s: VACUUM waited %s for another process using it (%v). Try: --vacuum again when no digest is running on it", path, busyTimeout, se)
		}
		return explain(path, err)
	}
	if _, err := db.ExecContext(ctx, "VACUUM"); err != nil {
		return busy(err)
	}
	var blocked, frames, copied int
	if err := db.QueryRowContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)").Scan(&blocked, &frames, &copied); err != nil {
		return busy(err)
	}
	return nil
}
