package sqlite

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/digest-cli/digest/internal/store/sqlstore"
)

func TestLeases(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)
	claim := func(key, owner string, ttl time.Duration) bool {
		t.Helper()
		ok, err := s.Claim(ctx, key, owner, ttl)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	if !claim("k", "a", time.Minute) {
		t.Fatal("a fresh key was not claimed")
	}
	if claim("k", "b", time.Minute) {
		t.Error("b took a live lease of a's")
	}
	if !claim("k", "a", time.Minute) {
		t.Error("a could not renew its own lease")
	}
	if !claim("short", "a", 30*time.Millisecond) {
		t.Fatal("claim failed")
	}
	time.Sleep(50 * time.Millisecond)
	if !claim("short", "b", time.Minute) {
		t.Error("b could not take over an expired lease")
	}
	if err := s.Release(ctx, "k", "b"); err != nil {
		t.Fatal(err)
	}
	if claim("k", "b", time.Minute) {
		t.Error("b's release freed a lease it did not hold")
	}
	if err := s.Release(ctx, "k", "a"); err != nil {
		t.Fatal(err)
	}
	if !claim("k", "b", time.Minute) {
		t.Error("a released lease could not be claimed")
	}
}

// Two stores on one file, eight claimants each: every key is won once.
func TestLeasesAcrossConnectionsAreExclusive(t *testing.T) {
	ctx := context.Background()
	path := t.TempDir() + "/d.db"
	var stores [2]*sqlstore.DB
	for i := range stores {
		s, err := Open(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		stores[i] = s
	}
	var won [50]atomic.Int32
	var wg sync.WaitGroup
	for c := range 16 {
		wg.Go(func() {
			s := stores[c%2]
			for k := range won {
				ok, err := s.Claim(ctx, fmt.Sprint("key-", k), fmt.Sprint("owner-", c), time.Minute)
				if err != nil {
					t.Error(err)
					return
				}
				if ok {
					won[k].Add(1)
				}
			}
		})
	}
	wg.Wait()
	for k := range won {
		if n := won[k].Load(); n != 1 {
			t.Errorf("key %d was claimed %d times", k, n)
		}
	}
}

func TestClaimAll(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)
	claimAll := func(owner string, ttl time.Duration, keys ...string) []bool {
		t.Helper()
		won, err := s.ClaimAll(ctx, keys, owner, ttl)
		if err != nil {
			t.Fatal(err)
		}
		return won
	}
	if won := claimAll("a", time.Minute, "k1", "k2"); !slices.Equal(won, []bool{true, true}) {
		t.Fatalf("fresh keys: %v", won)
	}
	if won := claimAll("b", time.Minute, "k1", "k3"); !slices.Equal(won, []bool{false, true}) {
		t.Errorf("b won %v of a live lease of a's and a fresh key", won)
	}
	if won := claimAll("a", 30*time.Millisecond, "k2"); !won[0] {
		t.Error("a could not renew its own lease")
	}
	time.Sleep(50 * time.Millisecond)
	if won := claimAll("b", time.Minute, "k2", "k1"); !slices.Equal(won, []bool{true, false}) {
		t.Errorf("b won %v of an expired lease and a live one", won)
	}
	if owner, _, _ := s.LeaseOwner(ctx, "k2"); owner != "b" {
		t.Errorf("k2 is owned by %q", owner)
	}
}
