package summarize

import (
	"context"
	"fmt"
	"os/exec"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/digest-cli/digest/internal/gittest"
	"github.com/digest-cli/digest/internal/history"
	"github.com/digest-cli/digest/internal/lease"
	"github.com/digest-cli/digest/internal/provider"
	"github.com/digest-cli/digest/internal/store/sqlite"
)

// runTogether runs opts twice at once, as two processes would: each on its
// own connection to the test's database, under an owner of its own, the
// second once beforeSecond (unless nil) returns. Either failing fails the
// test.
func (h *testRun) runTogether(opts Options, beforeSecond func()) [2]*Output {
	h.t.Helper()
	var results [2]*Output
	var errs [2]error
	var wg sync.WaitGroup
	for i := range 2 {
		if i == 1 && beforeSecond != nil {
			beforeSecond()
		}
		st, err := sqlite.Open(context.Background(), h.db)
		if err != nil {
			h.t.Fatal(err)
		}
		o := opts
		o.Store, o.Owner = st, fmt.Sprintf("process-%d", i)
		wg.Go(func() {
			defer st.Close()
			results[i], errs[i] = Run(context.Background(), o)
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			h.t.Fatalf("run %d: %v", i, err)
		}
	}
	return results
}

// slow makes each answer take d, as a hosted model's does.
func slow(d time.Duration) func(provider.Provider) provider.Provider {
	return func(next provider.Provider) provider.Provider {
		return provider.Func(func(ctx context.Context, req provider.Request) (provider.Response, error) {
			time.Sleep(d)
			return next.Complete(ctx, req)
		})
	}
}

// TestTwoRunsPayEachCommitOnce: two runs over the same repository and
// database at the same time pay for each commit once between them, by the
// claims they take; each reports the whole changelog, the other's
// summaries read from the store.
func TestTwoRunsPayEachCommitOnce(t *testing.T) {
	f := gittest.NewFixture(t)
	h := newTestRun(t)
	h.wrap = slow(40 * time.Millisecond)
	opts := h.options("", f.Dir)
	opts.BatchSize, opts.Concurrency = 1, 2
	res := h.runTogether(opts, nil)
	for i, r := range res {
		if n := len(r.Changelog.Entries); n != 8 {
			t.Errorf("run %d reported %d commits, want 8", i, n)
		}
	}
	if n := h.calls.Load(); n != 8 {
		t.Errorf("%d requests between the two runs, want 8: one per commit", n)
	}
	if cached := cachedCount(res[0].Changelog.Entries) + cachedCount(res[1].Changelog.Entries); cached != 8 {
		t.Errorf("%d entries read from the other run's work, want 8 (each commit paid by one, read by the other)", cached)
	}
}

// TestSecondRunSharesTheWork: a second run started on a long history once
// the first is under way summarizes commits the first has not reached,
// instead of waiting for all of them: misses are claimed as the walk
// reaches them, not all at the start. Each commit is still paid once.
func TestSecondRunSharesTheWork(t *testing.T) {
	r := gittest.New(t)
	const commits = 160 // well past the commits a run prepares ahead
	for i := range commits {
		r.Write(fmt.Sprintf("f%d.txt", i%7), fmt.Sprintf("version %d\n", i)).Commit(fmt.Sprint("change ", i))
	}
	h := newTestRun(t)
	h.wrap = slow(10 * time.Millisecond)
	opts := h.options("", r.Dir)
	opts.BatchSize, opts.Concurrency = 1, 1
	firstUnderWay := func() {
		for deadline := time.Now().Add(10 * time.Second); h.calls.Load() < 5 && time.Now().Before(deadline); {
			time.Sleep(5 * time.Millisecond)
		}
	}
	res := h.runTogether(opts, firstUnderWay)
	for i, r := range res {
		if n := len(r.Changelog.Entries); n != commits {
			t.Errorf("run %d reported %d commits, want %d", i, n, commits)
		}
		if r.Changelog.Stats.Summarized == 0 {
			t.Errorf("run %d summarized no commit itself: it waited for the other instead of sharing the work", i)
		}
	}
	if n := h.calls.Load(); n != commits {
		t.Errorf("%d requests between the two runs, want %d: one per commit", n, commits)
	}
}

// claimAll takes the leases on the summaries of hashes in opts's cache, as
// a run of owner summarizing them would, for ttl.
func claimAll(t *testing.T, h *testRun, opts Options, owner string, ttl time.Duration, hashes ...string) {
	t.Helper()
	rr := &repoRun{id: opts.RepoID}
	var keys []string
	for _, hash := range hashes {
		keys = append(keys, (&pending{repo: rr, commit: history.Commit{Hash: hash}}).leaseKey(opts))
	}
	won, err := h.store().ClaimAll(context.Background(), keys, owner, ttl)
	if err != nil || slices.Contains(won, false) {
		t.Fatalf("claims %v: %v", won, err)
	}
}

// TestClaimsOfADeadRunAreTakenOver: commits another run claimed and never
// summarized are summarized here once its claims are found dead: at once
// when its owner was a process of this machine that is gone, once they
// expire when it was of another machine (it stopped renewing them). No
// claim is left behind, and each commit is paid once.
func TestClaimsOfADeadRunAreTakenOver(t *testing.T) {
	f := gittest.NewFixture(t)
	exited := exec.Command("true")
	if err := exited.Run(); err != nil {
		t.Skipf("no process to outlive: %v", err)
	}
	for _, tt := range []struct {
		name, owner string
		ttl         time.Duration // of the dead run's claims, and of this run's
		dead        bool          // the claims are taken over at once
	}{
		{"a dead process of this machine", fmt.Sprintf("%s/%d/dead", lease.Machine(), exited.Process.Pid), time.Minute, true},
		{"a process of another machine", "digest-test-machine-b~1/4242/gone", 2 * time.Second, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := newTestRun(t)
			opts := h.options("", f.Dir)
			opts.RepoID, opts.Lease, opts.BatchSize = "r", tt.ttl, 1
			claimAll(t, h, opts, tt.owner, tt.ttl, f.Root, f.Greet, f.Deps)
			start := time.Now()
			res := h.mustRun(opts)
			took := time.Since(start)
			if n := h.calls.Load(); n != 8 || res.Changelog.Stats.Summarized != 8 {
				t.Errorf("%d calls, %d summarized; want the 8 commits, each paid once", n, res.Changelog.Stats.Summarized)
			}
			if tt.dead && took > tt.ttl/2 || !tt.dead && took < tt.ttl {
				t.Errorf("the run took %v, the claims living %v; want no wait for a dead process of this machine, the claims' life for another's", took, tt.ttl)
			}
			if owners, err := h.store().LeaseOwners(context.Background()); err != nil || len(owners) != 0 {
				t.Errorf("claims left behind by %v (%v)", owners, err)
			}
		})
	}
}
