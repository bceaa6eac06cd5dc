// Package sqlite keeps a digest database in one SQLite file (the pure-Go
// modernc.org/sqlite), in WAL mode with a busy timeout: every process on
// the machine shares it. It refuses files that are not digest databases,
// or are damaged where every open reads (the header, the schema) or, after
// an unclean shutdown, anywhere, before anything writes to them.
package sqlite

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/digest-cli/digest/internal/store/sqlstore"
)

// busyTimeout is how long a writer waits for another digest process holding
// the write lock before giving up; summaries land one at a time, so waits
// are short.
const busyTimeout = 10 * time.Second

// truncationWait is how long a database file that reads shorter than its
// header says is read again before it is refused: long enough for another
// process creating it to write its pages, short enough that a damaged
// file is named at once.
const truncationWait = time.Second

// Open opens the database at path, creating it (mode 0600, directory 0700)
// and migrating it to the current schema. It refuses files that are not
// digest databases rather than recreating them over the user's data, and a
// database digest may not write to, saying why.
func Open(ctx context.Context, path string) (*sqlstore.DB, error) {
	return open(ctx, path, true)
}

// OpenExisting opens the database at path, which must exist: it never
// creates a file or a folder (a missing database is an error that matches
// fs.ErrNotExist). With write it opens it as Open does. Without, it reads
// a database digest may not write to (a read-only file, folder or file
// system) read-only, as it is; one it may write to is opened as Open does,
// so that an older schema is brought up to date.
func OpenExisting(ctx context.Context, path string, write bool) (*sqlstore.DB, error) {
	if path == "" {
		return nil, errors.New("database path is empty. Try: --db PATH or DIGEST_DB")
	}
	if err := notFiles(path); err != nil {
		return nil, err
	}
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return nil, noDatabase(path)
	}
	if ro := readOnly(path); ro != nil && !write {
		return openReadOnly(ctx, path, ro)
	}
	return open(ctx, path, false)
}

// noDatabase is the error of a database that does not exist.
func noDatabase(path string) error {
	return fmt.Errorf("no database at %s: %w. Try: --db with the file digest summarize or digest eval wrote to", path, fs.ErrNotExist)
}

