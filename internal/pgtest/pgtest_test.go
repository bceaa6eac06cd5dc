package pgtest

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

func TestFreshDatabaseIsCreatedAndDroppedWithConnectionsOpen(t *testing.T) {
	server := URL(t)
	ctx := context.Background()
	var name string
	var leftOpen *pgx.Conn
	t.Run("test", func(t *testing.T) {
		fresh := FreshDatabase(t)
		name = databaseName(t, fresh)
		if !databaseExists(t, server, name) {
			t.Fatalf("%s is not in pg_database after FreshDatabase", name)
		}
		var current string
		var err error
		// Not connectTo: its cleanup would close the connection before the drop.
		if leftOpen, err = pgx.Connect(ctx, fresh); err != nil {
			t.Fatal(err)
		}
		if err := leftOpen.QueryRow(ctx, "SELECT current_database()").Scan(&current); err != nil {
			t.Fatal(err)
		}
		if current != name {
			t.Fatalf("the URL FreshDatabase returned reaches %s, not %s", current, name)
		}
	})
	if leftOpen == nil {
		t.Fatal("the subtest did not get as far as connecting to its database")
	}
	// Closed only now, after the drop, as a test that forgets its pool would.
	defer leftOpen.Close(ctx)
	if databaseExists(t, server, name) {
		t.Fatalf("%s is still in pg_database after its test ended", name)
	}
}

func TestFreshDatabasesDoNotShareTables(t *testing.T) {
	ctx := context.Background()
	first, second := FreshDatabase(t), FreshDatabase(t)
	if databaseName(t, first) == databaseName(t, second) {
		t.Fatalf("two FreshDatabase calls gave the same database %s", first)
	}
	if _, err := connectTo(t, first).Exec(ctx, "CREATE TABLE cache (key text PRIMARY KEY)"); err != nil {
		t.Fatal(err)
	}
	var tables int
	if err := connectTo(t, second).QueryRow(ctx, "SELECT count(*) FROM pg_tables WHERE tablename = 'cache'").Scan(&tables); err != nil {
		t.Fatal(err)
	}
	if tables != 0 {
		t.Fatalf("a table created in %s shows in %s", first, second)
	}
}

func TestURLWithoutServerSkipsWithHowToRun(t *testing.T) {
	t.Setenv(urlEnv, "")
	t.Setenv(requireEnv, "")
	outcome := runRecorded(t, func(tb testing.TB) { URL(tb) })
	if outcome.skipped == "" || outcome.failed != "" {
		t.Fatalf("URL without %s: skipped %q, failed %q; want a skip", urlEnv, outcome.skipped, outcome.failed)
	}
	for _, want := range []string{"DIGEST_TEST_POSTGRES='postgres://", "go test ./...", ".ci/postgres start"} {
		if !strings.Contains(outcome.skipped, want) {
			t.Errorf("the skip message does not say %q: %s", want, outcome.skipped)
		}
	}
}

func TestURLWithoutServerFailsWhenRequired(t *testing.T) {
	t.Setenv(urlEnv, "")
	t.Setenv(requireEnv, "1")
	outcome := runRecorded(t, func(tb testing.TB) { URL(tb) })
	if outcome.failed == "" || outcome.skipped != "" {
		t.Fatalf("URL without %s under %s=1: skipped %q, failed %q; want a failure", urlEnv, requireEnv, outcome.skipped, outcome.failed)
	}
	if !strings.Contains(outcome.failed, requireEnv) {
		t.Errorf("the failure does not name %s: %s", requireEnv, outcome.failed)
	}
}

func TestStartServerWithoutScriptServerFailsWhenRequired(t *testing.T) {
	t.Setenv(dirEnv, "")
	t.Setenv(requireEnv, "1")
	outcome := runRecorded(t, func(tb testing.TB) { StartServer(tb) })
	if outcome.failed == "" {
		t.Fatalf("StartServer without %s under %s=1: skipped %q; want a failure", dirEnv, requireEnv, outcome.skipped)
	}
}

