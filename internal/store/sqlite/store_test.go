package sqlite

// These tests run against real SQLite files in t.TempDir(). They live in
// package store (not store_test) only to read the migration list, so the
// schema version is checked against the latest migration rather than a
// hard-coded number; everything else goes through the exported API or an
// independent database/sql connection to the same file.

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/digest-cli/digest/internal/store"
	"github.com/digest-cli/digest/internal/store/sqlstore"
	"github.com/digest-cli/digest/internal/store/storetest"
)

const (
	testRepo   = "repo-a"
	testRoot   = "0000000000000000000000000000000000000001"
	testModel  = "openai:gpt-4o-mini"
	testPrompt = "p1"
	testScope  = ""
)

func latestVersion() int { return len(migrations) - 1 }

func openStore(t *testing.T, path string) *sqlstore.DB {
	t.Helper()
	s, err := Open(context.Background(), path)
	if err != nil {
		t.Fatalf("Open(%s): %v", path, err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func newStore(t *testing.T) *sqlstore.DB {
	t.Helper()
	s := openStore(t, filepath.Join(t.TempDir(), "digest.db"))
	saveRepo(t, s, testRepo, testRoot)
	return s
}

func saveRepo(t *testing.T, s *sqlstore.DB, id, root string) {
	t.Helper()
	if err := s.SaveRepository(context.Background(), store.Repository{ID: id, RootCommit: root, Path: "/src/" + id}); err != nil {
		t.Fatalf("SaveRepository(%s): %v", id, err)
	}
}

func hash(i int) string { return fmt.Sprintf("%040x", i) }

func commitFor(k store.SummaryKey) store.Commit {
	return store.Commit{
		RepoID: k.RepoID, Hash: k.Commit, AuthorName: "Ada", AuthorEmail: "ada@example.com",
		AuthorDate: time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC),
		CommitDate: time.Date(2024, 1, 2, 3, 4, 6, 0, time.UTC),
		Subject:    "subject of " + k.Commit,
	}
}

func key(commit string) store.SummaryKey {
	return store.SummaryKey{RepoID: testRepo, Commit: commit, Model: testModel, PromptVersion: testPrompt, Scope: testScope}
}

func save(t *testing.T, s *sqlstore.DB, sum store.Summary) {
	t.Helper()
	if err := s.SaveSummary(context.Background(), commitFor(sum.SummaryKey), sum); err != nil {
		t.Fatalf("SaveSummary(%+v): %v", sum.SummaryKey, err)
	}
}

func lookup(t *testing.T, s *sqlstore.DB, k store.SummaryKey, commits ...string) map[string]store.Summary {
	t.Helper()
	got, err := s.Summaries(context.Background(), k.RepoID, k.Model, k.PromptVersion, k.Scope, commits)
	if err != nil {
		t.Fatalf("Summaries(%+v): %v", k, err)
	}
	return got
}

func perm(t *testing.T, path string) os.FileMode {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode().Perm()
}

// rawDB opens the file with a plain connection that sets no pragmas, to see
// what is persisted in the file rather than what a Store's DSN asks for.
func rawDB(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func TestOpenCreatesPrivateFileAndDirectories(t *testing.T) {
	ctx := context.Background()
	base := t.TempDir()
	path := filepath.Join(base, "a", "b", "digest.db")
	s := openStore(t, path)

	for _, dir := range []string{filepath.Join(base, "a"), filepath.Join(base, "a", "b")} {
		if got := perm(t, dir); got != 0o700 {
			t.Errorf("directory %s has mode %o, want 700", dir, got)
		}
	}
	if got := perm(t, path); got != 0o600 {
		t.Errorf("database file has mode %o, want 600", got)
	}

	// The WAL and shared-memory files hold summaries too; SQLite gives them
	// the database file's mode, which is why Open creates that file itself.
	saveRepo(t, s, testRepo, testRoot)
	save(t, s, store.Summary{SummaryKey: key(hash(1)), Text: "private"})
	for _, suffix := range []string{"-wal", "-shm"} {
		if got := perm(t, path+suffix); got != 0o600 {
			t.Errorf("%s file has mode %o, want 600", suffix, got)
		}
	}

	var mode string
	if err := rawDB(t, path).QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		t.Fatal(err)
	}
	if mode != "wal" {
		t.Errorf("journal_mode persisted in the file is %q, want wal", mode)
	}

	v, err := schemaVersion(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	if v != latestVersion() || v < 1 {
		t.Errorf("SchemaVersion = %d, want latest migration %d", v, latestVersion())
	}
	if s.Path() != path {
		t.Errorf("Path() = %q, want %q", s.Path(), path)
	}
}

func TestReopenKeepsDataAndDoesNotMigrateAgain(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "digest.db")
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	saveRepo(t, s, testRepo, testRoot)
	save(t, s, store.Summary{SummaryKey: key(hash(1)), Text: "kept across reopen", InputTokens: 7})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	for round := range 2 {
		s := openStore(t, path)
		got := lookup(t, s, key(hash(1)), hash(1))
		if got[hash(1)].Text != "kept across reopen" || got[hash(1)].InputTokens != 7 {
			t.Errorf("reopen %d: got %+v, want the summary saved before closing", round, got)
		}
		v, err := schemaVersion(ctx, s)
		if err != nil {
			t.Fatal(err)
		}
		if v != latestVersion() {
			t.Errorf("reopen %d: SchemaVersion = %d, want %d", round, v, latestVersion())
		}
		var rows int
		if err := s.SQL().QueryRowContext(ctx, "SELECT COUNT(*) FROM schema_migrations").Scan(&rows); err != nil {
			t.Fatal(err)
		}
		if rows != latestVersion() {
			t.Errorf("reopen %d: schema_migrations has %d rows, want one per migration (%d)", round, rows, latestVersion())
		}
		if err := IntegrityCheck(ctx, s.Path()); err != nil {
			t.Error(err)
		}
		s.Close()
	}
	if got := perm(t, path); got != 0o600 {
		t.Errorf("after reopening, file mode is %o, want 600", got)
	}
}

func TestOpenRefusesFilesThatAreNotSQLite(t *testing.T) {
	random := make([]byte, 8192)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range random {
		random[i] = byte(r.UintN(256))
	}
	tests := []struct {
		name    string
		content []byte
	}{
		{name: "text", content: []byte(strings.Repeat("these are my notes, not a database\n", 200))},
		{name: "random bytes", content: random},
		{name: "two bytes", content: []byte("x\n")},
		// SQLite itself takes a one-byte file for an empty database; Open
		// checks the header of any non-empty file first.
		{name: "one byte", content: []byte("\n")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "notes.db")
			if err := os.WriteFile(path, tt.content, 0o644); err != nil {
				t.Fatal(err)
			}
			s, err := Open(context.Background(), path)
			if err == nil {
				s.Close()
				t.Errorf("Open accepted a %d-byte file that is not SQLite", len(tt.content))
			} else if !strings.Contains(err.Error(), "not a usable SQLite database") {
				t.Errorf("error = %q, want it to say the file is not a usable SQLite database", err)
			}
			got, rerr := os.ReadFile(path)
			if rerr != nil {
				t.Fatal(rerr)
			}
			if !bytes.Equal(got, tt.content) {
				t.Errorf("Open changed the file: %d bytes before, %d after", len(tt.content), len(got))
			}
		})
	}
}

