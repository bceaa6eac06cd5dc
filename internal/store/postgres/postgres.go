// Package postgres keeps a digest database on a PostgreSQL server, so that
// processes on many machines share one cache and one set of claims. It
// speaks the same SQL core as SQLite (sqlstore) through pgx's database/sql
// driver; what differs is the schema's types, the migration lock (an
// advisory lock, so processes starting together do not race) and the clock
// claims expire by (the server's).
package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/digest-cli/digest/internal/store"
	"github.com/digest-cli/digest/internal/store/sqlstore"
)

// connectTimeout bounds reaching the server: an unreachable host must fail
// the run with a message, not hang it.
const connectTimeout = 10 * time.Second

// Open connects to the database named by a PostgreSQL URL or keyword/value
// connection string, as Classify reads it (parts it leaves out come from
// the usual PG* variables: PGHOST, PGPORT, PGUSER, PGPASSWORD, PGDATABASE,
// PGSSLMODE...), migrates it to the current schema and returns it. Nothing
// is created on the local file system. Errors name the server, never the
// password. The process keeps a pool of at most DIGEST_DB_POOL (or
// pool_max_conns in --db) connections, 4 by default (see openPool).
func Open(ctx context.Context, rawURL string) (*sqlstore.DB, error) {
	return openWith(ctx, rawURL, settings{silence: silenceLimit, hold: silenceLimit, regrow: regrowAfter, slotWait: slotWait})
}

// silenceLimit is how long digest waits for a byte of an answer it awaits
// before taking the server for lost. No statement of digest's waits this
// long on a healthy server (its transactions are short, and the migration
// lock is held for one migration), while a server that froze, or a network
// that dropped it mid-statement (a failover, a VPN gone), otherwise holds
// the run silently for the kernel's 15 minutes of retransmissions, or for
// ever: an unattended job until its own timeout, hours later.
const silenceLimit = time.Minute

// open is Open with the silence after which the server is taken for lost,
// and how long after that everything fails at once.
func open(ctx context.Context, rawURL string, silence, hold time.Duration) (*sqlstore.DB, error) {
	return openWith(ctx, rawURL, settings{silence: silence, hold: hold, regrow: regrowAfter, slotWait: slotWait})
}

// settings are Open's timings, which tests shorten.
type settings struct {
	// silence is how long an awaited answer may keep the server silent
	// before it is taken for lost; hold, how long after that everything
	// fails at once.
	silence, hold time.Duration
	// regrow is how long a pool the server's limit shrank waits before
	// it grows again; slotWait, how long a run that lost every connection
	// waits for the server to have a slot.
	regrow, slotWait time.Duration
}

func openWith(ctx context.Context, rawURL string, set settings) (*sqlstore.DB, error) {
	silence, hold := set.silence, set.hold
	rawURL, isServer, err := Classify(rawURL)
	if err != nil {
		return nil, err
	}
	if !isServer {
		return nil, errors.New("--db names a file, not a PostgreSQL database. Try: postgres://USER@HOST:5432/DATABASE")
	}
	cfg, err := pgx.ParseConfig(rawURL)
	if err != nil { // Classify read it; the PG* variables may have changed
		return nil, fmt.Errorf("--db cannot be read as a PostgreSQL database (%s). Try: check the PG* variables (PGPORT, PGSSLMODE, ...)", secretsOf(rawURL, nil).hide(oneLine(err.Error())))
	}
	if cfg.ConnectTimeout == 0 || cfg.ConnectTimeout > connectTimeout {
		cfg.ConnectTimeout = connectTimeout
	}
	size, err := poolSize(cfg, os.Getenv)
	if err != nil { // Classify checked it; DIGEST_DB_POOL may have changed
		return nil, err
	}
	delete(cfg.RuntimeParams, PoolParam)
	server := &serverWatch{silence: silence, hold: hold}
	dial := cfg.DialFunc
	cfg.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
		if server.lost() {
			return nil, silentServer{silence}
		}
		return dial(ctx, network, addr)
	}
	cfg.AfterNetConnect = func(_ context.Context, _ *pgconn.Config, conn net.Conn) (net.Conn, error) {
		return &watchedConn{Conn: conn, server: server}, nil
	}
	secrets := secretsOf(rawURL, &cfg.Config)
	name := secrets.hide(displayName(cfg.Config))
	db := openPool(cfg, size, set, setsParam(rawURL, "default_query_exec_mode"))
	pingCtx, cancel := context.WithTimeout(ctx, connectTimeout)
	defer cancel()
	if err := db.PingContext(pingCtx); err != nil {
		db.Close()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		err = unreachable(name, cfg.Config, err)
		hidden := errors.New(secrets.hide(err.Error()))
		if errors.Is(err, store.ErrUnreachable) {
			return nil, lost{hidden}
		}
		return nil, hidden
	}
	s, err := sqlstore.New(ctx, db, name, Dialect)
	if err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

