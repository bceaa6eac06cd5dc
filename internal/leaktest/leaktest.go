// Package leaktest looks for secrets wherever digest writes, for the tests
// of its promise that an API key or password is never written to the
// database, the stored payloads, a report or a log: the files of a folder,
// and every payload an SQLite database keeps, decompressed. It is imported
// by tests only.
package leaktest

import (
	"bytes"
	"compress/gzip"
	"database/sql"
	"io"
	"os"
	"path/filepath"
	"testing"

	_ "modernc.org/sqlite" // the driver of the databases it reads
)

// Find names the secrets found in b: each whole, or its distinctive part
// without the well-known prefix (its last two thirds), so that a key cut
// after its first characters is found too.
func Find(b []byte, secrets ...string) []string {
	var found []string
	for _, s := range secrets {
		for _, needle := range []string{s, s[len(s)/3:]} {
			if bytes.Contains(b, []byte(needle)) {
				found = append(found, needle)
				break
			}
		}
	}
	return found
}

// ReadDir reads every file of dir into written, each named by prefix and
// the file's name.
func ReadDir(t testing.TB, written map[string][]byte, prefix, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		written[prefix+e.Name()] = b
	}
}

// Payloads reads every request and response body the SQLite database at
// path stores, decompressed; a body that is not gzip fails t.
func Payloads(t testing.TB, path string) [][]byte {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT gz FROM payloads`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out [][]byte
	for rows.Next() {
		var gz []byte
		if err := rows.Scan(&gz); err != nil {
			t.Fatal(err)
		}
		zr, err := gzip.NewReader(bytes.NewReader(gz))
		if err != nil {
			t.Fatalf("a payload is not gzip: %v", err)
		}
		b, err := io.ReadAll(zr)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
