package engine_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

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

// TestStopByFatalErrorSaysWhatItAwaits: a run stopped by a fatal error
// (another call's refused key) waits for its calls in flight too, and
// must say so like an interrupted one, or it looks hung for the grace.
func TestStopByFatalErrorSaysWhatItAwaits(t *testing.T) {
	entered, release := make(chan struct{}), make(chan struct{})
	var n atomic.Int64
	prov := provider.Func(func(ctx context.Context, req provider.Request) (provider.Response, error) {
		if n.Add(1) == 1 {
			close(entered)
			blockUntil(t, release, "the release")
			return answer(req), nil
		}
		blockUntil(t, entered, "the first call")
		return provider.Response{}, &provider.Error{Kind: provider.Fatal, Message: "invalid key"}
	})
	var logs logBuffer
	e := &engine.Engine{Provider: prov, Concurrency: 2, Grace: guard, Log: logTo(&logs)}
	var committed atomic.Int64
	errc := start(context.Background(), e, buffered(keys("t", 2)), func(o engine.Outcome) error {
		committed.Add(1)
		return nil
	})
	// The answer in flight comes once the stop has been told of, or at the
	// guard when it never is.
	deadline := time.Now().Add(guard)
	for !strings.Contains(logs.String(), "awaiting the answers in flight") && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	close(release)
	if err := wait(t, errc, "Run"); !errors.As(err, new(*engine.FatalError)) {
		t.Fatalf("Run = %v, want the fatal error", err)
	}
	if committed.Load() != 1 {
		t.Errorf("%d answers committed, want the one in flight", committed.Load())
	}
	if !strings.Contains(logs.String(), "awaiting the answers in flight") {
		t.Errorf("nothing said of the call awaited after the stop:\n%s", logs.String())
	}
}

// TestFailedCommitCutsCallsInFlight: once commit has failed nothing more
// is committed, so the answers of calls in flight would be thrown away:
// they are cut off at once instead of awaited for the grace.
func TestFailedCommitCutsCallsInFlight(t *testing.T) {
	entered := make(chan struct{})
	var n atomic.Int64
	prov := provider.Func(func(ctx context.Context, req provider.Request) (provider.Response, error) {
		if n.Add(1) == 1 {
			close(entered)
			<-ctx.Done()
			return provider.Response{}, ctx.Err()
		}
		blockUntil(t, entered, "the first call")
		return answer(req), nil
	})
	e := &engine.Engine{Provider: prov, Concurrency: 2, Grace: time.Hour}
	writeFailed := errors.New("disk full")
	err := wait(t, start(context.Background(), e, buffered(keys("t", 2)), func(engine.Outcome) error { return writeFailed }),
		"Run to return once commit failed, not an hour later")
	if !errors.Is(err, writeFailed) {
		t.Errorf("Run = %v, want the commit's error", err)
	}
}