// serverWatch remembers that a connection to the server went silent. For
// hold after that, every new connection and every request on the others fails
// at once with the same error: the statements a stopping run still makes
// (storing what it holds, giving its claims back) would each wait out the
// silence, and each connection database/sql retries them on a connect
// timeout, which added up to ten minutes after the first had failed.
type serverWatch struct {
	silence, hold time.Duration

	mu     sync.Mutex
	lostAt time.Time
}

func (w *serverWatch) lost() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return !w.lostAt.IsZero() && time.Since(w.lostAt) < w.hold
}

func (w *serverWatch) markLost() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.lostAt = time.Now()
}

// watchedConn fails a read or write that has waited silence for the
// server since digest last wrote to it or last heard from it. pgx's own
// deadlines (set when a context ends) are kept: the watch never pushes one
// later.
type watchedConn struct {
	net.Conn
	server *serverWatch

	mu       sync.Mutex
	deadline time.Time // pgx's deadline; zero: none
	until    time.Time // the watch's deadline
}

func (c *watchedConn) Write(b []byte) (int, error) {
	if c.server.lost() {
		return 0, silentServer{c.server.silence}
	}
	c.watch()
	n, err := c.Conn.Write(b)
	return n, c.silent(err)
}

func (c *watchedConn) Read(b []byte) (int, error) {
	if c.server.lost() {
		// Nothing more is awaited from a silent server: pgx's drain of a
		// connection it drops would wait out another deadline.
		return 0, silentServer{c.server.silence}
	}
	if c.watchEnded() {
		// The last wait ended in an answer, long ago: this read begins a
		// wait of its own.
		c.watch()
	}
	n, err := c.Conn.Read(b)
	if n > 0 {
		c.watch()
	}
	return n, c.silent(err)
}

// silent says why an operation ran out of time: the server's silence,
// unless the deadline was pgx's.
func (c *watchedConn) silent(err error) error {
	if err != nil && errors.Is(err, os.ErrDeadlineExceeded) && !c.pgxDeadlinePassed() {
		c.server.markLost()
		return silentServer{c.server.silence}
	}
	return err
}

// watch moves the deadline to silence from now, or to pgx's own deadline
// if that comes first.
func (c *watchedConn) watch() {
	c.mu.Lock()
	defer c.mu.Unlock()
	d := time.Now().Add(c.server.silence)
	if !c.deadline.IsZero() && c.deadline.Before(d) {
		d = c.deadline
	}
	c.until = d
	c.Conn.SetDeadline(d)
}

func (c *watchedConn) watchEnded() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.deadline.IsZero() && !c.until.IsZero() && !time.Now().Before(c.until)
}

func (c *watchedConn) pgxDeadlinePassed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return !c.deadline.IsZero() && !time.Now().Before(c.deadline)
}

func (c *watchedConn) SetDeadline(t time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.deadline, c.until = t, time.Time{}
	return c.Conn.SetDeadline(t)
}

func (c *watchedConn) SetReadDeadline(t time.Time) error { return c.SetDeadline(t) }

