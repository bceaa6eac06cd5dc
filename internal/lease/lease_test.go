//go:build unix

package lease

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/digest-cli/digest/internal/store"
	"github.com/digest-cli/digest/internal/store/sqlite"
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

func openStore(t *testing.T) store.Store {
	t.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "d.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// heldLeases is a store with three leases held for an hour: by a process
// of this machine that died, by a live one, and by another machine's.
func heldLeases(t *testing.T) store.Store {
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

// logLines is a log handler's output, read while it is written.
type logLines struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logLines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logLines) count(s string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Count(l.buf.String(), s)
}

// TestKeepWarnsOncePerCause: renewals that fail for one cause, tick after
// tick, warn once. A full disk failed every renewal and release alike, and
// the one line saying what to do was lost among 24 of the same.
func TestKeepWarnsOncePerCause(t *testing.T) {
	st := openStore(t)
	var out logLines
	log := slog.New(slog.NewTextHandler(&out, nil))
	st.Close() // every renewal fails from here on, for the same cause
	const ttl = 3 * time.Millisecond
	stop := Keep(context.Background(), st, NewOwner(), ttl, log)
	const warning = "could not renew leases"
	for deadline := time.Now().Add(10 * time.Second); out.count(warning) == 0; {
		if time.Now().After(deadline) {
			stop()
			t.Fatal("no warning of the failed renewals")
		}
		time.Sleep(time.Millisecond)
	}
	time.Sleep(50 * ttl) // dozens of renewals more, each failing as the first did
	stop()
	if n := out.count(warning); n != 1 {
		t.Errorf("%d warnings of one cause, want 1:\n%s", n, out.buf.String())
	}
}

// TestWarnerOncePerCause: a cause is told once whatever the item it struck;
// another cause is told too.
func TestWarnerOncePerCause(t *testing.T) {
	st := openStore(t)
	var out logLines
	w := NewWarner(slog.New(slog.NewTextHandler(&out, nil)))
	const msg = "could not release a lease; it expires on its own"
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for i := range 24 {
		err := st.Release(cancelled, fmt.Sprint("key ", i), "me")
		if err == nil {
			t.Fatal("a release under a cancelled context succeeded")
		}
		w.Warn(msg, err, "key", i)
	}
	st.Close()
	for i := range 24 {
		w.Warn(msg, st.Release(context.Background(), fmt.Sprint("key ", i), "me"), "key", i)
	}
	if n := out.count(msg); n != 2 {
		t.Errorf("%d warnings of two causes, want 2:\n%s", n, out.buf.String())
	}
	if !strings.Contains(out.buf.String(), "key=0 ") || strings.Contains(out.buf.String(), "key=1 ") {
		t.Errorf("want the first item of each cause named, and no other:\n%s", out.buf.String())
	}
}

// TestHolderGivesBackWhatItHolds: a holder releases each lease it won,
// never one it lost, and everything left at the end of a run.
func TestHolderGivesBackWhatItHolds(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "d.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	other := NewHolder(st, "other-machine/1/aa", time.Minute, nil)
	if won, err := other.Claim(ctx, "taken"); !won || err != nil {
		t.Fatalf("other claim: %v %v", won, err)
	}
	h := NewHolder(st, "other-machine/2/bb", time.Minute, nil)
	won, err := h.ClaimAll(ctx, []string{"a", "taken", "b"})
	if err != nil || !won[0] || won[1] || !won[2] || h.Held() != 2 {
		t.Fatalf("ClaimAll = %v, %v; held %d", won, err, h.Held())
	}
	h.Release("taken") // not ours: must stay the other's
	if owner, held, _ := st.LeaseOwner(ctx, "taken"); !held || owner != "other-machine/1/aa" {
		t.Errorf("releasing a lease another holds gave it up: %q %v", owner, held)
	}
	h.Release("a")
	if _, held, _ := st.LeaseOwner(ctx, "a"); held || h.Held() != 1 {
		t.Errorf("a still held after Release (held %d)", h.Held())
	}
	h.ReleaseAll()
	if _, held, _ := st.LeaseOwner(ctx, "b"); held || h.Held() != 0 {
		t.Errorf("b still held after ReleaseAll")
	}
}

// TestHolderForgetsWhatAWriteGaveBack: keys given back by a transaction of
// the caller's (an eval's writer stores answers and gives their leases back
// together) are no longer the holder's, and the rest are released in one
// go at the end.
func TestHolderForgetsWhatAWriteGaveBack(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	h := NewHolder(st, "other-machine/2/bb", time.Minute, nil)
	keys := make([]string, 600)
	for i := range keys {
		keys[i] = fmt.Sprint("k", i)
	}
	if won, err := h.ClaimAll(ctx, keys); err != nil || slices.Contains(won, false) {
		t.Fatalf("ClaimAll: %v %v", won, err)
	}
	if err := st.ReleaseAll(ctx, keys[:100], h.Owner()); err != nil {
		t.Fatal(err)
	}
	h.ForgetReleased(keys[:100]...)
	if h.Held() != 500 {
		t.Errorf("%d held after 100 of 600 were given back by a write, want 500", h.Held())
	}
	h.ReleaseAll()
	if holders, err := st.LeaseHolders(ctx, keys); err != nil || len(holders) != 0 || h.Held() != 0 {
		t.Errorf("after ReleaseAll: %d leases in the database, %d held, %v", len(holders), h.Held(), err)
	}
}

// TestAwaitSettlesUntilNothingWaits: Await hands what waits to settle each
// round, until nothing does; a cancelled context ends it.
func TestAwaitSettlesUntilNothingWaits(t *testing.T) {
	waiting := []string{"a", "b"}
	rounds := 0
	err := Await(context.Background(), 20*time.Millisecond, func() []string {
		w := waiting
		waiting = nil
		return w
	}, func(w []string) error {
		rounds++
		if rounds == 1 {
			waiting = w[1:] // "b" is still another process's: again next round
		}
		return nil
	})
	if err != nil || rounds != 2 {
		t.Errorf("Await = %v after %d rounds, want nil after 2", err, rounds)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err = Await(ctx, time.Hour, func() []int { return []int{1} }, func([]int) error {
		t.Error("settled after the context ended")
		return nil
	})
	if err == nil {
		t.Error("a cancelled Await returned nil")
	}
}

// TestInterruptedClaimIsGivenBack: a claim interrupted while its statement
// commits (the run's context cancelled by a signal) may leave the keys
// claimed though ClaimAll answers with an error; the holder gives them
// back all the same, so a rerun need not wait out the leases. Seen in CI
// as "16 claims left behind" after a SIGINT. The cancel lands at 80
// moments across the claim; on this machine about one round in twenty
// catches the commit, and the test fails without the fix.
func TestInterruptedClaimIsGivenBack(t *testing.T) {
	st := openStore(t)
	keys := make([]string, 16)
	interrupted := 0
	for round := range 400 {
		for i := range keys {
			keys[i] = fmt.Sprint("r", round, "k", i)
		}
		h := NewHolder(st, "other-machine/2/bb", time.Minute, nil)
		ctx, cancel := context.WithCancel(context.Background())
		fired := make(chan struct{})
		go func() {
			defer close(fired)
			time.Sleep(time.Duration(round%80) * 10 * time.Microsecond)
			cancel()
		}()
		if _, err := h.ClaimAll(ctx, keys); err != nil {
			interrupted++
		}
		<-fired
		h.ReleaseAll()
		holders, err := st.LeaseHolders(context.Background(), keys)
		if err != nil {
			t.Fatal(err)
		}
		if len(holders) > 0 {
			t.Fatalf("round %d: %d leases left behind after ReleaseAll", round, len(holders))
		}
	}
	t.Logf("%d of 400 claims interrupted", interrupted)
}
