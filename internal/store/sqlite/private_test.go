package sqlite

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestDatabaseFileIsPrivate: the database holds summaries of private code,
// so Open creates its file 0600, in a directory it creates 0700, not with
// the 0644 and 0755 a usual umask leaves.
func TestDatabaseFileIsPrivate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cache", "digest.db")
	db, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for p, want := range map[string]os.FileMode{path: 0o600, filepath.Dir(path): 0o700} {
		info, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if got := info.Mode().Perm(); got != want {
			t.Errorf("%s has mode %o, want %o", p, got, want)
		}
	}
}
