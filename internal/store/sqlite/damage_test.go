package sqlite

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/digest-cli/digest/internal/store"
)

// digestDatabase is a closed digest database of several dozen pages, as a
// copy of a user's would be: no -wal beside it.
func digestDatabase(t *testing.T) []byte {
	t.Helper()
	path := filepath.Join(t.TempDir(), "digest.db")
	s, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	saveRepo(t, s, testRepo, testRoot)
	for i := range 150 {
		save(t, s, store.Summary{SummaryKey: key(hash(i)), Text: strings.Repeat("summary of a commit ", 30)})
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) < 40*4096 {
		t.Fatalf("a database of %d bytes, want at least 40 pages", len(b))
	}
	return b
}

// withBytes is db with the bytes at off replaced by b.
func withBytes(db []byte, off int, b ...byte) []byte {
	out := bytes.Clone(db)
	copy(out[off:], b)
	return out
}

// damageSchema overwrites the schema's records on page 1 (after the
// header, which is left whole) with bytes that are none.
func damageSchema(db []byte) []byte {
	out := bytes.Clone(db)
	r := rand.New(rand.NewPCG(1, 7))
	for i := 100; i < 4096; i++ {
		out[i] = byte(r.UintN(256))
	}
	return out
}

// damagePage overwrites page n (from 0) with bytes that are no b-tree page.
func damagePage(db []byte, n int) []byte {
	out := bytes.Clone(db)
	r := rand.New(rand.NewPCG(uint64(n), 7))
	for i := n * 4096; i < (n+1)*4096; i++ {
		out[i] = byte(r.UintN(256))
	}
	return out
}

func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// TestOpenLeavesRefusedDatabasesAsTheyWere: a database damaged mid-file was
// opened, written to by the run, and refused only when a read reached the
// damaged page, 145 bytes later. Every file Open refuses must be left byte
// for byte as it was, with no journal beside it.
//
// Open reads the header and the schema of a database closed cleanly, not
// every page (TestOpenReadsEveryPageOnlyAfterAnUncleanShutdown): damage
// there is refused; damage further in, after an unclean shutdown.
func TestOpenLeavesRefusedDatabasesAsTheyWere(t *testing.T) {
	real := digestDatabase(t)
	pages := len(real) / 4096
	newer := func() []byte {
		path := filepath.Join(t.TempDir(), "digest.db")
		s := openStore(t, path)
		if _, err := s.SQL().Exec(`INSERT INTO schema_migrations VALUES (?, 'later')`, latestVersion()+1); err != nil {
			t.Fatal(err)
		}
		s.Close()
		b, _ := os.ReadFile(path)
		return b
	}()
	foreign := func() []byte {
		path := filepath.Join(t.TempDir(), "notes.sqlite")
		db, err := sql.Open("sqlite", path)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec(`CREATE TABLE notes (body TEXT); INSERT INTO notes VALUES ('mine')`); err != nil {
			t.Fatal(err)
		}
		db.Close()
		b, _ := os.ReadFile(path)
		return b
	}()
	random := make([]byte, 64<<10)
	r := rand.New(rand.NewPCG(5, 6))
	for i := range random {
		random[i] = byte(r.UintN(256))
	}
	cases := []struct {
		name    string
		content []byte
		want    string
	}{
		// Page 2 is schema_migrations', which every open reads.
		{"damaged second page", damagePage(real, 1), "not a usable SQLite database"},
		{"damaged header: page size", withBytes(real, 16, 0x03, 0x00), "not a usable SQLite database"},
		{"damaged header: payload fractions", withBytes(real, 21, 0x7f), "not a usable SQLite database"},
		{"damaged schema page", damageSchema(real), "not a usable SQLite database"},
		{"truncated mid-page", real[:len(real)-1000], "(truncated: "},
		{"another program's SQLite database", foreign, "SQLite database of another program"},
		{"a newer digest's database", newer, "newer than this digest understands"},
		{"random bytes", random, "not a usable SQLite database"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "digest.db")
			if err := os.WriteFile(path, c.content, 0o600); err != nil {
				t.Fatal(err)
			}
			checkRefusedAsItWas(t, path, map[string][]byte{"digest.db": c.content}, c.want)
		})
	}
	// A run killed mid-write leaves its -wal and -shm: a file damaged
	// anywhere beside them is refused with both files as they were, the
	// frames not checkpointed into it.
	for _, page := range []int{pages / 4, pages / 2, pages * 3 / 4} {
		t.Run(fmt.Sprintf("damaged page %d of %d, with the journal of a killed run", page+1, pages), func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "digest.db")
			os.WriteFile(path, real, 0o600)
			s := openStore(t, path)
			save(t, s, store.Summary{SummaryKey: key(hash(1000)), Text: "in the WAL only"})
			files := map[string][]byte{}
			for _, name := range []string{"digest.db", "digest.db-wal", "digest.db-shm"} {
				b, err := os.ReadFile(filepath.Join(dir, name))
				if err != nil {
					t.Fatal(err)
				}
				files[name] = b
			}
			s.Close()
			files["digest.db"] = damagePage(files["digest.db"], page)
			killed := t.TempDir()
			for name, b := range files {
				os.WriteFile(filepath.Join(killed, name), b, 0o600)
			}
			checkRefusedAsItWas(t, filepath.Join(killed, "digest.db"), files, "left by a process that did not close it")
		})
	}
	// The intact copy is opened and kept whole.
	path := filepath.Join(t.TempDir(), "digest.db")
	os.WriteFile(path, real, 0o600)
	s := openStore(t, path)
	if got := lookup(t, s, key(""), hash(149)); len(got) != 1 {
		t.Fatalf("the intact copy: %d summaries found, want 1", len(got))
	}
	if err := IntegrityCheck(context.Background(), s.Path()); err != nil {
		t.Fatal(err)
	}
}

