// Package pgtest gives tests a real PostgreSQL server: the one named by
// DIGEST_TEST_POSTGRES, a database of each test's own on it, and, for tests
// that stop a server under digest, a server of the test's own; and a proxy
// that adds network latency in front of a server (Proxy).
//
// Only tests and the .ci benchmarks import it. .ci/run starts the server
// with .ci/postgres and sets DIGEST_REQUIRE_POSTGRES=1, so that there a
// test without a server fails instead of skipping.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

const (
	urlEnv     = "DIGEST_TEST_POSTGRES"
	dirEnv     = "DIGEST_TEST_POSTGRES_DIR"
	requireEnv = "DIGEST_REQUIRE_POSTGRES"
)

const howToRun = "Try: DIGEST_TEST_POSTGRES='postgres://USER@127.0.0.1:5432/digest_test?sslmode=disable' go test ./..., " +
	"or a server of .ci/postgres: export DIGEST_TEST_POSTGRES=$(.ci/postgres start /tmp/digest-pg) DIGEST_TEST_POSTGRES_DIR=/tmp/digest-pg"

// A test that cannot reach the server has failed anyway; the minute only
// keeps a wedged server from holding the run until go test's own timeout.
const serverTimeout = time.Minute

// URL returns the server URL in DIGEST_TEST_POSTGRES. Without one the test is
// skipped, or fails when DIGEST_REQUIRE_POSTGRES=1.
func URL(t testing.TB) string {
	t.Helper()
	if server := os.Getenv(urlEnv); server != "" {
		return server
	}
	noServer(t, urlEnv+" is not set, so this test has no PostgreSQL server")
	return ""
}

func noServer(t testing.TB, why string) {
	t.Helper()
	if os.Getenv(requireEnv) == "1" {
		t.Fatal("pgtest: " + why + ", and " + requireEnv + "=1 makes that a failure. " + howToRun)
	}
	t.Skip("pgtest: " + why + ". " + howToRun)
}

// FreshDatabase creates an empty database for this test alone on the server
// of URL and returns its URL; it is dropped when the test ends, connections
// still open to it or not.
func FreshDatabase(t testing.TB) string {
	t.Helper()
	server := URL(t)
	ctx, cancel := context.WithTimeout(context.Background(), serverTimeout)
	defer cancel()
	name, databaseURL, err := createDatabase(ctx, server)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), serverTimeout)
		defer cancel()
		if err := dropDatabase(ctx, server, name); err != nil {
			t.Error(err)
		}
	})
	return databaseURL
}

func createDatabase(ctx context.Context, server string) (name, databaseURL string, err error) {
	target, err := url.Parse(server)
	if err != nil || (target.Scheme != "postgres" && target.Scheme != "postgresql") {
		return "", "", fmt.Errorf("pgtest: %s=%q is not a postgres:// URL. Try: postgres://USER@HOST:PORT/digest_test?sslmode=disable", urlEnv, server)
	}
	random := make([]byte, 8)
	if _, err := rand.Read(random); err != nil {
		return "", "", fmt.Errorf("pgtest: a random database name: %w", err)
	}
	name = "digest_t_" + hex.EncodeToString(random)
	conn, err := connect(ctx, server)
	if err != nil {
		return "", "", err
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		return "", "", fmt.Errorf("pgtest: create database %s on %s: %w", name, target.Redacted(), err)
	}
	target.Path = "/" + name
	target.RawPath = ""
	return name, target.String(), nil
}

func dropDatabase(ctx context.Context, server, name string) error {
	conn, err := connect(ctx, server)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	// FORCE ends the sessions a test left open (a pool not closed, a test that
	// failed halfway), which would otherwise make the drop fail.
	if _, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)"); err != nil {
		return fmt.Errorf("pgtest: drop database %s: %w", name, err)
	}
	return nil
}

func connect(ctx context.Context, server string) (*pgx.Conn, error) {
	conn, err := pgx.Connect(ctx, server)
	if err != nil {
		shown := server
		if parsed, parseErr := url.Parse(server); parseErr == nil {
			shown = parsed.Redacted()
		}
		return nil, fmt.Errorf("pgtest: cannot reach the PostgreSQL server at %s: %w. %s", shown, err, howToRun)
	}
	return conn, nil
}
