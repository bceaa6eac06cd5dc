package sqlite

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/digest-cli/digest/internal/store"
	"github.com/digest-cli/digest/internal/store/sqlstore"
)

// fill makes the store's database full: SQLite's max_page_count, set on
// its one connection, is reported as SQLITE_FULL, the code of a full disk.
func fill(t *testing.T, s *sqlstore.DB) {
	t.Helper()
	s.SQL().SetMaxOpenConns(1)
	var pages int
	if err := s.SQL().QueryRow("PRAGMA page_count").Scan(&pages); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SQL().Exec(fmt.Sprintf("PRAGMA max_page_count = %d", pages)); err != nil {
		t.Fatal(err)
	}
}

// TestFullDiskSaysWhatToDo: a full disk failed every write with SQLite's
// "database or disk is full", and nothing said what to do.
func TestFullDiskSaysWhatToDo(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)
	fill(t, s)
	want := "Try: free space on the disk holding " + s.Path() + ", or --db on another disk"
	var err error
	for i := 0; err == nil && i < 1000; i++ {
		err = s.SaveSummary(ctx, commitFor(key(hash(i))), store.Summary{SummaryKey: key(hash(i)), Text: strings.Repeat("x", 2000)})
	}
	if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "the disk is full") {
		t.Fatalf("saving summaries into a full database: %v, want %q", err, want)
	}
	keys := make([]string, 2000)
	for i := range keys {
		keys[i] = fmt.Sprintf("lease-%04d-%s", i, strings.Repeat("k", 100))
	}
	if _, err := s.ClaimAll(ctx, keys, "me", time.Minute); err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("claiming leases in a full database: %v, want %q", err, want)
	}
	err = s.SaveEvalResult(ctx, store.EvalResult{Key: "k", Model: "m", Request: randomBytes(1 << 16), Answer: "a"})
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("saving an answer into a full database: %v, want %q", err, want)
	}
	// The disk itself, as the file system reports it.
	if err := diskFull(s.Path(), fmt.Errorf("write: %w", syscall.ENOSPC)); err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("ENOSPC: %v", err)
	}
	if err := diskFull(s.Path(), errors.New("other")); err != nil {
		t.Fatalf("another error taken for a full disk: %v", err)
	}
}

func randomBytes(n int) []byte {
	b := make([]byte, n)
	r := rand.New(rand.NewPCG(9, 9))
	for i := range b {
		b[i] = byte(r.UintN(256))
	}
	return b
}

// TestOpenChecksEveryPragma: a pragma of the DSN that did not take (a typo,
// a file system without WAL) is found at Open, not mid-run.
func TestOpenChecksEveryPragma(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	if err := check(ctx, s.SQL(), s.Path()); err != nil {
		t.Fatalf("a fresh store: %v", err)
	}
	s.SQL().SetMaxOpenConns(1)
	for _, tc := range []struct{ set, want string }{
		{"PRAGMA foreign_keys = OFF", "foreign_keys is 0, want 1"},
		{"PRAGMA synchronous = FULL", "synchronous is 2, want 1"},
		{"PRAGMA busy_timeout = 5", "busy_timeout is 5 ms"},
		{"PRAGMA journal_mode = DELETE", `journal mode is "delete", want wal`},
	} {
		if _, err := s.SQL().Exec(tc.set); err != nil {
			t.Fatal(err)
		}
		if err := check(ctx, s.SQL(), s.Path()); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("after %s: %v, want %q", tc.set, err, tc.want)
		}
		// Set back, so the next one is the only one wrong.
		for _, q := range []string{"PRAGMA foreign_keys = ON", "PRAGMA synchronous = NORMAL", "PRAGMA busy_timeout = 10000", "PRAGMA journal_mode = WAL"} {
			if _, err := s.SQL().Exec(q); err != nil {
				t.Fatal(err)
			}
		}
	}
}
