// Package spend keeps a run's spending under its limit (--max-cost), the
// same way for summaries, eval answers and judge verdicts: what answers
// cost so far, and the worst case of every request in flight, so that
// nothing is sent that could take the run past the limit.
package spend

import (
	"context"
	"sync"
)

// Cap is a spending limit. Its methods are safe for concurrent use.
type Cap struct {
	max float64 // 0: no limit

	mu       sync.Mutex
	spent    float64            // what answers cost so far
	pledged  float64            // the worst cases of requests in flight
	reserved map[string]float64 // those worst cases, by request key
	settled  chan struct{}      // closed, and replaced, when a request settles

	beforeWait func() // tests: called as a reservation starts waiting
}

// New returns a cap of max US dollars; 0 or less is no limit.
func New(max float64) *Cap {
	return &Cap{max: max, reserved: map[string]float64{}, settled: make(chan struct{})}
}

// Limited reports whether there is a limit at all.
func (c *Cap) Limited() bool { return c.max > 0 }

// Fits reports whether a request whose worst case is worst could be sent
// now without the run's worst case passing the limit.
func (c *Cap) Fits(worst float64) bool {
	if !c.Limited() {
		return true
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.fits(worst)
}

func (c *Cap) fits(worst float64) bool { return c.spent+c.pledged+worst <= c.max }

// Reserve books a request's worst case until it settles, whether or not it
// fits: for a caller that asked Fits and is the only one reserving.
func (c *Cap) Reserve(key string, worst float64) {
	if !c.Limited() {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.book(key, worst)
}

func (c *Cap) book(key string, worst float64) {
	c.reserved[key] += worst
	c.pledged += worst
}

// TryReserve books a request's worst case if it fits, in one step.
func (c *Cap) TryReserve(key string, worst float64) bool {
	if !c.Limited() {
		return true
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.fits(worst) {
		return false
	}
	c.book(key, worst)
	return true
}

// ReserveWhenSettled is TryReserve, except that a request that does not
// fit while others are in flight waits for them to settle what they cost
// (usually far less than their worst case) before it is refused.
func (c *Cap) ReserveWhenSettled(ctx context.Context, key string, worst float64) bool {
	for {
		if c.TryReserve(key, worst) {
			return true
		}
		c.mu.Lock()
		inFlight, settled := c.pledged > 0, c.settled
		c.mu.Unlock()
		if !inFlight {
			return false
		}
		if c.beforeWait != nil {
			c.beforeWait()
		}
		select {
		case <-settled:
		case <-ctx.Done():
			return false
		}
	}
}

// Record swaps a request's worst case for what it cost (nothing unless
// paid), in one step, so that no one sees the request counted neither way.
func (c *Cap) Record(key string, cost float64, paid bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.pledged -= c.reserved[key]
	delete(c.reserved, key)
	if paid {
		c.spent += cost
	}
	close(c.settled)
	c.settled = make(chan struct{})
}

// Owe settles a request that will be billed later, its answer waiting in
// a provider's batch: its worst case counts as spent, so that what a run
// leaves in batches (--no-wait) stays within the limit.
func (c *Cap) Owe(key string) {
	c.mu.Lock()
	worst := c.reserved[key]
	c.mu.Unlock()
	c.Record(key, worst, true)
}

// Spent is what the answers settled so far cost.
func (c *Cap) Spent() float64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.spent
}
