package batchrun

import (
	"context"
	"sync"

	"github.com/digest-cli/digest/internal/engine"
)

// outbox carries a Run's outcomes from the serving loop to the goroutine
// that commits them. It never blocks the loop: a commit that sends more
// tasks (the summaries an answer left out) would otherwise wait for a loop
// waiting for it.
type outbox struct {
	mu        sync.Mutex
	queue     []engine.Outcome
	expected  int
	delivered int
	signal    chan struct{}
}

func newOutbox() *outbox { return &outbox{signal: make(chan struct{}, 1)} }

// expect counts a task whose outcome will come.
func (o *outbox) expect() {
	o.mu.Lock()
	o.expected++
	o.mu.Unlock()
}

func (o *outbox) put(x engine.Outcome) {
	o.mu.Lock()
	o.queue = append(o.queue, x)
	o.mu.Unlock()
	select {
	case o.signal <- struct{}{}:
	default:
	}
}

// next returns the next outcome, or false once every task the intake took
// has had its outcome (intakeDone closed), or the run was cancelled or
// halted and the outcomes that arrived are handed out.
func (o *outbox) next(ctx context.Context, halted <-chan struct{}, intakeDone <-chan struct{}) (engine.Outcome, bool) {
	intakeOver := false
	for {
		o.mu.Lock()
		if len(o.queue) > 0 {
			x := o.queue[0]
			o.queue = o.queue[1:]
			o.delivered++
			o.mu.Unlock()
			return x, true
		}
		all := o.delivered == o.expected
		o.mu.Unlock()
		if intakeOver && all {
			return engine.Outcome{}, false
		}
		select {
		case <-halted:
			return engine.Outcome{}, false
		case <-ctx.Done():
			return engine.Outcome{}, false
		default:
		}
		select {
		case <-o.signal:
		case <-intakeDone:
			intakeOver = true
			intakeDone = nil
		case <-halted:
		case <-ctx.Done():
		}
	}
}