func open(ctx context.Context, path string, create bool) (*sqlstore.DB, error) {
	if path == "" {
		return nil, errors.New("database path is empty. Try: --db PATH or DIGEST_DB")
	}
	if err := notFiles(path); err != nil {
		return nil, err
	}
	if _, err := os.Stat(path); err == nil {
		if ro := readOnly(path); ro != nil {
			return nil, fmt.Errorf("database %s is read-only (%s), and this command writes to it. Try: --db with a writable path, or %s", path, ro.why, ro.fix)
		}
	}
	flags := os.O_RDWR
	if create {
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			if full := diskFull(path, err); full != nil {
				return nil, full
			}
			return nil, fmt.Errorf("database %s: create database directory: %w. Try: --db with a writable path", path, err)
		}
		flags |= os.O_CREATE
	}
	// SQLite would create the file with the umask's mode; create it first so
	// summaries of private code are readable by the owner alone.
	f, err := os.OpenFile(path, flags, 0o600)
	if err != nil {
		if !create && errors.Is(err, fs.ErrNotExist) {
			return nil, noDatabase(path)
		}
		if full := diskFull(path, err); full != nil {
			return nil, full
		}
		return nil, fmt.Errorf("open database %s: %w. Try: --db with a writable path", path, err)
	}
	info, statErr := f.Stat()
	if statErr == nil && !info.Mode().IsRegular() {
		// Replaced since notFiles looked: nothing is read from it.
		f.Close()
		return nil, notFile(path, info.Mode())
	}
	head := make([]byte, 100)
	n, _ := io.ReadFull(f, head)
	// Another digest creating the same new file may be between writing
	// its first page, whose header counts the pages to come, and writing
	// the rest: a file that reads short is read again for a moment before
	// it is taken for a damaged one. Its size is read after its header.
	for wait := time.Now().Add(truncationWait); statErr == nil && truncated(path, head[:n], info.Size()) && time.Now().Before(wait); {
		time.Sleep(20 * time.Millisecond)
		n, _ = f.ReadAt(head, 0)
		info, statErr = f.Stat()
	}
	f.Close()
	if err := checkHead(path, head[:n], info, statErr); err != nil {
		return nil, err
	}
	if n > 0 {
		// Opening for writing switches the file to WAL, migrating adds
		// tables, and every run writes: none of it may happen to a database
		// of another program, or to a damaged one, which SQLite would write
		// to until a read happened on a damaged page.
		if err := probe(ctx, path); err != nil {
			return nil, err
		}
	}

	dsn := "file:" + uriEscaper.Replace(filepath.ToSlash(path)) +
		fmt.Sprintf("?_pragma=busy_timeout(%d)", busyTimeout.Milliseconds()) +
		"&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_pragma=foreign_keys(ON)&_txlock=immediate"
	if !create {
		dsn += "&mode=rw" // SQLite's default, rwc, would create it
	}
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("open database %s: %w", path, err)
	}
	// A brand-new file is switched to WAL by the first connection; SQLite
	// reports SQLITE_BUSY to a concurrent opener without waiting, so retry.
	deadline := time.Now().Add(busyTimeout)
	for {
		err := check(ctx, db, path)
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
	s, err := sqlstore.New(ctx, db, path, Dialect)
	if err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

// checkHead refuses a file whose first bytes are not an SQLite database's
// header, or that is shorter than its header says.
func checkHead(path string, head []byte, info os.FileInfo, statErr error) error {
	n := len(head)
	if n > 0 && (n < 16 || string(head[:16]) != "SQLite format 3\x00") {
		return fmt.Errorf("database %s is not a usable SQLite database (no SQLite header); digest will not overwrite it. Try: --db with another path, or move the file away", path)
	}
	if statErr == nil && truncated(path, head, info.Size()) {
		return fmt.Errorf("database %s is not a usable SQLite database (truncated: %d bytes, shorter than its header says); digest will not overwrite it. Try: restore it from a backup, or --db with another path", path, info.Size())
	}
	return nil
}

// openReadOnly opens the existing database at path, which digest may not
// write to (ro says why), to read it alone. It creates nothing: with no
// journal beside the file, the file is all there is, and SQLite reads it
// as immutable (without the -shm file it would otherwise create, and fail
// to create in a read-only folder); with a -wal beside it, which holds
// transactions not yet copied into the file, SQLite reads both, through
// the -shm of the process writing them. A database that is not digest's,
// or that this digest would have to migrate to read, is refused.
//
// A process that can write to the file, and writes while it is read as
// immutable, can make a read fail or see part of a transaction: it needs
// a permission the reader lacks, and the reads (runs, batches) are short.
func openReadOnly(ctx context.Context, path string, ro *readOnlyWhy) (*sqlstore.DB, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("database %s cannot be read: %w. Try: --db with a database you may read", path, err)
	}
	info, statErr := f.Stat()
	if statErr == nil && !info.Mode().IsRegular() {
		f.Close()
		return nil, notFile(path, info.Mode())
	}
	head := make([]byte, 100)
	n, _ := io.ReadFull(f, head)
	f.Close()
	if n == 0 {
		return nil, fmt.Errorf("database %s is empty, and read-only (%s): digest has stored nothing in it. Try: --db with the file digest summarize or digest eval wrote to", path, ro.why)
	}
	if err := checkHead(path, head[:n], info, statErr); err != nil {
		return nil, err
	}
	immutable := true
	for _, journal := range []string{path + "-wal", path + "-shm", path + "-journal"} {
		if _, err := os.Lstat(journal); err == nil {
			immutable = false
		}
	}
	dsn := "file:" + uriEscaper.Replace(filepath.ToSlash(path)) + "?mode=ro" +
		fmt.Sprintf("&_pragma=busy_timeout(%d)&_pragma=query_only(1)", busyTimeout.Milliseconds())
	if immutable {
		dsn += "&immutable=1"
	}
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("open database %s: %w", path, err)
	}
	fail := func(err error) (*sqlstore.DB, error) {
		db.Close()
		return nil, err
	}
	tables, ours, version, err := inspect(ctx, db, path)
	if err != nil {
		var se *sqlite.Error
		if errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_CANTOPEN {
			return fail(fmt.Errorf("database %s cannot be read read-only (%s, and SQLite cannot use the journal beside it: %v). Try: --db with a writable copy of it, or %s", path, ro.why, se, ro.fix))
		}
		return fail(err)
	}
	switch latest := len(migrations) - 1; {
	case tables > 0 && !ours:
		return fail(foreign(path, tables))
	case tables == 0:
		return fail(fmt.Errorf("database %s holds no tables, and is read-only (%s): digest has stored nothing in it. Try: --db with the file digest summarize or digest eval wrote to", path, ro.why))
	case version > latest:
		return fail(newerSchema(path, version))
	case version < latest:
		return fail(fmt.Errorf("database %s was written by an older digest (schema version %d; this one reads %d), and is read-only (%s), so digest cannot bring it up to date to read it. Try: %s once, or --db with a writable copy of it", path, version, latest, ro.why, ro.fix))
	}
	s, err := sqlstore.New(ctx, db, path, Dialect)
	if err != nil {
		return fail(err)
	}
	return s, nil
}

