package postgres

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/digest-cli/digest/internal/pgtest"
	"github.com/digest-cli/digest/internal/store"
	"github.com/digest-cli/digest/internal/store/storetest"
)

// PgBouncer's tests run through the pooler .ci/pgbouncer starts in
// transaction mode in front of the tests' server (DIGEST_TEST_PGBOUNCER;
// skipped without it, failed when DIGEST_REQUIRE_PGBOUNCER=1). It is
// PgBouncer 1.18 (Debian 12's), which carries no prepared statement from
// one server session to another, with few server sessions per database:
// whatever a client leaves on a session is found by the next.

// TestBackendThroughPgBouncer runs the table every backend passes through
// PgBouncer in transaction mode. Before digest stopped preparing
// statements under a name, 7 of its tests failed there with "prepared
// statement ... already exists" (SQLSTATE 42P05).
func TestBackendThroughPgBouncer(t *testing.T) {
	t.Parallel()
	pgtest.ThroughPgBouncer(t, pgtest.URL(t))
	storetest.Run(t, storetest.Backend{
		Fresh: freshThroughPgBouncer,
		Open: func(ctx context.Context, url string) (store.Store, error) {
			s, err := Open(ctx, url)
			if err != nil {
				return nil, err
			}
			return s, nil
		},
		Dialect:       "postgres",
		TimePrecision: time.Microsecond,
	})
}

// TestProcessesStartingTogetherMigrateOnceThroughPgBouncer: eight stores
// opening one new database through PgBouncer at once all succeed, each
// migration recorded once: the migration lock is a transaction's
// (pg_advisory_xact_lock), which a pooler in transaction mode keeps on one
// server session, where a session's lock would be taken on one and
// released, or not, on another.
func TestProcessesStartingTogetherMigrateOnceThroughPgBouncer(t *testing.T) {
	t.Parallel()
	url := freshThroughPgBouncer(t)
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Go(func() {
			s, err := Open(ctx, url)
			if err != nil {
				errs <- err
				return
			}
			s.Close()
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	s, err := Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var rows, latest int
	if err := s.SQL().QueryRowContext(ctx, `SELECT COUNT(*), MAX(version) FROM schema_migrations`).Scan(&rows, &latest); err != nil {
		t.Fatal(err)
	}
	if rows != len(migrations)-1 || latest != len(migrations)-1 {
		t.Errorf("schema_migrations has %d rows up to version %d, want one per migration up to %d", rows, latest, len(migrations)-1)
	}
}

// TestNamedStatementsThroughPgBouncerSaySo: --db may ask for pgx's
// statement cache (default_query_exec_mode=cache_statement), which
// prepares each statement under a name on the session; through a pooler
// in transaction mode the name is then found, or missed, on another
// client's session. digest says that this is what happened and what to
// try, instead of the bare "prepared statement ... already exists".
func TestNamedStatementsThroughPgBouncerSaySo(t *testing.T) {
	t.Parallel()
	url := withParam(t, freshThroughPgBouncer(t), "default_query_exec_mode", "cache_statement")
	ctx := context.Background()
	var stores []store.Store
	var failed error
	// The clash comes as soon as a second client runs a statement the
	// first prepared: opening (the migration check) or the first claim.
	for i := 0; i < 2 && failed == nil; i++ {
		s, err := Open(ctx, url)
		if err != nil {
			failed = err
			break
		}
		defer s.Close()
		stores = append(stores, s)
	}
	for i := 0; i < 20 && failed == nil; i++ {
		s := stores[i%2]
		key := fmt.Sprintf("k%d", i)
		if _, err := s.Claim(ctx, key, "me", time.Minute); err != nil {
			failed = err
		} else if err := s.Release(ctx, key, "me"); err != nil {
			failed = err
		}
	}
	if failed == nil {
		t.Fatal("two stores with named statements took turns through PgBouncer 20 times without a clash: is it in transaction mode, 1.18?")
	}
	msg := failed.Error()
	t.Log(msg)
	for _, w := range []string{"prepared statement", "pooler in transaction mode", "Try: leave default_query_exec_mode out of --db"} {
		if !strings.Contains(msg, w) {
			t.Errorf("error %q does not say %q", msg, w)
		}
	}
}

// freshThroughPgBouncer is a database of this test's own, reached through
// the PgBouncer of DIGEST_TEST_PGBOUNCER; the test is skipped (or fails,
// as pgtest.ThroughPgBouncer says) before one is made when there is none.
func freshThroughPgBouncer(t *testing.T) string {
	t.Helper()
	pgtest.ThroughPgBouncer(t, pgtest.URL(t))
	return pgtest.ThroughPgBouncer(t, pgtest.FreshDatabase(t))
}
