package batchrun_test

import (
	"bytes"
	"context"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/digest-cli/digest/internal/batchrun"
	"github.com/digest-cli/digest/internal/fakeprovider"
)

// TestQueueRefusalOfAnEarlierRunsBatchKeepsBatchesWhole: a batch an earlier
// run left validating (a --no-wait run, or one stopped before its look)
// that the account's queue then refused is taken up by the rerun. Its size
// was not this run's to know; it must not be learned as a queue of one
// token, which would send the rest of the run one request per batch, one
// batch at a time.
func TestQueueRefusalOfAnEarlierRunsBatchKeepsBatchesWhole(t *testing.T) {
	w := wires[0]
	// 40 prompts of 3 tokens each, as the fake counts them: 120 tokens
	// against a queue of 50.
	srv := fakeprovider.Start(t, fakeprovider.Config{BatchAPI: fakeprovider.BatchAPIConfig{
		Processing: 20 * time.Millisecond, QueueTokens: 50}})
	path := filepath.Join(t.TempDir(), "digest.db")
	st := openStore(t, path)
	cfg := batchrun.Config{Batcher: w.client(srv), Spec: w.spec, BaseURL: w.base(srv), Store: st,
		Gather: 20 * time.Millisecond, PollMin: 5 * time.Millisecond, PollMax: 20 * time.Millisecond, Tokens: srv.Estimate, NoWait: true}
	first := cfg
	first.Gather = 300 * time.Millisecond // all 40 in the one batch refused
	if _, err := run(t, batchrun.New(first), tasks(w, 40)); err != nil {
		t.Fatal(err)
	}
	// As a run that stopped while OpenAI still validated the batch left it.
	uncollect(t, path, "validating")
	before := srv.Stats()
	var logs bytes.Buffer
	cfg.NoWait, cfg.Log = false, slog.New(slog.NewTextHandler(&logs, nil))
	got, err := run(t, batchrun.New(cfg), tasks(w, 40))
	if err != nil {
		t.Fatalf("%v\n%s", err, logs.String())
	}
	for k, o := range got {
		if o.Err != nil {
			t.Errorf("%s: %v", k, o.Err)
		}
	}
	after := srv.Stats()
	created := after.BatchesCreated - before.BatchesCreated
	if len(got) != 40 || after.BatchItemsAnswered != 40 || created > 10 {
		t.Errorf("%d outcomes, %d answered, in %d batches; want 40 answered in a few batches (the room learned as half the refused batch), not one per request\n%s",
			len(got), after.BatchItemsAnswered, created, logs.String())
	}
}

// TestRefreshClosesAFailedBatch: `digest batches --refresh` finding a
// batch failed (OpenAI fails one at validation, after its run left it
// validating) records it failed. The rerun sends its tasks anew and never
// looks at a failed batch again, so one left uncollected would be listed
// as open for ever: Refresh closes it, as a run's own look does.
func TestRefreshClosesAFailedBatch(t *testing.T) {
	w := wires[0]
	srv := fakeprovider.Start(t, fakeprovider.Config{BatchAPI: fakeprovider.BatchAPIConfig{QueueTokens: 1}})
	path := filepath.Join(t.TempDir(), "digest.db")
	st := openStore(t, path)
	cfg := batchrun.Config{Batcher: w.client(srv), Spec: w.spec, BaseURL: w.base(srv), Store: st,
		Gather: 20 * time.Millisecond, PollMin: 5 * time.Millisecond, PollMax: 20 * time.Millisecond, NoWait: true}
	if _, err := run(t, batchrun.New(cfg), tasks(w, 4)); err != nil {
		t.Fatal(err)
	}
	uncollect(t, path, "validating")
	open, err := st.Batches(context.Background(), true)
	if err != nil || len(open) != 1 {
		t.Fatalf("open batches %v, %v", open, err)
	}
	got, err := batchrun.Refresh(context.Background(), st, w.client(srv), open[0])
	if err != nil || got.Status != "failed" || !got.Collected {
		t.Errorf("Refresh = %+v, %v; want it failed and collected", got, err)
	}
	if open, err := st.Batches(context.Background(), true); err != nil || len(open) != 0 {
		t.Errorf("still listed as open after the refresh: %+v %v", open, err)
	}
}