func TestOpenRefusesNewerSchema(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "digest.db")
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	newer := latestVersion() + 1
	if _, err := s.SQL().ExecContext(ctx, `INSERT INTO schema_migrations(version, applied_at) VALUES (?, ?)`,
		newer, time.Now().UTC().Format(time.RFC3339)); err != nil {
		t.Fatal(err)
	}
	s.Close()

	s, err = Open(ctx, path)
	if err == nil {
		s.Close()
		t.Fatal("Open accepted a database with a newer schema")
	}
	msg := err.Error()
	if !strings.Contains(msg, "newer than this digest understands") || !strings.Contains(msg, fmt.Sprint("schema version ", newer)) {
		t.Errorf("error = %q, want it to say schema version %d is newer", msg, newer)
	}
}

func TestOpenReportsUnusablePaths(t *testing.T) {
	tests := []struct {
		name     string
		rootless bool // needs permissions root would bypass
		setup    func(t *testing.T, dir string) string
		want     []string
		after    func(t *testing.T, dir string)
	}{
		{
			name: "parent is a regular file",
			setup: func(t *testing.T, dir string) string {
				file := filepath.Join(dir, "plain")
				if err := os.WriteFile(file, []byte("keep me"), 0o600); err != nil {
					t.Fatal(err)
				}
				return filepath.Join(file, "sub", "digest.db")
			},
			want: []string{"create database directory", "Try: --db"},
			after: func(t *testing.T, dir string) {
				if b, _ := os.ReadFile(filepath.Join(dir, "plain")); string(b) != "keep me" {
					t.Errorf("the regular file in the way now holds %q", b)
				}
			},
		},
		{
			name:  "path is a directory",
			setup: func(t *testing.T, dir string) string { return dir },
			want:  []string{"is a directory, not a database file", "Try: --db"},
		},
		{
			name:     "read-only directory",
			rootless: true,
			setup: func(t *testing.T, dir string) string {
				ro := filepath.Join(dir, "ro")
				if err := os.Mkdir(ro, 0o500); err != nil {
					t.Fatal(err)
				}
				return filepath.Join(ro, "digest.db")
			},
			want: []string{"open database", "Try: --db"},
		},
		{
			name:  "empty path",
			setup: func(t *testing.T, dir string) string { return "" },
			want:  []string{"database path is empty"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.rootless && os.Geteuid() == 0 {
				t.Skip("root bypasses file permissions")
			}
			dir := t.TempDir()
			path := tt.setup(t, dir)
			s, err := Open(context.Background(), path)
			if err == nil {
				s.Close()
				t.Fatalf("Open(%q) succeeded, want an error", path)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error = %q, want it to contain %q", err, w)
				}
			}
			if tt.after != nil {
				tt.after(t, dir)
			}
		})
	}
}