// Dialect is SQLite's: the schema below, SQLite's errors explained, and
// the clock of the one machine every process on the file shares.
var Dialect = sqlstore.Dialect{
	Migrations: migrations,
	Explain:    explain,
	NowMillis:  "CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)",
	Greatest:   "max",
	Now:        "strftime('%Y-%m-%dT%H:%M:%SZ', 'now')",
}

// truncated reports a database file shorter than the pages its header
// counts, which SQLite would otherwise open and write to, growing the file
// over the lost pages. The count is trusted only when SQLite marks it valid
// (its change counter equals the version-valid-for number), and only when
// no -wal file exists: a checkpoint under way in another process writes the
// header before the pages that follow it.
func truncated(path string, head []byte, size int64) bool {
	if len(head) < 100 {
		return false
	}
	if _, err := os.Stat(path + "-wal"); !errors.Is(err, os.ErrNotExist) {
		return false
	}
	pageSize := int64(binary.BigEndian.Uint16(head[16:18]))
	if pageSize == 1 {
		pageSize = 65536
	}
	pages := int64(binary.BigEndian.Uint32(head[28:32]))
	valid := pages > 0 && binary.BigEndian.Uint32(head[24:28]) == binary.BigEndian.Uint32(head[92:96])
	return valid && size < pages*pageSize
}

// notFiles refuses a database path, or a journal beside it, that exists
// and is not a regular file once symbolic links are followed: SQLite would
// block for ever reading a named pipe (deaf to SIGTERM, in a system call),
// and write to a device. Paths it cannot look at are left to the opening
// that follows, which says why.
func notFiles(path string) error {
	for _, p := range []string{path, path + "-wal", path + "-shm", path + "-journal"} {
		info, err := os.Stat(p)
		if err != nil || info.Mode().IsRegular() {
			continue
		}
		if p != path {
			return fmt.Errorf("database %s: %s beside it is %s, not a file SQLite can use; digest will not open it. Try: move %s away, or --db with another path",
				path, filepath.Base(p), kind(info.Mode()), p)
		}
		return notFile(path, info.Mode())
	}
	return nil
}

func notFile(path string, mode os.FileMode) error {
	return fmt.Errorf("database %s is %s, not a database file; digest will not open it. Try: --db with a file path", path, kind(mode))
}

func kind(mode os.FileMode) string {
	switch {
	case mode&os.ModeNamedPipe != 0:
		return "a named pipe"
	case mode&os.ModeSocket != 0:
		return "a socket"
	case mode&os.ModeDevice != 0:
		return "a device"
	case mode.IsDir():
		return "a directory"
	}
	return "not a regular file"
}

// diskFull explains an error that is a full disk, as the file system or
// SQLite reports it (SQLITE_FULL is also max_page_count reached), and
// returns nil for any other.
func diskFull(path string, err error) error {
	var se *sqlite.Error
	if !errors.Is(err, syscall.ENOSPC) && !(errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_FULL) {
		return nil
	}
	return fmt.Errorf("database %s: the disk is full (%v). Try: free space on the disk holding %s, or --db on another disk", path, err, path)
}

