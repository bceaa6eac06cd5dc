package postgres

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/digest-cli/digest/internal/pgtest"
)

// secret is in the password of every name below that has one.
const secret = "Pa55wordXYZ"

// TestClassifyReadsDBAsMeant: the scheme in any case, space around the
// name, and libpq's keyword/value strings name a server; paths, however
// odd, name files; and what looks like a URL or a connection string but is
// none digest can use is an error that says what digest takes and shows no
// part of the password. Before, anything but an exact postgres:// prefix
// became an SQLite file, named after the password when it held one.
func TestClassifyReadsDBAsMeant(t *testing.T) {
	servers := map[string]string{
		"POSTGRES://ci@db:5432/digest":                  "postgres://ci@db:5432/digest",
		"PostgreSQL://ci:" + secret + "@db/digest":      "postgresql://ci:" + secret + "@db/digest",
		"Postgres://ci@db/digest?sslmode=disable":       "postgres://ci@db/digest?sslmode=disable",
		"  postgres://ci@db/digest \n":                  "postgres://ci@db/digest",
		"\tpostgresql://ci@db/digest\t":                 "postgresql://ci@db/digest",
		"host=db port=5432 dbname=digest user=ci":       "host=db port=5432 dbname=digest user=ci",
		" host=db password=" + secret + " dbname=d  ":   "host=db password=" + secret + " dbname=d",
		"host = db  dbname = digest":                    "host = db  dbname = digest",
		`password='Pa55 word\'XYZ' host=db`:             `password='Pa55 word\'XYZ' host=db`,
		"host=/var/run/postgresql dbname=digest":        "host=/var/run/postgresql dbname=digest",
		"dbname=digest search_path=ci":                  "dbname=digest search_path=ci",
		"password='" + secret + "' statement_timeout=5": "password='" + secret + "' statement_timeout=5",
	}
	for in, want := range servers {
		name, server, err := Classify(in)
		if err != nil || !server || name != want {
			t.Errorf("Classify(%q) = %q, %v, %v; want the server %q", in, name, server, err, want)
		}
	}
	files := map[string]string{
		"digest.db":                 "digest.db",
		"/tmp/cache/digest.db":      "/tmp/cache/digest.db",
		"  /tmp/digest.db  ":        "/tmp/digest.db",
		"./a=b.db":                  "./a=b.db",
		"./ci:pw@host.db":           "./ci:pw@host.db",
		"backup@2024.db":            "backup@2024.db",
		"my.db:v2":                  "my.db:v2",
		`C:\Users\ci\digest.db`:     `C:\Users\ci\digest.db`,
		"~/digest.db":               "~/digest.db",
		"./password=old.db":         "./password=old.db",
		"results (2026-11-30).db":   "results (2026-11-30).db",
		"host.db":                   "host.db",
		"/srv/host=db/digest.db":    "/srv/host=db/digest.db",
		"caches/postgres/digest.db": "caches/postgres/digest.db",
	}
	for in, want := range files {
		name, server, err := Classify(in)
		if err != nil || server || name != want {
			t.Errorf("Classify(%q) = %q, %v, %v; want the file %q", in, name, server, err, want)
		}
	}
	refused := map[string]string{
		"mysql://ci:" + secret + "@db/digest":            "mysql://",
		"MySQL://ci@db/digest":                           "mysql://",
		"redis://:" + secret + "@cache:6379":             "redis://",
		"sqlite:///tmp/x.db":                             "Try: --db /tmp/x.db",
		"sqlite://digest.db":                             "Try: --db digest.db",
		"sqlite://./digest.db":                           "Try: --db ./digest.db",
		"file:digest.db?mode=ro":                         "Try: --db digest.db",
		"file:///tmp/x.db":                               "Try: --db /tmp/x.db",
		"sqlite://ci:" + secret + "@db/x.db":             "Try: --db PATH",
		"ci:" + secret + "@db.internal:5432/digest":      "USER:PASSWORD@HOST",
		"jdbc:postgresql://db/digest?password=" + secret: "postgres://",
		"'postgres://ci:" + secret + "@db/digest'":       "quotes",
		`"host=db password=` + secret + `"`:              "quotes",
		"postgres:digest":                                "not postgres://",
		"host=db password=Pa55 wordXYZ":                  "not quoted",
		"host=db password='" + secret:                    "no closing '",
		`host=db password='Pa55\'wordXYZ port=5432`:      "no closing '",
		"password=Pa55 wordXYZ=1 host=db":                "must be quoted",
		"host=db port=notaport password=" + secret:       "invalid port",
		`host=db port=x password='Pa55\' wordXYZ'`:       "invalid port",
		"host=db sslmode=sometimes password=" + secret:   "sslmode",
		"a=b.db":                                              "./NAME",
		"postgres://ci:Pa55@wordXYZ@db/digest":                "Try: write @ as %40",
		"postgres://ci:Pa55/wordXYZ@db/digest":                "Try: write @ as %40",
		"postgres://ci@db:notaport/digest?password=" + secret: "is not a PostgreSQL URL",
		"x password=" + secret:                                "password=",
		"":                                                    "empty",
		" \t ":                                                "empty",
		"host=db\x00 password=" + secret:                      "NUL",
		"POSTGRES://ci:Pa55#wordXYZ@db:notaport/digest":        "is not a PostgreSQL URL",
		"dbname=digest password=" + secret + " application=ci": "must be quoted",
	}
	for in, want := range refused {
		name, server, err := Classify(in)
		if err == nil {
			t.Errorf("Classify(%q) = %q, %v; want it refused", in, name, server)
			continue
		}
		msg := err.Error()
		if !strings.Contains(msg, want) || !strings.Contains(msg, "Try: ") || !strings.HasPrefix(msg, "--db") || strings.Contains(msg, "\n") {
			t.Errorf("Classify(%q): %q does not say %q and what to try, in one line", in, msg, want)
		}
		for _, part := range []string{secret, "wordXYZ"} {
			if strings.Contains(msg, part) {
				t.Errorf("Classify(%q): %q shows the password", in, msg)
			}
		}
	}
}

