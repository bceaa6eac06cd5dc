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

// A batch's requests are kept gzipped while it runs, and read back whole.
func TestBatchRequestsAreCompressed(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)
	big := []byte(`{"model":"m","messages":[{"role":"user","content":"` + string(bytes.Repeat([]byte("+a line of a diff\n"), 4000)) + `"}]}`)
	b := store.Batch{ID: "b1", Model: "openai:m", CreatedAt: time.Now()}
	if err := s.CreateBatch(ctx, b, []store.BatchItem{{BatchID: "b1", CustomID: "c1", Request: big, Members: []string{"k"}}}); err != nil {
		t.Fatal(err)
	}
	var size int
	s.SQL().QueryRow(`SELECT LENGTH(request) FROM batch_items`).Scan(&size)
	if size == 0 || size > len(big)/10 {
		t.Errorf("a %d-byte request is stored in %d bytes", len(big), size)
	}
	items, err := s.BatchItems(ctx, "b1")
	if err != nil || len(items) != 1 || !bytes.Equal(items[0].Request, big) {
		t.Fatalf("read back: %v, %d items", err, len(items))
	}
}
