package postgres

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
)

// PoolEnv names the variable that sets how many connections a process
// keeps to a PostgreSQL server, when --db does not say.
const PoolEnv = "DIGEST_DB_POOL"

// PoolParam is the --db parameter that sets it (pgxpool's name for the
// same), in a URL's query or a keyword/value string. digest takes it out
// before connecting: pgx would send it to the server as a setting, which
// PostgreSQL and PgBouncer refuse.
const PoolParam = "pool_max_conns"

// DefaultPool is how many connections a process keeps open when neither
// --db nor DIGEST_DB_POOL says: enough for a run's concurrent statements
// (its requests take a claim, store an answer and give the claim back
// while others are in flight), few enough that 24 processes fit whole in
// PostgreSQL's default max_connections of 100 (more shrink their pools:
// see connector).
const DefaultPool = 4

// MaxPool bounds the pool a process may ask for.
const MaxPool = 1000

const (
	// connMaxIdleTime closes a connection no statement used for that long:
	// a run waiting out a long pause or a batch gives its slots back.
	connMaxIdleTime = 5 * time.Minute
	// connMaxLifetime replaces a connection that old, so that a long run
	// follows a failover or a pooler's restart to where the server is now.
	connMaxLifetime = time.Hour
	// regrowAfter is how long a pool the server's connection limit shrank
	// stays at what it had before it tries to grow to its size again: each
	// try that finds the server still full costs it a refused connection,
	// which its log shows as a FATAL line.
	regrowAfter = 2 * time.Minute
)

// How statements travel. To PostgreSQL itself, pgx's statement cache:
// each statement is prepared under a name on the connection's session the
// first time, then only bound and run, its plan kept (measured on a local
// PostgreSQL 15, a claim, a lookup, a take of the shared limit and a
// release cost the server 0.24-0.51 ms of CPU so, 1.1-1.45 ms planned
// anew each time).
// Through a pooler (PgBouncer in transaction mode) the session a statement
// was prepared on serves the next transaction of any client, so there each
// statement is sent as the extended protocol's unnamed statement,
// parameters typed from their Go values, in one round trip: nothing is
// left on the session (a named statement fails there with "prepared
// statement ... already exists", or "does not exist"). A pooler is told
// from the server by the process id in the cancel key a connection gets:
// PostgreSQL's is the backend's own, a pooler's is its own invention.
const (
	directMode = pgx.QueryExecModeCacheStatement
	pooledMode = pgx.QueryExecModeExec
)

// poolSize reads the pool a --db asks for from cfg (as pgx parsed it,
// which keeps parameters it does not know in RuntimeParams): its
// pool_max_conns, else DIGEST_DB_POOL, else DefaultPool.
func poolSize(cfg *pgx.ConnConfig, getenv func(string) string) (int, error) {
	if v, ok := cfg.RuntimeParams[PoolParam]; ok {
		n, ok := parsePool(v)
		if !ok {
			// The value is not quoted: a URL whose password holds an
			// unencoded & could have put part of it there.
			return 0, fmt.Errorf("--db sets %s to something other than a whole number from 1 to %d. Try: %s=%d in --db, or leave it out and set %s",
				PoolParam, MaxPool, PoolParam, DefaultPool, PoolEnv)
		}
		return n, nil
	}
	if v := getenv(PoolEnv); v != "" {
		n, ok := parsePool(v)
		if !ok {
			shown := v
			if len(shown) > 20 {
				shown = shown[:20] + "..."
			}
			return 0, fmt.Errorf("%s=%q is not a whole number of connections from 1 to %d. Try: %s=%d, or unset %s for the default (%d)",
				PoolEnv, shown, MaxPool, PoolEnv, DefaultPool, PoolEnv, DefaultPool)
		}
		return n, nil
	}
	return DefaultPool, nil
}

func parsePool(v string) (int, bool) {
	n, err := strconv.Atoi(strings.TrimSpace(v))
	return n, err == nil && n >= 1 && n <= MaxPool
}

// checkPool refuses a --db (as Classify returns it for a server) whose
// pool_max_conns, or else DIGEST_DB_POOL, is not a pool size; Classify
// calls it, so that such a value is a usage error.
func checkPool(name string, getenv func(string) string) error {
	cfg, err := pgx.ParseConfig(name)
	if err != nil {
		return nil // Classify says what is wrong with name
	}
	_, err = poolSize(cfg, getenv)
	return err
}