func (c *watchedConn) SetWriteDeadline(t time.Time) error { return c.SetDeadline(t) }

// silentServer is the error of a read the server left unanswered: a
// timeout to pgx, which then drops the connection.
type silentServer struct{ after time.Duration }

func (e silentServer) Error() string {
	return fmt.Sprintf("no answer from the server in %s", e.after)
}
func (silentServer) Timeout() bool   { return true }
func (silentServer) Temporary() bool { return false }
func (silentServer) Unwrap() error   { return os.ErrDeadlineExceeded }

// migrationLock is the advisory lock every digest takes to migrate: a
// constant of its own, so no other program's lock is waited for.
const migrationLock = 0x6469676573740001 // "digest" 0001

// Dialect is PostgreSQL's: numbered placeholders, its own schema, the
// server's clock, and an advisory lock around each migration.
var Dialect = sqlstore.Dialect{
	Migrations: migrations,
	Numbered:   true,
	Explain:    explain,
	LockMigrations: func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(migrationLock))
		return err
	},
	// clock_timestamp, not now(): now() is when the transaction began.
	NowMillis:  "(EXTRACT(EPOCH FROM clock_timestamp()) * 1000)::BIGINT",
	Greatest:   "GREATEST",
	NoFlush:    "set_config('synchronous_commit', 'off', true)",
	Timestamps: true,
	// A TEXT column (schema_migrations' before version 12) takes it as
	// text too.
	Now: "now()",
}

// migrations are PostgreSQL's schema, version by version; version 1 is
// everything SQLite's four first versions hold.
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
CREATE TABLE summaries (
	repo_id        TEXT NOT NULL,
	commit_hash    TEXT NOT NULL,
	model          TEXT NOT NULL,
	prompt_version TEXT NOT NULL,
	scope          TEXT NOT NULL,
	summary        TEXT NOT NULL,
	input_tokens   BIGINT NOT NULL,
	output_tokens  BIGINT NOT NULL,
	cost_usd       DOUBLE PRECISION NOT NULL,
	diff_tokens    BIGINT NOT NULL,
	truncated      BOOLEAN NOT NULL,
	skipped_files  TEXT NOT NULL,
	created_at     TEXT NOT NULL,
	partial        BOOLEAN NOT NULL DEFAULT FALSE,
	PRIMARY KEY (repo_id, commit_hash, model, prompt_version, scope),
	FOREIGN KEY (repo_id, commit_hash) REFERENCES commits(repo_id, hash)
);
CREATE TABLE payloads (
	hash TEXT PRIMARY KEY,
	gz   BYTEA NOT NULL
);
CREATE TABLE eval_results (
	key           TEXT PRIMARY KEY,
	model         TEXT NOT NULL,
	latency_ms    DOUBLE PRECISION NOT NULL,
	input_tokens  BIGINT NOT NULL,
	output_tokens BIGINT NOT NULL,
	cost_usd      DOUBLE PRECISION NOT NULL,
	request       TEXT NOT NULL REFERENCES payloads(hash),
	response      TEXT NOT NULL REFERENCES payloads(hash),
	created_at    TEXT NOT NULL
);
CREATE TABLE eval_runs (
	id          TEXT PRIMARY KEY,
	dataset     TEXT NOT NULL,
	models      TEXT NOT NULL,
	params      TEXT NOT NULL,
	created_at  TEXT NOT NULL,
	finished_at TEXT
);
CREATE TABLE eval_run_results (
	run_id   TEXT NOT NULL REFERENCES eval_runs(id),
	model    TEXT NOT NULL,
	item     TEXT NOT NULL,
	line     BIGINT NOT NULL,
	repeat   BIGINT NOT NULL,
	key      TEXT NOT NULL,
	pass     BOOLEAN NOT NULL,
	score    DOUBLE PRECISION NOT NULL,
	reasons  TEXT NOT NULL,
	expected TEXT NOT NULL,
	error    TEXT NOT NULL,
	cached   BOOLEAN NOT NULL,
	PRIMARY KEY (run_id, model, line, repeat)
);
-- Claims on work in progress, shared by every machine: expiry is in the
-- server's clock, Unix milliseconds.
CREATE TABLE leases (
	key        TEXT PRIMARY KEY,
	owner      TEXT NOT NULL,
	expires_at BIGINT NOT NULL
);`,
	2: `
