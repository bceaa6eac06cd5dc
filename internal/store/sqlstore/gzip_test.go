package sqlstore

import (
	"bytes"
	"math/rand/v2"
	"sync"
	"testing"
)

func payloads() [][]byte {
	rng := rand.New(rand.NewPCG(3, 4))
	random := make([]byte, 3000)
	for i := range random {
		random[i] = byte(rng.IntN(256))
	}
	return [][]byte{nil, []byte("4"), random, bytes.Repeat([]byte(`{"answer":"21"},`), 8000)}
}

// TestPayloadsRoundTripFromManyGoroutines: pooled writers and readers are
// reset between payloads, so none carries state into the next, whichever
// goroutine takes it (go test -race checks the sharing).
func TestPayloadsRoundTripFromManyGoroutines(t *testing.T) {
	var workers sync.WaitGroup
	for range 4 {
		workers.Go(func() {
			for range 25 {
				for _, p := range payloads() {
					got, err := gunzip(gz(p))
					if err != nil {
						t.Errorf("gunzip: %v", err)
						return
					}
					if !bytes.Equal(got, p) {
						t.Errorf("a %d-byte payload came back as %d bytes", len(p), len(got))
						return
					}
				}
				if _, err := gunzip([]byte("not gzip")); err == nil {
					t.Error("gunzip of bytes that are not gzip gave no error")
				}
			}
		})
	}
	workers.Wait()
}