func TestServerKeepsCommittedRowsAcrossCrashAndRestart(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := StartServer(t)
	before := connectTo(t, s.URL)
	if _, err := before.Exec(ctx, "CREATE TABLE results (id int PRIMARY KEY); INSERT INTO results VALUES (1)"); err != nil {
		t.Fatal(err)
	}

	s.Crash(t)
	if err := before.Ping(ctx); err == nil {
		t.Fatal("a connection opened before the crash still answers")
	}
	if conn, err := pgx.Connect(ctx, s.URL); err == nil {
		conn.Close(ctx)
		t.Fatal("a new connection succeeds while the server is crashed")
	}

	s.Restart(t)
	log, err := os.ReadFile(filepath.Join(s.Dir, "log"))
	if err != nil {
		t.Fatal(err)
	}
	// The server's own word that it stopped as a crash would, not cleanly.
	if !strings.Contains(string(log), "automatic recovery in progress") {
		t.Fatalf("the server did not recover from a crash when it restarted; its log:\n%s", log)
	}
	var id int
	if err := connectTo(t, s.URL).QueryRow(ctx, "SELECT id FROM results").Scan(&id); err != nil {
		t.Fatalf("the committed row after restart: %v", err)
	}
}

func TestServerStartsOnAnotherPortWhenItsPortIsTaken(t *testing.T) {
	t.Parallel()
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	takenPort := taken.Addr().(*net.TCPAddr).Port
	s := startServer(t, []string{"DIGEST_PG_PORT=" + strconv.Itoa(takenPort)})
	parsed, err := url.Parse(s.URL)
	if err != nil {
		t.Fatal(err)
	}
	if parsed.Port() == strconv.Itoa(takenPort) {
		t.Fatalf("the server's URL %s names port %d, which another process holds", s.URL, takenPort)
	}
	if err := connectTo(t, s.URL).Ping(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func TestServerStartedTwiceKeepsItsURL(t *testing.T) {
	t.Parallel()
	s := StartServer(t)
	again, err := s.run("start", nil)
	if err != nil {
		t.Fatal(err)
	}
	if again != s.URL {
		t.Fatalf("a second start moved the server from %s to %s", s.URL, again)
	}
	if err := connectTo(t, s.URL).Ping(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// BenchmarkFreshDatabase measures what FreshDatabase adds to a test: one
// database created and dropped.
func BenchmarkFreshDatabase(b *testing.B) {
	server := URL(b)
	ctx := context.Background()
	for b.Loop() {
		name, _, err := createDatabase(ctx, server)
		if err != nil {
			b.Fatal(err)
		}
		if err := dropDatabase(ctx, server, name); err != nil {
			b.Fatal(err)
		}
	}
}

func connectTo(t testing.TB, databaseURL string) *pgx.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, databaseURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

func databaseName(t testing.TB, databaseURL string) string {
	t.Helper()
	parsed, err := url.Parse(databaseURL)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimPrefix(parsed.Path, "/")
}

func databaseExists(t testing.TB, server, name string) bool {
	t.Helper()
	var exists bool
	err := connectTo(t, server).QueryRow(context.Background(),
		"SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", name).Scan(&exists)
	if err != nil {
		t.Fatal(err)
	}
	return exists
}

// recorder stands in for the test so that a skip or failure of the code under
// test is seen, not taken as this test's own.
type recorder struct {
	testing.TB
	skipped, failed string
}

func (r *recorder) Helper()           {}
func (r *recorder) Skip(args ...any)  { r.skipped = fmt.Sprint(args...); runtime.Goexit() }
func (r *recorder) Fatal(args ...any) { r.failed = fmt.Sprint(args...); runtime.Goexit() }
func (r *recorder) Skipf(f string, args ...any) {
	r.skipped = fmt.Sprintf(f, args...)
	runtime.Goexit()
}
func (r *recorder) Fatalf(f string, args ...any) {
	r.failed = fmt.Sprintf(f, args...)
	runtime.Goexit()
}

func runRecorded(t *testing.T, body func(testing.TB)) *recorder {
	r := &recorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		body(r)
	}()
	<-done
	return r
}