// probe reads an existing database without writing to it and refuses one
// that belongs to another program (a database with tables but no
// schema_migrations was not made by digest), whose schema is newer than
// this digest's, or that is damaged where SQLite reads first: its header
// (page size, format, the payload fractions, checked by SQLite on reading
// page 1) and its schema. That costs the same at 10 MB and at 10 GB.
//
// The whole file is read (quick_check, 1 to 3 ms per MB in the page
// cache: seconds for a few GB) only when the last process to have it open
// did not close it (see uncleanShutdown): SQLite recovers a -wal left
// behind by itself, and the check finds what a crash of the machine or the
// disk under it may have damaged, before anything writes to it. Damage
// done to a database closed cleanly (a disk going bad, another program) is
// found by Check (digest cache check), or by the first read of the damaged
// page, which fails saying so.
//
// A read-only connection to a WAL database creates the -wal and -shm files
// and, unable to checkpoint, leaves them behind; a read-write one deletes
// them on closing, under SQLite's exclusive lock, so it is the one used
// unless a journal is already there: closing would then checkpoint its
// frames into the file, or roll a hot journal back. query_only keeps either
// from writing.
func probe(ctx context.Context, path string) error {
	mode := "rw"
	for _, journal := range []string{path + "-wal", path + "-journal"} {
		if _, err := os.Lstat(journal); err == nil {
			mode = "ro"
		}
	}
	// Asked before this process opens it: its own connection would hold
	// the locks looked for.
	unclean := uncleanShutdown(path)
	db, err := openQueryOnly(path, mode)
	if err != nil {
		return err
	}
	defer db.Close()
	tables, ours, version, err := inspect(ctx, db, path)
	if err != nil {
		return err
	}
	if tables > 0 && !ours {
		return foreign(path, tables)
	}
	if unclean != "" {
		if problems, err := consistencyProblems(ctx, db, path, "quick_check"); err != nil {
			return err
		} else if problems != "" {
			return fmt.Errorf("database %s is not a usable SQLite database (damaged: %s; checked since %s); digest will not write to it. Try: restore it from a backup, or --db with another path", path, problems, unclean)
		}
	}
	return newerSchema(path, version)
}

// uncleanShutdown says why the database at path was not closed by the
// last process that had it open, or "" when it was, or when a process has
// it open now. The last connection to close a WAL database checkpoints
// its -wal into the file and deletes it; a process killed, or a machine
// that stopped, leaves it (or a rollback -journal) behind. Either file is
// also there while a process has the database open: that process holds
// SQLite's locks on it (on the -shm, or on the file), which heldOpen looks
// for. Where it cannot look, a journal is taken for an unclean shutdown,
// which costs a check and loses nothing.
func uncleanShutdown(path string) string {
	var left []string
	for _, suffix := range []string{"-wal", "-journal"} {
		info, err := os.Lstat(path + suffix)
		// An empty rollback journal is one SQLite left to reuse (journal
		// mode TRUNCATE): nothing to roll back.
		if err == nil && (suffix == "-wal" || info.Size() > 0) {
			left = append(left, filepath.Base(path)+suffix)
		}
	}
	if len(left) == 0 || heldOpen(path) {
		return ""
	}
	return strings.Join(left, " and ") + " left by a process that did not close it"
}

// inspect reads what a database holds: how many tables, whether
// schema_migrations is one of them (digest's), and its schema version (0
// when it is not digest's).
func inspect(ctx context.Context, db *sql.DB, path string) (tables int, ours bool, version int, err error) {
	err = db.QueryRowContext(ctx, `SELECT count(*), coalesce(max(name = 'schema_migrations'), 0)
		FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'`).Scan(&tables, &ours)
	if err != nil {
		return 0, false, 0, explain(path, err)
	}
	if ours {
		if err := db.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&version); err != nil {
			return 0, false, 0, explain(path, err)
		}
	}
	return tables, ours, version, nil
}

func foreign(path string, tables int) error {
	return fmt.Errorf("database %s is a SQLite database of another program (%d tables, none of them digest's); digest will not change it. Try: --db with another path", path, tables)
}