-- One rate limit per account (provider, base URL, model, hash of the API
-- key), shared by every machine using it. Times are Unix microseconds of
-- the server's clock.
CREATE TABLE rate_limits (
	limiter       TEXT PRIMARY KEY,
	requests_tat  BIGINT NOT NULL,
	tokens_tat    BIGINT NOT NULL,
	paused_until  BIGINT NOT NULL,
	requests      BIGINT NOT NULL, -- learned limit per window; 0: unknown
	tokens        BIGINT NOT NULL,
	updated_at    BIGINT NOT NULL
);`,
	3: `
-- The kind of change a summary describes, as release notes group it;
-- '' in summaries stored before digest asked for it.
ALTER TABLE summaries ADD COLUMN change_type TEXT NOT NULL DEFAULT '';
ALTER TABLE summaries ADD COLUMN change_scope TEXT NOT NULL DEFAULT '';
ALTER TABLE summaries ADD COLUMN breaking BOOLEAN NOT NULL DEFAULT FALSE;`,
	4: `
-- Batches sent to a provider's batch API, recorded before the provider
-- hears of them, so that a rerun finds a batch a dead process left. Times
-- are UTC text of a fixed width, so that they sort as they compare.
CREATE TABLE batches (
	id          TEXT PRIMARY KEY,
	model       TEXT NOT NULL,
	base_url    TEXT NOT NULL,
	provider_id TEXT NOT NULL DEFAULT '', -- '' until the provider answers
	status      TEXT NOT NULL,
	items       BIGINT NOT NULL,
	succeeded   BIGINT NOT NULL,
	errored     BIGINT NOT NULL,
	canceled    BIGINT NOT NULL,
	expired     BIGINT NOT NULL,
	message     TEXT NOT NULL,
	collected   BOOLEAN NOT NULL,
	created_at  TEXT NOT NULL,
	updated_at  TEXT NOT NULL
);
CREATE INDEX batches_open ON batches(created_at) WHERE NOT collected;
-- seq is the order items were recorded in, across batches: it orders a
-- batch's items and breaks ties between batches.
CREATE TABLE batch_items (
	batch_id      TEXT NOT NULL REFERENCES batches(id),
	custom_id     TEXT NOT NULL,
	seq           BIGINT GENERATED ALWAYS AS IDENTITY,
	request       BYTEA, -- NULL once the result is stored
	done          BOOLEAN NOT NULL DEFAULT FALSE,
	answer        TEXT NOT NULL DEFAULT '',
	input_tokens  BIGINT NOT NULL DEFAULT 0,
	output_tokens BIGINT NOT NULL DEFAULT 0,
	error         TEXT NOT NULL DEFAULT '',
	PRIMARY KEY (batch_id, custom_id)
);
-- The work each item holds (lease keys, answer keys), found by model and
-- member when a rerun asks what a batch answered or is answering.
CREATE TABLE batch_members (
	batch_id  TEXT NOT NULL,
	custom_id TEXT NOT NULL,
	member    TEXT NOT NULL,
	pos       BIGINT NOT NULL, -- its place in the item's members
	model     TEXT NOT NULL,
	PRIMARY KEY (batch_id, custom_id, member),
	FOREIGN KEY (batch_id, custom_id) REFERENCES batch_items(batch_id, custom_id)
);
CREATE INDEX batch_members_by_member ON batch_members(model, member);`,
	5: `
