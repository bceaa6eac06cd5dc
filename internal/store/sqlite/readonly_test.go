package sqlite

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/digest-cli/digest/internal/store"
)

// TestOpenExistingCreatesNothing: a database that is not there is an error
// matching fs.ErrNotExist, to read or to write, and neither the file nor
// its folder is created (before, `digest batches` with a mistyped --db
// created both, and an empty database in them).
func TestOpenExistingCreatesNothing(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "cache", "digest.db")
	for _, write := range []bool{false, true} {
		s, err := OpenExisting(context.Background(), path, write)
		if err == nil {
			s.Close()
			t.Fatalf("write %v: opened a database that is not there", write)
		}
		if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "no database at "+path) || !strings.Contains(err.Error(), "Try: ") {
			t.Errorf("write %v: %v", write, err)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("created %v", entries)
	}
}

// readOnlyFixture is a digest database holding one run, closed.
func readOnlyFixture(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "digest.db")
	s, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.StartRun(context.Background(), store.EvalRun{ID: "20261130-ro", Dataset: "d.jsonl", Models: []string{"m1"}, CreatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	return path
}

// folder lists a folder and reads every file in it.
func folder(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		files[e.Name()] = b
	}
	return files
}

var testRO = &readOnlyWhy{why: "the file is not writable", fix: "make it writable"}

// TestReadOnlyOpenReadsAndChangesNothing: a database opened read-only is
// read as it is: its runs are there, a write is refused saying the
// database is read-only, and not a byte changes beside it, nor is a
// journal left behind (which a later writer would trip over).
func TestReadOnlyOpenReadsAndChangesNothing(t *testing.T) {
	ctx := context.Background()
	path := readOnlyFixture(t)
	before := folder(t, filepath.Dir(path))
	s, err := openReadOnly(ctx, path, testRO)
	if err != nil {
		t.Fatal(err)
	}
	runs, err := s.Runs(ctx)
	if err != nil || len(runs) != 1 || runs[0].ID != "20261130-ro" {
		t.Errorf("Runs = %v, %v", runs, err)
	}
	err = s.StartRun(ctx, store.EvalRun{ID: "another", Dataset: "d", Models: []string{"m"}, CreatedAt: time.Now()})
	if err == nil || !strings.Contains(err.Error(), "is read-only") || !strings.Contains(err.Error(), "Try: ") {
		t.Errorf("a write to a read-only database: %v", err)
	}
	s.Close()
	after := folder(t, filepath.Dir(path))
	if len(after) != len(before) {
		t.Errorf("files beside the database: %v, before %v", slices.Sorted(maps.Keys(after)), slices.Sorted(maps.Keys(before)))
	}
	for name, b := range before {
		if !bytes.Equal(after[name], b) {
			t.Errorf("%s changed", name)
		}
	}
}

// TestReadOnlyOpenReadsWhatALiveWriterHolds: with a writer's -wal beside
// the file, the read-only reader reads the transactions still in it, not
// the file alone.
func TestReadOnlyOpenReadsWhatALiveWriterHolds(t *testing.T) {
	ctx := context.Background()
	path := readOnlyFixture(t)
	w, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := w.StartRun(ctx, store.EvalRun{ID: "20261130-live", Dataset: "d.jsonl", Models: []string{"m1"}, CreatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path + "-wal"); err != nil {
		t.Fatalf("the writer keeps no -wal: %v", err)
	}
	s, err := openReadOnly(ctx, path, testRO)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if runs, err := s.Runs(ctx); err != nil || len(runs) != 2 {
		t.Errorf("Runs = %v, %v; want the run in the -wal too", runs, err)
	}
}

// TestReadOnlyOpenRefusesWhatItCannotRead: read-only, a database of
// another program, an empty file, and a database of an older digest
// (which would have to be migrated) are each refused in one line with
// what to try; none is changed.
func TestReadOnlyOpenRefusesWhatItCannotRead(t *testing.T) {
	ctx := context.Background()
	older := readOnlyFixture(t)
	s, err := Open(ctx, older)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.SQL().ExecContext(ctx, `DELETE FROM schema_migrations WHERE version = ?`, latestVersion()); err != nil {
		t.Fatal(err)
	}
	s.Close()
	empty := filepath.Join(t.TempDir(), "empty.db")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{
		older:            "older digest",
		empty:            "is empty",
		foreignDB(t):     "another program",
		notSQLiteFile(t): "no SQLite header",
	} {
		before := folder(t, filepath.Dir(path))
		s, err := openReadOnly(ctx, path, testRO)
		if err == nil {
			s.Close()
			t.Errorf("%s: opened", path)
			continue
		}
		if msg := err.Error(); !strings.Contains(msg, want) || !strings.Contains(msg, "Try: ") || strings.Contains(msg, "\n") {
			t.Errorf("%s: %q does not say %q and what to try", path, msg, want)
		}
		if after := folder(t, filepath.Dir(path)); len(after) != len(before) || !bytes.Equal(after[filepath.Base(path)], before[filepath.Base(path)]) {
			t.Errorf("%s: changed", path)
		}
	}
}

func foreignDB(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "other.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`CREATE TABLE notes (body TEXT)`); err != nil {
		t.Fatal(err)
	}
	return path
}

func notSQLiteFile(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "notes.txt")
	if err := os.WriteFile(path, []byte("these are notes, not a database\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