// openPool opens the pool of connections of cfg: at most size open, and
// every one of them kept while used (database/sql's own default keeps 2
// and opens a session per statement beyond them: a busy run opened and
// closed sessions all the time, and a fleet of them spent the server's CPU
// on it).
// cfg's DefaultQueryExecMode is kept when chosen is set (--db named one);
// else each connection's is directMode or pooledMode, as it turns out to
// reach the server itself or a pooler.
func openPool(cfg *pgx.ConnConfig, size int, set settings, chosen bool) *sql.DB {
	c := &connector{size: size, regrowAfter: set.regrow, slotWait: set.slotWait}
	if chosen {
		c.Connector = stdlib.GetConnector(*cfg)
	} else {
		pooled, direct := *cfg, *cfg
		pooled.DefaultQueryExecMode, direct.DefaultQueryExecMode = pooledMode, directMode
		c.Connector, c.direct = stdlib.GetConnector(pooled), stdlib.GetConnector(direct)
	}
	db := sql.OpenDB(c)
	c.db = db
	db.SetMaxOpenConns(size)
	db.SetMaxIdleConns(size)
	db.SetConnMaxIdleTime(connMaxIdleTime)
	db.SetConnMaxLifetime(connMaxLifetime)
	return db
}

// connector opens the pool's connections through pgx.
//
// When the server refuses one more because all its connections are taken
// (SQLSTATE 53300: "sorry, too many clients already", or "remaining
// connection slots are reserved"), a pool that holds some shrinks to
// those (and to the ones other statements are opening at that moment),
// and the statement that asked waits for one of them: a process started
// among too many others goes on with fewer connections instead of
// failing. It tries its full size again after regrowAfter. A run that
// has lost every connection it had (a failover, the shrink itself closing
// one in a race) waits for a slot, asking the server again at most every
// slotRetryMax, for up to slotWait; a process that never had one is told
// at once.
//
// Its connections are opened in directMode until one turns out to reach a
// pooler: that one is closed before any statement ran on it (the check
// prepares nothing) and opened again in pooledMode, as every one after it.
type connector struct {
	driver.Connector                  // pooledMode, or the mode --db chose
	direct           driver.Connector // directMode; nil when --db chose
	reach            atomic.Int32     // 1: the server itself, -1: a pooler, 0: not known yet

	size        int
	regrowAfter time.Duration
	slotWait    time.Duration
	db          *sql.DB

	open     atomic.Int64 // connections open now
	inflight atomic.Int64 // calls of Connect under way
	had      atomic.Bool  // a connection was open once

	mu     sync.Mutex
	regrow *time.Timer
	closed bool
}

const (
	// slotWait bounds how long a run that lost all its connections waits
	// for the server to have a slot again.
	slotWait = time.Minute
	// slotRetryMax is the longest pause between two asks in that wait:
	// each refused ask costs the server a process start and a log line.
	slotRetryMax = 2 * time.Second
)

func (c *connector) Connect(ctx context.Context) (driver.Conn, error) {
	c.inflight.Add(1)
	defer c.inflight.Add(-1)
	var waited time.Duration
	pause := 50 * time.Millisecond
	for {
		conn, err := c.connect(ctx)
		if err == nil {
			c.had.Store(true)
			return conn, nil
		}
		if !tooManyClients(err) {
			return nil, err
		}
		if c.shrink() {
			// database/sql retries on ErrBadConn, and now waits for a
			// connection of the pool's to come free.
			return nil, driver.ErrBadConn
		}
		if !c.had.Load() || waited >= c.slotWait {
			return nil, err
		}
		select {
		case <-ctx.Done():
			return nil, err
		case <-time.After(pause):
		}
		waited += pause
		pause = min(2*pause, slotRetryMax)
	}
}

// connect opens one connection, in directMode or pooledMode.
func (c *connector) connect(ctx context.Context) (driver.Conn, error) {
	for {
		from := c.Connector
		named := c.direct != nil && c.reach.Load() >= 0
		if named {
			from = c.direct
		}
		conn, err := from.Connect(ctx)
		if err != nil {
			return nil, err
		}
		sc := conn.(*stdlib.Conn)
		if c.direct != nil {
			direct, err := reachesServer(ctx, sc.Conn())
			if err != nil {
				sc.Close()
				return nil, err
			}
			if direct {
				c.reach.Store(1)
			} else {
				c.reach.Store(-1)
				if named {
					sc.Close()
					continue // in pooledMode now
				}
			}
		}
		c.open.Add(1)
		return &pooledConn{Conn: sc, c: c}, nil
	}
}