-- What a run's grading model was paid (see SQLite's version 8).
ALTER TABLE eval_runs ADD COLUMN judge_model TEXT;
ALTER TABLE eval_runs ADD COLUMN judge_verdicts INTEGER;
ALTER TABLE eval_runs ADD COLUMN judge_cost_usd DOUBLE PRECISION;`,
	6: `
-- Why each answer ended, and its cached input tokens (see SQLite's version 9).
ALTER TABLE eval_results ADD COLUMN finish TEXT NOT NULL DEFAULT '';
ALTER TABLE eval_results ADD COLUMN cache_read_tokens BIGINT NOT NULL DEFAULT 0;
ALTER TABLE eval_results ADD COLUMN cache_write_tokens BIGINT NOT NULL DEFAULT 0;
ALTER TABLE batch_items ADD COLUMN finish TEXT NOT NULL DEFAULT '';
ALTER TABLE batch_items ADD COLUMN cache_read_tokens BIGINT NOT NULL DEFAULT 0;
ALTER TABLE batch_items ADD COLUMN cache_write_tokens BIGINT NOT NULL DEFAULT 0;`,
	7: `
-- Learned token factors (see SQLite's version 10).
CREATE TABLE token_factors (
	model      TEXT PRIMARY KEY,
	factor     DOUBLE PRECISION NOT NULL,
	samples    BIGINT NOT NULL,
	updated_at TEXT NOT NULL
);`,
	8: `
-- The request of a result that ended in error (see SQLite's version 11).
ALTER TABLE eval_run_results ADD COLUMN request TEXT REFERENCES payloads(hash);`,
	9: `
-- What a forge's API said of a commit (see SQLite's version 12).
CREATE TABLE forge_answers (
	key        TEXT PRIMARY KEY,
	body       BYTEA NOT NULL,
	expires_at BIGINT NOT NULL,
	created_at TEXT NOT NULL
);`,
	10: `
-- An item's grades per named metric (see SQLite's version 13).
CREATE TABLE eval_result_metrics (
	run_id TEXT NOT NULL,
	model  TEXT NOT NULL,
	line   BIGINT NOT NULL,
	repeat BIGINT NOT NULL,
	pos    INTEGER NOT NULL,
	metric TEXT NOT NULL,
	score  DOUBLE PRECISION NOT NULL,
	pass   BOOLEAN NOT NULL,
	PRIMARY KEY (run_id, model, line, repeat, pos)
);
-- Models ranked by a metric within a run: an index-only scan.
CREATE INDEX eval_result_metrics_by_metric ON eval_result_metrics(run_id, metric, model) INCLUDE (score, pass);`,
	11: `
-- The object a payload's body is in (see SQLite's version 14).
ALTER TABLE payloads ADD COLUMN uri TEXT;`,

	12: `
-- Times as timestamptz and costs as numeric, so that the shared database
-- is queried with PostgreSQL's own date and decimal arithmetic. Every time
-- was RFC 3339 text with its offset: the cast keeps the instant (to the
-- microsecond, all timestamptz holds). A double becomes the numeric of
-- its 15 significant digits. Each ALTER rewrites its table once. Leases,
-- rate limits and forge answers' expiry stay BIGINT milliseconds or
-- microseconds of the server's clock: claims do arithmetic on them.
-- A later migration that changes a column a view below reads must drop
-- and create the view again, with the same columns.
ALTER TABLE schema_migrations
	ALTER COLUMN applied_at TYPE timestamptz USING applied_at::timestamptz;
ALTER TABLE repositories
	ALTER COLUMN created_at TYPE timestamptz USING created_at::timestamptz,
	ALTER COLUMN updated_at TYPE timestamptz USING updated_at::timestamptz;
ALTER TABLE commits
	ALTER COLUMN author_date TYPE timestamptz USING author_date::timestamptz,
	ALTER COLUMN commit_date TYPE timestamptz USING commit_date::timestamptz;
ALTER TABLE summaries
	ALTER COLUMN created_at TYPE timestamptz USING created_at::timestamptz,
	ALTER COLUMN cost_usd TYPE numeric;
