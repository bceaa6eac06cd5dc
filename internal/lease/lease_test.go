//go:build unix

package lease

import (
	"context"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/digest-cli/digest/internal/store"
)

// deadPID is the id of a process that has run and exited.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.ProcessState.Pid()
}

func TestDead(t *testing.T) {
	host := Machine()
	for owner, want := range map[string]bool{
		host + "/" + strconv.Itoa(deadPID(t)) + "/ab12":   true,
		host + "/" + strconv.Itoa(os.Getppid()) + "/ab12": false, // alive
		host + "/" + strconv.Itoa(os.Getpid()) + "/me":    false, // this process
		// This process's id, another owner: a dead process whose id this one
		// was given, or an earlier run in this one.
		host + "/" + strconv.Itoa(os.Getpid()) + "/ab12": true,
		"elsewhere/1/ab12": false, // another machine: cannot tell, so alive
		// Another container with this host name: its process ids are not ours.
		host + "0/" + strconv.Itoa(deadPID(t)) + "/ab12": false,
		"not an owner": false,
	} {
		if got := dead(owner, host+"/"+strconv.Itoa(os.Getpid())+"/me"); got != want {
			t.Errorf("dead(%q) = %v, want %v", owner, got, want)
		}
	}
}

func openStore(t *testing.T) *store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "d.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// heldLeases is a store with three leases held for an hour: by a process
// of this machine that died, by a live one, and by another machine's.
func heldLeases(t *testing.T) *store.Store {
	t.Helper()
	st := openStore(t)
	host := Machine()
	dead := host + "/" + strconv.Itoa(deadPID(t)) + "/dead"
	alive := host + "/" + strconv.Itoa(os.Getppid()) + "/live"
	for k, owner := range map[string]string{"left-by-dead": dead, "held-by-live": alive, "held-elsewhere": "elsewhere/1/ab12"} {
		if ok, err := st.Claim(context.Background(), k, owner, time.Hour); !ok || err != nil {
			t.Fatalf("setting up %s: %v, %v", k, ok, err)
		}
	}
	return st
}

// A lease left by a process of this machine that died is taken over at
// once; a live owner's lease is not, nor one of another machine's.
func TestClaimTakesOverADeadProcessLease(t *testing.T) {
	ctx := context.Background()
	st := heldLeases(t)
	me := NewOwner()
	if ok, err := Claim(ctx, st, "left-by-dead", me, time.Minute); !ok || err != nil {
		t.Errorf("claim of a dead process's lease = %v, %v; want it taken over", ok, err)
	}
	for _, k := range []string{"held-by-live", "held-elsewhere"} {
		if ok, err := Claim(ctx, st, k, me, time.Minute); ok || err != nil {
			t.Errorf("claim of %s = %v, %v; want it refused", k, ok, err)
		}
	}
	if owner, _, _ := st.LeaseOwner(ctx, "left-by-dead"); owner != me {
		t.Errorf("the lease is owned by %q after the take-over", owner)
	}
	if ok, err := Claim(ctx, st, "fresh", me, time.Minute); !ok || err != nil {
		t.Errorf("claim of a free key = %v, %v", ok, err)
	}
}

// A kept lease outlives its ttl, so that a long request keeps its key; once
// no longer kept it expires like any other.
func TestKeepRenewsUntilStopped(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	me := NewOwner()
	// Renewed every third of it: a renewal must be late by two thirds of a
	// lease, even on a loaded machine, for the test to fail.
	const ttl = 1500 * time.Millisecond
	if ok, err := Claim(ctx, st, "k", me, ttl); !ok || err != nil {
		t.Fatalf("claim: %v, %v", ok, err)
	}
	stop := Keep(ctx, st, me, ttl, slog.New(slog.DiscardHandler))
	time.Sleep(2 * ttl)
	if ok, err := st.Claim(ctx, "k", "elsewhere/1/ab12", ttl); ok || err != nil {
		t.Errorf("another owner claimed a kept lease past its first expiry: %v, %v", ok, err)
	}
	stop()
	time.Sleep(ttl + 100*time.Millisecond)
	if ok, err := st.Claim(ctx, "k", "elsewhere/1/ab12", ttl); !ok || err != nil {
		t.Errorf("a lease no longer kept did not expire: %v, %v", ok, err)
	}
}

// Sweep clears the leases of dead processes of this machine, and of an
// earlier owner with this process's id, and leaves the others.
func TestSweep(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	host, pid := Machine(), strconv.Itoa(os.Getpid())
	me := host + "/" + pid + "/me"
	owners := map[string]bool{ // owner: still there after the sweep
		host + "/" + strconv.Itoa(deadPID(t)) + "/dead": false,
		host + "/" + pid + "/earlier":                   false,
		me:                                              true,
		host + "/" + strconv.Itoa(os.Getppid()) + "/live": true,
		"elsewhere/1/ab12": true,
	}
	for owner := range owners {
		if ok, err := st.Claim(ctx, "key of "+owner, owner, time.Hour); !ok || err != nil {
			t.Fatalf("claim for %s: %v, %v", owner, ok, err)
		}
	}
	Sweep(ctx, st, me, slog.New(slog.DiscardHandler))
	left, err := st.LeaseOwners(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for owner, kept := range owners {
		if slices.Contains(left, owner) != kept {
			t.Errorf("%s: kept %v, want %v", owner, !kept, kept)
		}
	}
}

// ClaimAll wins free keys together and decides the held ones as Claim does.
func TestClaimAll(t *testing.T) {
	ctx := context.Background()
	st := heldLeases(t)
	won, err := ClaimAll(ctx, st, []string{"fresh", "left-by-dead", "held-by-live", "fresh2", "held-elsewhere"}, NewOwner(), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if want := []bool{true, true, false, true, false}; !slices.Equal(won, want) {
		t.Errorf("won %v, want %v", won, want)
	}
}
