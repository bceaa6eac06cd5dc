package summarize

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/digest-cli/digest/internal/batchrun"
	"github.com/digest-cli/digest/internal/fakeprovider"
)

// TestSummarizeWithAnotherKeySendsNothingAgain: a run with key A leaves
// its batch running (NoWait, every commit pending); a run with key B, of
// another project, cannot see it: each commit it holds fails with the key
// hint and nothing is sent again, since the batch may still bill under A.
// With RetryUnknown (--batch-retry unknown) the commits go out again in a
// batch of B's and are summarized, and the unseen batch stays open, listed
// as unknown, for a cancel with A.
func TestSummarizeWithAnotherKeySendsNothingAgain(t *testing.T) {
	srv := fakeprovider.Start(t, fakeprovider.Config{BatchAPI: fakeprovider.BatchAPIConfig{PerKey: true, Processing: time.Minute}})
	repo := historyRepo(t, 5)
	h := newTestRun(t)
	withKey := func(key string, mode batchrun.Mode) Options {
		opts := h.options("openai:gpt-4o-mini", repo.Dir)
		onWire(t, srv, &opts, key)
		mode.On, mode.Poll = true, 20*time.Millisecond
		opts.Batch, opts.BatchWindow = mode, 50*time.Millisecond
		return opts
	}
	if res := h.mustRun(withKey("key-a", batchrun.Mode{NoWait: true})); res.Pending != 5 {
		t.Fatalf("NoWait with key A: %d pending, want the 5 commits", res.Pending)
	}
	sent := srv.Stats()

	res, err := h.run(context.Background(), withKey("key-b", batchrun.Mode{}))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Changelog.Entries) != 0 || len(res.Failures) != 5 {
		t.Errorf("with key B: %d entries, %d failures; want the 5 commits failed", len(res.Changelog.Entries), len(res.Failures))
	}
	for _, f := range res.Failures {
		if !strings.Contains(f.Err.Error(), "cannot be seen with this API key") {
			t.Errorf("commit %s failed with %v, want the key hint", f.Commit, f.Err)
		}
	}
	if now := srv.Stats(); now.BatchesCreated != sent.BatchesCreated || now.Succeeded != sent.Succeeded {
		t.Errorf("with key B: %d batches, %d requests sent again", now.BatchesCreated-sent.BatchesCreated, now.Succeeded-sent.Succeeded)
	}

	srv.SetBatchProcessing(0)
	res = h.mustRun(withKey("key-b", batchrun.Mode{RetryUnknown: true}))
	if len(res.Changelog.Entries) != 5 || len(res.Failures) != 0 || !strings.Contains(h.logs.String(), "sending its requests again (--batch-retry unknown)") {
		t.Errorf("with key B and RetryUnknown: %d entries, %d failures:\n%s", len(res.Changelog.Entries), len(res.Failures), h.logs.String())
	}
	if now := srv.Stats(); now.BatchesCreated != sent.BatchesCreated+1 {
		t.Errorf("%d batches sent with RetryUnknown, want 1", now.BatchesCreated-sent.BatchesCreated)
	}
	if open, err := h.store().Batches(context.Background(), true); err != nil || len(open) != 1 || open[0].Status != batchrun.StatusUnknown {
		t.Errorf("the unseen batch, paid twice now, should stay open for a cancel with key A: %+v, %v", open, err)
	}
}
