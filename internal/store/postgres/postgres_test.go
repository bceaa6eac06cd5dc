package postgres

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"

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
	if _, err := s.SQL().ExecContext(ctx, `INSERT INTO schema_migrations(version, applied_at) VALUES ($1, 'later')`, len(migrations)); err != nil {
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
