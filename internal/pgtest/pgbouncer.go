package pgtest

import (
	"net/url"
	"os"
	"testing"
)

const (
	pgbouncerEnv        = "DIGEST_TEST_PGBOUNCER"
	requirePgbouncerEnv = "DIGEST_REQUIRE_PGBOUNCER"
)

const howToRunPgbouncer = "Try: export DIGEST_TEST_PGBOUNCER=$(.ci/pgbouncer start /tmp/digest-pgb \"$DIGEST_TEST_POSTGRES\") " +
	"(PgBouncer in transaction mode in front of the tests' server)"

// ThroughPgBouncer returns databaseURL (a database of the server of
// DIGEST_TEST_POSTGRES, as FreshDatabase returns) reached through the
// PgBouncer of DIGEST_TEST_PGBOUNCER instead, which .ci/pgbouncer runs in
// transaction mode in front of every database of that server. Without one
// the test is skipped, or fails when DIGEST_REQUIRE_PGBOUNCER=1.
func ThroughPgBouncer(t testing.TB, databaseURL string) string {
	t.Helper()
	bouncer := os.Getenv(pgbouncerEnv)
	if bouncer == "" {
		why := pgbouncerEnv + " is not set, so this test has no PgBouncer"
		if os.Getenv(requirePgbouncerEnv) == "1" {
			t.Fatal("pgtest: " + why + ", and " + requirePgbouncerEnv + "=1 makes that a failure. " + howToRunPgbouncer)
		}
		t.Skip("pgtest: " + why + ". " + howToRunPgbouncer)
	}
	b, err := url.Parse(bouncer)
	if err != nil || (b.Scheme != "postgres" && b.Scheme != "postgresql") || b.Host == "" {
		t.Fatalf("pgtest: %s=%q is not a postgres:// URL. %s", pgbouncerEnv, bouncer, howToRunPgbouncer)
	}
	d, err := url.Parse(databaseURL)
	if err != nil {
		t.Fatalf("pgtest: %q is not a URL: %v", databaseURL, err)
	}
	d.Host = b.Host
	return d.String()
}
