package summarize

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/digest-cli/digest/internal/gittest"
	"github.com/digest-cli/digest/internal/provider"
	"github.com/digest-cli/digest/internal/store/sqlite"
)

// TestInterruptKeepsFinishedWork: a run cancelled while a request is in
// flight returns context.Canceled with what it summarized before, stored in
// a sound database; the next run pays only for the rest.
func TestInterruptKeepsFinishedWork(t *testing.T) {
	f := gittest.NewFixture(t)
	h := newTestRun(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var served atomic.Int32
	h.wrap = func(next provider.Provider) provider.Provider {
		return provider.Func(func(c context.Context, req provider.Request) (provider.Response, error) {
			if served.Add(1) > 3 {
				cancel() // Ctrl-C while the fourth request is in flight
				<-c.Done()
				return provider.Response{}, c.Err()
			}
			return next.Complete(c, req)
		})
	}
	opts := h.options("", f.Dir)
	opts.Concurrency, opts.BatchSize = 1, 1
	res, err := h.run(ctx, opts)
	if !errors.Is(err, context.Canceled) || res == nil {
		t.Fatalf("interrupted run: %v, want context.Canceled and a result", err)
	}
	if n := res.Changelog.Stats.Summarized; n != 3 {
		t.Errorf("%d summarized before the interrupt, want 3", n)
	}
	if err := sqlite.IntegrityCheck(context.Background(), h.db); err != nil {
		t.Error(err)
	}
	h.wrap = nil
	rerun := h.mustRun(opts)
	if n := h.calls.Load(); n != 5 {
		t.Fatalf("rerun: %d calls, want 5 (8 commits, 3 stored)", n)
	}
	if n := cachedCount(rerun.Changelog.Entries); n != 3 {
		t.Errorf("rerun reports %d cached commits, want 3", n)
	}
}

// TestSignalAfterTheLastAnswerIsNotAnInterrupt: a cancellation that comes
// once every commit is settled interrupted nothing: the run succeeds with
// the whole report.
func TestSignalAfterTheLastAnswerIsNotAnInterrupt(t *testing.T) {
	f := gittest.NewFixture(t)
	h := newTestRun(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var served atomic.Int32
	h.wrap = func(next provider.Provider) provider.Provider {
		return provider.Func(func(c context.Context, req provider.Request) (provider.Response, error) {
			resp, err := next.Complete(c, req)
			if served.Add(1) == 8 {
				cancel() // Ctrl-C just as the last answer arrives
			}
			return resp, err
		})
	}
	opts := h.options("", f.Dir)
	opts.Concurrency, opts.BatchSize = 1, 1
	res, err := h.run(ctx, opts)
	if err != nil || len(res.Changelog.Entries) != 8 {
		t.Errorf("%v with %d entries, want no error and the whole report", err, len(res.Changelog.Entries))
	}
}