// Two digest processes opening a database that does not exist yet must not
// both apply migration 1 ("table repositories already exists"), and an opener
// must wait out another's switch of the new file to WAL (SQLITE_BUSY, which
// busy_timeout does not cover). The races are narrow, so the test tries
// several fresh files.
func TestConcurrentOpenOfNewDatabase(t *testing.T) {
	ctx := context.Background()
	const attempts, openers = 8, 8
	for a := range attempts {
		path := filepath.Join(t.TempDir(), "digest.db")
		var wg sync.WaitGroup
		errs := make([]error, openers)
		for i := range openers {
			wg.Go(func() {
				s, err := Open(ctx, path)
				if err == nil {
					s.Close()
				}
				errs[i] = err
			})
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("attempt %d, opener %d of %d on a new file: %v", a, i, openers, err)
			}
		}
	}
}

// The path goes into a "file:" URI, where SQLite reads '#' as a fragment,
// '?' as the start of the query and '%' as an escape: unescaped, the data of
// "a#b/digest.db" would silently go to a file named "a".
func TestOpenPathWithURICharacters(t *testing.T) {
	tests := []struct{ name, dir string }{
		// Subtest names stay plain: t.TempDir() embeds them in its path.
		{"hash", "a#b"},
		{"question mark", "a?b"},
		{"percent", "100%41"},
	}
	for _, tt := range tests {
		name := tt.dir
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, name, "digest.db")
			s, err := Open(context.Background(), path)
			if err != nil {
				t.Fatalf("Open(%q): %v", path, err)
			}
			saveRepo(t, s, testRepo, testRoot)
			save(t, s, store.Summary{SummaryKey: key(hash(1)), Text: "here"})
			s.Close()

			head := make([]byte, 16)
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			n, _ := f.Read(head)
			f.Close()
			if string(head[:n]) != "SQLite format 3\x00" {
				t.Errorf("%s is not the SQLite database (first bytes %q)", path, head[:n])
			}
			entries, err := os.ReadDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range entries {
				if e.Name() != name {
					t.Errorf("Open(%q) left a stray %q in %s", path, e.Name(), dir)
				}
			}
		})
	}
}

// SchemaVersion reports the newest migration applied.
func schemaVersion(ctx context.Context, s *sqlstore.DB) (int, error) {
	var v int
	err := s.SQL().QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&v)
	return v, err
}

// TestBackend runs the table every backend passes against SQLite files.
func TestBackend(t *testing.T) {
	storetest.Run(t, storetest.Backend{
		Fresh: func(t *testing.T) string { return filepath.Join(t.TempDir(), "digest.db") },
		Open: func(ctx context.Context, path string) (store.Store, error) {
			s, err := Open(ctx, path)
			if err != nil {
				return nil, err
			}
			return s, nil
		},
		Dialect: "sqlite",
	})
}
