package postgres

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"regexp"
	"strings"

	"github.com/jackc/pgx/v5"
)

// Classify reads a --db (or DIGEST_DB) as a person means it. Space around
// it is no part of it. A PostgreSQL URL, its scheme in any case
// (postgres://, POSTGRES://, PostgreSQL://), or a libpq keyword/value
// connection string (host=db port=5432 dbname=digest user=ci
// password=...) names a server: Classify returns the connection string Open
// takes, with the scheme in lower case, and true. Anything else is the path
// of an SQLite file, returned trimmed, with false.
//
// What looks like a URL or a connection string but is none digest can use
// is an error, never a file: taken for a path, it became a file or folders
// named after the password, and a cache nobody shares. That is another
// scheme (mysql://), an SQLite URL (sqlite://, file:, which digest does
// not take: a file is named by its path), USER:PASSWORD@HOST without a
// scheme, a URL or a keyword/value string pgx cannot read, and anything
// else holding :// or password=. No error quotes a password, or any part
// of the name that could hold one. A file whose name looks so is named
// ./NAME.
func Classify(db string) (name string, server bool, err error) {
	s := strings.TrimSpace(db)
	if s == "" {
		return "", false, errors.New("--db is empty. Try: --db with the path of an SQLite file, or a postgres:// URL; without --db and DIGEST_DB, digest uses its default file")
	}
	if q := s[0]; (q == '\'' || q == '"') && len(s) > 1 && s[len(s)-1] == q {
		// An env file or YAML that kept its quotes: the quotes are in the
		// value, and the name would be a file's.
		return "", false, fmt.Errorf("--db is wrapped in %c quotes, which are part of it as given (an env file or YAML value kept them). Try: the same without the quotes", q)
	}
	if m := schemeRE.FindStringSubmatch(s); m != nil && len(m[1]) > 1 { // C:\ is a drive
		scheme, rest := strings.ToLower(m[1]), s[len(m[0]):]
		switch {
		case scheme == "postgres" || scheme == "postgresql":
			if !strings.HasPrefix(rest, "//") {
				return "", false, fmt.Errorf("--db starts with %s: but not %s://, so it is no URL. Try: postgres://USER@HOST:5432/DATABASE", scheme, scheme)
			}
			name := scheme + ":" + rest
			if _, err := parseURL(name); err != nil {
				return "", false, err
			}
			if err := checkPool(name, os.Getenv); err != nil {
				return "", false, err
			}
			return name, true, nil
		case scheme == "sqlite" || scheme == "sqlite3" || scheme == "file":
			return "", false, sqliteURL(scheme, s)
		case strings.HasPrefix(rest, "//"):
			return "", false, fmt.Errorf("--db is a %s:// URL, and digest keeps its database in an SQLite file or on a PostgreSQL server. Try: --db with a file's path, or postgres://USER@HOST:5432/DATABASE", scheme)
		}
	}
	switch {
	case strings.Contains(s, "://"):
		return "", false, errors.New("--db holds :// but does not start with postgres:// or postgresql://, so it is neither a URL digest can use nor a file's path. Try: postgres://USER@HOST:5432/DATABASE, or the path of an SQLite file")
	case userInfoRE.MatchString(s):
		return "", false, errors.New("--db reads as USER:PASSWORD@HOST without a scheme, which would be taken for a file's path. Try: postgres://USER:PASSWORD@HOST:5432/DATABASE, or ./NAME for a file so named")
	case keywordRE.MatchString(s):
		if err := checkKeywordValue(s); err != nil {
			return "", false, err
		}
		if err := checkPool(s, os.Getenv); err != nil {
			return "", false, err
		}
		return s, true, nil
	case secretRE.MatchString(s) && !explicitPath(s):
		return "", false, errors.New("--db holds a password= but is no connection string digest can read (one starts with a keyword: host=... dbname=...), so it would be taken for a file's path. Try: host=HOST port=5432 dbname=DATABASE user=USER password=..., or a postgres:// URL")
	}
	return s, false, nil
}

