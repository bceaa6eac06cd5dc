package postgres

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/digest-cli/digest/internal/pgtest"
	"github.com/digest-cli/digest/internal/store"
	"github.com/digest-cli/digest/internal/store/storetest"
)

// TestBackend runs the table every backend passes against a real
// PostgreSQL server (DIGEST_TEST_POSTGRES), one fresh database per test.
func TestBackend(t *testing.T) {
	pgtest.URL(t)
	storetest.Run(t, storetest.Backend{
		Fresh: func(t *testing.T) string { return pgtest.FreshDatabase(t) },
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

// TestOpenFailuresNameTheServerNeverThePassword: a malformed URL, a server
// that is not there and a wrong password are each one line that names the
// server and says what to try, and none shows the password.
func TestOpenFailuresNameTheServerNeverThePassword(t *testing.T) {
	const password = "s3cret-pg-pass"
	free, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedPort := free.Addr().(*net.TCPAddr).Port
	free.Close()
	cases := []struct {
		name, url string
		want      []string
	}{
		{"malformed", "postgres://app:" + password + "@db:notaport/x", []string{"is not a PostgreSQL URL", "Try: postgres://"}},
		{"nobody listening", fmt.Sprintf("postgres://app:%s@127.0.0.1:%d/digest?sslmode=disable&connect_timeout=2", password, closedPort),
			[]string{fmt.Sprintf("127.0.0.1:%d", closedPort), "cannot be reached", "Try: "}},
	}
	if server := os.Getenv("DIGEST_TEST_POSTGRES"); server != "" {
		u, _ := url.Parse(pgtest.FreshDatabase(t))
		u.User = url.UserPassword("no_such_user_digest", password)
		cases = append(cases, struct {
			name, url string
			want      []string
		}{"unknown user", u.String(), []string{"no_such_user_digest", "Try: "}})
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			t.Chdir(dir)
			_, err := Open(context.Background(), tt.url)
			if err == nil {
				t.Fatal("opened")
			}
			msg := err.Error()
			if strings.Contains(msg, password) || strings.Contains(msg, "\n") {
				t.Errorf("error %q shows the password or is not one line", msg)
			}
			if unreachable := tt.name == "nobody listening"; errors.Is(err, store.ErrUnreachable) != unreachable {
				t.Errorf("errors.Is(%q, store.ErrUnreachable) = %v, want %v", msg, !unreachable, unreachable)
			}
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not say %q", msg, w)
				}
			}
			if entries, _ := os.ReadDir(dir); len(entries) != 0 {
				t.Errorf("a postgres:// URL left %d entries in the working directory", len(entries))
			}
		})
	}
}

// TestProcessesStartingTogetherMigrateOnce: eight stores opening one new
// database at once all succeed, and each migration is recorded once.
func TestProcessesStartingTogetherMigrateOnce(t *testing.T) {
	url := pgtest.FreshDatabase(t)
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

// TestNewerSchemaIsRefused: a database a newer digest migrated is refused
// with a clear message and left as it is.
func TestNewerSchemaIsRefused(t *testing.T) {
	url := pgtest.FreshDatabase(t)
	ctx := context.Background()
	s, err := Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.SQL().ExecContext(ctx, `INSERT INTO schema_migrations(version, applied_at) VALUES ($1, now())`, len(migrations)); err != nil {
		t.Fatal(err)
	}
	s.Close()
	_, err = Open(ctx, url)
	if err == nil || !strings.Contains(err.Error(), "newer than this digest understands") || !strings.Contains(err.Error(), "Try: ") {
		t.Errorf("Open = %v, want the newer schema refused", err)
	}
}

// TestOpenNeverShowsAPasswordHowEverItIsWritten: a password given in the
// query, or holding characters a URL reserves (?, #, and @ or /, which move
// the end of the user info pgx reads), never shows in Open's one-line error,
// whole or in part. Before, digest echoed such URLs back, password and all,
// and pgx's errors named a host or database made of part of the password.
func TestOpenNeverShowsAPasswordHowEverItIsWritten(t *testing.T) {
	free, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := fmt.Sprintf("127.0.0.1:%d", free.Addr().(*net.TCPAddr).Port)
	free.Close()
	const part = "Passw0rdXYZ" // in every password below
	cases := []struct {
		name, url, want string
	}{
		{"in the query, a bad port", "postgres://app@db:notaport/x?password=Pg" + part + "&sslmode=disable", "is not a PostgreSQL URL"},
		{"with ?, a bad port", "postgres://app:Pg?" + part + "@db:notaport/x", "is not a PostgreSQL URL"},
		{"with #, a bad port", "postgres://app:Pg#" + part + "@db:notaport/x", "is not a PostgreSQL URL"},
		{"with /", "postgres://app:Pg/" + part + "@" + closed + "/x", "Try: write @ as %40 and / as %2F"},
		{"with / after digits", "postgres://app:5432/" + part + "@" + closed + "/x", "Try: write @ as %40 and / as %2F"},
		{"with @", "postgres://app:Pg@" + part + "@" + closed + "/x", "Try: write @ as %40 and / as %2F"},
		{"percent-encoded, no server", "postgres://app:Pg%40" + part + "%2F@" + closed + "/x?sslmode=disable&connect_timeout=2", "cannot be reached"},
		{"an @ in the query, no server", "postgres://app:Pg" + part + "@" + closed + "/x?sslmode=disable&connect_timeout=2&application_name=me@ci", "cannot be reached"},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Open(context.Background(), tt.url)
			if err == nil {
				t.Fatal("opened")
			}
			msg := err.Error()
			if strings.Contains(msg, part) || strings.Contains(msg, "\n") {
				t.Errorf("error %q shows the password or is not one line", msg)
			}
			if !strings.Contains(msg, tt.want) || !strings.Contains(msg, "Try: ") {
				t.Errorf("error %q does not say %q and what to try", msg, tt.want)
			}
		})
	}
}