ALTER TABLE eval_results
	ALTER COLUMN created_at TYPE timestamptz USING created_at::timestamptz,
	ALTER COLUMN cost_usd TYPE numeric;
ALTER TABLE eval_runs
	ALTER COLUMN created_at TYPE timestamptz USING created_at::timestamptz,
	ALTER COLUMN finished_at TYPE timestamptz USING NULLIF(finished_at, '')::timestamptz,
	ALTER COLUMN judge_cost_usd TYPE numeric;
ALTER TABLE batches
	ALTER COLUMN created_at TYPE timestamptz USING created_at::timestamptz,
	ALTER COLUMN updated_at TYPE timestamptz USING updated_at::timestamptz;
ALTER TABLE token_factors
	ALTER COLUMN updated_at TYPE timestamptz USING updated_at::timestamptz;
ALTER TABLE forge_answers
	ALTER COLUMN created_at TYPE timestamptz USING created_at::timestamptz;
-- Views for people and dashboards (see SQLite's version 15): the same
-- columns, in PostgreSQL's types.
CREATE VIEW digest_commit_summaries AS
SELECT s.repo_id AS repository_id,
	r.path AS repository_path,
	s.commit_hash AS commit_hash,
	c.subject AS subject,
	c.author_name AS author_name,
	c.author_email AS author_email,
	c.author_date AS authored_at,
	c.commit_date AS committed_at,
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
	s.created_at AS summarized_at
FROM summaries s
JOIN commits c ON c.repo_id = s.repo_id AND c.hash = s.commit_hash
JOIN repositories r ON r.id = s.repo_id;
CREATE VIEW digest_eval_scores AS
SELECT rr.run_id AS run_id,
	er.created_at AS run_started_at,
	er.finished_at AS run_finished_at,
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

// hidden stands for a password in a message.
const hidden = "<password>"

// secrets are the strings of a URL that may be its password. pgx (as
// libpq) ends the user info at the first '@' before a '/', net/url at the
// last '@' before a '/', '?' or '#'; a password holding '@' or '/'
// unencoded thus spills into what pgx then takes for the host, port or
// database, which messages show. So every reading is hidden: each parser's
// password, password and sslpassword query values, and the widest user
// info the URL could have meant with the pieces its '@' and '/' cut it
// into.
type secrets []string

// minPiece is the shortest piece of a password cut at '@' or '/' that is
// hidden: shorter ones ("5432", "db") are more likely a port or a name the
// message needs than a guessable part of a password.
const minPiece = 6

func secretsOf(rawURL string, cfg *pgconn.Config) secrets {
	var s secrets
	add := (&s).adder()
	if cfg != nil {
		add(cfg.Password, 1)
	}
	if !isURL(rawURL) {
		pairs, _ := scanKeywordValue(rawURL)
		for _, p := range pairs {
			if secretKeywords[p.key] {
				add(p.value, 1)
				add(p.raw, 1)
			}
		}
		slices.SortFunc(s, func(a, b string) int { return len(b) - len(a) })
		return s
	}
	// password=VALUE anywhere, as a confused --db may hold it (a URL
	// followed by a keyword/value password).
	for _, m := range passwordRE.FindAllStringIndex(rawURL, -1) {
		v := rawURL[m[1]:]
		if strings.HasPrefix(v, "'") {
			end := 1
			for ; end < len(v) && v[end] != '\''; end++ {
				if v[end] == '\\' {
					end++
				}
			}
			v = v[:min(end+1, len(v))]
			add(v, 1)
			v = unescapeValue(strings.TrimSuffix(v[1:], "'"))
		} else if end := strings.IndexAny(v, "& \t\n\r\v\f#"); end >= 0 {
			v = v[:end]
		}
		add(v, 1)
	}
	if u, err := url.Parse(rawURL); err == nil && u.User != nil {
		if pw, ok := u.User.Password(); ok {
			add(pw, 1)
		}
	}
	rest := afterScheme(rawURL)
	if q := strings.IndexByte(rest, '?'); q >= 0 {
		for _, pair := range strings.Split(rest[q+1:], "&") {
			k, v, _ := strings.Cut(pair, "=")
			if k = strings.ToLower(k); k == "password" || k == "sslpassword" {
				add(v, 1)
			}
		}
	}
	if at := userInfoEnd(rest); at >= 0 {
		if _, pw, ok := strings.Cut(rest[:at], ":"); ok {
			add(pw, 1)
			for _, piece := range strings.FieldsFunc(pw, func(r rune) bool { return r == '@' || r == '/' }) {
				add(piece, minPiece)
			}
		}
	}
	// Longest first, so a password is hidden whole before a piece of it.
	slices.SortFunc(s, func(a, b string) int { return len(b) - len(a) })
	return s
}

// adder returns what adds a secret, in every form a message may write it,
// when it is at least min bytes long.
func (s *secrets) adder() func(v string, min int) {
	return func(v string, min int) {
		for _, form := range []string{v, url.PathEscape(v), url.QueryEscape(v), strings.Trim(strconv.Quote(v), `"`)} {
			if len(form) >= min {
				*s = append(*s, form)
			}
		}
		if dec, err := url.PathUnescape(v); err == nil && dec != v && len(dec) >= min {
			*s = append(*s, dec)
		}
	}
}

// with adds pw, and each piece of it between the characters a URL gives
// a meaning, to s.
func (s secrets) with(pw string) secrets {
	add := (&s).adder()
	add(pw, 1)
	for _, piece := range strings.FieldsFunc(pw, func(r rune) bool { return strings.ContainsRune("@/?#&=:", r) }) {
		add(piece, minPiece)
	}
	slices.SortFunc(s, func(a, b string) int { return len(b) - len(a) })
	return s
}

// hide replaces each secret in msg with hidden.
func (s secrets) hide(msg string) string {
	for _, secret := range s {
		msg = strings.ReplaceAll(msg, secret, hidden)
	}
	return msg
}

// passwordRE finds the start of a password's value.
var passwordRE = regexp.MustCompile(`(?i)password[ \t\n\r\v\f]*=[ \t\n\r\v\f]*`)

// isURL reports a postgres:// or postgresql:// URL, as pgx tells it from a
// keyword/value string.
func isURL(name string) bool {
	return strings.HasPrefix(name, "postgres://") || strings.HasPrefix(name, "postgresql://")
}

// afterScheme is the URL after "postgres://" or "postgresql://".
func afterScheme(rawURL string) string {
	if i := strings.Index(rawURL, "://"); i >= 0 {
		return rawURL[i+len("://"):]
	}
	return rawURL
}

// userInfoEnd is the index in rest (the URL after its scheme) of the
// widest '@' that could end the user info: the last one before the query
// that follows the first '@'; -1 when there is no '@'.
func userInfoEnd(rest string) int {
	first := strings.IndexByte(rest, '@')
	if first < 0 {
		return -1
	}
	end := len(rest)
	if q := strings.IndexByte(rest[first:], '?'); q >= 0 {
		end = first + q
	}
	return strings.LastIndexByte(rest[:end], '@')
}

// ambiguousUserInfo reports a URL whose user info pgx would end before the
// widest '@' it could mean: there, pgx would connect to a host or database
// made of part of the password, and say so in its errors.
func ambiguousUserInfo(rawURL string) bool {
	rest := afterScheme(rawURL)
	widest := userInfoEnd(rest)
	if widest < 0 {
		return false
	}
	pgxEnd := strings.IndexAny(rest, "@/") // libpq's lookahead stops at '/'
	return pgxEnd < 0 || rest[pgxEnd] != '@' || pgxEnd != widest
}

// displayName names the database as the server, user and database
// connected to: what the URL and the PG* variables made of it.
func displayName(c pgconn.Config) string {
	host := c.Host
	if strings.HasPrefix(host, "/") {
		host = "[" + host + "]" // a Unix socket's directory
	}
	u := url.URL{Scheme: "postgres", User: url.User(c.User), Host: net.JoinHostPort(host, fmt.Sprint(c.Port)), Path: "/" + c.Database}
	return u.String()
}

// unreachable says that the server could not be reached, naming it.
func unreachable(name string, c pgconn.Config, err error) error {
	msg := err.Error()
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch pe.Code {
		case "28P01", "28000":
			return fmt.Errorf("database %s refused the login (%s). Try: the user and password in --db, or PGUSER and PGPASSWORD", name, pe.Message)
		case "3D000":
			return fmt.Errorf("database %s does not exist on the server (%s). Try: createdb %s, or another database in --db", name, pe.Message, c.Database)
		case "53300":
			return lost{noSlot(name, pe)}
		}
	}
	return lost{fmt.Errorf("database %s cannot be reached (%s). Try: check that PostgreSQL runs at %s:%d and accepts connections, or --db with another URL",
		name, oneLine(msg), c.Host, c.Port)}
}