// migrations are SQLite's schema, version by version.
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
	5: `
-- One rate limit per account (provider, base URL, model, hash of the API
-- key), shared by every process using it. Times are Unix microseconds of
-- the database's clock.
CREATE TABLE rate_limits (
	limiter       TEXT PRIMARY KEY,
	requests_tat  INTEGER NOT NULL,
	tokens_tat    INTEGER NOT NULL,
	paused_until  INTEGER NOT NULL,
	requests      INTEGER NOT NULL, -- learned limit per window; 0: unknown
	tokens        INTEGER NOT NULL,
	updated_at    INTEGER NOT NULL
);`,
	6: `
-- The kind of change a summary describes, as release notes group it;
-- '' in summaries stored before digest asked for it.
ALTER TABLE summaries ADD COLUMN change_type TEXT NOT NULL DEFAULT '';
ALTER TABLE summaries ADD COLUMN change_scope TEXT NOT NULL DEFAULT '';
ALTER TABLE summaries ADD COLUMN breaking INTEGER NOT NULL DEFAULT 0;`,
	7: `
-- Batches sent to a provider's batch API, recorded before the provider
-- hears of them, so that a rerun finds a batch a dead process left. Times
-- are UTC text of a fixed width, so that they sort as they compare.
CREATE TABLE batches (
	id          TEXT PRIMARY KEY,
	model       TEXT NOT NULL,
	base_url    TEXT NOT NULL,
	provider_id TEXT NOT NULL DEFAULT '', -- '' until the provider answers
	status      TEXT NOT NULL,
	items       INTEGER NOT NULL,
	succeeded   INTEGER NOT NULL,
	errored     INTEGER NOT NULL,
	canceled    INTEGER NOT NULL,
	expired     INTEGER NOT NULL,
	message     TEXT NOT NULL,
	collected   INTEGER NOT NULL,
	created_at  TEXT NOT NULL,
	updated_at  TEXT NOT NULL
);
CREATE INDEX batches_open ON batches(created_at) WHERE NOT collected;
-- seq, the rowid, is the order items were recorded in, across batches:
-- it orders a batch's items and breaks ties between batches.
CREATE TABLE batch_items (
	seq           INTEGER PRIMARY KEY,
	batch_id      TEXT NOT NULL REFERENCES batches(id),
	custom_id     TEXT NOT NULL,
	request       BLOB, -- NULL once the result is stored
	done          INTEGER NOT NULL DEFAULT 0,
	answer        TEXT NOT NULL DEFAULT '',
	input_tokens  INTEGER NOT NULL DEFAULT 0,
	output_tokens INTEGER NOT NULL DEFAULT 0,
	error         TEXT NOT NULL DEFAULT '',
	UNIQUE (batch_id, custom_id)
);
-- The work each item holds (lease keys, answer keys), found by model and
-- member when a rerun asks what a batch answered or is answering.
CREATE TABLE batch_members (
	batch_id  TEXT NOT NULL,
	custom_id TEXT NOT NULL,
	member    TEXT NOT NULL,
	pos       INTEGER NOT NULL, -- its place in the item's members
	model     TEXT NOT NULL,
	PRIMARY KEY (batch_id, custom_id, member),
	FOREIGN KEY (batch_id, custom_id) REFERENCES batch_items(batch_id, custom_id)
);
CREATE INDEX batch_members_by_member ON batch_members(model, member);`,
	8: `
-- What a run's grading model was paid: its verdicts are no model's
-- results, so a report read later (runs show) needs them apart. NULL in
-- runs without a judge, or stored before digest kept it.
ALTER TABLE eval_runs ADD COLUMN judge_model TEXT;
ALTER TABLE eval_runs ADD COLUMN judge_verdicts INTEGER;
ALTER TABLE eval_runs ADD COLUMN judge_cost_usd REAL;`,
	9: `
-- Why each answer ended (a refusal, a cut answer; '' for a whole one, and
-- for answers stored before digest kept it), and the input tokens read
-- from and written to the provider's prompt cache, priced apart.
ALTER TABLE eval_results ADD COLUMN finish TEXT NOT NULL DEFAULT '';
ALTER TABLE eval_results ADD COLUMN cache_read_tokens INTEGER NOT NULL DEFAULT 0;
ALTER TABLE eval_results ADD COLUMN cache_write_tokens INTEGER NOT NULL DEFAULT 0;
ALTER TABLE batch_items ADD COLUMN finish TEXT NOT NULL DEFAULT '';
ALTER TABLE batch_items ADD COLUMN cache_read_tokens INTEGER NOT NULL DEFAULT 0;
ALTER TABLE batch_items ADD COLUMN cache_write_tokens INTEGER NOT NULL DEFAULT 0;`,
	10: `
-- How many tokens each model's tokenizer counts per token of digest's,
-- learned from the usage providers report: pacing, --max-cost and
-- --dry-run count with it.
CREATE TABLE token_factors (
	model      TEXT PRIMARY KEY,
	factor     REAL NOT NULL,
	samples    INTEGER NOT NULL,
	updated_at TEXT NOT NULL
);`,
	11: `
-- The request of a result that ended in error, so that its report shows
-- what was asked: an answered result's is its answer's (NULL then).
ALTER TABLE eval_run_results ADD COLUMN request TEXT REFERENCES payloads(hash);`,
	12: `
-- What a forge's API (GitHub's, GitLab's) said of a commit: its pull
-- request, labels, the author's login. The key hashes the forge, the
-- repository and the commit, never a token. Answers that name a pull
-- request are kept for ever (expires_at 0); "nothing known" expires, in
-- Unix milliseconds of the database's clock, since a commit may yet be
-- merged through one.
CREATE TABLE forge_answers (
	key        TEXT PRIMARY KEY,
	body       BLOB NOT NULL,
	expires_at INTEGER NOT NULL,
	created_at TEXT NOT NULL
);`,
	13: `
-- An item's grades per named metric (an assertion's "metric"), a row
-- each, in the order its assertions first name them (pos, from 0),
-- written and deleted with their result row, in its transactions. A
-- result whose assertions name no metric has none: its pass and score are
-- its one metric, accuracy (digest_eval_scores shows it so).
CREATE TABLE eval_result_metrics (
	run_id TEXT NOT NULL,
	model  TEXT NOT NULL,
	line   INTEGER NOT NULL,
	repeat INTEGER NOT NULL,
	pos    INTEGER NOT NULL,
	metric TEXT NOT NULL,
	score  REAL NOT NULL,
	pass   INTEGER NOT NULL,
	PRIMARY KEY (run_id, model, line, repeat, pos)
) WITHOUT ROWID;
-- Models ranked by a metric within a run: read from this index alone.
CREATE INDEX eval_result_metrics_by_metric ON eval_result_metrics(run_id, metric, model, score, pass);`,
	14: `
-- A payload whose body is in an object store (--payloads) names its
-- object; gz then holds only what reports show (an answer's text, a
-- request's last user message). NULL: gz is the whole body.
ALTER TABLE payloads ADD COLUMN uri TEXT;`,
	15: `
-- Views for people and dashboards (Metabase, Grafana): their columns are
-- a promise kept across migrations (digest help caching, "Querying the database").
-- Times are UTC text of a fixed width, 'YYYY-MM-DDTHH:MM:SS.SSSZ', so that
-- they sort as they compare and SQLite's date functions read them.
CREATE VIEW digest_commit_summaries AS
SELECT s.repo_id AS repository_id,
	r.path AS repository_path,
	s.commit_hash AS commit_hash,
	c.subject AS subject,
	c.author_name AS author_name,
	c.author_email AS author_email,
	strftime('%Y-%m-%dT%H:%M:%fZ', c.author_date) AS authored_at,
	strftime('%Y-%m-%dT%H:%M:%fZ', c.commit_date) AS committed_at,
	s.model AS model,
	s.prompt_version AS prompt_version,
	s.scope AS scope,
	s.summary AS summary,
	s.change_type AS change_type,
	s.change_scope AS change_scope,
	s.breaking AS breaking,
	s.partial AS partial,
	s.truncated AS truncated,
	s.input_tokens AS input_tokens,
	s.output_tokens AS output_tokens,
	s.diff_tokens AS diff_tokens,
	s.cost_usd AS cost_usd,
	strftime('%Y-%m-%dT%H:%M:%fZ', s.created_at) AS summarized_at
FROM summaries s
JOIN commits c ON c.repo_id = s.repo_id AND c.hash = s.commit_hash
JOIN repositories r ON r.id = s.repo_id;
-- One row per run, model, item line, repeat and metric; a result whose
-- assertions name no metric is one row of metric 'accuracy'.
CREATE VIEW digest_eval_scores AS
SELECT rr.run_id AS run_id,
	strftime('%Y-%m-%dT%H:%M:%fZ', er.created_at) AS run_started_at,
	strftime('%Y-%m-%dT%H:%M:%fZ', er.finished_at) AS run_finished_at,
	er.dataset AS dataset,
	rr.model AS model,
	rr.line AS line,
	rr.item AS item_id,
	rr.repeat AS repeat,
	COALESCE(m.metric, 'accuracy') AS metric,
	CASE WHEN m.metric IS NULL THEN rr.score ELSE m.score END AS score,
	CASE WHEN m.metric IS NULL THEN rr.pass ELSE m.pass END AS pass,
	rr.error AS error,
	rr.cached AS cached,
	r.latency_ms AS latency_ms,
	r.input_tokens AS input_tokens,
	r.output_tokens AS output_tokens,
	r.cost_usd AS cost_usd
FROM eval_run_results rr
JOIN eval_runs er ON er.id = rr.run_id
LEFT JOIN eval_result_metrics m ON m.run_id = rr.run_id AND m.model = rr.model AND m.line = rr.line AND m.repeat = rr.repeat
LEFT JOIN eval_results r ON r.key = rr.key;`,
}

