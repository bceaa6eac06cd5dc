package pgtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

// Server is a PostgreSQL server of one test's own, run by .ci/postgres. A test
// crashes and restarts it without disturbing the shared server of URL, which
// go test's other packages are using at the same moment.
type Server struct {
	// URL names the server's digest_test database; it stays the same across
	// Crash and Restart.
	URL string
	// Dir holds the server's data, socket and log (Dir/log).
	Dir    string
	script string
}

// StartServer starts a server for this test alone and stops it, removing its
// data, when the test ends. It needs .ci/postgres to work on this machine,
// which DIGEST_TEST_POSTGRES_DIR (set beside DIGEST_TEST_POSTGRES when that
// script started the shared server) vouches for; without it the test is
// skipped, or fails when DIGEST_REQUIRE_POSTGRES=1.
func StartServer(t testing.TB) *Server {
	t.Helper()
	return startServer(t, nil)
}

func startServer(t testing.TB, env []string) *Server {
	t.Helper()
	if os.Getenv(dirEnv) == "" {
		noServer(t, dirEnv+" is not set, so .ci/postgres did not start the tests' server and this test cannot start one of its own")
	}
	script, err := findScript()
	if err != nil {
		t.Fatal(err)
	}
	// Under os.TempDir, not t.TempDir: the server runs as another user when
	// the tests run as root, and t.TempDir's parent is closed to other users.
	dir, err := os.MkdirTemp("", "digest-pg-")
	if err != nil {
		t.Fatalf("pgtest: a directory for the server: %v", err)
	}
	s := &Server{Dir: dir, script: script}
	t.Cleanup(func() {
		if _, err := s.run("stop", nil); err != nil {
			t.Error(err)
		}
	})
	s.URL, err = s.run("start", env)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Crash stops the server the way a crash would: at once, without a checkpoint,
// dropping every connection.
func (s *Server) Crash(t testing.TB) {
	t.Helper()
	if _, err := s.run("crash", nil); err != nil {
		t.Fatal(err)
	}
}

// Restart starts the server again with the same data on the same port, after
// a Crash or while it runs.
func (s *Server) Restart(t testing.TB) {
	t.Helper()
	restarted, err := s.run("restart", nil)
	if err != nil {
		t.Fatal(err)
	}
	if restarted != s.URL {
		t.Fatalf("pgtest: the server restarted at %s, not at %s", restarted, s.URL)
	}
}

// Configure sets settings of the server (name, value, name, value...) with
// ALTER SYSTEM and restarts it, so that those read only at start
// (max_connections) hold too. Connections open to it are dropped.
func (s *Server) Configure(t testing.TB, settings ...string) {
	t.Helper()
	if len(settings)%2 != 0 {
		t.Fatalf("pgtest: Configure takes name, value pairs, not %q", settings)
	}
	ctx, cancel := context.WithTimeout(context.Background(), serverTimeout)
	defer cancel()
	conn, err := connect(ctx, s.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	for i := 0; i < len(settings); i += 2 {
		name, value := settings[i], settings[i+1]
		if _, err := conn.Exec(ctx, "ALTER SYSTEM SET "+pgx.Identifier{name}.Sanitize()+" = '"+strings.ReplaceAll(value, "'", "''")+"'"); err != nil {
			t.Fatalf("pgtest: set %s = %s on %s: %v", name, value, s.URL, err)
		}
	}
	s.Restart(t)
}

func (s *Server) run(operation string, env []string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), serverTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", s.script, operation, s.Dir)
	cmd.Env = append(os.Environ(), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("pgtest: .ci/postgres %s %s: %v: %s", operation, s.Dir, err, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSpace(string(out)), nil
}

// findScript finds .ci/postgres above the package directory go test runs in.
func findScript() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("pgtest: the working directory: %w", err)
	}
	for {
		script := filepath.Join(dir, ".ci", "postgres")
		if _, err := os.Stat(script); err == nil {
			return script, nil
		} else if !errors.Is(err, os.ErrNotExist) {
			return "", fmt.Errorf("pgtest: %w", err)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("pgtest: no .ci/postgres in any directory above the test's. Try: go test from inside the digest checkout")
		}
		dir = parent
	}
}