var (
	// schemeRE is a URL's scheme, RFC 3986's characters before a ':'.
	schemeRE = regexp.MustCompile(`^([A-Za-z][A-Za-z0-9+.-]*):`)
	// userInfoRE is USER:PASSWORD@ at the start of the first path element.
	userInfoRE = regexp.MustCompile(`^[^/\\\s]*:[^/\\\s]*@`)
	// keywordRE is the first keyword of a keyword/value connection string:
	// libpq's keywords are letters and underscores.
	keywordRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*[ \t\n\r\v\f]*=`)
	secretRE  = regexp.MustCompile(`(?i)password[ \t\n\r\v\f]*=`)
)

// explicitPath reports a name written as a path: absolute, or from the
// current or the home directory.
func explicitPath(s string) bool {
	for _, p := range []string{"/", "./", "../", "~/", `\`, `.\`, `..\`} {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// sqliteURL refuses an SQLite URL, naming the path it seems to mean.
func sqliteURL(scheme, s string) error {
	path := ""
	if u, err := url.Parse(s); err == nil && u.User == nil {
		switch {
		case u.Opaque != "": // file:digest.db
			path, _ = url.PathUnescape(u.Opaque)
		case u.Host == "" || u.Host == "localhost": // file:///tmp/digest.db
			path = u.Path
		case u.Host == "." || u.Host == "..": // sqlite://./digest.db
			path = u.Host + u.Path
		case u.Path == "" && u.Port() == "": // sqlite://digest.db
			path = u.Host
		}
	}
	if path == "" || strings.ContainsAny(path, "@\n\r") || secretRE.MatchString(path) {
		path = "PATH"
	}
	return fmt.Errorf("--db names an SQLite database by a %s: URL, and digest takes its path alone. Try: --db %s", scheme, path)
}

// parseURL reads a postgres:// URL as pgx will connect with it. Its errors
// show no part of the password.
func parseURL(name string) (*pgx.ConnConfig, error) {
	if ambiguousUserInfo(name) {
		return nil, fmt.Errorf("--db %s has an @ or / in its user name or password that is not percent-encoded, so part of the password would be read as the host or database. Try: write @ as %%40 and / as %%2F in the password, or leave it out of the URL and set PGPASSWORD",
			secretsOf(name, nil).with(widestPassword(name)).hide(afterLastAt(name)))
	}
	cfg, err := pgx.ParseConfig(name)
	if err != nil {
		// Unread, the URL's parts are anyone's guess: whatever lies before
		// its last @ may be the password.
		hide := secretsOf(name, nil).with(widestPassword(name)).hide
		return nil, fmt.Errorf("--db %s is not a PostgreSQL URL (%s). Try: postgres://USER:PASSWORD@HOST:5432/DATABASE?sslmode=disable, with @ / ? # in the password written as %%40 %%2F %%3F %%23",
			hide(afterLastAt(name)), hide(oneLine(err.Error())))
	}
	return cfg, nil
}

// widestPassword is what could be a URL's password under any reading:
// from the first ':' of its user info to its last '@'.
func widestPassword(name string) string {
	rest := afterScheme(name)
	at := strings.LastIndexByte(rest, '@')
	if at < 0 {
		return ""
	}
	_, pw, _ := strings.Cut(rest[:at], ":")
	return pw
}

// afterLastAt is a URL without anything before its last '@' that could be
// its user info.
func afterLastAt(name string) string {
	rest := afterScheme(name)
	at := strings.LastIndexByte(rest, '@')
	if at < 0 {
		return name
	}
	return name[:len(name)-len(rest)] + rest[at+1:]
}

// kvTry is what a malformed keyword/value --db is told to try.
const kvTry = "Try: host=HOST port=5432 dbname=DATABASE user=USER password='...', quoting a value that holds spaces and writing ' and \\ in it as \\' and \\\\; or a postgres:// URL; or ./NAME for a file so named"

// checkKeywordValue refuses a keyword/value connection string that libpq
// or pgx would not read as written, saying why without quoting it.
func checkKeywordValue(s string) error {
	pairs, err := scanKeywordValue(s)
	if err != nil {
		return fmt.Errorf("--db reads as a PostgreSQL connection string (keyword=value ...), but %v. %s", err, kvTry)
	}
	connects := false
	for i, p := range pairs {
		connects = connects || connectionKeywords[p.key]
		if i > 0 && !connectionKeywords[p.key] && secretKeywords[pairs[i-1].key] && !pairs[i-1].quoted {
			// password=abc def=ghi: libpq refuses def; pgx would send it to
			// the server, and its error would name a part of the password.
			return fmt.Errorf("--db reads as a PostgreSQL connection string, but %s= is followed by a word no connection keyword: a value that holds spaces must be quoted. %s", pairs[i-1].key, kvTry)
		}
	}
	if !connects {
		return fmt.Errorf("--db reads as a keyword=value connection string, but names none of PostgreSQL's connection keywords (host, port, dbname, user, ...). %s", kvTry)
	}
	if _, err := pgx.ParseConfig(s); err != nil {
		// pgx's message quotes the string, with the password hidden as well
		// as a pattern can: it is read again with the secrets replaced.
		msg := "its password or sslpassword does not fit the rest"
		if _, err := pgx.ParseConfig(withoutSecrets(pairs)); err != nil {
			msg = oneLine(err.Error())
		}
		return fmt.Errorf("--db is a PostgreSQL connection string pgx cannot use (%s; the PG* variables count too). %s", msg, kvTry)
	}
	return nil
}

// pair is a keyword and its value in a keyword/value connection string.
type pair struct {
	key, value string
	raw        string // the value as written
	quoted     bool
}

// kvSpace is the white space of libpq's keyword/value strings.
const kvSpace = " \t\n\r\v\f"

// scanKeywordValue splits a keyword/value connection string as libpq (and
// pgconn, which pgx connects with) read it: keyword = value pairs apart by
// white space, a value either quoted in ' or running to the next white
// space, \ taking the next character as it is. Its errors quote nothing of
// s: a word in the wrong place may be a part of a password.
func scanKeywordValue(s string) ([]pair, error) {
	if strings.IndexByte(s, 0) >= 0 {
		return nil, errors.New("it holds a NUL byte")
	}
	var pairs []pair
	s = strings.TrimLeft(s, kvSpace)
	for s != "" {
		eq := strings.IndexByte(s, '=')
		if eq < 0 {
			return nil, errors.New("a word at its end has no = (is a value holding spaces not quoted?)")
		}
		key := strings.Trim(s[:eq], kvSpace)
		if key == "" {
			return nil, errors.New("an = has no keyword before it")
		}
		if strings.ContainsAny(key, kvSpace) {
			return nil, errors.New("a word is not followed by = (is a value holding spaces not quoted?)")
		}
		s = strings.TrimLeft(s[eq+1:], kvSpace)
		p := pair{key: key}
		if s != "" && s[0] == '\'' {
			end := 1
			for ; end < len(s) && s[end] != '\''; end++ {
				if s[end] == '\\' {
					end++
				}
			}
			if end >= len(s) {
				return nil, errors.New("a quoted value has no closing '")
			}
			p.raw, p.value, p.quoted = s[:end+1], unescapeValue(s[1:end]), true
			s = s[end+1:]
		} else {
			end := 0
			for ; end < len(s) && !strings.ContainsRune(kvSpace, rune(s[end])); end++ {
				if s[end] == '\\' {
					end++
				}
			}
			end = min(end, len(s))
			p.raw, p.value = s[:end], unescapeValue(s[:end])
			s = s[end:]
		}
		s = strings.TrimLeft(s, kvSpace)
		pairs = append(pairs, p)
	}
	return pairs, nil
}

// unescapeValue drops each \ and keeps the character after it.
func unescapeValue(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' {
			i++
			if i == len(s) {
				break
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// withoutSecrets writes pairs again with each secret replaced.
func withoutSecrets(pairs []pair) string {
	parts := make([]string, len(pairs))
	for i, p := range pairs {
		v := p.value
		if secretKeywords[p.key] {
			v = "xxxxx"
		}
		parts[i] = p.key + "='" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(v) + "'"
	}
	return strings.Join(parts, " ")
}

// secretKeywords are the keywords whose values are secrets.
var secretKeywords = map[string]bool{"password": true, "sslpassword": true, "oauth_client_secret": true}

// connectionKeywords are libpq's connection keywords and pgx's own: a
// key=value string naming none of them is no connection string. Other
// keys are server parameters (search_path=...), which pgx sends on.
var connectionKeywords = func() map[string]bool {
	m := map[string]bool{}
	for _, k := range strings.Fields(`host hostaddr port dbname database user password passfile require_auth channel_binding
		connect_timeout client_encoding options application_name fallback_application_name keepalives keepalives_idle
		keepalives_interval keepalives_count tcp_user_timeout replication gssencmode sslmode requiressl sslnegotiation
		sslcompression sslcert sslkey sslkeylogfile sslpassword sslcertmode sslrootcert sslcrl sslcrldir sslsni requirepeer
		ssl_min_protocol_version ssl_max_protocol_version min_protocol_version max_protocol_version krbsrvname krbspn gsslib
		gssdelegation service servicefile target_session_attrs load_balance_hosts scram_client_key scram_server_key
		oauth_issuer oauth_client_id oauth_client_secret oauth_scope
		statement_cache_capacity description_cache_capacity default_query_exec_mode ` + PoolParam) {
		m[k] = true
	}
	return m
}()