func newerSchema(path string, version int) error {
	if latest := len(migrations) - 1; version > latest {
		return fmt.Errorf("database %s has schema version %d, newer than this digest understands (%d). Try: a newer digest, or another --db", path, version, latest)
	}
	return nil
}

// consistencyProblems runs SQLite's integrity_check or quick_check and
// returns the problems found, on one line and cut short; "" if none. A
// check that stops on a page it cannot read ("malformed") has found one.
func consistencyProblems(ctx context.Context, db *sql.DB, path, pragma string) (string, error) {
	var problems []string
	fail := func(err error) (string, error) {
		var se *sqlite.Error
		if errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_CORRUPT {
			return strings.Join(append(problems, se.Error()), "; "), nil
		}
		return "", explain(path, err)
	}
	rows, err := db.QueryContext(ctx, "PRAGMA "+pragma+"(3)")
	if err != nil {
		return fail(err)
	}
	defer rows.Close()
	for rows.Next() {
		var p string
		if err := rows.Scan(&p); err != nil {
			return fail(err)
		}
		if p != "ok" {
			problems = append(problems, strings.Join(strings.Fields(strings.ReplaceAll(p, "*** in database main ***", "")), " "))
		}
	}
	if err := rows.Err(); err != nil {
		return fail(err)
	}
	return strings.Join(problems, "; "), nil
}

