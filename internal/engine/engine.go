// Package engine pushes requests through a provider with bounded
// concurrency and hands every outcome to the caller the moment it lands, so
// results are committed one by one and an interrupted run keeps all it got.
package engine

import (
	"context"
	"sync"
	"time"

	"github.com/digest-cli/digest/internal/provider"
)

// Task is one request to send, under the key its result is stored as.
type Task struct {
	Key     string
	Request provider.Request
}

// Outcome is what became of a task.
type Outcome struct {
	Task     Task
	Response provider.Response
	Err      error
	Latency  time.Duration
}

// Engine dispatches tasks to a provider.
type Engine struct {
	Provider    provider.Provider
	Concurrency int
}

// Run sends every task received on tasks until the channel closes and calls
// commit with each outcome, one at a time, in the order they finish. If
// commit fails, Run stops sending and returns that error. If ctx is
// cancelled, calls in flight are cancelled, outcomes that already arrived are
// still committed, and Run returns ctx's error. The producer of tasks must
// stop sending when ctx is done.
func (e *Engine) Run(ctx context.Context, tasks <-chan Task, commit func(Outcome) error) error {
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	outcomes := make(chan Outcome)
	var wg sync.WaitGroup
	for range max(1, e.Concurrency) {
		wg.Go(func() {
			for {
				// select picks at random among ready cases: check first, so a
				// stopped run never takes another task while one is on offer.
				if runCtx.Err() != nil {
					return
				}
				var t Task
				var ok bool
				select {
				case <-runCtx.Done():
					return
				case t, ok = <-tasks:
					if !ok {
						return
					}
				}
				if runCtx.Err() != nil {
					return // stopped while this task was on offer: never send it
				}
				start := time.Now()
				resp, err := e.Provider.Complete(runCtx, t.Request)
				outcomes <- Outcome{Task: t, Response: resp, Err: err, Latency: time.Since(start)}
			}
		})
	}
	go func() {
		wg.Wait()
		close(outcomes)
	}()
	var commitErr error
	for o := range outcomes {
		if commitErr != nil {
			continue // drain so workers can exit
		}
		if err := commit(o); err != nil {
			commitErr = err
			cancel()
		}
	}
	if commitErr != nil {
		return commitErr
	}
	return ctx.Err()
}
