package engine

import (
	"context"
	"sync"
)

// gate bounds the calls in flight and adapts the bound like TCP: it starts
// at one call and doubles after each full round of successes (slow start,
// so a bad key costs one request, not one per worker); after the first 429
// it halves on each 429 and grows by one per round (AIMD), never above the
// configured concurrency. After a pause the model ramps back up instead of
// hitting the provider with every worker at once.
type gate struct {
	mu        sync.Mutex
	limit     int
	ceiling   int
	inFlight  int
	successes int
	slowStart bool
	freed     chan struct{} // closed, and replaced, whenever a slot may have opened
}

// newGate returns a gate allowing maxN calls, starting from one when slow
// is set.
func newGate(maxN int, slow bool) *gate {
	g := &gate{limit: max(1, maxN), ceiling: max(1, maxN), slowStart: slow, freed: make(chan struct{})}
	if slow {
		g.limit = 1
	}
	return g
}

func (g *gate) acquire(ctx context.Context) error {
	for {
		g.mu.Lock()
		if g.inFlight < g.limit {
			g.inFlight++
			g.mu.Unlock()
			return nil
		}
		freed := g.freed
		g.mu.Unlock()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-freed:
		}
	}
}

// release frees a slot, adjusting the limit by how the call went.
func (g *gate) release(rateLimited, succeeded bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.inFlight--
	switch {
	case rateLimited:
		g.limit = max(1, g.limit/2)
		g.successes = 0
		g.slowStart = false
	case succeeded:
		g.successes++
		if g.successes >= g.limit && g.limit < g.ceiling {
			if g.slowStart {
				g.limit = min(2*g.limit, g.ceiling)
			} else {
				g.limit++
			}
			g.successes = 0
		}
	}
	close(g.freed)
	g.freed = make(chan struct{})
}
