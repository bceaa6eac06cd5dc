package pgtest

import (
	"context"
	"strings"
	"testing"
)

func TestThroughPgBouncerWithoutOneSkipsWithHowToRun(t *testing.T) {
	t.Setenv(pgbouncerEnv, "")
	t.Setenv(requirePgbouncerEnv, "")
	outcome := runRecorded(t, func(tb testing.TB) { ThroughPgBouncer(tb, "postgres://u@127.0.0.1:5432/d") })
	if outcome.skipped == "" || outcome.failed != "" {
		t.Fatalf("ThroughPgBouncer without %s: skipped %q, failed %q; want a skip", pgbouncerEnv, outcome.skipped, outcome.failed)
	}
	if !strings.Contains(outcome.skipped, ".ci/pgbouncer start") {
		t.Errorf("the skip message does not say how to start one: %s", outcome.skipped)
	}
}

func TestThroughPgBouncerWithoutOneFailsWhenRequired(t *testing.T) {
	t.Setenv(pgbouncerEnv, "")
	t.Setenv(requirePgbouncerEnv, "1")
	outcome := runRecorded(t, func(tb testing.TB) { ThroughPgBouncer(tb, "postgres://u@127.0.0.1:5432/d") })
	if outcome.failed == "" || outcome.skipped != "" {
		t.Fatalf("ThroughPgBouncer without %s under %s=1: skipped %q, failed %q; want a failure", pgbouncerEnv, requirePgbouncerEnv, outcome.skipped, outcome.failed)
	}
}

func TestThroughPgBouncerKeepsTheDatabaseAndChangesTheAddress(t *testing.T) {
	t.Setenv(pgbouncerEnv, "postgres://u@127.0.0.1:6432/digest_test?sslmode=disable")
	got := ThroughPgBouncer(t, "postgres://u@127.0.0.1:5432/digest_t_1?sslmode=disable")
	if want := "postgres://u@127.0.0.1:6432/digest_t_1?sslmode=disable"; got != want {
		t.Errorf("ThroughPgBouncer = %s, want %s", got, want)
	}
}

// TestPgBouncerServesEveryDatabaseInTransactionMode: the PgBouncer of
// DIGEST_TEST_PGBOUNCER reaches a database FreshDatabase made, by its name,
// and hands a client's statements outside a transaction to whichever
// server session is free (transaction mode): a session's SET is seen by
// another client.
func TestPgBouncerServesEveryDatabaseInTransactionMode(t *testing.T) {
	ThroughPgBouncer(t, URL(t)) // skipped before a database is made
	fresh := FreshDatabase(t)
	through := ThroughPgBouncer(t, fresh)
	ctx := context.Background()
	first := connectTo(t, through)
	var current string
	if err := first.QueryRow(ctx, "SELECT current_database()").Scan(&current); err != nil {
		t.Fatal(err)
	}
	if want := databaseName(t, fresh); current != want {
		t.Fatalf("through PgBouncer the database is %s, want %s", current, want)
	}
	// Simple protocol, so that no statement is prepared on a session.
	if _, err := first.Exec(ctx, "SET application_name = 'left_by_first'"); err != nil {
		t.Fatal(err)
	}
	second := connectTo(t, through)
	var seen string
	if err := second.QueryRow(ctx, "SELECT current_setting('application_name')").Scan(&seen); err != nil {
		t.Fatal(err)
	}
	if seen != "left_by_first" {
		t.Errorf("a second client saw application_name %q, not the first client's SET: PgBouncer is not in transaction mode, or gave it another session", seen)
	}
}

func TestConfigureSetsWhatIsReadAtStart(t *testing.T) {
	t.Parallel()
	s := StartServer(t)
	s.Configure(t, "max_connections", "7")
	var got string
	if err := connectTo(t, s.URL).QueryRow(context.Background(), "SHOW max_connections").Scan(&got); err != nil {
		t.Fatal(err)
	}
	if got != "7" {
		t.Errorf("max_connections is %s after Configure, want 7", got)
	}
}
