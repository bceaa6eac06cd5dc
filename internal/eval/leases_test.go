package eval

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/digest-cli/digest/internal/lease"
	"github.com/digest-cli/digest/internal/score"
)

// TestEvalTakesOverExpiredAndDeadLeases: a run waits out the live lease
// of a process on another machine, then does the work itself, and takes
// over at once the leases of a dead process of this machine: neither is
// paid twice nor blocks the run for good, and no lease is left behind.
func TestEvalTakesOverExpiredAndDeadLeases(t *testing.T) {
	first := newTestRun(t)
	first.models = first.models[:1]
	out, _ := first.run(t, sums(6), Options{})
	var keys []string
	for row, err := range first.st.RunRows(context.Background(), out.RunID, []string{first.models[0].Spec.String()}, false) {
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, row.Key)
	}

	// The same requests on a second database whose keys are claimed: half
	// by a live process elsewhere, for a moment; half by a dead one here,
	// for an hour.
	r := newTestRun(t)
	r.models = r.models[:1]
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Skipf("no process to outlive: %v", err)
	}
	deadOwner := fmt.Sprintf("%s/%d/dead", lease.Machine(), dead.ProcessState.Pid())
	for i, k := range keys {
		owner, ttl := "elsewhere/1/ab12", 300*time.Millisecond
		if i%2 == 1 {
			owner, ttl = deadOwner, time.Hour
		}
		if ok, err := r.st.Claim(context.Background(), k, owner, ttl); !ok || err != nil {
			t.Fatalf("claim: %v, %v", ok, err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // an hour-long lease waited out would end here
	defer cancel()
	_, err := Run(ctx, Options{Dataset: "sums.jsonl", Source: strings.NewReader(sums(6)), Models: r.models, Tokenizer: r.tok,
		Store: r.st, Concurrency: 2, Scorer: &score.Scorer{}, Lease: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 6 || r.calls[0].Load() != 6 {
		t.Errorf("%d requests for %d keys whose claimants died, want one each of 6", r.calls[0].Load(), len(keys))
	}
	if owners, err := r.st.LeaseOwners(context.Background()); err != nil || len(owners) != 0 {
		t.Errorf("leases left after the run by %v (%v), want none", owners, err)
	}
}