// TestOpenKeywordValueNeverShowsThePassword: a keyword/value --db is a
// server, and its failures name the server, never the password, however
// it is quoted.
func TestOpenKeywordValueNeverShowsThePassword(t *testing.T) {
	free, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := free.Addr().(*net.TCPAddr).Port
	free.Close()
	for _, pw := range []string{secret, "'" + secret + "'", `'Pa55 \'wordXYZ'`, `Pa55\ wordXYZ`} {
		dsn := fmt.Sprintf("host=127.0.0.1 port=%d dbname=digest user=ci password=%s sslmode=disable connect_timeout=2", port, pw)
		_, err := Open(context.Background(), dsn)
		if err == nil {
			t.Fatal("opened")
		}
		msg := err.Error()
		if !strings.Contains(msg, "cannot be reached") || !strings.Contains(msg, fmt.Sprintf("127.0.0.1:%d", port)) || strings.Contains(msg, "wordXYZ") {
			t.Errorf("password %s: %q", pw, msg)
		}
	}
}

// TestEverySpellingReachesTheServer connects to a real PostgreSQL server by
// every spelling of its name: the scheme in capitals, space around it, and
// the keyword/value string of the same parts.
func TestEverySpellingReachesTheServer(t *testing.T) {
	raw := pgtest.FreshDatabase(t)
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	kv := fmt.Sprintf("host=%s port=%s dbname=%s user=%s", u.Hostname(), u.Port(), strings.TrimPrefix(u.Path, "/"), u.User.Username())
	if pw, ok := u.User.Password(); ok {
		kv += " password='" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(pw) + "'"
	}
	if mode := u.Query().Get("sslmode"); mode != "" {
		kv += " sslmode=" + mode
	}
	rest := strings.TrimPrefix(raw, u.Scheme+":")
	for _, name := range []string{"POSTGRES:" + rest, "PostgreSQL:" + rest, "  " + raw + "\n", kv, " " + kv + " "} {
		s, err := Open(context.Background(), name)
		if err != nil {
			t.Errorf("Open(%q): %v", name, err)
			continue
		}
		if _, err := s.Runs(context.Background()); err != nil {
			t.Errorf("Open(%q): Runs: %v", name, err)
		}
		s.Close()
	}
}

// FuzzClassifyDB reads any text as --db: never a panic; a server name is one
// pgx reads; a file's name holds nothing a URL or a connection string
// would; the keyword/value scanner reads as pgx does; and no error shows a
// password placed in the text.
func FuzzClassifyDB(f *testing.F) {
	for _, s := range []string{"POSTGRES://u@h/d", " host=h dbname=d ", `password='a\'b' host=h`, "mysql://u:p@h", "sqlite:///x.db",
		"u:p@h/d", "a=b", "file:x", "'postgres://x'", "host=h port=x", "=", "C:\\x", "./x", "host='", "password=a b=c"} {
		f.Add(s, "Pa55 wordXYZ")
	}
	f.Setenv("PGSERVICEFILE", "/nonexistent")
	f.Setenv("PGPASSFILE", "/nonexistent")
	f.Fuzz(func(t *testing.T, s, pw string) {
		if strings.Contains(s, "/dev/") || strings.Contains(s, "/proc/") {
			return // pgx reads the files a connection string names: /dev/zero never ends
		}
		name, server, err := Classify(s)
		switch {
		case err != nil:
		case server && isURL(name):
			if _, err := parseURL(name); err != nil {
				t.Errorf("Classify(%q) gave the server %q that pgx cannot read: %v", s, name, err)
			}
		case server:
			if _, err := pgconn.ParseConfig(name); err != nil {
				t.Errorf("Classify(%q) gave the server %q that pgx cannot read: %v", s, name, err)
			}
		default:
			if name != strings.TrimSpace(s) || strings.Contains(name, "://") || userInfoRE.MatchString(name) || keywordRE.MatchString(name) {
				t.Errorf("Classify(%q) took %q for a file", s, name)
			}
		}
		// The scanner reads keyword/value strings as pgx does.
		if !strings.HasPrefix(s, "postgres://") && !strings.HasPrefix(s, "postgresql://") && s != "" {
			pairs, scanErr := scanKeywordValue(s)
			cfg, pgErr := pgconn.ParseConfig(s)
			if scanErr != nil && pgErr == nil {
				t.Errorf("scanKeywordValue(%q): %v, but pgx reads it", s, scanErr)
			}
			if scanErr == nil && pgErr == nil {
				password := ""
				for _, p := range pairs {
					if p.key == "password" {
						password = p.value
					}
				}
				if password != "" && cfg.Password != password {
					t.Errorf("scanKeywordValue(%q) read the password %q, pgx %q", s, password, cfg.Password)
				}
			}
		}
		// A password in the text shows in no error.
		if len(pw) < 8 || strings.ContainsAny(pw, "\x00") || strings.Contains(s, pw) {
			return
		}
		quoted := "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(pw) + "'"
		for _, in := range []string{
			"host=h password=" + quoted + " " + s,
			s + " password=" + quoted,
			"postgres://u:" + url.PathEscape(pw) + "@h/d?" + s,
			"postgres://u:" + pw + "@h/d",
			"host=h port=" + s + " password=" + pw,
		} {
			if _, _, err := Classify(in); err != nil && strings.Contains(err.Error(), pw) {
				t.Errorf("Classify(%q): %q shows the password %q", in, err, pw)
			}
		}
	})
}