// check proves the pragmas took effect: a DSN typo or a read-only file would
// otherwise surface later as a confusing error in the middle of a run.
func check(ctx context.Context, db *sql.DB, path string) error {
	var mode string
	if err := db.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		return explain(path, err)
	}
	if !strings.EqualFold(mode, "wal") {
		return fmt.Errorf("database %s: journal mode is %q, want wal. Try: a database on a local file system", path, mode)
	}
	var timeout int64
	if err := db.QueryRowContext(ctx, "PRAGMA busy_timeout").Scan(&timeout); err != nil {
		return explain(path, err)
	}
	if timeout != busyTimeout.Milliseconds() {
		return fmt.Errorf("database %s: busy_timeout is %d ms, want %d", path, timeout, busyTimeout.Milliseconds())
	}
	// Without foreign keys a summary could be stored for a commit that is
	// not; synchronous=NORMAL is WAL's safe setting (FULL costs a sync per
	// transaction, OFF loses transactions on a power cut).
	for _, p := range []struct {
		name string
		want int64
	}{{"foreign_keys", 1}, {"synchronous", 1}} {
		var got int64
		if err := db.QueryRowContext(ctx, "PRAGMA "+p.name).Scan(&got); err != nil {
			return explain(path, err)
		}
		if got != p.want {
			return fmt.Errorf("database %s: %s is %d, want %d", path, p.name, got, p.want)
		}
	}
	return nil
}

