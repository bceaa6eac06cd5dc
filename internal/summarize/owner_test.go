//go:build unix

package summarize

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
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

func TestOwnerDead(t *testing.T) {
	host, _ := os.Hostname()
	for owner, want := range map[string]bool{
		host + "/" + strconv.Itoa(deadPID(t)) + "/ab12":   true,
		host + "/" + strconv.Itoa(os.Getppid()) + "/ab12": false, // alive
		host + "/" + strconv.Itoa(os.Getpid()) + "/ab12":  false, // this process
		"elsewhere/1/ab12": false, // another machine: cannot tell, so alive
		"not an owner":     false,
	} {
		if got := ownerDead(owner); got != want {
			t.Errorf("ownerDead(%q) = %v, want %v", owner, got, want)
		}
	}
}

// A lease left by a process of this machine that died is taken over at
// once; a live owner's lease is not.
func TestClaimTakesOverADeadProcessLease(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "d.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	host, _ := os.Hostname()
	dead := host + "/" + strconv.Itoa(deadPID(t)) + "/dead"
	alive := host + "/" + strconv.Itoa(os.Getppid()) + "/live"
	st.Claim(ctx, "left-by-dead", dead, time.Hour)
	st.Claim(ctx, "held-by-live", alive, time.Hour)
	d := &dispatcher{opts: Options{Store: st, Owner: NewOwner(), Lease: time.Minute}}
	if ok, err := d.claim(ctx, "left-by-dead"); !ok || err != nil {
		t.Errorf("claim of a dead process's lease = %v, %v; want it taken over", ok, err)
	}
	if ok, err := d.claim(ctx, "held-by-live"); ok || err != nil {
		t.Errorf("claim of a live process's lease = %v, %v; want it refused", ok, err)
	}
	if owner, _, _ := st.LeaseOwner(ctx, "left-by-dead"); owner != d.opts.Owner {
		t.Errorf("the lease is owned by %q after the take-over", owner)
	}
}