// noSlot says that the server refused a connection because every one it
// allows is taken (SQLSTATE 53300: "sorry, too many clients already", or
// "remaining connection slots are reserved for ..."), which digest once
// reported as a server that cannot be reached.
func noSlot(name string, pe *pgconn.PgError) error {
	return fmt.Errorf("database %s has no connection to spare: every one the server allows (max_connections) is taken (%s). "+
		"Try: fewer digest processes at once (each keeps up to %s connections, %d by default), a smaller %s, "+
		"or a pooler such as PgBouncer in transaction mode between digest and the server",
		name, oneLine(pe.Message), PoolEnv, DefaultPool, PoolEnv)
}

// lost is the error of a server that cannot be reached or went away: it
// matches store.ErrUnreachable.
type lost struct{ error }

func (lost) Is(target error) bool { return target == store.ErrUnreachable }

// explain turns PostgreSQL's errors into messages that say what to do.
func explain(name string, err error) error {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch {
		case pe.Code == "53100":
			return fmt.Errorf("database %s: the server's disk is full (%s). Try: free space on the database server", name, pe.Message)
		case pe.Code == "53300":
			return lost{noSlot(name, pe)}
		case pe.Code == "42P05", pe.Code == "26000":
			// digest names its statements on a session of PostgreSQL
			// itself only, unless --db asks for pgx's statement cache:
			// through a pooler in transaction mode the name is then found,
			// or missed, on another client's session.
			return fmt.Errorf("database %s: %s: the server session a statement was prepared on is not the one it ran on, as through a pooler in transaction mode (PgBouncer before 1.21, or with max_prepared_statements = 0). "+
				"Try: leave default_query_exec_mode out of --db (digest then prepares nothing on a pooler's sessions), or connect to the server itself", name, oneLine(pe.Message))
		case pe.Code == "42501":
			return fmt.Errorf("database %s: permission denied (%s). Try: a user that may create tables in that database", name, pe.Message)
		case strings.HasPrefix(pe.Code, "08"), strings.HasPrefix(pe.Code, "57P"):
			return lost{fmt.Errorf("database %s: the connection was lost (%s). Try: run the same command again once the server is back; what was stored is kept", name, pe.Message)}
		}
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	var ne net.Error
	if errors.As(err, &ne) || errors.Is(err, sql.ErrConnDone) || pgconn.SafeToRetry(err) || isConnError(err) {
		return lost{fmt.Errorf("database %s: the server cannot be reached (%s). Try: run the same command again once the server is back; what was stored is kept", name, oneLine(err.Error()))}
	}
	return fmt.Errorf("database %s: %w", name, err)
}

// isConnError recognises a connection that failed or was closed under a
// statement, as pgx reports it.
func isConnError(err error) bool {
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) {
		return true
	}
	msg := err.Error()
	return strings.Contains(msg, "conn closed") || strings.Contains(msg, "unexpected EOF") || strings.Contains(msg, "connection reset")
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