// explain turns SQLite's terse codes into a message that says what to do.
func explain(path string, err error) error {
	if err == nil {
		return nil
	}
	if full := diskFull(path, err); full != nil {
		return full
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff {
		case sqlite3.SQLITE_NOTADB:
			return fmt.Errorf("database %s is not a usable SQLite database (%v); digest will not overwrite it. Try: --db with another path, or move the file away", path, err)
		case sqlite3.SQLITE_CORRUPT:
			// Met on reading a damaged page: opening a database reads its
			// header and schema, not every page.
			return fmt.Errorf("database %s is not a usable SQLite database (%v). Try: digest cache check --db %s, to see what is damaged; then restore it from a backup, or --db with another path", path, err, path)
		case sqlite3.SQLITE_READONLY:
			return fmt.Errorf("database %s is read-only to digest (%v), and this command writes to it. Try: --db with a writable path", path, err)
		case sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_PERM:
			return fmt.Errorf("database %s cannot be written (%v). Try: --db with a writable path", path, err)
		}
	}
	return fmt.Errorf("database %s: %w", path, err)
}

// IntegrityCheck runs SQLite's own consistency check on the database at
// path, reading it only.
func IntegrityCheck(ctx context.Context, path string) error {
	db, err := sql.Open("sqlite", "file:"+uriEscaper.Replace(filepath.ToSlash(path))+"?mode=ro")
	if err != nil {
		return fmt.Errorf("open database %s: %w", path, err)
	}
	defer db.Close()
	return integrity(ctx, db, path)
}

func integrity(ctx context.Context, db *sql.DB, path string) error {
	problems, err := consistencyProblems(ctx, db, path, "integrity_check")
	if err != nil {
		return err
	}
	if problems != "" {
		return fmt.Errorf("database %s failed its integrity check: %s. Try: restore it from a backup, or --db with another path", path, problems)
	}
	return nil
}

// Check reads the whole database at path and says what is wrong with it:
// what opening it refuses (not a file, not SQLite, truncated, another
// program's, a newer digest's), then every page, every index against its
// table, and every constraint (SQLite's integrity_check, about 2.3 ms per
// MB in the page cache). It writes nothing, and leaves no journal that was
// not there: like probe, it reads through a read-write connection unless a
// journal is already there, or digest may not write to the file.
func Check(ctx context.Context, path string) error {
	if err := notFiles(path); err != nil {
		return err
	}
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return noDatabase(path)
	}
	if err != nil {
		return fmt.Errorf("database %s cannot be read: %w. Try: --db with a database you may read", path, err)
	}
	info, statErr := f.Stat()
	if statErr == nil && !info.Mode().IsRegular() {
		f.Close()
		return notFile(path, info.Mode())
	}
	head := make([]byte, 100)
	n, _ := io.ReadFull(f, head)
	f.Close()
	if n == 0 {
		return fmt.Errorf("database %s is empty: digest has stored nothing in it. Try: --db with the file digest summarize or digest eval wrote to", path)
	}
	if err := checkHead(path, head[:n], info, statErr); err != nil {
		return err
	}
	mode := "rw"
	journal := false
	for _, j := range []string{path + "-wal", path + "-shm", path + "-journal"} {
		if _, err := os.Lstat(j); err == nil {
			mode, journal = "ro", true
		}
	}
	if readOnly(path) != nil && !journal {
		mode = "ro&immutable=1" // as openReadOnly reads it
	}
	db, err := openQueryOnly(path, mode)
	if err != nil {
		return err
	}
	defer db.Close()
	tables, ours, version, err := inspect(ctx, db, path)
	if err != nil {
		return err
	}
	if tables > 0 && !ours {
		return foreign(path, tables)
	}
	if err := newerSchema(path, version); err != nil {
		return err
	}
	return integrity(ctx, db, path)
}

// openQueryOnly opens path to read it alone, in mode ("rw" lets closing
// tidy the journal away; "ro" leaves one that is there as it is).
func openQueryOnly(path, mode string) (*sql.DB, error) {
	db, err := sql.Open("sqlite", "file:"+uriEscaper.Replace(filepath.ToSlash(path))+"?mode="+mode+
		fmt.Sprintf("&_pragma=busy_timeout(%d)&_pragma=query_only(1)", busyTimeout.Milliseconds()))
	if err != nil {
		return nil, fmt.Errorf("open database %s: %w", path, err)
	}
	return db, nil
}

// uriEscaper escapes the characters a SQLite URI filename gives a meaning.
var uriEscaper = strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23")