// TestFrozenServerFailsTheCallInsteadOfHangingIt: a server that stops
// answering mid-run (frozen, or cut off by the network with no reset) fails
// the next call with the server-lost message after the silence limit, and
// the calls after it at once, without a connection more. Before, the call
// waited for ever: a summary's store, run with a context no signal cancels,
// held `digest summarize` past SIGTERM for 12 minutes until SIGQUIT; with
// the limit alone, the stopping run's further calls each waited it out or
// a connect timeout again, 8 minutes in all.
func TestFrozenServerFailsTheCallInsteadOfHangingIt(t *testing.T) {
	u, err := url.Parse(pgtest.FreshDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	proxy := newFreezingProxy(t, u.Host)
	u.Host = proxy.addr
	ctx := context.Background()
	s, err := open(ctx, u.String(), 300*time.Millisecond, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// Slower answers than the limit are fine while bytes keep coming.
	if _, err := s.SQL().ExecContext(ctx, `SELECT pg_sleep(0.1)`); err != nil {
		t.Fatalf("a healthy server: %v", err)
	}
	if _, err := s.Claim(ctx, "k1", "me", time.Minute); err != nil {
		t.Fatalf("a healthy server: %v", err)
	}
	proxy.freeze()
	done := make(chan error, 1)
	go func() {
		_, err := s.Claim(ctx, "k2", "me", time.Minute)
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("a claim on a frozen server succeeded")
		}
		msg := err.Error()
		t.Log(msg)
		if !errors.Is(err, store.ErrUnreachable) {
			t.Errorf("error %q does not match store.ErrUnreachable", msg)
		}
		if !strings.Contains(msg, "no answer from the server in 300ms") || !strings.Contains(msg, "Try: ") || strings.Contains(msg, "\n") {
			t.Errorf("error %q does not say in one line that the server went silent and what to try", msg)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("a claim on a frozen server still waits after 20 s")
	}
	dialed := proxy.accepted.Load()
	for i := range 3 {
		err := s.Release(ctx, "k1", "me")
		if err == nil || !strings.Contains(err.Error(), "no answer from the server") || !errors.Is(err, store.ErrUnreachable) {
			t.Errorf("call %d after the server went silent = %v, want the same error", i, err)
		}
	}
	if n := proxy.accepted.Load() - dialed; n != 0 {
		t.Errorf("%d connections were opened to a server known to be silent", n)
	}
}

// freezingProxy forwards TCP connections to a server until frozen; then it
// holds every byte, as a frozen server or a dropped route does, without
// closing anything.
type freezingProxy struct {
	addr   string
	frozen chan struct{}
	closed chan struct{}
	once   sync.Once
	// accepted counts the connections made to the server.
	accepted atomic.Int64
}

func newFreezingProxy(t *testing.T, target string) *freezingProxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &freezingProxy{addr: ln.Addr().String(), frozen: make(chan struct{}), closed: make(chan struct{})}
	var conns []net.Conn
	var mu sync.Mutex
	t.Cleanup(func() {
		close(p.closed)
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	go func() {
		for {
			client, err := ln.Accept()
			if err != nil {
				return
			}
			p.accepted.Add(1)
			server, err := net.Dial("tcp", target)
			if err != nil {
				client.Close()
				continue
			}
			mu.Lock()
			conns = append(conns, client, server)
			mu.Unlock()
			go p.pipe(client, server)
			go p.pipe(server, client)
		}
	}()
	return p
}

func (p *freezingProxy) pipe(from, to net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := from.Read(buf)
		select {
		case <-p.frozen:
			<-p.closed // hold the bytes until the test ends
			return
		default:
		}
		if n > 0 {
			if _, werr := to.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

func (p *freezingProxy) freeze() { p.once.Do(func() { close(p.frozen) }) }
