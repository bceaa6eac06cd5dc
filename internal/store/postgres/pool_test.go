package postgres

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/digest-cli/digest/internal/pgtest"
	"github.com/digest-cli/digest/internal/store"
)

// withParam adds key=value to a URL's query.
func withParam(t *testing.T, rawURL, key, value string) string {
	t.Helper()
	u, err := url.Parse(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set(key, value)
	u.RawQuery = q.Encode()
	return u.String()
}

// TestPoolKeepsABoundedSetOfConnections: a store keeps the connections it
// opens, at most pool_max_conns of them, however many statements run at
// once and however often. Before, database/sql's defaults kept 2 and
// opened one more per statement beyond them: a run at -j 16 opened and
// closed a session every few statements (12,573 sessions for 16,000
// requests in a fleet of 16 processes), each costing the server ~5 ms of
// CPU.
func TestPoolKeepsABoundedSetOfConnections(t *testing.T) {
	t.Parallel()
	u, err := url.Parse(withParam(t, pgtest.FreshDatabase(t), PoolParam, "3"))
	if err != nil {
		t.Fatal(err)
	}
	proxy := newFreezingProxy(t, u.Host)
	u.Host = proxy.addr
	ctx := context.Background()
	s, err := Open(ctx, u.String())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got := s.SQL().Stats().MaxOpenConnections; got != 3 {
		t.Fatalf("the pool allows %d connections, want pool_max_conns=3", got)
	}
	var afterFirst int64
	for round := range 4 {
		var wg sync.WaitGroup
		errs := make(chan error, 48)
		for i := range 24 {
			wg.Go(func() {
				// A statement that holds its connection, and a claim and
				// its release as a run takes them.
				if _, err := s.SQL().ExecContext(ctx, `SELECT pg_sleep(0.02)`); err != nil {
					errs <- err
					return
				}
				key := fmt.Sprintf("k%d-%d", round, i)
				if _, err := s.Claim(ctx, key, "me", time.Minute); err != nil {
					errs <- err
					return
				}
				if err := s.Release(ctx, key, "me"); err != nil {
					errs <- err
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		if round == 0 {
			afterFirst = proxy.accepted.Load()
		}
	}
	opened := proxy.accepted.Load()
	if afterFirst > 3 || opened > 3 {
		t.Errorf("%d connections opened in the first round of 24 statements at once, %d in all four: want at most pool_max_conns=3", afterFirst, opened)
	}
	if opened != afterFirst {
		t.Errorf("%d connections were opened after the first round: the pool did not keep the ones it had", opened-afterFirst)
	}
	if open := s.SQL().Stats().OpenConnections; open != int(opened) {
		t.Errorf("%d connections are open after the rounds, %d were opened: idle ones were closed", open, opened)
	}
}

// TestPoolSizeComesFromTheURLThenTheEnvironment: the pool is pool_max_conns
// in --db (a URL or a keyword/value string), else DIGEST_DB_POOL, else 4;
// pool_max_conns never reaches the server, which refuses settings it does
// not know ("unrecognized configuration parameter").
func TestPoolSizeComesFromTheURLThenTheEnvironment(t *testing.T) {
	// Not parallel: it sets DIGEST_DB_POOL.
	base := pgtest.FreshDatabase(t)
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	keywordValue := fmt.Sprintf("host=%s port=%s dbname=%s user=%s sslmode=disable %s=5",
		u.Hostname(), u.Port(), strings.TrimPrefix(u.Path, "/"), u.User.Username(), PoolParam)
	cases := []struct {
		name, url, env string
		want           int
	}{
		{"default", base, "", DefaultPool},
		{"environment", base, "7", 7},
		{"environment with spaces", base, " 6 ", 6},
		{"URL", withParam(t, base, PoolParam, "2"), "", 2},
		{"URL over environment", withParam(t, base, PoolParam, "2"), "9", 2},
		{"keyword/value string", keywordValue, "9", 5},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(PoolEnv, tt.env)
			s, err := Open(context.Background(), tt.url)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if got := s.SQL().Stats().MaxOpenConnections; got != tt.want {
				t.Errorf("the pool allows %d connections, want %d", got, tt.want)
			}
			if _, err := s.Claim(context.Background(), "k", "me", time.Minute); err != nil {
				t.Errorf("a claim: %v", err)
			}
		})
	}
}

// TestBadPoolSizeIsRefusedBeforeConnecting: a pool_max_conns or
// DIGEST_DB_POOL that is not a whole number from 1 to 1000 is refused by
// Classify (so the command exits 2) in one line that names it, says what
// to try, and shows no password.
func TestBadPoolSizeIsRefusedBeforeConnecting(t *testing.T) {
	// Not parallel: it sets DIGEST_DB_POOL.
	const password = "Pg5ecretXYZ"
	cases := []struct {
		name, db, env string
		want          []string
	}{
		{"zero in the URL", "postgres://ci:" + password + "@db:5432/digest?pool_max_conns=0", "", []string{"pool_max_conns", "from 1 to 1000", "Try: pool_max_conns=4"}},
		{"a word in the URL", "postgres://ci:" + password + "@db:5432/digest?pool_max_conns=many", "", []string{"pool_max_conns", "Try: "}},
		{"too many in the URL", "postgres://ci:" + password + "@db:5432/digest?sslmode=disable&pool_max_conns=1001", "", []string{"pool_max_conns"}},
		{"negative in a connection string", "host=db dbname=digest password=" + password + " pool_max_conns=-1", "", []string{"pool_max_conns"}},
		{"a password piece after &", "postgres://ci@db:5432/digest?password=" + password + "&pool_max_conns=" + password, "", []string{"pool_max_conns"}},
		{"a word in the environment", "postgres://ci:" + password + "@db:5432/digest", "lots", []string{`DIGEST_DB_POOL="lots"`, "Try: DIGEST_DB_POOL=4"}},
		{"zero in the environment", "postgres://ci@db:5432/digest", "0", []string{"DIGEST_DB_POOL", "from 1 to 1000"}},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(PoolEnv, tt.env)
			_, _, err := Classify(tt.db)
			if err == nil {
				t.Fatal("accepted")
			}
			msg := err.Error()
			if strings.Contains(msg, password) || strings.Contains(msg, "\n") {
				t.Errorf("error %q shows the password or is not one line", msg)
			}
			for _, w := range append(tt.want, "Try: ") {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not say %q", msg, w)
				}
			}
		})
	}
	t.Run("SQLite file", func(t *testing.T) {
		// DIGEST_DB_POOL set for a fleet's server does not stop a job
		// that keeps its cache in a file.
		t.Setenv(PoolEnv, "lots")
		if _, server, err := Classify("/tmp/digest.db"); err != nil || server {
			t.Errorf("Classify(a file) = %v, %v with a bad DIGEST_DB_POOL", server, err)
		}
	})
}