// shrink bounds the pool to the connections open now and those other
// statements are opening, if any are open. Not below: database/sql closes
// a connection given back while more are counted open than the bound,
// and counts a connection being opened until Connect returns; the one
// this refusal leaves over counts a moment more, as briefly as can be.
func (c *connector) shrink() bool {
	open := c.open.Load()
	if open <= 0 {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return false
	}
	c.db.SetMaxOpenConns(int(open + max(c.inflight.Load()-1, 0)))
	if c.regrow == nil {
		c.regrow = time.AfterFunc(c.regrowAfter, c.grow)
	} else {
		c.regrow.Reset(c.regrowAfter)
	}
	return true
}

// grow gives the pool its size again.
func (c *connector) grow() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return
	}
	c.db.SetMaxOpenConns(c.size)
	c.db.SetMaxIdleConns(c.size)
}

// Close stops a pending regrow; database/sql calls it when the pool closes.
func (c *connector) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	if c.regrow != nil {
		c.regrow.Stop()
	}
	if closer, ok := c.Connector.(io.Closer); ok {
		return closer.Close()
	}
	return nil
}

// reachesServer reports whether conn is a session of PostgreSQL itself:
// whether the process id of its cancel key is its backend's. A pooler
// gives its clients keys of its own.
func reachesServer(ctx context.Context, conn *pgx.Conn) (bool, error) {
	var pid uint32
	// The simple protocol, which prepares nothing on the session.
	if err := conn.QueryRow(ctx, `SELECT pg_backend_pid()`, pgx.QueryExecModeSimpleProtocol).Scan(&pid); err != nil {
		return false, err
	}
	return pid == conn.PgConn().PID(), nil
}

// tooManyClients reports the server's refusal of a connection for want of
// a free one.
func tooManyClients(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "53300"
}

// pooledConn is a pgx connection that prepares nothing on the server: a
// statement database/sql prepares is kept as its SQL and sent as any other
// query (see directMode). pgx's own would be a named statement, left on the
// server session after the transaction; through PgBouncer in transaction
// mode that session then serves other clients, whose same statement fails
// with "prepared statement ... already exists".
type pooledConn struct {
	*stdlib.Conn
	c      *connector
	closed atomic.Bool
}

func (p *pooledConn) Prepare(query string) (driver.Stmt, error) {
	return p.PrepareContext(context.Background(), query)
}

func (p *pooledConn) PrepareContext(_ context.Context, query string) (driver.Stmt, error) {
	if p.Conn.Conn().IsClosed() {
		return nil, driver.ErrBadConn
	}
	return &sqlStmt{conn: p.Conn, query: query}, nil
}

func (p *pooledConn) Close() error {
	if !p.closed.Swap(true) {
		p.c.open.Add(-1)
	}
	return p.Conn.Close()
}

// sqlStmt is a statement kept as its SQL.
type sqlStmt struct {
	conn  *stdlib.Conn
	query string
}

func (s *sqlStmt) Close() error { return nil }

// NumInput is -1: the server counts the parameters.
func (s *sqlStmt) NumInput() int { return -1 }

func (s *sqlStmt) Exec([]driver.Value) (driver.Result, error) {
	return nil, errors.New("postgres: Stmt.Exec is not supported; use ExecContext")
}

func (s *sqlStmt) Query([]driver.Value) (driver.Rows, error) {
	return nil, errors.New("postgres: Stmt.Query is not supported; use QueryContext")
}

func (s *sqlStmt) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	return s.conn.ExecContext(ctx, s.query, args)
}

func (s *sqlStmt) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	return s.conn.QueryContext(ctx, s.query, args)
}

// setsParam reports whether the connection string name (a URL or a
// keyword/value string) sets key itself.
func setsParam(name, key string) bool {
	if isURL(name) {
		u, err := url.Parse(name)
		return err == nil && u.Query().Has(key)
	}
	pairs, _ := scanKeywordValue(name)
	for _, p := range pairs {
		if p.key == key {
			return true
		}
	}
	return false
}
