package batchrun_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/digest-cli/digest/internal/fakeprovider"
)

// TestCancelledBatchIsCollectedAndTheRestSentAgain: a batch left running
// (--no-wait), then canceled at the provider (`digest batches cancel`, as
// cmd's TestBatchOfAnotherKeyIsNotPaidTwice runs it), is collected by the
// next run on the store: its tasks are sent again in one new batch, every
// task ends answered, and no batch is left open.
func TestCancelledBatchIsCollectedAndTheRestSentAgain(t *testing.T) {
	for _, w := range wires {
		t.Run(w.name, func(t *testing.T) {
			srv := fakeprovider.Start(t, fakeprovider.Config{BatchAPI: fakeprovider.BatchAPIConfig{Processing: time.Minute}})
			path := filepath.Join(t.TempDir(), "digest.db")
			st := openStore(t, path)
			if _, err := run(t, runner(w, srv, st, true), tasks(w, 6)); err != nil {
				t.Fatal(err)
			}
			open, err := st.Batches(context.Background(), true)
			if err != nil || len(open) == 0 {
				t.Fatalf("open batches after --no-wait: %+v, %v", open, err)
			}
			for _, b := range open {
				if err := w.client(srv).Cancel(context.Background(), b.ProviderID); err != nil {
					t.Fatal(err)
				}
			}
			sent := srv.Stats().BatchesCreated
			srv.SetBatchProcessing(0)
			got, err := run(t, runner(w, srv, openStore(t, path), false), tasks(w, 6))
			if err != nil {
				t.Fatal(err)
			}
			for k, o := range got {
				if o.Err != nil || o.Response.Text == "" {
					t.Errorf("%s after the cancel: %v", k, o.Err)
				}
			}
			if len(got) != 6 {
				t.Errorf("%d outcomes, want 6", len(got))
			}
			if n := srv.Stats().BatchesCreated; n != sent+1 {
				t.Errorf("%d batches created after the cancel, want the one sending the canceled tasks again", n-sent)
			}
			if open, _ := st.Batches(context.Background(), true); len(open) != 0 {
				t.Errorf("left open after collecting: %+v", open)
			}
		})
	}
}