// fillServer opens connections to the server of serverURL until it
// refuses one for want of a free slot (SQLSTATE 53300), keeping them open
// until the test ends, and returns them.
func fillServer(t *testing.T, serverURL string) []*pgx.Conn {
	t.Helper()
	var held []*pgx.Conn
	t.Cleanup(func() {
		for _, c := range held {
			c.Close(context.Background())
		}
	})
	for range 100 {
		c, err := pgx.Connect(context.Background(), serverURL)
		if err != nil {
			if !tooManyClients(err) {
				t.Fatalf("filling the server: %v", err)
			}
			return held
		}
		held = append(held, c)
	}
	t.Fatal("the server took 100 connections: its max_connections was not lowered")
	return nil
}

// TestTooManyClientsIsSaidAsSuch: a server whose connections are all taken
// ("sorry, too many clients already", SQLSTATE 53300) is said to be full,
// with what to try (fewer processes, a smaller DIGEST_DB_POOL, a pooler),
// when digest opens it and when a run that has no connection left needs
// one. Before, both said the server "cannot be reached", which sent people
// looking at the network.
func TestTooManyClientsIsSaidAsSuch(t *testing.T) {
	t.Parallel()
	server := pgtest.StartServer(t)
	server.Configure(t, "max_connections", "6")
	ctx := context.Background()
	running, err := openWith(ctx, withParam(t, server.URL, PoolParam, "2"), settings{silence: time.Minute, hold: time.Minute, regrow: regrowAfter, slotWait: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer running.Close()
	held := fillServer(t, server.URL)

	check := func(t *testing.T, err error) {
		t.Helper()
		if err == nil {
			t.Fatal("succeeded on a full server")
		}
		msg := err.Error()
		t.Log(msg)
		for _, w := range []string{"no connection to spare", "max_connections", "too many clients", "Try: fewer digest processes", "DIGEST_DB_POOL", "PgBouncer in transaction mode"} {
			if !strings.Contains(msg, w) {
				t.Errorf("error %q does not say %q", msg, w)
			}
		}
		if strings.Contains(msg, "cannot be reached") || strings.Contains(msg, "\n") {
			t.Errorf("error %q is not one line saying the server is full", msg)
		}
		if !errors.Is(err, store.ErrUnreachable) {
			t.Errorf("error %q does not match store.ErrUnreachable: a run would say it again for each cleanup", msg)
		}
	}
	t.Run("open", func(t *testing.T) {
		_, err := Open(ctx, server.URL)
		check(t, err)
	})
	t.Run("mid-run", func(t *testing.T) {
		// The running store's one connection goes (idle too long, say),
		// and another client takes its slot: the store waits for one
		// (slotWait: a minute, 300 ms here), then says the server is full.
		running.SQL().SetMaxIdleConns(0)
		deadline := time.Now().Add(30 * time.Second)
		for {
			c, err := pgx.Connect(ctx, server.URL)
			if err == nil {
				held = append(held, c)
				break
			}
			if !tooManyClients(err) || time.Now().After(deadline) {
				t.Fatalf("taking the slot the store gave back: %v", err)
			}
			time.Sleep(20 * time.Millisecond)
		}
		t.Cleanup(func() { held[len(held)-1].Close(context.Background()) })
		_, err := running.Claim(ctx, "k", "me", time.Minute)
		check(t, err)
	})
}

// TestRunThatLostItsConnectionsWaitsForASlot: a store that has lost
// every connection it had (closed while idle, dropped in a failover, or by
// the pool shrinking in a race) and finds the server full waits for a
// slot, asking again now and then, instead of failing the run: in a fleet
// of 32 processes on a server with max_connections = 100, one in a few
// runs failed so.
func TestRunThatLostItsConnectionsWaitsForASlot(t *testing.T) {
	t.Parallel()
	server := pgtest.StartServer(t)
	server.Configure(t, "max_connections", "5")
	ctx := context.Background()
	s, err := openWith(ctx, withParam(t, server.URL, PoolParam, "2"), settings{silence: time.Minute, hold: time.Minute, regrow: regrowAfter, slotWait: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.SQL().SetMaxIdleConns(0) // its one connection goes
	var held []*pgx.Conn
	defer func() {
		for _, c := range held {
			c.Close(context.Background())
		}
	}()
	deadline := time.Now().Add(30 * time.Second)
	for len(held) < 5 { // every slot, the store's included
		c, err := pgx.Connect(ctx, server.URL)
		if err == nil {
			held = append(held, c)
			continue
		}
		if !tooManyClients(err) || time.Now().After(deadline) {
			t.Fatalf("filling the server: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	log := filepath.Join(server.Dir, "log")
	refusals := func() int {
		b, _ := os.ReadFile(log)
		return strings.Count(string(b), "too many clients")
	}
	before := refusals()
	done := make(chan error, 1)
	go func() {
		_, err := s.Claim(ctx, "k", "me", time.Minute)
		done <- err
	}()
	// Once the server has refused the store, a slot comes free.
	for refusals() == before {
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("the claim failed on a full server instead of waiting for a slot: %v", err)
			}
			t.Fatal("the claim succeeded on a full server before it refused a connection")
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatal("the server refused no connection in 30 s")
		}
	}
	held[0].Close(ctx)
	held = held[1:]
	if err := <-done; err != nil {
		t.Errorf("a claim once a slot came free: %v", err)
	}
}

// TestPoolShrinksToTheConnectionsItHasWhenTheServerIsFull: a process that
// holds some connections and is refused one more, because every one the
// server allows is taken, goes on with those it has: statements wait for
// one of them instead of failing. Once slots are free again the pool grows
// back to its size. Before, each refused connection failed its statement,
// and the run: 12 of 32 processes exited 1 on a server with max_connections
// = 100.
func TestPoolShrinksToTheConnectionsItHasWhenTheServerIsFull(t *testing.T) {
	t.Parallel()
	server := pgtest.StartServer(t)
	server.Configure(t, "max_connections", "8")
	ctx := context.Background()
	s, err := openWith(ctx, withParam(t, server.URL, PoolParam, "4"), settings{silence: time.Minute, hold: time.Minute, regrow: 100 * time.Millisecond, slotWait: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// Two connections of its own, then a server with no slot left.
	both := make(chan struct{})
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			c, err := s.SQL().Conn(ctx)
			if err != nil {
				t.Error(err)
				return
			}
			defer c.Close()
			<-both
		})
	}
	for s.SQL().Stats().OpenConnections < 2 {
		time.Sleep(5 * time.Millisecond)
	}
	close(both)
	wg.Wait()
	held := fillServer(t, server.URL)

	run := func(n int) []error {
		var errs []error
		var mu sync.Mutex
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				key := fmt.Sprintf("k%d", i)
				_, err := s.SQL().ExecContext(ctx, `SELECT pg_sleep(0.01)`)
				if err == nil {
					_, err = s.Claim(ctx, key, "me", time.Minute)
				}
				if err == nil {
					err = s.Release(ctx, key, "me")
				}
				if err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		return errs
	}
	for _, err := range run(16) {
		t.Errorf("a statement on a full server, with 2 connections of its own: %v", err)
	}
	if st := s.SQL().Stats(); st.OpenConnections != 2 {
		t.Errorf("%d connections open after the server refused more, want the 2 it had", st.OpenConnections)
	}

	// Slots free again: the pool grows back to 4.
	for _, c := range held {
		c.Close(ctx)
	}
	deadline := time.Now().Add(30 * time.Second)
	for s.SQL().Stats().MaxOpenConnections != 4 {
		if time.Now().After(deadline) {
			t.Fatalf("the pool allows %d connections 30 s after the server had slots again, want 4", s.SQL().Stats().MaxOpenConnections)
		}
		time.Sleep(10 * time.Millisecond)
	}
	for _, err := range run(16) {
		t.Errorf("a statement once the server had slots again: %v", err)
	}
	if open := s.SQL().Stats().OpenConnections; open <= 2 {
		t.Errorf("%d connections open after 16 statements at once on a server with slots, want more than the 2 of the full server", open)
	}
}

// sessionState is what a server session keeps between transactions, by
// kind: what a pooler in transaction mode hands to the next client.
var sessionState = []struct{ what, sql string }{
	{"prepared statements", `SELECT count(*) FROM pg_prepared_statements`},
	{"advisory locks", `SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid()`},
	{"temporary tables", `SELECT count(*) FROM pg_class WHERE relpersistence = 't'`},
	{"LISTEN channels", `SELECT count(*) FROM pg_listening_channels()`},
	{"settings SET on the session", `SELECT count(*) FROM pg_settings WHERE source = 'session'`},
}

// storeWork runs what a run does with the store, from 8 goroutines at once:
// claims one at a time and in batches, their release, lookups, the shared
// limit, token factors.
func storeWork(t *testing.T, s store.Store) {
	t.Helper()
	ctx := context.Background()
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			key := fmt.Sprintf("k%d", i)
			keys := []string{key + "a", key + "b", key + "c"}
			steps := []func() error{
				func() error { _, err := s.Claim(ctx, key, "me", time.Minute); return err },
				func() error { _, err := s.ClaimAll(ctx, keys, "me", time.Minute); return err },
				func() error { _, err := s.LeaseHolders(ctx, keys); return err },
				func() error { _, err := s.EvalResults(ctx, keys); return err },
				func() error { return s.ReleaseAll(ctx, keys, "me") },
				func() error { return s.Release(ctx, key, "me") },
				func() error {
					_, err := s.TakeRate(ctx, "limit", store.RateCharge{Cost: time.Millisecond, Burst: time.Second}, store.RateCharge{})
					return err
				},
				func() error {
					return s.SaveTokenFactor(ctx, store.TokenFactor{Model: "m", Factor: 1.1, Samples: 3})
				},
				func() error { _, _, err := s.TokenFactor(ctx, "m"); return err },
			}
			for _, step := range steps {
				if err := step(); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
}

// TestDirectConnectionsKeepPlansAndNothingElse: talking to PostgreSQL
// itself, digest keeps its statements prepared on its sessions (planned
// once per connection: measured, a third of the server's CPU of planning
// each anew) and leaves nothing else there: no advisory lock, temporary
// table, LISTEN or SET.
func TestDirectConnectionsKeepPlansAndNothingElse(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, err := Open(ctx, withParam(t, pgtest.FreshDatabase(t), PoolParam, "3"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	storeWork(t, s)
	prepared := 0
	open := s.SQL().Stats().OpenConnections
	for i := range open {
		// Each of the pool's connections, as the next statement finds it.
		c, err := s.SQL().Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		for _, q := range sessionState {
			var n int
			if err := c.QueryRowContext(ctx, q.sql).Scan(&n); err != nil {
				t.Fatal(err)
			}
			if q.what == "prepared statements" {
				prepared += n
			} else if n != 0 {
				t.Errorf("connection %d keeps %d %s after the store's statements", i, n, q.what)
			}
		}
	}
	if open == 0 || s.SQL().Stats().OpenConnections != open {
		t.Fatalf("%d connections open before the check, %d after: want the same, and some", open, s.SQL().Stats().OpenConnections)
	}
	if prepared == 0 {
		t.Errorf("no statement is kept prepared on %d connections to the server itself: every statement is planned anew", open)
	}
}

// pgbouncerPoolSize is default_pool_size in .ci/pgbouncer: the server
// sessions PgBouncer keeps per database.
const pgbouncerPoolSize = 3

// TestStoreLeavesNoSessionStateThroughPgBouncer: through PgBouncer in
// transaction mode, what digest does leaves nothing on the server sessions
// it ran on: no prepared statement, advisory lock, temporary table, LISTEN
// or SET, any of which the next client of that session would find, or
// miss. Before, every statement was prepared under a name (pgx's
// statement cache) and a claim's transaction prepared its own.
func TestStoreLeavesNoSessionStateThroughPgBouncer(t *testing.T) {
	t.Parallel()
	through := freshThroughPgBouncer(t)
	ctx := context.Background()
	s, err := Open(ctx, through)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	storeWork(t, s)
	// Every server session of the database at once, each held by a
	// transaction of a client of its own.
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	pids := map[uint32]bool{}
	for i := range pgbouncerPoolSize {
		c, err := pgx.Connect(ctx, through)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close(context.Background())
		tx, err := c.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback(context.Background())
		var pid uint32
		if err := tx.QueryRow(ctx, `SELECT pg_backend_pid()`, pgx.QueryExecModeSimpleProtocol).Scan(&pid); err != nil {
			t.Fatalf("server session %d of %d: %v (is default_pool_size in .ci/pgbouncer still %d?)", i+1, pgbouncerPoolSize, err, pgbouncerPoolSize)
		}
		pids[pid] = true
		for _, q := range sessionState {
			var n int
			if err := tx.QueryRow(ctx, q.sql, pgx.QueryExecModeSimpleProtocol).Scan(&n); err != nil {
				t.Fatal(err)
			}
			if n != 0 {
				t.Errorf("server session %d keeps %d %s after the store's statements", pid, n, q.what)
			}
		}
	}
	if len(pids) != pgbouncerPoolSize {
		t.Errorf("%d server sessions seen, want %d", len(pids), pgbouncerPoolSize)
	}
}
