package sqlite

import (
	"bytes"
	"context"
	"os"
	"testing"
	"time"

	"github.com/digest-cli/digest/internal/store"
)

// Payloads are stored once however many results share them, gzipped.
func TestPayloadsAreContentAddressed(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)
	s.StartRun(ctx, store.EvalRun{ID: "r", CreatedAt: time.Now()})
	big := bytes.Repeat([]byte("the same long prompt "), 5000)
	for i, k := range []string{"k1", "k2"} {
		rr := store.RunResult{RunID: "r", Model: "m", Line: i + 1, Key: k}
		if err := s.SaveEvalResult(ctx, store.EvalResult{Key: k, Model: "m", Request: big, Answer: "same"}); err != nil {
			t.Fatal(err)
		}
		if err := s.SaveRunResults(ctx, []store.RunResult{rr}); err != nil {
			t.Fatal(err)
		}
	}
	var n, size int
	s.SQL().QueryRow(`SELECT COUNT(*), SUM(LENGTH(gz)) FROM payloads`).Scan(&n, &size)
	if n != 2 || size > len(big)/10 {
		t.Errorf("%d payloads of %d bytes for one %d-byte request and one answer", n, size, len(big))
	}
	if info, err := os.Stat(s.Path()); err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("database mode %v, %v", info.Mode(), err)
	}
}
