package engine_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/digest-cli/digest/internal/engine"
	"github.com/digest-cli/digest/internal/provider"
)

// TestNoCallStartsOnceStopped: the grace lets calls already in flight
// bring back their answers; a call whose context was done before it went
// out is never sent, or a judge asked by Do after an interrupt (or a
// worker stopped between taking a task and calling) would send a new,
// paid request and wait up to the grace for it.
func TestNoCallStartsOnceStopped(t *testing.T) {
	var calls atomic.Int64
	prov := provider.Func(func(ctx context.Context, req provider.Request) (provider.Response, error) {
		calls.Add(1)
		return answer(req), nil
	})
	t.Run("Do", func(t *testing.T) {
		calls.Store(0)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		e := &engine.Engine{Provider: prov, Concurrency: 1, Grace: guard}
		o := e.Do(ctx, task("t0"))
		if !errors.Is(o.Err, context.Canceled) || calls.Load() != 0 {
			t.Errorf("Do with its context done: %d calls, outcome %+v; want none sent and context.Canceled", calls.Load(), o)
		}
	})
	t.Run("Run", func(t *testing.T) {
		calls.Store(0)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		// The interrupt lands after the worker took the task, before its
		// call: Tokens is asked in between.
		e := &engine.Engine{Provider: prov, Concurrency: 1, Grace: guard,
			Tokens: func(provider.Request) int { cancel(); return 1 }}
		err := wait(t, start(ctx, e, buffered(keys("t", 1)), func(o engine.Outcome) error {
			t.Errorf("committed %+v", o)
			return nil
		}), "Run")
		if !errors.Is(err, context.Canceled) || calls.Load() != 0 {
			t.Errorf("Run = %v after %d calls; want context.Canceled and none sent", err, calls.Load())
		}
	})
}