// checkRefusedAsItWas opens path, expecting a one-line refusal saying want,
// and the directory to hold files, byte for byte, and nothing else.
func checkRefusedAsItWas(t *testing.T, path string, files map[string][]byte, want string) {
	t.Helper()
	s, err := Open(context.Background(), path)
	if err == nil {
		s.Close()
		t.Fatal("Open accepted it")
	}
	msg := err.Error()
	if !strings.Contains(msg, want) || !strings.Contains(msg, "Try: ") || strings.Contains(msg, "\n") {
		t.Errorf("error = %q, want one line saying %q, then Try:", msg, want)
	}
	for name, before := range files {
		if strings.HasSuffix(name, "-shm") {
			continue // shared memory, an index of the -wal every reader updates
		}
		got, _ := os.ReadFile(filepath.Join(filepath.Dir(path), name))
		if !bytes.Equal(got, before) {
			diff := 0
			for i := range min(len(got), len(before)) {
				if got[i] != before[i] {
					diff++
				}
			}
			t.Errorf("%s changed: %d bytes differ, %d bytes long before, %d after", name, diff, len(before), len(got))
		}
	}
	var names []string
	for name := range files {
		names = append(names, name)
	}
	slices.Sort(names)
	if got := dirNames(t, filepath.Dir(path)); !slices.Equal(got, names) {
		t.Errorf("the directory holds %v, want %v", got, names)
	}
}

// TestIntegrityCheckIsOneLine: SQLite reports each problem on lines of
// their own; an error of digest's is one line.
//
// Random bytes on some pages stop the check itself ("malformed"), on
// others the check lists them; which pages do shifts with the schema, so
// the first page from the middle on that the check lists is the one tried.
func TestIntegrityCheckIsOneLine(t *testing.T) {
	real := digestDatabase(t)
	for n := len(real) / 4096 / 2; n < len(real)/4096; n++ {
		path := filepath.Join(t.TempDir(), "digest.db")
		os.WriteFile(path, real, 0o600)
		s := openStore(t, path)
		// Damaged under an open store, as by another program or the disk.
		os.WriteFile(path, damagePage(real, n), 0o600)
		err := IntegrityCheck(context.Background(), s.Path())
		if err == nil {
			t.Fatalf("page %d damaged: the integrity check passed", n)
		}
		if !strings.Contains(err.Error(), "failed its integrity check: ") {
			continue
		}
		if strings.Contains(err.Error(), "\n") {
			t.Fatalf("err = %q, want one line naming the problem", err)
		}
		return
	}
	t.Fatal("no damaged page was listed by the integrity check")
}
